package places

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/klauspost/compress/zstd"
	"github.com/paulmach/orb"
)

// The embedded gazetteer (data/places.bin.zst) is one zstd-compressed
// stream of varints and length-prefixed strings, written by Encode (run by
// the converter in ./convert, never by go generate) and read once by
// Decode. A custom layout rather than JSON or gob: it decodes in a few tens
// of milliseconds, keeps outlines as the bytes they were stored in until a
// place is asked for, and is about a third of the size of the same data as
// gzip'd JSON.

const magic = "STACPLACES3"

// coordScale is the stored precision of coordinates: 1e-4 degree (about
// 11 m), finer than the sources (Natural Earth 1:10m is quantized to
// hundreds of metres).
const coordScale = 1e4

// cityScale is a city's stored precision: 1e-3 degree (about 110 m); a
// city's area is kilometres across.
const cityScale = 1e3

// Data is the gazetteer as stored.
type Data struct {
	Sources   string // one line naming the sources and versions
	Countries []Country
	Regions   []Region
	Cities    []City
	Outlines  []Outline
}

// Country is an admin-0 unit of Natural Earth.
type Country struct {
	ISO2, ISO3 string // "" when the unit has no ISO code (Kosovo, N. Cyprus)
	Name       string
	Alt        []string // other names: English variants and names in other languages
	Outline    int      // index in Data.Outlines, -1 for none
	Left       string   // the far, small parts left out of the outline, worded
}

// Region is an admin-1 unit (state, province) of Natural Earth.
type Region struct {
	Country    int // index in Data.Countries
	Name       string
	Alt        []string
	Code       string // HASC code as the source has it ("BR.CE"); may be partial
	Outline    int
	Population int64 // the embedded cities inside it, summed: a rank, not a census
}

// City is a populated place of GeoNames.
type City struct {
	Name       string
	Alt        []string
	Country    int // index in Data.Countries, -1 when the code matched none
	CountryISO string
	Region     int    // index in Data.Regions, -1 when not linked
	Admin1     string // GeoNames' first-level division name ("Texas")
	Lon, Lat   float64
	Population int64
	Capital    bool // GeoNames PPLC
}

// Outline is a stored polygon set: longitudes within [-180, 180], cut at
// the antimeridian (RFC 7946 §3.1.9), simplified by Douglas-Peucker with a
// tolerance of ToleranceM metres.
type Outline struct {
	Polygons   orb.MultiPolygon
	ToleranceM int
	Points     int // vertices in the source before simplifying
	// BBox is the outline's [west, south, east, north] (west > east
	// across the antimeridian), stored so that a place listed as an
	// alternative needs no decoding.
	BBox    [4]float64
	encoded []byte
}

// Encode writes d in the stored form, compressed.
func Encode(d *Data) ([]byte, error) {
	var w writer
	w.str(magic)
	w.str(d.Sources)
	w.uint(len(d.Countries))
	for _, c := range d.Countries {
		w.str(c.ISO2)
		w.str(c.ISO3)
		w.str(c.Name)
		w.strs(c.Alt)
		w.int(c.Outline)
		w.str(c.Left)
	}
	w.uint(len(d.Regions))
	for _, r := range d.Regions {
		w.uint(r.Country)
		w.str(r.Name)
		w.strs(r.Alt)
		w.str(r.Code)
		w.int(r.Outline)
		w.uint64(uint64(r.Population))
	}
	// Cities are written grouped by country and first-level division, as
	// given (the converter sorts them so), with their coordinates as
	// differences from the previous city's and the division's name as an
	// index in a table: about half the size of writing each in full.
	admin1 := map[string]int{}
	var admin1Names []string
	for _, c := range d.Cities {
		if _, ok := admin1[c.Admin1]; !ok {
			admin1[c.Admin1] = len(admin1Names)
			admin1Names = append(admin1Names, c.Admin1)
		}
	}
	w.strs(admin1Names)
	w.uint(len(d.Cities))
	var plon, plat int64
	for _, c := range d.Cities {
		w.str(c.Name)
		w.strs(c.Alt)
		w.int(c.Country)
		if c.Country < 0 {
			w.str(c.CountryISO)
		}
		w.int(c.Region)
		w.uint(admin1[c.Admin1])
		lon, lat := int64(math.Round(c.Lon*cityScale)), int64(math.Round(c.Lat*cityScale))
		w.varint(lon - plon)
		w.varint(lat - plat)
		plon, plat = lon, lat
		flag := uint64(0)
		if c.Capital {
			flag = 1
		}
		w.uint64(uint64(c.Population)<<1 | flag)
	}
	w.uint(len(d.Outlines))
	for _, o := range d.Outlines {
		var ow writer
		encodePolygons(&ow, o.Polygons)
		w.uint(o.ToleranceM)
		w.uint(o.Points)
		for _, v := range bboxOf(o.Polygons) {
			w.coord(v)
		}
		w.bytes(ow.b.Bytes())
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		return nil, err
	}
	return enc.EncodeAll(w.b.Bytes(), nil), nil
}

