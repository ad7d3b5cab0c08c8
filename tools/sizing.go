package tools

import (
	"github.com/stacmcp/stac-mcp/tools/internal/sizing"
)

// markCopies marks the jobs of one item that hold the same band as another
// job in another format (sizing.MarkCopies decides which), so that a band
// is counted once.
func markCopies(jobs []*assetJob) {
	candidates := make([]sizing.Candidate, len(jobs))
	for i, j := range jobs {
		s := sizing.Unsizable
		switch {
		case j.reason == "" && j.probe == nil:
			s = sizing.SizedByMetadata
		case j.probe != nil:
			s = sizing.Probeable
		}
		candidates[i] = sizing.Candidate{Key: j.key, MediaType: j.mediaType, Bands: j.bands, Raster: j.raster, Sizability: s}
	}
	for i, of := range sizing.MarkCopies(candidates) {
		if of != "" {
			jobs[i].copyOf = of
		}
	}
}
