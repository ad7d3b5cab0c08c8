// Package export keeps the files the export tool makes: over stdio in a
// folder of the operator's (Dir: unique names, never over another file,
// never outside the folder, no partial file ever visible), over HTTP as
// resources only their maker can read for a while (Vault: per-caller and
// total byte quotas, on this replica's disk or in the replicas' shared
// Redis). Every export goes through a Sink that counts, hashes and bounds
// the bytes as they are written.
package export

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrTooLarge says an export passed its byte limit.
var ErrTooLarge = errors.New("export over its byte limit")

// Sink counts, hashes and bounds what is written through it.
type Sink struct {
	w     io.Writer
	limit int64
	n     int64
	h     hash.Hash
}

// NewSink writes to w at most limit bytes (0: no limit); past it, Write
// fails with ErrTooLarge and writes nothing more.
func NewSink(w io.Writer, limit int64) *Sink { return &Sink{w: w, limit: limit, h: sha256.New()} }

func (s *Sink) Write(p []byte) (int, error) {
	if s.limit > 0 && s.n+int64(len(p)) > s.limit {
		return 0, fmt.Errorf("%w (%d bytes)", ErrTooLarge, s.limit)
	}
	n, err := s.w.Write(p)
	s.h.Write(p[:n])
	s.n += int64(n)
	return n, err
}

// Bytes and SHA256 describe what was written.
func (s *Sink) Bytes() int64 { return s.n }

// SHA256 is the hex digest of what was written.
func (s *Sink) SHA256() string { return hex.EncodeToString(s.h.Sum(nil)) }

// Written is a finished export.
type Written struct {
	Name   string // file name (stdio) or id (http)
	Path   string // absolute path (stdio only)
	Bytes  int64
	SHA256 string
}

// NameProblem says why name cannot be a file's base name ("" when it
// can): it names a file in the export folder, never a path.
func NameProblem(name string) string {
	switch {
	case name == "":
		return "empty"
	case len(name) > 100:
		return fmt.Sprintf("%d bytes long (at most 100)", len(name))
	case !utf8.ValidString(name):
		return "not UTF-8"
	case strings.ContainsAny(name, `/\:`) || name == "." || name == "..":
		return "a path, not a file name"
	case strings.HasPrefix(name, ".") || strings.HasPrefix(name, "-"):
		return "starts with " + name[:1]
	case strings.TrimSpace(name) != name:
		return "starts or ends with white space"
	case strings.ContainsAny(name, `<>"|?*%#`):
		return `contains one of <>"|?*%#`
	case strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) >= 0:
		return "contains a control or format character"
	}
	return ""
}

// Slug turns text (an item id, an index name) into a safe piece of a file
// name: letters, digits, '.', '_' and '-', at most 80 bytes.
func Slug(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' || r == '-'):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 80 {
			break
		}
	}
	out := strings.TrimLeft(b.String(), ".-")
	if out == "" {
		return "export"
	}
	return out
}

// DefaultDir is where stdio exports go when STAC_MCP_EXPORT_DIR is not
// set: a stac-mcp folder in the user's downloads folder (XDG_DOWNLOAD_DIR
// on Linux and the BSDs, else ~/Downloads, which macOS and Windows use).
func DefaultDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home folder to put a Downloads/stac-mcp folder in: set STAC_MCP_EXPORT_DIR (%w)", err)
	}
	downloads := filepath.Join(home, "Downloads")
	if runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		if d := xdgDownloadDir(home); d != "" {
			downloads = d
		}
	}
	return filepath.Join(downloads, "stac-mcp"), nil
}

// xdgDownloadDir is XDG_DOWNLOAD_DIR from the environment or from
// user-dirs.dirs ("$HOME/Téléchargements"), "" when neither says.
func xdgDownloadDir(home string) string {
	expand := func(v string) string {
		v = strings.Trim(strings.TrimSpace(v), `"`)
		v = strings.Replace(v, "$HOME", home, 1)
		if !filepath.IsAbs(v) || filepath.Clean(v) == filepath.Clean(home) {
			return "" // the spec's way to say "no such folder"
		}
		return v
	}
	if v := os.Getenv("XDG_DOWNLOAD_DIR"); v != "" {
		return expand(v)
	}
	cfg := os.Getenv("XDG_CONFIG_HOME")
	if cfg == "" {
		cfg = filepath.Join(home, ".config")
	}
	raw, err := os.ReadFile(filepath.Join(cfg, "user-dirs.dirs"))
	if err != nil || len(raw) > 64<<10 {
		return ""
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "XDG_DOWNLOAD_DIR="); ok {
			return expand(v)
		}
	}
	return ""
}