func encodePolygons(w *writer, mp orb.MultiPolygon) {
	w.uint(len(mp))
	var px, py int64
	for _, p := range mp {
		w.uint(len(p))
		for _, r := range p {
			w.uint(len(r))
			for _, pt := range r {
				x, y := int64(math.Round(pt[0]*coordScale)), int64(math.Round(pt[1]*coordScale))
				w.varint(x - px)
				w.varint(y - py)
				px, py = x, y
			}
		}
	}
}

// maxDecoded bounds the decompressed gazetteer: it is our own file, but a
// corrupt one must fail, not exhaust memory.
const maxDecoded = 64 << 20

// Decode reads the stored form. Outlines keep their encoded bytes and are
// decoded by (*Outline).decode when a place is asked for.
func Decode(compressed []byte) (*Data, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxDecoded), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	raw, err := dec.DecodeAll(compressed, nil)
	if err != nil {
		return nil, fmt.Errorf("places: decompressing: %w", err)
	}
	r := &reader{b: raw}
	if r.str() != magic {
		return nil, errors.New("places: not a gazetteer of this version")
	}
	d := &Data{Sources: r.str()}
	d.Countries = make([]Country, r.count())
	for i := range d.Countries {
		c := &d.Countries[i]
		c.ISO2, c.ISO3, c.Name = r.str(), r.str(), r.str()
		c.Alt = r.strs()
		c.Outline = r.int()
		c.Left = r.str()
	}
	d.Regions = make([]Region, r.count())
	for i := range d.Regions {
		g := &d.Regions[i]
		g.Country = int(r.uint())
		g.Name = r.str()
		g.Alt = r.strs()
		g.Code = r.str()
		g.Outline = r.int()
		g.Population = int64(r.uint())
	}
	admin1Names := r.strs()
	d.Cities = make([]City, r.count())
	var plon, plat int64
	for i := range d.Cities {
		c := &d.Cities[i]
		c.Name = r.str()
		c.Alt = r.strs()
		c.Country = r.int()
		if c.Country < 0 {
			c.CountryISO = r.str()
		} else if c.Country < len(d.Countries) {
			c.CountryISO = d.Countries[c.Country].ISO2
		}
		c.Region = r.int()
		if a := r.uint(); a < uint64(len(admin1Names)) {
			c.Admin1 = admin1Names[a]
		} else {
			r.fail("admin-1 index out of range")
		}
		plon += r.varint()
		plat += r.varint()
		c.Lon, c.Lat = float64(plon)/cityScale, float64(plat)/cityScale
		v := r.uint()
		c.Population, c.Capital = int64(v>>1), v&1 == 1
	}
	d.Outlines = make([]Outline, r.count())
	for i := range d.Outlines {
		o := &d.Outlines[i]
		o.ToleranceM = int(r.uint())
		o.Points = int(r.uint())
		for j := range o.BBox {
			o.BBox[j] = r.coord()
		}
		o.encoded = append([]byte(nil), r.bytes()...) // not a view of raw, which is let go
	}
	if r.err != nil {
		return nil, fmt.Errorf("places: reading: %w", r.err)
	}
	if len(r.b) != r.off {
		return nil, fmt.Errorf("places: %d bytes left over", len(r.b)-r.off)
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	return d, nil
}

