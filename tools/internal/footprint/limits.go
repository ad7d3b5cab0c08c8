package footprint

import "fmt"

// MaxVertices bounds the vertices one measurement processes: the area of
// interest and every footprint of a coverage report together (Measure), or
// one footprint against an area (NewArea, Overlap). The set operations
// cannot be interrupted once started and their cost grows faster than the
// vertices (100 overlapping footprints: 5,000 vertices in 0.6 s, 50,000 in
// 4.5 s, 100,000 in 8.7 s on a busy 2-core machine; 400,000 took 353 s of
// CPU), so an unbounded input would keep a core busy long
// after the call's deadline. Real footprints have 5 to 50 vertices (a
// hundred such items are 5,000); 50,000 leaves room for detailed areas.
const MaxVertices = 50_000

// VertexLimitError is input over MaxVertices, refused before any work.
type VertexLimitError struct {
	Vertices, Limit int
	What            string // "the area of interest and 100 footprints"
}

func (e *VertexLimitError) Error() string {
	return fmt.Sprintf("%s: %d vertices in all, over the %d one measurement processes", e.What, e.Vertices, e.Limit)
}

// Vertices counts the vertices of s (every ring's points).
func (s Shape) Vertices() int {
	n := 0
	for _, p := range s.Polygons {
		for _, r := range p {
			n += len(r)
		}
	}
	return n
}

// checkVertices refuses shapes whose vertices add up past MaxVertices.
func checkVertices(what string, shapes ...Shape) error {
	n := 0
	for _, s := range shapes {
		n += s.Vertices()
	}
	if n > MaxVertices {
		return &VertexLimitError{Vertices: n, Limit: MaxVertices, What: what}
	}
	return nil
}
