package stacserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// LoadOptions bound what loading a static catalog may read.
type LoadOptions struct {
	// MaxFileBytes caps each file; 0 means DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxTotalBytes caps all files together; 0 means DefaultMaxTotalBytes.
	MaxTotalBytes int64
	// MaxFiles caps how many files are read; 0 means DefaultMaxFiles.
	MaxFiles int
	// ServeAssetFiles serves the files that items name with relative asset
	// hrefs (assets.go): the demo's pixels. Off, such hrefs are passed on
	// unchanged.
	ServeAssetFiles bool
	// QuietAssetFiles leaves out ServeAssetFiles' notes about relative
	// asset hrefs that name no file of the catalog: a local catalog shows
	// such hrefs as paths (Options.AssetDir), and its data often lives
	// beside it rather than in it.
	QuietAssetFiles bool
}

// Defaults of LoadOptions: generous for a real static catalog (the largest
// STAC item files are a few MiB), small enough that a wrong path cannot
// exhaust memory.
const (
	DefaultMaxFileBytes  = 16 << 20
	DefaultMaxTotalBytes = 512 << 20
	DefaultMaxFiles      = 200_000
)

// LoadDir loads the static STAC catalog whose root is dir/catalog.json;
// see LoadFS. For another root file use LoadFS(os.DirFS(dir), root).
func LoadDir(dir string) (*Store, error) {
	return LoadFS(os.DirFS(dir), "catalog.json")
}

// LoadFS is LoadFSContext without a deadline and with the default limits.
func LoadFS(fsys fs.FS, root string) (*Store, error) {
	return LoadFSContext(context.Background(), fsys, root, LoadOptions{})
}

