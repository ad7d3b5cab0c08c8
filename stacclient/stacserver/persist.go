package stacserver

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// dirWriter writes transactions back to a static catalog's files, through
// an os.Root so that no id or href can make it write outside the catalog
// directory.
//
// Nothing is ever half-written: each file is written to a temporary file
// in the same directory, synced, and renamed over the old one, and the
// directory is synced after. A change that touches two files writes them
// in the order that keeps the catalog consistent after a crash between
// them: a new document before the link to it, a removed link before the
// document it pointed to. The worst a crash leaves is an unlinked file,
// which the loader never reads (and a retried create overwrites).
//
// Files are rewritten as indented JSON with sorted keys.
type dirWriter struct {
	assetDir string // Options.AssetDir: absolute paths under it are written relative
	root     *os.Root
	rootFile string
	// beforeRename, when set (tests only), runs before each file is put in
	// place; an error stops the write there, as a crash would.
	beforeRename func(name string) error
	// touched lists the files written or removed, for the stamps of disk.go.
	touched []string
}

func (s *Server) dirWriter() *dirWriter {
	w := s.opts.Writes
	if w == nil || w.Dir == nil {
		return nil
	}
	rootFile := w.RootFile
	if rootFile == "" {
		rootFile = "catalog.json"
	}
	return &dirWriter{root: w.Dir, rootFile: path.Clean(rootFile), assetDir: s.opts.AssetDir, beforeRename: s.beforeRename}
}

// maxCatalogFileBytes bounds a catalog file read back for rewriting.
const maxCatalogFileBytes = 64 << 20

func (d *dirWriter) readJSON(name string) (map[string]any, error) {
	f, err := d.root.Open(filepath.FromSlash(name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxCatalogFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxCatalogFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxCatalogFileBytes)
	}
	doc, err := decodeJSONObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return doc, nil
}

