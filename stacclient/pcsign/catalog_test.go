package pcsign

import "testing"

func TestIsPlanetaryComputer(t *testing.T) {
	cases := []struct {
		url  string
		want bool
	}{
		{stacAPIURL, true},
		{"https://planetarycomputer.microsoft.com/api/stac/v1/", true},
		{"https://PlanetaryComputer.Microsoft.com/api/stac/v1", true},
		{"https://planetarycomputer.microsoft.com/api/stac/v1/collections/naip", true},
		{"https://planetarycomputer.microsoft.com:443/api/stac/v1", true},
		{"  https://planetarycomputer.microsoft.com/api/stac/v1  ", true},
		{"https://planetarycomputer.microsoft.com/api/stac/v1?foo=bar", true},
		{"https://planetarycomputer.microsoft.com/api/stac/v10", false},
		{"https://planetarycomputer.microsoft.com/api/data/v1", false},
		{"https://planetarycomputer.microsoft.com/", false},
		{"https://planetarycomputer.microsoft.com.evil.example/api/stac/v1", false},
		{"https://earth-search.aws.element84.com/v1", false},
		{"ftp://planetarycomputer.microsoft.com/api/stac/v1", false},
		{"planetarycomputer.microsoft.com/api/stac/v1", false},
		{"", false},
		{"://", false},
	}
	for _, c := range cases {
		if got := IsPlanetaryComputer(c.url); got != c.want {
			t.Errorf("IsPlanetaryComputer(%q) = %v, want %v", c.url, got, c.want)
		}
	}
}
