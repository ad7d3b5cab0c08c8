package mapimage

import "github.com/stacmcp/stac-mcp/tools/internal/canvas"

// pt is canvas.Pt under a short name, for the many point literals here.
type pt = canvas.Pt
