package stacserver

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxNewIDBytes bounds the id of a created item or collection: it becomes
// a file and folder name (<id>.json, and the temporary .<id>.json.tmp-…
// beside it), which most file systems cap at 255 bytes.
const maxNewIDBytes = 200

// idForbidden are characters a new id may not hold: path separators,
// characters Windows refuses in file names (a catalog is copied between
// systems), and '#', '%', '?', which an href would read as a fragment, an
// escape or a query.
const idForbidden = `/\<>:"|?*#%`

// checkNewID says why id cannot name a new item or collection (nil when it
// can). The rule is strict because the id becomes a file or folder name in
// the catalog directory: no hidden names ('.git' would write into .git/),
// no invisible or direction-changing characters (U+202E RIGHT-TO-LEFT
// OVERRIDE makes a name read differently from what it is), nothing a file
// system or an href treats specially, and a bounded length.
func checkNewID(kind, id string) error {
	bad := func(why string) error {
		return badRequest("the %s id %q cannot be used for a new %s: %s. Use letters, digits and - _ . ~ + @ (for example %q)",
			kind, truncateID(id), kind, why, "flight-042")
	}
	switch {
	case id == "":
		return badRequest("the %s has no id", kind)
	case !utf8.ValidString(id):
		return bad("it is not valid UTF-8")
	case len(id) > maxNewIDBytes:
		return bad(fmt.Sprintf("it is %d bytes long, at most %d", len(id), maxNewIDBytes))
	case strings.HasPrefix(id, "."):
		return bad("it starts with '.', which names a hidden file or folder (such as .git)")
	case strings.HasSuffix(id, "."):
		return bad("it ends with '.', which some file systems drop")
	}
	for _, r := range id {
		switch {
		case strings.ContainsRune(idForbidden, r):
			return bad(fmt.Sprintf("it contains %q; none of %s may appear", r, idForbidden))
		case unicode.IsSpace(r):
			return bad(fmt.Sprintf("it contains white space (%U)", r))
		case unicode.Is(unicode.Cf, r), unicode.IsControl(r):
			return bad(fmt.Sprintf("it contains the invisible control or format character %U", r))
		case unicode.Is(unicode.Co, r), !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S):
			return bad(fmt.Sprintf("it contains %U, which is not an assigned visible character", r))
		}
	}
	return nil
}

func truncateID(id string) string {
	if len(id) <= 80 {
		return id
	}
	cut := 80
	for cut > 0 && !utf8.RuneStart(id[cut]) {
		cut--
	}
	return id[:cut] + "…"
}

// checkFreeFile refuses to write a new document to file when the file is
// already there but is not a document of the catalog: the loader skipped
// it, or nothing links to it (an operator's notes.json beside the items).
// A file holding the very document being created (same type, id and
// collection) is the leftover of a write interrupted before its link was
// written, and may be replaced.
func (d *dirWriter) checkFreeFile(file, kind, typ, id, collection string) error {
	info, err := d.root.Lstat(filepath.FromSlash(file))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err // persistError says why (a link out of the catalog, …)
	}
	if info.Mode().IsRegular() {
		if doc, rerr := d.readJSON(file); rerr == nil && doc["type"] == typ && doc["id"] == id &&
			(collection == "" || doc["collection"] == collection) {
			return nil
		}
	}
	return conflict("the file %s, where the new %s %q would be written, already exists and is not part of the catalog (no link leads to it, or it did not load): nothing was written. Choose another id, or move that file away",
		file, kind, id)
}
