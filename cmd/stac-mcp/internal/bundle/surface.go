package bundle

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/tools"
	"github.com/stacmcp/stac-mcp/tools/advice"
)

// Surface lists the tools and prompts of a server with the defaults (every
// read-only toolset, no write tool), as the bundle runs it, over the SDK's
// in-memory transport as a client sees them. Nothing is called, so nothing
// leaves the machine. TestManifestListsWhatTheServerLists (cmd/stac-mcp)
// checks that the command's own wiring lists the same.
func Surface(ctx context.Context) ([]*mcp.Tool, []*mcp.Prompt, error) {
	logger := zerolog.Nop()
	layer := reliability.New(reliability.DefaultPolicy(), reliability.Options{Logger: &logger, Advice: advice.Next})
	cats := tools.NewCatalogs(tools.CatalogsOptions{Default: tools.DefaultCatalog, HTTPClient: layer.HTTPClient()})
	defer cats.Close()
	d := &tools.Deps{Layer: layer, Catalogs: cats, Logger: logger}
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := tools.NewServer(d, "bundle").Connect(ctx, serverT, nil)
	if err != nil {
		return nil, nil, err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bundle", Version: "0"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		return nil, nil, err
	}
	defer cs.Close()
	var listed []*mcp.Tool
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, nil, fmt.Errorf("tools/list: %w", err)
		}
		listed = append(listed, tool)
	}
	var prompts []*mcp.Prompt
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			return nil, nil, fmt.Errorf("prompts/list: %w", err)
		}
		prompts = append(prompts, p)
	}
	return listed, prompts, nil
}