// LoadFSContext loads a static STAC catalog from fsys, starting at root
// (for example "catalog.json"). It follows child links (catalogs and
// collections), item links, and "items" links to an ItemCollection file,
// resolving relative hrefs against the linking file.
//
// Only the root file must load: it must be a regular file holding a STAC
// Catalog, Collection, Feature or FeatureCollection, or the load fails.
// Static catalogs in the wild break the rules an API must keep and have
// dangling links, so everything below the root that cannot be used is
// skipped and recorded in Store.Notes, naming the file: a link that is
// absolute (http) or leaves the root, a missing file, one that is not a
// regular file (a FIFO or device never ends) or is over the size cap,
// malformed JSON, an invalid collection or item, an item with no collection
// at all or naming a collection that is not in the tree, and a second
// collection or item with an id already loaded.
//
// Files are read through fsys only (give it an os.Root's FS to keep
// symlinks inside the catalog directory), and no error or note quotes a
// file's contents: a path that is not a catalog stays unread.
func LoadFSContext(ctx context.Context, fsys fs.FS, root string, opts LoadOptions) (*Store, error) {
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.MaxTotalBytes <= 0 {
		opts.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	l := &loader{ctx: ctx, fsys: fsys, opts: opts, store: NewStore(), visited: map[string]bool{}, linkedFrom: map[string]string{}}
	root = path.Clean(root)
	if !fs.ValidPath(root) {
		return nil, fmt.Errorf("static catalog: %q is not a path inside the catalog directory", root)
	}
	if err := l.loadNode(root, "", true); err != nil {
		return nil, err
	}
	for _, p := range l.pendingItems {
		coll, _ := p.doc["collection"].(string)
		id, _ := p.doc["id"].(string)
		c, ok := l.store.collections[coll]
		if !ok {
			l.note("skipped item %q (%s): its collection %q is not in the catalog", id, p.file, coll)
			continue
		}
		if _, dup := c.byID[id]; dup {
			l.note("skipped item %q (%s): an item with that id was already loaded into %q", id, p.file, coll)
			continue
		}
		if err := l.store.addItemDoc(p.doc); err != nil {
			l.note("skipped item %q (%s): %v", id, p.file, err)
			continue
		}
		it := c.byID[id]
		it.file, it.linkedFrom = p.file, l.linkedFrom[p.file] // where transactions write it back
		if opts.ServeAssetFiles {
			l.recordAssetFiles(it, strings.SplitN(p.file, "#", 2)[0])
		}
	}
	return l.store, nil
}

type loader struct {
	ctx          context.Context
	fsys         fs.FS
	opts         LoadOptions
	store        *Store
	visited      map[string]bool
	files        int
	bytes        int64
	pendingItems []pendingItem     // added after all collections are known
	linkedFrom   map[string]string // file → the file that linked it first
}

type pendingItem struct {
	file string
	doc  map[string]any
}

func (l *loader) note(format string, args ...any) {
	l.store.Notes = append(l.store.Notes, fmt.Sprintf(format, args...))
}

// errLimit ends a load that reached LoadOptions' file or byte budget, or
// whose context ended: unlike a bad file, it is not skipped.
type errLimit struct{ err error }

func (e *errLimit) Error() string { return e.err.Error() }
func (e *errLimit) Unwrap() error { return e.err }

// readFile reads a regular file of at most MaxFileBytes. Its errors never
// quote the file.
func (l *loader) readFile(file string) ([]byte, error) {
	if err := l.ctx.Err(); err != nil {
		return nil, &errLimit{fmt.Errorf("static catalog: loading stopped: %w", err)}
	}
	if l.files >= l.opts.MaxFiles {
		return nil, &errLimit{fmt.Errorf("static catalog: more than %d files; the loader stops there", l.opts.MaxFiles)}
	}
	l.files++
	info, err := fs.Stat(l.fsys, file)
	if err != nil {
		return nil, fileError(err)
	}
	if !info.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if info.Size() > l.opts.MaxFileBytes {
		return nil, fmt.Errorf("%d bytes, over the %d-byte cap of one file", info.Size(), l.opts.MaxFileBytes)
	}
	// A writable server compares these with the files before it writes
	// (disk.go), to notice a change made by another process.
	l.store.stamps[file] = stampOf(info)
	f, err := l.fsys.Open(file)
	if err != nil {
		return nil, fileError(err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, l.opts.MaxFileBytes+1))
	if err != nil {
		return nil, fileError(err)
	}
	if int64(len(raw)) > l.opts.MaxFileBytes {
		return nil, fmt.Errorf("over the %d-byte cap of one file", l.opts.MaxFileBytes)
	}
	if l.bytes += int64(len(raw)); l.bytes > l.opts.MaxTotalBytes {
		return nil, &errLimit{fmt.Errorf("static catalog: more than %d bytes in all; the loader stops there", l.opts.MaxTotalBytes)}
	}
	return raw, nil
}

// fileError is an fs error without the path (the caller names the file).
func fileError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such file")
	case errors.Is(err, fs.ErrPermission):
		return errors.New("permission denied")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// decodeNode parses a file as a JSON object with a STAC type; its errors
// say what is wrong without quoting the file.
func decodeNode(raw []byte) (map[string]any, string, error) {
	doc, err := decodeJSONObject(raw)
	if err != nil {
		var syn *json.SyntaxError
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return nil, "", fmt.Errorf("not valid JSON (syntax error at byte %d)", syn.Offset)
		case errors.As(err, &typeErr), doc == nil && bytes.HasPrefix(bytes.TrimSpace(raw), []byte("null")):
			return nil, "", errors.New("not a JSON object")
		}
		return nil, "", errors.New("not valid JSON (it ends too early)")
	}
	t, _ := doc["type"].(string)
	switch t {
	case "Catalog", "Collection", "Feature", "FeatureCollection":
		return doc, t, nil
	}
	return nil, "", errors.New(`not a STAC document: "type" is not Catalog, Collection, Feature or FeatureCollection`)
}

