package bundle

import "fmt"

// registrySchemaURL is the registry schema server.json follows; its copy
// is vendored in scripts/release/testdata/registry, which validates the
// filled entry.
const registrySchemaURL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

// The registry entry's types, in the field order of the registry schema.
type (
	registryEntry struct {
		Schema      string             `json:"$schema"`
		Name        string             `json:"name"`
		Title       string             `json:"title"`
		Description string             `json:"description"`
		Version     string             `json:"version"`
		Repository  registryRepository `json:"repository"`
		WebsiteURL  string             `json:"websiteUrl"`
		Packages    []registryPackage  `json:"packages"`
		Meta        registryMeta       `json:"_meta"`
	}
	// registryMeta: the registry schema has no licence field; its
	// publisher-provided metadata is where downstream registries read
	// what the publisher adds.
	registryMeta struct {
		PublisherProvided struct {
			License string `json:"license"`
		} `json:"io.modelcontextprotocol.registry/publisher-provided"`
	}
	registryRepository struct {
		URL    string `json:"url"`
		Source string `json:"source"`
	}
	registryPackage struct {
		RegistryType         string             `json:"registryType"`
		Identifier           string             `json:"identifier"`
		FileSHA256           string             `json:"fileSha256,omitempty"`
		RuntimeHint          string             `json:"runtimeHint,omitempty"`
		Transport            registryTransport  `json:"transport"`
		EnvironmentVariables []registryVariable `json:"environmentVariables"`
	}
	registryTransport struct {
		Type string `json:"type"`
	}
	registryVariable struct {
		Name        string   `json:"name"`
		Description string   `json:"description"`
		IsSecret    bool     `json:"isSecret,omitempty"`
		Format      string   `json:"format,omitempty"`
		Default     string   `json:"default,omitempty"`
		Choices     []string `json:"choices,omitempty"`
	}
)

// ServerJSON renders server.json, the MCP Registry entry: a template whose
// {{.Version}} and {{.MCPBSHA256}} the release step fills in
// (scripts/release/serverjson.go). Both packages, the bundle and the
// container image, offer the variables of the bundle's settings form,
// described as the form describes them.
func ServerJSON() ([]byte, error) {
	var vars []registryVariable
	for _, o := range Options {
		v := registryVariable{Name: o.Env, Description: o.description(), IsSecret: o.Sensitive, Choices: o.Choices}
		if d := fmt.Sprint(o.Default); d != "" {
			v.Default = d
		}
		if o.Kind == "number" {
			v.Format = "number"
		}
		vars = append(vars, v)
	}
	stdio := registryTransport{Type: "stdio"}
	var meta registryMeta
	meta.PublisherProvided.License = License
	return encode(registryEntry{
		Meta:        meta,
		Schema:      registrySchemaURL,
		Name:        "io.github.stacmcp/stac-mcp",
		Title:       displayName,
		Description: description,
		Version:     "{{.Version}}",
		Repository:  registryRepository{URL: repoURL, Source: "github"},
		WebsiteURL:  repoURL + "#readme",
		Packages: []registryPackage{
			{
				RegistryType:         "mcpb",
				Identifier:           repoURL + "/releases/download/v{{.Version}}/stac-mcp-{{.Version}}.mcpb",
				FileSHA256:           "{{.MCPBSHA256}}",
				Transport:            stdio,
				EnvironmentVariables: vars,
			},
			{
				RegistryType:         "oci",
				Identifier:           "ghcr.io/stacmcp/stac-mcp:{{.Version}}",
				RuntimeHint:          "docker",
				Transport:            stdio,
				EnvironmentVariables: vars,
			},
		},
	})
}
