package tools

import (
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
)

// IndexArg names a spectral index (raster/index).
type IndexArg string

func lookupIndex(arg IndexArg) (index.Index, error) {
	ix, err := index.Lookup(string(arg))
	if err != nil {
		return ix, &stacclient.ParamError{Param: "index", Got: string(arg), Reason: "unknown index", Accepted: strings.Join(index.Names(), ", ")}
	}
	return ix, nil
}

// rampWords says a ramp's colours.
func rampWords(name string) string {
	switch name {
	case "vegetation":
		return "red → yellow → green"
	case "water":
		return "brown → white → blue"
	case "built":
		return "green → white → purple"
	}
	return "black → white"
}