// loadNode reads a Catalog, Collection, Feature or FeatureCollection file;
// parentCollection is the id of the collection that linked to it, if any.
// Only a problem with the root (or a limit) is returned; any other file
// that cannot be used is skipped with a note.
func (l *loader) loadNode(file, parentCollection string, isRoot bool) error {
	if l.visited[file] {
		return nil
	}
	l.visited[file] = true
	skip := func(err error) error {
		var limit *errLimit
		if isRoot || errors.As(err, &limit) {
			if errors.As(err, &limit) {
				return err
			}
			return fmt.Errorf("static catalog root %s: %w", file, err)
		}
		l.note("skipped %s: %v", file, err)
		return nil
	}
	raw, err := l.readFile(file)
	if err != nil {
		return skip(err)
	}
	doc, t, err := decodeNode(raw)
	if err != nil {
		return skip(err)
	}
	if isRoot {
		r := &l.store.Root
		r.ID, _ = doc["id"].(string)
		r.Title, _ = doc["title"].(string)
		r.Description, _ = doc["description"].(string)
	}
	switch t {
	case "Catalog":
		return l.followLinks(file, doc, "")
	case "Collection":
		id, _ := doc["id"].(string)
		if _, dup := l.store.collections[id]; dup {
			l.note("skipped collection %q (%s): a collection with that id was already loaded", id, file)
			return nil
		}
		if err := l.store.AddCollection(raw); err != nil {
			return skip(err)
		}
		l.store.collections[id].file = file
		return l.followLinks(file, doc, id)
	case "Feature":
		l.addItem(file, doc, parentCollection)
		return nil
	default: // FeatureCollection
		features, _ := doc["features"].([]any)
		for i, f := range features {
			item, ok := f.(map[string]any)
			if !ok {
				l.note("skipped %s#features[%d]: not a JSON object", file, i)
				continue
			}
			l.addItem(fmt.Sprintf("%s#features[%d]", file, i), item, parentCollection)
		}
		return nil
	}
}

func (l *loader) addItem(file string, doc map[string]any, parentCollection string) {
	if c, _ := doc["collection"].(string); c == "" {
		if parentCollection == "" {
			id, _ := doc["id"].(string)
			l.note("skipped item %q (%s): it names no collection and no collection links to it", id, file)
			return
		}
		doc["collection"] = parentCollection
	}
	l.pendingItems = append(l.pendingItems, pendingItem{file: file, doc: doc})
}

// followLinks loads the child, item and items links of a catalog or
// collection document.
func (l *loader) followLinks(file string, doc map[string]any, collectionID string) error {
	links, _ := doc["links"].([]any)
	for i, v := range links {
		link, _ := v.(map[string]any)
		rel, _ := link["rel"].(string)
		if rel != "child" && rel != "item" && rel != "items" {
			continue
		}
		href, _ := link["href"].(string)
		target, err := resolveHref(file, href)
		if err != nil {
			l.note("skipped %s links[%d] (rel=%s): %v", file, i, rel, err)
			continue
		}
		if _, seen := l.linkedFrom[target]; !seen {
			l.linkedFrom[target] = file
		}
		if err := l.loadNode(target, collectionID, false); err != nil {
			return err
		}
	}
	return nil
}

// resolveHref resolves a relative href against the file that holds it.
func resolveHref(from, href string) (string, error) {
	switch {
	case href == "":
		return "", fmt.Errorf("empty href")
	case strings.Contains(href, "://"):
		return "", fmt.Errorf("href %q is absolute; a static catalog loaded from files can only follow relative hrefs", href)
	case strings.HasPrefix(href, "/"):
		return path.Clean(strings.TrimPrefix(href, "/")), nil
	}
	target := path.Join(path.Dir(from), href)
	if strings.HasPrefix(target, "../") || target == ".." || !fs.ValidPath(target) {
		return "", fmt.Errorf("href %q leaves the catalog root", href)
	}
	return target, nil
}
