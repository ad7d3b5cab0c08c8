package federation

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// Access is how much of an item's data this server can read: its data
// assets read over HTTP(S), and those it cannot (an s3:// href, a
// requester-pays bucket, which needs credentials the server never sends).
// Of two copies of one scene the one with more readable data is kept.
type Access struct {
	Readable   int
	Unreadable int
	// Why names what makes the unreadable ones so ("s3:// hrefs",
	// "requester-pays"); empty when all are readable.
	Why string
}

// AllReadable reports whether every data asset can be read here.
func (a Access) AllReadable() bool { return a.Unreadable == 0 }

// nonDataRoles are asset roles that are not the data a pixel tool or a
// download wants.
var nonDataRoles = []string{"thumbnail", "overview", "metadata", "visual"}

// AccessOf reads an item's data assets: those with the data role, or,
// when none has it, every asset that is not a thumbnail, overview or
// metadata.
func AccessOf(it *stacclient.Item) Access {
	withData := false
	for _, a := range it.Assets {
		if slices.Contains(a.Roles, "data") {
			withData = true
			break
		}
	}
	itemPays := requesterPays(it.Properties["storage:requester_pays"])
	var acc Access
	reasons := map[string]bool{}
	for _, a := range it.Assets {
		if withData && !slices.Contains(a.Roles, "data") {
			continue
		}
		if !withData && slices.ContainsFunc(a.Roles, func(r string) bool { return slices.Contains(nonDataRoles, r) }) {
			continue
		}
		why := unreadable(a, itemPays)
		if why == "" {
			acc.Readable++
			continue
		}
		acc.Unreadable++
		reasons[why] = true
	}
	for _, w := range []string{"s3:// hrefs", "requester-pays", "no http(s) href"} {
		if reasons[w] {
			if acc.Why != "" {
				acc.Why += ", "
			}
			acc.Why += w
		}
	}
	return acc
}

// unreadable says why an asset cannot be read here ("" when it can).
func unreadable(a stacclient.Asset, itemPays bool) string {
	var pays any
	if raw, ok := a.Extra["storage:requester_pays"]; ok {
		_ = json.Unmarshal(raw, &pays)
	}
	if itemPays || requesterPays(pays) {
		return "requester-pays"
	}
	u, err := url.Parse(strings.TrimSpace(a.Href))
	switch {
	case err != nil || a.Href == "":
		return "no http(s) href"
	case strings.EqualFold(u.Scheme, "s3"):
		return "s3:// hrefs"
	case u.Scheme != "" && !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https"):
		return "no http(s) href"
	}
	return ""
}

func requesterPays(v any) bool {
	b, ok := v.(bool)
	return ok && b
}

// Prefer compares two copies of one scene for keeping: > 0 when a is the
// more useful, < 0 when b is, 0 when neither is (the catalogs' order
// decides). A copy whose data can be read here beats one whose data
// cannot (Earth Search's Landsat on requester-pays s3:// against Planetary
// Computer's on HTTPS); between two readable copies the count of assets
// is no measure (Earth Search lists each Sentinel-2 band twice, as an
// HTTPS COG and as an s3:// JPEG 2000), so they are equal.
func Prefer(a, b Access) int {
	switch ra, rb := a.Readable > 0, b.Readable > 0; {
	case ra && !rb:
		return 1
	case rb && !ra:
		return -1
	}
	return 0
}
