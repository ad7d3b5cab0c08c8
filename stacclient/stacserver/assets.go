package stacserver

import (
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"strings"
)

// Asset files of a static catalog (LoadOptions.ServeAssetFiles): an item
// loaded from a file whose asset href is relative (for example
// "../assets/<id>/B04.tif") names a file of the catalog itself. The server
// serves that file at /collections/{c}/items/{i}/assets/{key}, with Range
// support (http.ServeContent), and gives the asset that absolute href in
// every answer, so a client reads the pixels as it would from a remote
// catalog's bucket. Only files that a loaded item names are served: the
// endpoint is not a view of the catalog's directory.

// assetFile is where a relative asset href points inside the catalog's FS.
type assetFile struct {
	path      string // inside fsys, resolved against the item's file
	mediaType string // the asset's "type", if any
}

// recordAssetFiles finds it's relative asset hrefs that name regular files
// of fsys. A relative href that leaves the catalog or names no regular file
// is noted and left as it is.
func (l *loader) recordAssetFiles(it *storedItem, file string) {
	assets, _ := it.doc["assets"].(map[string]any)
	for key, v := range assets {
		a, _ := v.(map[string]any)
		href, _ := a["href"].(string)
		if href == "" || strings.Contains(href, "://") || strings.HasPrefix(href, "/") || strings.HasPrefix(href, "#") {
			continue // absolute: served by its own host
		}
		target, err := resolveHref(file, href)
		if err == nil {
			var info fs.FileInfo
			if info, err = fs.Stat(l.fsys, target); err == nil && !info.Mode().IsRegular() {
				err = fs.ErrInvalid
			}
		}
		if err != nil {
			if !l.opts.QuietAssetFiles {
				l.note("item %q (%s): asset %q (href %q) is not served: %v", it.id, file, key, href, err)
			}
			continue
		}
		if it.assetFiles == nil {
			it.assetFiles = map[string]assetFile{}
			it.assetFS = l.fsys
		}
		mt, _ := a["type"].(string)
		it.assetFiles[key] = assetFile{path: target, mediaType: mt}
	}
}

// withAssetHrefs rewrites doc's served asset hrefs to this server's absolute
// URLs, and with assetDir (Options.AssetDir) its other relative hrefs to
// absolute paths; doc is a shallow copy of the stored item and its assets
// are copied before they change.
func withAssetHrefs(doc map[string]any, base, assetDir string, it *storedItem) {
	if len(it.assetFiles) == 0 && (assetDir == "" || it.file == "") {
		return
	}
	assets, _ := doc["assets"].(map[string]any)
	out := make(map[string]any, len(assets))
	prefix := base + "/collections/" + url.PathEscape(it.collection) + "/items/" + url.PathEscape(it.id) + "/assets/"
	for key, v := range assets {
		out[key] = v
		a, ok := v.(map[string]any)
		if !ok {
			continue
		}
		href, _ := a["href"].(string)
		// On disk, the path names the file to a reader (the file is also
		// served at the URL, for tools that fetch it); otherwise the URL.
		if p, ok := localAssetPath(assetDir, it.file, href); ok {
			href = p
		} else if _, ok := it.assetFiles[key]; ok {
			href = prefix + url.PathEscape(key)
		} else {
			continue
		}
		a2 := shallowCopy(a)
		a2["href"] = href
		out[key] = a2
	}
	doc["assets"] = out
}

// relativeHref reports an href relative to its document: no scheme, no
// host, not rooted ("/…", "C:\…") and not a fragment.
func relativeHref(href string) bool {
	if href == "" || strings.HasPrefix(href, "/") || strings.HasPrefix(href, "#") || filepath.IsAbs(href) {
		return false
	}
	u, err := url.Parse(href)
	return err == nil && u.Scheme == "" && u.Host == ""
}

