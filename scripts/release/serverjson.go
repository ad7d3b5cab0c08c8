package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"text/template"

	"github.com/google/jsonschema-go/jsonschema"
)

// The registry entry. server.json at the repository root is a template
// (generated with manifest.json by cmd/stac-mcp/internal/gen): the
// release step fills in the version (in the bundle's URL and the image tag)
// and the bundle's SHA-256, then validates the result against the
// registry's schema, vendored in testdata/registry (source and licence
// there).

// registrySchemaURL is the $schema server.json must declare.
const registrySchemaURL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

//go:embed testdata/registry/server.schema.2025-12-11.json
var registrySchema []byte

// serverJSONFields are the template's placeholders.
type serverJSONFields struct {
	Version    string // e.g. 1.2.3: the tag without "v"
	MCPBSHA256 string // hex SHA-256 of stac-mcp-<Version>.mcpb
}

var (
	// semverRe is semver 2.0.0's own pattern.
	semverRe = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
	sha256Re = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

// renderServerJSON fills root/server.json and validates the result.
func renderServerJSON(root, version, mcpbSHA256 string) ([]byte, error) {
	tmpl, err := os.ReadFile(filepath.Join(root, "server.json"))
	if err != nil {
		return nil, err
	}
	return fillServerJSON(tmpl, serverJSONFields{Version: version, MCPBSHA256: mcpbSHA256})
}

func fillServerJSON(tmpl []byte, fields serverJSONFields) ([]byte, error) {
	if !semverRe.MatchString(fields.Version) {
		return nil, fmt.Errorf("version %q is not a semantic version (MAJOR.MINOR.PATCH[-pre][+build])", fields.Version)
	}
	if !sha256Re.MatchString(fields.MCPBSHA256) {
		return nil, fmt.Errorf("bundle SHA-256 %q is not 64 lowercase hex digits", fields.MCPBSHA256)
	}
	t, err := template.New("server.json").Option("missingkey=error").Parse(string(tmpl))
	if err != nil {
		return nil, fmt.Errorf("server.json: %w", err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, fields); err != nil {
		return nil, fmt.Errorf("server.json: %w", err)
	}
	if err := validateServerJSON(out.Bytes()); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// validateServerJSON checks an entry against the registry's schema, and
// that it declares that schema.
func validateServerJSON(entry []byte) error {
	var schema jsonschema.Schema
	if err := json.Unmarshal(registrySchema, &schema); err != nil {
		return fmt.Errorf("registry schema: %w", err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return fmt.Errorf("registry schema: %w", err)
	}
	var instance any
	if err := json.Unmarshal(entry, &instance); err != nil {
		return fmt.Errorf("server.json is not JSON: %w", err)
	}
	if err := resolved.Validate(instance); err != nil {
		return fmt.Errorf("server.json does not match the registry schema: %w", err)
	}
	if got := instance.(map[string]any)["$schema"]; got != registrySchemaURL {
		return fmt.Errorf("server.json declares $schema %v, want %s", got, registrySchemaURL)
	}
	return nil
}
