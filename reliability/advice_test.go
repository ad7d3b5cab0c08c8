package reliability_test

import (
	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/tools/advice"
)

// The layer's tests word their denials as the server does (export_test.go).
func init() { reliability.UseTestAdvice(advice.Next) }
