package tools

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"

	"github.com/paulmach/orb"
	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/tools/internal/mapimage"
	"github.com/stacmcp/stac-mcp/tools/internal/picture"
)

// mapCache keeps the last few maps drawn, by a digest of everything drawn
// on them. Drawing and PNG-encoding a map is the one CPU-heavy step of
// map_items (tens of milliseconds, ten times that under the race
// detector), and the same map is often asked for again: a model retrying a
// call, a client re-running it. Drawing is deterministic, so a hit returns
// exactly the bytes a new render would.
type mapCache struct {
	mu    sync.Mutex
	order []string // digests, oldest first
	maps  map[string]*renderedMap
	// drawHook, when set (tests), runs as each drawing starts.
	drawHook func()
}

// mapCacheEntries bounds the cache (a map is about 20–150 kB).
const mapCacheEntries = 8

// renderedMap is an encoded map and what map_items reports about it.
type renderedMap struct {
	png           []byte
	extent        orb.Bound
	scaleBar      string
	places        []string
	placesErr     error // why the places came from a smaller set (mapimage.Map.PlacesErr)
	width, height int
}

// placesFallbackLogged logs a map's missing gazetteer once a process: it
// is loaded once, so every later map fails the same way.
var placesFallbackLogged sync.Once

// renderWithin is render that gives up when ctx ends first. Drawing is CPU
// work nothing can interrupt (the first map of a process also decodes the
// basemap), and the call's deadline is a promise: a call whose pages
// arrived just before it must not overrun it by the drawing (under load,
// by hundreds of milliseconds). The drawing finishes in the background and
// lands in the cache, so the same call asked again gets the map at once.
//
// A drawing holds a CPU slot and its canvas's pixels in w (nil bounds
// nothing) from before it starts until it ends, even after its caller
// left: callers that give up (a cancelled request, a deadline) cannot pile
// up drawings beyond the cores that run them, and 32 calls timing out
// together draw in turn, not all at once. A map already in the cache needs
// neither.
func (c *mapCache) renderWithin(ctx context.Context, spec mapimage.Spec, w *workBudgets) (*renderedMap, error) {
	key, err := specKey(spec)
	if err != nil {
		return nil, err
	}
	if m := c.cached(key); m != nil {
		return m, nil
	}
	releaseCPU, err := w.cpuSlot(ctx)
	if err != nil {
		return nil, err
	}
	releasePixels, err := w.pixelBudget().Acquire(ctx, mapPixels)
	if err != nil {
		releaseCPU()
		return nil, err
	}
	type result struct {
		m   *renderedMap
		err error
	}
	done := make(chan result, 1) // buffered: the drawing never waits for a caller that left
	log := zerolog.Ctx(ctx)      // the server's logger (adapt puts it there)
	go func() {
		var r result
		defer releaseCPU()
		defer releasePixels()
		defer func() { done <- r }()
		defer recoverAs(*log, "map_items: drawing the map", &r.err)
		r.m, r.err = c.render(spec)
		if r.err == nil && r.m.placesErr != nil {
			placesFallbackLogged.Do(func() {
				log.Warn().Err(r.m.placesErr).Str("event", "places_fallback").Msg("map_items: place names come from a smaller set (or none); the maps are drawn without the gazetteer's cities")
			})
		}
	}()
	select {
	case r := <-done:
		return r.m, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// mapPixels is what a drawing reserves in the pixel budget: its canvas, its
// footprint layer and the rasterizer's coverage buffer (a float32 a pixel)
// at the tallest map.
const mapPixels = 3 * mapimage.MaxCanvasPixels

// specKey is the cache key of spec: a digest of everything drawn.
func specKey(spec mapimage.Spec) (string, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return string(sum[:]), nil
}

// cached is the map drawn for key, or nil.
func (c *mapCache) cached(key string) *renderedMap {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maps[key]
}

// render draws spec, or returns the map drawn last time for the same spec.
func (c *mapCache) render(spec mapimage.Spec) (*renderedMap, error) {
	key, err := specKey(spec)
	if err != nil {
		return nil, err
	}
	if m := c.cached(key); m != nil {
		return m, nil
	}
	if c.drawHook != nil {
		c.drawHook()
	}

	m, err := mapimage.Render(spec)
	if err != nil {
		return nil, err
	}
	data, err := picture.EncodePNG(m.Image)
	if err != nil {
		return nil, err
	}
	r := &renderedMap{png: data, extent: m.Extent, scaleBar: m.ScaleBar, places: m.Places, placesErr: m.PlacesErr, width: m.Image.Bounds().Dx(), height: m.Image.Bounds().Dy()}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.maps == nil {
		c.maps = map[string]*renderedMap{}
	}
	if _, ok := c.maps[key]; !ok {
		c.maps[key] = r
		c.order = append(c.order, key)
		if len(c.order) > mapCacheEntries {
			delete(c.maps, c.order[0])
			c.order = c.order[1:]
		}
	}
	return r, nil
}
