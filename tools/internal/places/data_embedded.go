//go:build !places_beside

package places

import _ "embed"

// embeddedPlaces is the gazetteer (data/README.md: sources, versions,
// checksums, licences, and how to rebuild it), in the binary: what `go
// install` and the release archives ship.
//
//go:embed data/places.bin.zst
var embeddedPlaces []byte

func placesData() ([]byte, error) { return embeddedPlaces, nil }