// Dir is the folder stdio exports are written to.
type Dir struct {
	path string
	root *os.Root
}

// OpenDir opens the export folder, creating it when missing with mode
// 0700 (exports may hold a private catalog's data) and its missing
// parents (a Downloads folder) with 0755, as a desktop makes them.
func OpenDir(path string) (*Dir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("the export folder %s cannot be created: %w", abs, err)
	}
	if err := os.Mkdir(abs, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("the export folder %s cannot be created: %w", abs, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("the export folder %s cannot be opened: %w", abs, err)
	}
	return &Dir{path: abs, root: root}, nil
}

// Close releases the folder.
func (d *Dir) Close() error { return d.root.Close() }

// tempPrefix marks the files being written; a file of that name left by a
// crash is never an export (the final name is made only when complete).
const tempPrefix = ".stac-mcp-partial-"

// Write writes an export named base+ext: first to a hidden temporary file
// in the folder through a Sink bounded at limit, synced to disk, then
// linked to the first free name among base+ext, base-2+ext, ... (never
// replacing a file, whatever it is), and the temporary file removed.
// On any failure (write's error, the limit, ctx) nothing stays behind.
func (d *Dir) Write(ctx context.Context, base, ext string, limit int64, write func(io.Writer) error) (w Written, err error) {
	if p := NameProblem(base + ext); p != "" {
		return w, fmt.Errorf("export name %q is %s", base+ext, p)
	}
	tmp := tempPrefix + randomHex(8)
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return w, fmt.Errorf("writing in the export folder %s: %w", d.path, err)
	}
	defer func() {
		if f != nil {
			_ = f.Close()
		}
		_ = d.root.Remove(tmp)
	}()
	sink := NewSink(f, limit)
	if err := write(sink); err != nil {
		return w, err
	}
	if err := ctx.Err(); err != nil {
		return w, err
	}
	if err := f.Sync(); err != nil {
		return w, fmt.Errorf("writing in the export folder %s: %w", d.path, err)
	}
	if err := f.Close(); err != nil {
		f = nil
		return w, fmt.Errorf("writing in the export folder %s: %w", d.path, err)
	}
	f = nil
	name, err := d.place(tmp, base, ext)
	if err != nil {
		return w, err
	}
	d.syncDir()
	return Written{Name: name, Path: filepath.Join(d.path, name), Bytes: sink.Bytes(), SHA256: sink.SHA256()}, nil
}

// maxNameTries bounds the numbered names tried.
const maxNameTries = 1000

// place gives the finished temporary file its name: a hard link, which
// fails rather than replace anything; where the file system has no hard
// links, a name reserved with O_EXCL and then renamed over (only ever our
// own empty reservation).
func (d *Dir) place(tmp, base, ext string) (string, error) {
	for i := 1; i <= maxNameTries; i++ {
		name := base + ext
		if i > 1 {
			name = fmt.Sprintf("%s-%d%s", base, i, ext)
		}
		err := d.root.Link(tmp, name)
		if err == nil {
			return name, nil
		}
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		r, rerr := d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(rerr, fs.ErrExist) {
			continue
		}
		if rerr != nil {
			return "", fmt.Errorf("naming the export %s in %s: %w", name, d.path, err)
		}
		_ = r.Close()
		if err := d.root.Rename(tmp, name); err != nil {
			_ = d.root.Remove(name)
			return "", fmt.Errorf("naming the export %s in %s: %w", name, d.path, err)
		}
		return name, nil
	}
	return "", fmt.Errorf("the export folder %s already holds %s%s and %d numbered copies: choose another name", d.path, base, ext, maxNameTries-1)
}

// syncDir makes the new name durable where the platform can (best effort).
func (d *Dir) syncDir() {
	if dir, err := d.root.Open("."); err == nil {
		_ = dir.Sync()
		_ = dir.Close()
	}
}

// Open opens an export of the folder by name, for resources/read: a
// regular file directly in it.
func (d *Dir) Open(name string) (*os.File, os.FileInfo, error) {
	if p := NameProblem(name); p != "" || strings.HasPrefix(name, tempPrefix) {
		return nil, nil, fs.ErrNotExist
	}
	f, err := d.root.Open(name)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, nil, fs.ErrNotExist
	}
	return f, fi, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return hex.EncodeToString(b)
}
