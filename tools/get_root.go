package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GetRootIn is get_root's input: only the catalog.
type GetRootIn struct {
	CatalogArg
}

// GetRootOut describes the catalog's landing page.
type GetRootOut struct {
	CatalogURL       string    `json:"catalog_url" jsonschema:"the STAC API root that was asked"`
	ID               string    `json:"id"`
	Title            string    `json:"title,omitempty"`
	Description      string    `json:"description,omitempty"`
	Type             string    `json:"type" jsonschema:"Catalog (a STAC API landing page) or Collection"`
	StacVersion      string    `json:"stac_version,omitempty"`
	ConformanceCount int       `json:"conformance_count" jsonschema:"number of conformance classes on the landing page (get_conformance lists them)"`
	LinkCount        int       `json:"link_count" jsonschema:"number of links on the landing page"`
	ChildCount       int       `json:"child_count" jsonschema:"number of rel=child links (static catalogs list their collections this way)"`
	KeyLinks         []KeyLink `json:"key_links" jsonschema:"links a client acts on: search, collections, conformance, queryables, aggregate, service-desc, ..."`
	Notes            []string  `json:"notes" jsonschema:"for a local static catalog: the files its loading skipped and why"`
}

// GetRoot is the get_root tool.
func GetRoot() Tool {
	return define(&mcp.Tool{
		Name:  "get_root",
		Title: "Catalog landing page",
		Description: "Landing page: id, title, description, STAC version, key links. Call it first on an unknown catalog.\n" +
			`Example: {"catalog_url":"demo"}`,
		Annotations: readOnlyAnnotations("Catalog landing page"),
	}, true, getRoot)
}

func getRoot(ctx context.Context, c *Call, in GetRootIn) (GetRootOut, string, error) {
	root, err := c.Catalog.Client.Root(ctx)
	if err != nil {
		return GetRootOut{}, "", err
	}
	out := GetRootOut{
		CatalogURL:       c.Catalog.Shown(),
		ID:               root.ID,
		Title:            root.Title,
		Description:      root.Description,
		Type:             root.Type,
		StacVersion:      root.StacVersion,
		ConformanceCount: len(root.ConformsTo),
		LinkCount:        len(root.Links),
		KeyLinks:         keyLinks(root.Links),
		Notes:            loadNotes(c.Catalog),
	}
	for _, l := range root.Links {
		if l.Rel == "child" {
			out.ChildCount++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s %s, STAC %s) at %s\n", orDash(out.Title), out.Type, out.ID, orDash(out.StacVersion), out.CatalogURL)
	if out.Description != "" {
		fmt.Fprintf(&b, "%s\n", out.Description)
	}
	fmt.Fprintf(&b, "%d conformance classes, %d links (%d child)\n", out.ConformanceCount, out.LinkCount, out.ChildCount)
	for _, l := range out.KeyLinks {
		b.WriteString("- " + keyLinkText(l) + "\n")
	}
	writeLines(&b, "Note: ", out.Notes)
	b.WriteString("Next: get_capabilities to see what searches this catalog supports.")
	return out, b.String(), nil
}

// readOnlyAnnotations are the honest annotations of every STAC tool: they
// only read, repeat safely, and talk to an outside catalog.
func readOnlyAnnotations(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{
		Title:          title,
		ReadOnlyHint:   true,
		IdempotentHint: true,
		OpenWorldHint:  jsonschema.Ptr(true),
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// keyLinkText is one key link: rel (method): href [media type] "title".
func keyLinkText(l KeyLink) string {
	s := l.Rel
	if l.Method != "" {
		s += " (" + l.Method + ")"
	}
	s += ": " + l.Href
	if l.Type != "" {
		s += " [" + l.Type + "]"
	}
	if l.Title != "" {
		s += " \"" + l.Title + "\""
	}
	return s
}