// writeJSON replaces name atomically: temporary file, sync, rename, sync
// of the directory.
func (d *dirWriter) writeJSON(name string, doc map[string]any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	dir := path.Dir(name)
	if err := d.root.MkdirAll(filepath.FromSlash(dir), 0o755); err != nil {
		return err
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmp := path.Join(dir, "."+path.Base(name)+".tmp-"+hex.EncodeToString(suffix[:]))
	f, err := d.root.OpenFile(filepath.FromSlash(tmp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(buf.Bytes())
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil && d.beforeRename != nil {
		werr = d.beforeRename(name)
	}
	if werr == nil {
		werr = d.root.Rename(filepath.FromSlash(tmp), filepath.FromSlash(name))
	}
	if werr != nil {
		_ = d.root.Remove(filepath.FromSlash(tmp))
		return fmt.Errorf("writing %s: %w", name, werr)
	}
	d.touched = append(d.touched, name)
	d.syncDir(dir)
	return nil
}

// syncDir makes a rename durable; not every platform can sync a directory,
// and the rename itself already happened, so a failure is not an error.
func (d *dirWriter) syncDir(dir string) {
	if f, err := d.root.Open(filepath.FromSlash(dir)); err == nil {
		_ = f.Sync()
		_ = f.Close()
	}
}

// remove deletes name, and its directory when that is left empty and is
// not the directory of keep (the collection's own).
func (d *dirWriter) remove(name, keep string) error {
	if err := d.root.Remove(filepath.FromSlash(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	d.touched = append(d.touched, name)
	if dir := path.Dir(name); dir != "." && dir != path.Dir(keep) {
		_ = d.root.Remove(filepath.FromSlash(dir)) // fails, harmlessly, unless empty
	}
	return nil
}

// relHref is the relative href from the file from to the file to, both
// slash paths relative to the catalog directory.
func relHref(from, to string) string {
	rel, err := filepath.Rel(filepath.FromSlash(path.Dir(from)), filepath.FromSlash(to))
	if err != nil {
		return to
	}
	rel = filepath.ToSlash(rel)
	if !strings.HasPrefix(rel, "../") {
		rel = "./" + rel
	}
	return rel
}

// withLinks is doc with its structural links replaced by links (other
// links kept after them).
func withLinks(doc map[string]any, links ...any) map[string]any {
	out := shallowCopy(doc)
	out["links"] = append(links, keptLinks(doc["links"], structuralRels)...)
	return out
}

// itemOnDisk is an item as written to file: relative root, parent and
// collection links, and asset hrefs naming files of the catalog by their
// absolute path (as served) made relative to file.
func (d *dirWriter) itemOnDisk(it *storedItem, file, collectionFile string) map[string]any {
	return withLinks(relativeAssetHrefs(it.doc, d.assetDir, file),
		link("root", relHref(file, d.rootFile), mediaJSON),
		link("parent", relHref(file, collectionFile), mediaJSON),
		link("collection", relHref(file, collectionFile), mediaJSON))
}

// newItemFile chooses where a new item goes: beside the collection's other
// item files when they share a layout (items/<id>.json or <id>/<id>.json),
// else <collection dir>/<id>/<id>.json as STAC's best practices suggest. A
// file already holding another loaded document is refused.
func (d *dirWriter) newItemFile(st *Store, c *storedCollection, id string) (string, error) {
	file := path.Join(path.Dir(c.file), id, id+".json")
	for _, other := range c.items {
		f, inIC := fileOf(other)
		if other.id == id || f == "" || inIC {
			continue
		}
		if path.Base(f) == other.id+".json" && path.Base(path.Dir(f)) == other.id {
			file = path.Join(path.Dir(path.Dir(f)), id, id+".json")
		} else {
			file = path.Join(path.Dir(f), id+".json")
		}
		break
	}
	if file == path.Clean(d.rootFile) || st.fileInUse(file) {
		return "", conflict("the file %s for item %q already holds another document of the catalog: nothing was written; choose another id", file, id)
	}
	return file, nil
}

// fileInUse reports whether a loaded collection or item lives in file.
func (s *Store) fileInUse(file string) bool {
	for _, c := range s.collections {
		if c.file == file {
			return true
		}
		for _, it := range c.items {
			if f, _ := fileOf(it); f == file {
				return true
			}
		}
	}
	return false
}

// createItem writes a new item's file, then the item link in its
// collection's file.
func (d *dirWriter) createItem(st *Store, c *storedCollection, it *storedItem) error {
	if c.file == "" {
		return fmt.Errorf("collection %q has no file in the catalog directory", c.id)
	}
	file, err := d.newItemFile(st, c, it.id)
	if err != nil {
		return err
	}
	if err := d.checkFreeFile(file, "item", "Feature", it.id, c.id); err != nil {
		return err
	}
	doc := d.itemOnDisk(it, file, c.file)
	if err := d.writeJSON(file, doc); err != nil {
		return err
	}
	if err := d.editLinks(c.file, func(links []any) []any {
		return append(links, link("item", relHref(c.file, file), mediaGeoJSON))
	}); err != nil {
		return err
	}
	it.doc, it.file, it.linkedFrom = doc, file, c.file
	return nil
}

// replaceItem rewrites the item where it lives: its own file, or its entry
// in an ItemCollection file.
func (d *dirWriter) replaceItem(st *Store, c *storedCollection, it *storedItem) error {
	file, inIC := fileOf(it)
	if file == "" {
		return d.createItem(st, c, it)
	}
	doc := d.itemOnDisk(it, file, c.file)
	if !inIC {
		if err := d.writeJSON(file, doc); err != nil {
			return err
		}
		it.doc = doc
		return nil
	}
	return d.editItemCollection(file, it.id, func(features []any, i int) []any {
		features[i] = doc
		return features
	})
}

// deleteItem removes the link to the item, then its file (or its entry in
// an ItemCollection file).
func (d *dirWriter) deleteItem(c *storedCollection, it *storedItem) error {
	file, inIC := fileOf(it)
	switch {
	case file == "":
		return nil
	case inIC:
		return d.editItemCollection(file, it.id, func(features []any, i int) []any {
			return append(features[:i:i], features[i+1:]...)
		})
	}
	if it.linkedFrom != "" {
		if err := d.editLinks(it.linkedFrom, func(links []any) []any {
			kept := make([]any, 0, len(links))
			for _, l := range links {
				m, _ := l.(map[string]any)
				href, _ := m["href"].(string)
				if rel, _ := m["rel"].(string); rel == "item" {
					if target, err := resolveHref(it.linkedFrom, href); err == nil && target == file {
						continue
					}
				}
				kept = append(kept, l)
			}
			return kept
		}); err != nil {
			return err
		}
	}
	return d.remove(file, c.file)
}

// editLinks rewrites the catalog file name with edit applied to its links.
func (d *dirWriter) editLinks(name string, edit func(links []any) []any) error {
	doc, err := d.readJSON(name)
	if err != nil {
		return err
	}
	doc["links"] = edit(asList(doc["links"]))
	return d.writeJSON(name, doc)
}

// editItemCollection rewrites the FeatureCollection file with edit applied
// to the feature whose id is id.
func (d *dirWriter) editItemCollection(file, id string, edit func(features []any, i int) []any) error {
	fc, err := d.readJSON(file)
	if err != nil {
		return err
	}
	features, _ := fc["features"].([]any)
	for i, f := range features {
		if m, _ := f.(map[string]any); m != nil && m["id"] == id {
			fc["features"] = edit(features, i)
			return d.writeJSON(file, fc)
		}
	}
	return fmt.Errorf("item %q is no longer in %s", id, file)
}

// createCollection writes <id>/collection.json beside the root catalog,
// then the child link to it in the root catalog.
func (d *dirWriter) createCollection(st *Store, c *storedCollection) error {
	file := path.Join(path.Dir(d.rootFile), c.id, "collection.json")
	if st.fileInUse(file) {
		return conflict("the file %s for collection %q already holds another document of the catalog: nothing was written; choose another id", file, c.id)
	}
	if err := d.checkFreeFile(file, "collection", "Collection", c.id, ""); err != nil {
		return err
	}
	doc := withLinks(c.doc,
		link("root", relHref(file, d.rootFile), mediaJSON),
		link("parent", relHref(file, d.rootFile), mediaJSON))
	if err := d.writeJSON(file, doc); err != nil {
		return err
	}
	if err := d.editLinks(d.rootFile, func(links []any) []any {
		return append(links, link("child", relHref(d.rootFile, file), mediaJSON))
	}); err != nil {
		return err
	}
	c.doc, c.file = doc, file
	return nil
}

// replaceCollection rewrites the collection's file with the new metadata
// and the structural links the file already has (its items, children,
// root and parent).
func (d *dirWriter) replaceCollection(c *storedCollection) error {
	if c.file == "" {
		return fmt.Errorf("collection %q has no file in the catalog directory", c.id)
	}
	current, err := d.readJSON(c.file)
	if err != nil {
		return err
	}
	var structural []any
	for _, l := range asList(current["links"]) {
		m, _ := l.(map[string]any)
		if rel, _ := m["rel"].(string); contains(structuralRels, rel) {
			structural = append(structural, l)
		}
	}
	doc := withLinks(c.doc, structural...)
	if err := d.writeJSON(c.file, doc); err != nil {
		return err
	}
	c.doc = doc
	return nil
}

func asList(v any) []any { l, _ := v.([]any); return l }
