package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// GetConformanceIn optionally asks about specific conformance classes.
type GetConformanceIn struct {
	CatalogArg
	Check StringList `json:"check,omitempty" jsonschema:"URIs or names (filter, sort, ...)"`
}

// ConformanceCheck answers one checked URI or capability name.
type ConformanceCheck struct {
	URI       string `json:"uri" jsonschema:"the URI or capability name as given"`
	Satisfied bool   `json:"satisfied"`
	Evidence  string `json:"evidence,omitempty" jsonschema:"for a capability name: the conformance URI or link that shows support"`
}

// GetConformanceOut lists the catalog's conformance classes.
type GetConformanceOut struct {
	ConformsTo   []string           `json:"conforms_to" jsonschema:"every conformance class URI the catalog declares"`
	Count        int                `json:"count"`
	Checks       []ConformanceCheck `json:"checks" jsonschema:"one answer per URI in check (empty when check was not given)"`
	AllSatisfied bool               `json:"all_satisfied" jsonschema:"true when every checked URI is satisfied (true when nothing was checked)"`
}

// GetConformance is the get_conformance tool.
func GetConformance() Tool {
	return define(&mcp.Tool{
		Name:  "get_conformance",
		Title: "Conformance classes",
		Description: "The conformance classes the catalog declares; check tests class URIs (version-tolerant) or capability names.\n" +
			`Example: {"check":["filter","sort"]}`,
		Annotations: readOnlyAnnotations("Conformance classes"),
	}, true, getConformance)
}

func getConformance(ctx context.Context, c *Call, in GetConformanceIn) (GetConformanceOut, string, error) {
	fail := failWith[GetConformanceOut]()
	checks, err := in.Check.Strings("check")
	if err != nil {
		return fail(err)
	}
	classes, err := c.Catalog.Client.Conformance(ctx)
	if err != nil {
		return fail(err)
	}
	out := GetConformanceOut{ConformsTo: nonNilStrings(classes), Count: len(classes), Checks: []ConformanceCheck{}, AllSatisfied: true}
	var caps *stacclient.Capabilities
	for _, entry := range checks {
		check := ConformanceCheck{URI: entry}
		if strings.Contains(entry, "://") {
			check.Satisfied = stacclient.ConformsTo(classes, entry)
		} else {
			// A capability name, as get_capabilities lists them.
			if !slices.Contains(stacclient.AllCapabilities, stacclient.Capability(entry)) {
				return fail(&stacclient.ParamError{Param: "check", Got: entry,
					Reason: "neither a conformance URI nor a capability name", Accepted: "conformance class URIs (https://...) or capability names: " + capabilityNames()})
			}
			if caps == nil {
				if caps, err = c.Catalog.Client.Capabilities(ctx); err != nil {
					return fail(err)
				}
			}
			ev, ok := caps.Supported[stacclient.Capability(entry)]
			check.Satisfied = ok
			if ok {
				check.Evidence = ev.Value
			}
		}
		out.Checks = append(out.Checks, check)
		out.AllSatisfied = out.AllSatisfied && check.Satisfied
	}
	var b strings.Builder
	for _, ch := range out.Checks {
		verdict := "not satisfied"
		if ch.Satisfied {
			verdict = "satisfied"
		}
		if ch.Evidence != "" {
			verdict += " (" + ch.Evidence + ")"
		}
		fmt.Fprintf(&b, "Check %s: %s\n", ch.URI, verdict)
	}
	fmt.Fprintf(&b, "%d conformance classes:\n", out.Count)
	for _, uri := range out.ConformsTo {
		fmt.Fprintf(&b, "- %s\n", uri)
	}
	return out, strings.TrimRight(b.String(), "\n"), nil
}

// capabilityNames lists every capability name, comma-separated.
func capabilityNames() string {
	names := make([]string, len(stacclient.AllCapabilities))
	for i, c := range stacclient.AllCapabilities {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}
