package stacserver

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// LoadDir loads the static STAC catalog whose root is dir/catalog.json;
// see LoadFS. For another root file use LoadFS(os.DirFS(dir), root).
func LoadDir(dir string) (*Store, error) {
	return LoadFS(os.DirFS(dir), "catalog.json")
}

// LoadFS loads a static STAC catalog from fsys, starting at root (for
// example "catalog.json"). It follows child links (catalogs and
// collections), item links, and "items" links to an ItemCollection file,
// resolving relative hrefs against the linking file. Absolute (http) hrefs
// other than self/root/parent cannot be followed offline and are an error,
// as is a missing file.
//
// Items take the collection they name in "collection"; an item without one
// gets the id of the collection that links to it. Static catalogs in the
// wild break the rules an API must keep, so these are skipped and recorded
// in Store.Notes rather than failing the load: an item with no collection
// at all, an item naming a collection that is not in the tree, and a second
// collection or item with an id already loaded. Malformed JSON, a missing
// file or an invalid item (bad geometry or datetime) is an error.
func LoadFS(fsys fs.FS, root string) (*Store, error) {
	l := &loader{fsys: fsys, store: NewStore(), visited: map[string]bool{}}
	if err := l.loadNode(path.Clean(root), ""); err != nil {
		return nil, err
	}
	for _, p := range l.pendingItems {
		coll, _ := p.doc["collection"].(string)
		id, _ := p.doc["id"].(string)
		c, ok := l.store.collections[coll]
		if !ok {
			l.store.Notes = append(l.store.Notes, fmt.Sprintf(
				"skipped item %q (%s): its collection %q is not in the catalog", id, p.file, coll))
			continue
		}
		if _, dup := c.byID[id]; dup {
			l.store.Notes = append(l.store.Notes, fmt.Sprintf(
				"skipped item %q (%s): an item with that id was already loaded into %q", id, p.file, coll))
			continue
		}
		if err := l.store.addItemDoc(p.doc); err != nil {
			return nil, fmt.Errorf("static catalog %s: %w", p.file, err)
		}
	}
	return l.store, nil
}

type loader struct {
	fsys         fs.FS
	store        *Store
	visited      map[string]bool
	pendingItems []pendingItem // added after all collections are known
}

type pendingItem struct {
	file string
	doc  map[string]any
}

// loadNode reads a Catalog, Collection, Feature or FeatureCollection file;
// parentCollection is the id of the collection that linked to it, if any.
func (l *loader) loadNode(file, parentCollection string) error {
	if l.visited[file] {
		return nil
	}
	l.visited[file] = true
	raw, err := fs.ReadFile(l.fsys, file)
	if err != nil {
		return fmt.Errorf("static catalog: %w", err)
	}
	doc, err := decodeJSONObject(raw)
	if err != nil {
		return fmt.Errorf("static catalog %s: %w", file, err)
	}
	switch t, _ := doc["type"].(string); t {
	case "Catalog":
		return l.followLinks(file, doc, "")
	case "Collection":
		id, _ := doc["id"].(string)
		if _, dup := l.store.collections[id]; dup {
			l.store.Notes = append(l.store.Notes, fmt.Sprintf(
				"skipped collection %q (%s): a collection with that id was already loaded", id, file))
			return nil
		}
		if err := l.store.AddCollection(raw); err != nil {
			return fmt.Errorf("static catalog %s: %w", file, err)
		}
		return l.followLinks(file, doc, id)
	case "Feature":
		l.addItem(file, doc, parentCollection)
		return nil
	case "FeatureCollection":
		features, _ := doc["features"].([]any)
		for i, f := range features {
			item, ok := f.(map[string]any)
			if !ok {
				return fmt.Errorf("static catalog %s: features[%d] is not an object", file, i)
			}
			l.addItem(fmt.Sprintf("%s#features[%d]", file, i), item, parentCollection)
		}
		return nil
	default:
		return fmt.Errorf("static catalog %s: \"type\" is %q, want Catalog, Collection, Feature or FeatureCollection", file, t)
	}
}

func (l *loader) addItem(file string, doc map[string]any, parentCollection string) {
	if c, _ := doc["collection"].(string); c == "" {
		if parentCollection == "" {
			id, _ := doc["id"].(string)
			l.store.Notes = append(l.store.Notes,
				fmt.Sprintf("skipped item %q (%s): it names no collection and no collection links to it", id, file))
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
			return fmt.Errorf("static catalog %s: links[%d] (rel=%s): %w", file, i, rel, err)
		}
		if err := l.loadNode(target, collectionID); err != nil {
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
	if strings.HasPrefix(target, "../") || target == ".." {
		return "", fmt.Errorf("href %q leaves the catalog root", href)
	}
	return target, nil
}
