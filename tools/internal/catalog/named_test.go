package catalog

import (
	"strings"
	"testing"
)

func TestParseNamedCatalogsAcceptsEverySeparator(t *testing.T) {
	got, err := ParseNamed("STAC_MCP_CATALOGS", " Internal=https://stac.internal.example/v1/ ,archive=http://10.0.0.5:8080/stac;\nthird_one=https://x.example\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []Preset{
		{Name: "internal", URL: "https://stac.internal.example/v1"},
		{Name: "archive", URL: "http://10.0.0.5:8080/stac"},
		{Name: "third_one", URL: "https://x.example"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].URL != want[i].URL || got[i].Why == "" {
			t.Errorf("entry %d = %+v, want %+v with a description", i, got[i], want[i])
		}
	}
	if empty, err := ParseNamed("STAC_MCP_CATALOGS", " ; ,\n"); err != nil || len(empty) != 0 {
		t.Errorf("separators only: %v, %v; want no catalogs and no error", empty, err)
	}
}

func TestParseNamedCatalogsRejectsWithTheReason(t *testing.T) {
	cases := map[string][]string{
		"internal":                         {"STAC_MCP_CATALOGS", `"internal" is not name=url`},
		"=https://x.example":               {`is not name=url`},
		"9lives=https://x.example":         {`"9lives"`, "starting with a letter"},
		"a b=https://x.example":            {`"a b"`, "lowercase letters"},
		"earth-search=https://x.example":   {`"earth-search" is already a built-in catalog`, "choose another name"},
		"demo=https://x.example":           {`"demo" is already a built-in`},
		"x=https://a.example,x=https://b":  {`"x" is given twice`},
		"x=ftp://a.example":                {`"ftp://a.example" is not an http(s) URL`},
		"x=https://":                       {`not an http(s) URL with a host`},
		"x=stac.internal.example/v1":       {`"stac.internal.example/v1"`},
		"ok=https://a.example;bad=nothing": {`catalog "bad"`},
	}
	for in, wants := range cases {
		_, err := ParseNamed("STAC_MCP_CATALOGS", in)
		if err == nil {
			t.Errorf("%q: accepted", in)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", in, err, w)
			}
		}
	}
}
