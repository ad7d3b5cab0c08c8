package pcsign

import (
	"context"
	"errors"
	"testing"
)

const (
	azureHref = "https://sentinel2l2a01.blob.core.windows.net/sentinel2-l2/10/S/EG/2023/10/08/S2A_MSIL2A_20231008T184321_N0509_R070_T10SEG_20231008T233000.SAFE/GRANULE/L2A_T10SEG_A043304_20231008T184925/IMG_DATA/R10m/T10SEG_20231008T184321_B02_10m.tif"
	s3Href    = "https://sentinel-cogs.s3.us-west-2.amazonaws.com/sentinel-s2-l2a-cogs/10/S/EG/2023/10/S2A_10SEG_20231008_0_L2A/B02.tif"
	// pcDataHref is an asset Planetary Computer serves itself (a rendered
	// preview), which needs no token.
	pcDataHref = "https://planetarycomputer.microsoft.com/api/data/v1/item/preview.png?collection=sentinel-2-l2a&item=S2A_MSIL2A_20231008T184321_R070_T10SEG_20231008T233000"
)

func TestNeedsSigning(t *testing.T) {
	cases := []struct {
		name string
		href string
		want bool
	}{
		{"azure blob", azureHref, true},
		{"azure blob, upper-case host", "https://NAIPEUWEST.BLOB.CORE.WINDOWS.NET/naip/v002/al/2019/al_60cm_2019/30085/m_3008501_ne_16_060_20191002.tif", true},
		{"azure blob over http", "http://naipeuwest.blob.core.windows.net/naip/x.tif", true},
		{"azure blob with another query", azureHref + "?versionid=2", true},
		{"azure blob with surrounding spaces", "  " + azureHref + " ", true},
		{"already signed", azureHref + "?st=a&se=b&sp=rl&sig=abc%3D", false},
		{"already signed, sig first", azureHref + "?sig=abc&se=b", false},
		{"parameter merely containing sig", azureHref + "?xsig=1", true},
		{"amazon s3", s3Href, false},
		{"planetary computer data API", pcDataHref, false},
		{"look-alike host", "https://blob.core.windows.net.example.com/x.tif", false},
		{"suffix without account", "https://blob.core.windows.net/x.tif", false},
		{"abfs scheme", "abfs://naip@naipeuwest.dfs.core.windows.net/x.tif", false},
		{"az scheme on blob host", "az://naipeuwest.blob.core.windows.net/naip/x.tif", false},
		{"relative href", "./B02.tif", false},
		{"empty", "", false},
		{"unparseable", "https://naipeuwest.blob.core.windows.net/%zz", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := NeedsSigning(c.href); got != c.want {
				t.Errorf("NeedsSigning(%q) = %v, want %v", c.href, got, c.want)
			}
		})
	}
}

func TestAppendQuery(t *testing.T) {
	const token = "se=x&sig=y"
	cases := []struct{ href, want string }{
		{"https://a.blob.core.windows.net/c/b.tif", "https://a.blob.core.windows.net/c/b.tif?se=x&sig=y"},
		{"https://a.blob.core.windows.net/c/b.tif?v=1", "https://a.blob.core.windows.net/c/b.tif?v=1&se=x&sig=y"},
		{"https://a.blob.core.windows.net/c/b.tif?", "https://a.blob.core.windows.net/c/b.tif?se=x&sig=y"},
		{"https://a.blob.core.windows.net/c/b.tif?v=1&", "https://a.blob.core.windows.net/c/b.tif?v=1&se=x&sig=y"},
		{"https://a.blob.core.windows.net/c/b.zarr#/band", "https://a.blob.core.windows.net/c/b.zarr?se=x&sig=y#/band"},
		{"https://a.blob.core.windows.net/c/b.zarr?v=1#x?y", "https://a.blob.core.windows.net/c/b.zarr?v=1&se=x&sig=y#x?y"},
		// Escapes in the path stay exactly as sent.
		{"https://a.blob.core.windows.net/c/a%20b%2Fc.tif", "https://a.blob.core.windows.net/c/a%20b%2Fc.tif?se=x&sig=y"},
	}
	for _, c := range cases {
		if got := appendQuery(c.href, token); got != c.want {
			t.Errorf("appendQuery(%q) = %q, want %q", c.href, got, c.want)
		}
	}
}

func TestSignHrefAppendsTokenAndKeepsQuery(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	signer := startSigner(t, endpoint, clock, Options{})
	ctx := context.Background()

	signed, ok, err := signer.signHref(ctx, "sentinel-2-l2a", azureHref)
	if err != nil || !ok {
		t.Fatalf("signHref = %q, %v, %v; want signed", signed, ok, err)
	}
	if want := azureHref + "?" + tokenValue("sentinel-2-l2a", 1); signed != want {
		t.Errorf("signed href\n got %s\nwant %s", signed, want)
	}
	if NeedsSigning(signed) {
		t.Errorf("signed href %q still NeedsSigning", signed)
	}

	withQuery := azureHref + "?versionid=2023-10-08"
	signed, ok, err = signer.signHref(ctx, "sentinel-2-l2a", withQuery)
	if err != nil || !ok {
		t.Fatalf("signHref(with query) = %q, %v, %v; want signed", signed, ok, err)
	}
	if want := withQuery + "&" + tokenValue("sentinel-2-l2a", 1); signed != want {
		t.Errorf("signed href with query\n got %s\nwant %s", signed, want)
	}
	if n := endpoint.count("sentinel-2-l2a"); n != 1 {
		t.Errorf("token requests = %d, want 1 (the second href reuses the cached token)", n)
	}
}

func TestSignHrefLeavesOtherHrefsAloneWithoutFetching(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	signer := startSigner(t, endpoint, clock, Options{})

	alreadySigned := azureHref + "?" + tokenValue("sentinel-2-l2a", 7)
	for _, href := range []string{s3Href, pcDataHref, alreadySigned, "./B02.tif", ""} {
		got, ok, err := signer.signHref(context.Background(), "sentinel-2-l2a", href)
		if err != nil || ok || got != href {
			t.Errorf("signHref(%q) = %q, %v, %v; want it unchanged, false, nil", href, got, ok, err)
		}
	}
	if n := endpoint.count("sentinel-2-l2a"); n != 0 {
		t.Errorf("token requests = %d, want 0: no href needed a token", n)
	}
}

func TestSignHrefFailureKeepsHrefAndSaysUnsigned(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	endpoint.setRespond(func(string, int) answer { return answer{503, `{"detail":"Service Unavailable"}`} })
	signer := startSigner(t, endpoint, clock, Options{})

	got, ok, err := signer.signHref(context.Background(), "naip", azureHref)
	if err == nil || ok || got != azureHref {
		t.Fatalf("signHref = %q, %v, %v; want the unsigned href, false and an error", got, ok, err)
	}
	if !errors.Is(err, ErrSigningFailed) {
		t.Errorf("error %v does not match ErrSigningFailed", err)
	}
}