// localAssetPath is the absolute path on this machine that a relative
// asset href of the item in file (a path in the catalog, "#…" for a member
// of an ItemCollection file) names, under dir, the catalog's directory.
func localAssetPath(dir, file, href string) (string, bool) {
	if dir == "" || file == "" || !relativeHref(href) {
		return "", false
	}
	file, _, _ = strings.Cut(file, "#")
	return filepath.Join(dir, filepath.FromSlash(path.Join(path.Dir(file), href))), true
}

// restoreAssetHrefs puts back, in a document replacing old, the href as
// written of every asset sent with the path it was served with (a client
// that read the item and writes it back whole).
func restoreAssetHrefs(doc map[string]any, dir string, old *storedItem) {
	assets, _ := doc["assets"].(map[string]any)
	oldAssets, _ := old.doc["assets"].(map[string]any)
	if dir == "" || len(assets) == 0 {
		return
	}
	out := make(map[string]any, len(assets))
	for key, v := range assets {
		out[key] = v
		a, _ := v.(map[string]any)
		o, _ := oldAssets[key].(map[string]any)
		href, _ := a["href"].(string)
		written, _ := o["href"].(string)
		if served, ok := localAssetPath(dir, old.file, written); ok && href != "" && filepath.Clean(href) == served {
			a2 := shallowCopy(a)
			a2["href"] = written
			out[key] = a2
		}
	}
	doc["assets"] = out
}

// relativeAssetHrefs is doc with every asset href that is an absolute path
// inside dir made relative to file (the item's file in the catalog), so a
// catalog's files never hold this machine's paths; doc is not changed.
func relativeAssetHrefs(doc map[string]any, dir, file string) map[string]any {
	assets, _ := doc["assets"].(map[string]any)
	if dir == "" || len(assets) == 0 {
		return doc
	}
	from := filepath.Join(dir, filepath.FromSlash(path.Dir(file)))
	var out map[string]any
	for key, v := range assets {
		a, _ := v.(map[string]any)
		href, _ := a["href"].(string)
		if !filepath.IsAbs(href) {
			continue
		}
		inside, err := filepath.Rel(dir, href)
		if err != nil || inside == ".." || strings.HasPrefix(inside, ".."+string(filepath.Separator)) {
			continue // outside the catalog: the path the client chose
		}
		rel, err := filepath.Rel(from, href)
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		if !strings.HasPrefix(rel, "../") {
			rel = "./" + rel
		}
		if out == nil {
			out = make(map[string]any, len(assets))
			for k, v := range assets {
				out[k] = v
			}
		}
		a2 := shallowCopy(a)
		a2["href"] = rel
		out[key] = a2
	}
	if out == nil {
		return doc
	}
	d2 := shallowCopy(doc)
	d2["assets"] = out
	return d2
}

// handleAssetFile serves an asset file named by a loaded item.
func (s *Server) handleAssetFile(w http.ResponseWriter, r *http.Request) {
	cid, iid, key := r.PathValue("collectionId"), r.PathValue("itemId"), r.PathValue("key")
	c, ok := s.knownCollection(w, cid)
	if !ok {
		return
	}
	it, ok := c.byID[iid]
	if !ok {
		writeError(w, notFound("item %q not found in collection %q", iid, cid))
		return
	}
	af, ok := it.assetFiles[key]
	if !ok {
		writeError(w, notFound("item %q has no asset %q served by this server", iid, key))
		return
	}
	f, err := it.assetFS.Open(af.path)
	if err != nil {
		writeError(w, notFound("asset %q of item %q: its file is gone", key, iid))
		return
	}
	defer f.Close()
	info, err := f.Stat()
	rs, seekable := f.(io.ReadSeeker)
	if err != nil || !seekable || !info.Mode().IsRegular() {
		writeError(w, notFound("asset %q of item %q cannot be served", key, iid))
		return
	}
	if af.mediaType != "" {
		w.Header().Set("Content-Type", af.mediaType)
	}
	http.ServeContent(w, r, path.Base(af.path), info.ModTime(), rs)
}