// check verifies every index points into its table, so that lookups need
// no checks of their own.
func (d *Data) check() error {
	outline := func(i int) bool { return i >= -1 && i < len(d.Outlines) }
	for _, c := range d.Countries {
		if !outline(c.Outline) {
			return fmt.Errorf("places: country %s: outline %d", c.Name, c.Outline)
		}
	}
	for _, g := range d.Regions {
		if g.Country < 0 || g.Country >= len(d.Countries) || !outline(g.Outline) {
			return fmt.Errorf("places: region %s: bad index", g.Name)
		}
	}
	for _, c := range d.Cities {
		if c.Country < -1 || c.Country >= len(d.Countries) || c.Region < -1 || c.Region >= len(d.Regions) {
			return fmt.Errorf("places: city %s: bad index", c.Name)
		}
	}
	return nil
}

// geometry decodes the outline's polygons.
func (o *Outline) geometry() (orb.MultiPolygon, error) {
	if o.Polygons != nil {
		return o.Polygons, nil
	}
	r := &reader{b: o.encoded}
	var px, py int64
	mp := make(orb.MultiPolygon, r.count())
	for i := range mp {
		p := make(orb.Polygon, r.count())
		for j := range p {
			ring := make(orb.Ring, r.count())
			for k := range ring {
				px += r.varint()
				py += r.varint()
				ring[k] = orb.Point{float64(px) / coordScale, float64(py) / coordScale}
			}
			p[j] = ring
		}
		mp[i] = p
	}
	if r.err != nil {
		return nil, fmt.Errorf("places: outline: %w", r.err)
	}
	return mp, nil
}

type writer struct{ b bytes.Buffer }

func (w *writer) uint64(v uint64) {
	var tmp [binary.MaxVarintLen64]byte
	w.b.Write(tmp[:binary.PutUvarint(tmp[:], v)])
}
func (w *writer) uint(v int) { w.uint64(uint64(v)) }
func (w *writer) varint(v int64) {
	var tmp [binary.MaxVarintLen64]byte
	w.b.Write(tmp[:binary.PutVarint(tmp[:], v)])
}
func (w *writer) int(v int)       { w.varint(int64(v)) }
func (w *writer) coord(v float64) { w.varint(int64(math.Round(v * coordScale))) }
func (w *writer) bytes(b []byte)  { w.uint(len(b)); w.b.Write(b) }
func (w *writer) str(s string)    { w.uint(len(s)); w.b.WriteString(s) }
func (w *writer) strs(list []string) {
	w.uint(len(list))
	for _, s := range list {
		w.str(s)
	}
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%s at byte %d", what, r.off)
	}
	r.off = len(r.b)
}

func (r *reader) uint() uint64 {
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.off += n
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.off += n
	return v
}

// count reads a length, bounded by the bytes left (every element takes at
// least one byte), so a corrupt length cannot allocate without limit.
func (r *reader) count() int {
	n := r.uint()
	if n > uint64(len(r.b)-r.off) {
		r.fail("length past the end")
		return 0
	}
	return int(n)
}

func (r *reader) int() int       { return int(r.varint()) }
func (r *reader) coord() float64 { return float64(r.varint()) / coordScale }
func (r *reader) str() string    { return string(r.bytes()) }
func (r *reader) bytes() []byte {
	n := r.count()
	b := r.b[r.off : r.off+n]
	r.off += n
	return b
}

func (r *reader) strs() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}
