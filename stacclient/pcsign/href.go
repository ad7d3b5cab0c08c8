package pcsign

import (
	"context"
	"net/url"
	"strings"
)

// blobStorageHostSuffix is the host suffix of Azure Blob Storage accounts,
// where all Planetary Computer assets live.
const blobStorageHostSuffix = ".blob.core.windows.net"

// signatureParam is the SAS query parameter holding the signature; a href
// that has it is already signed.
const signatureParam = "sig"

// NeedsSigning reports whether href is an Azure Blob Storage http(s) URL
// without a signature. Hrefs that do not parse are not signed: they are left
// for the caller to report as they are.
func NeedsSigning(href string) bool {
	u, err := url.Parse(strings.TrimSpace(href))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if !strings.HasSuffix(host, blobStorageHostSuffix) || host == blobStorageHostSuffix[1:] {
		return false
	}
	return !u.Query().Has(signatureParam)
}

// signHref returns href with collectionID's token appended to its query,
// keeping the query it already has, and true. Hrefs that NeedsSigning
// rejects come back unchanged with false and no token is fetched. An error
// (an *Error matching ErrSigningFailed) means the href needed signing and
// could not be signed; the returned href is then the unsigned one.
func (s *Signer) signHref(ctx context.Context, collectionID, href string) (string, bool, error) {
	if !NeedsSigning(href) {
		return href, false, nil
	}
	token, err := s.Token(ctx, collectionID)
	if err != nil {
		return href, false, err
	}
	return appendQuery(href, token.Value), true, nil
}

// appendQuery adds query after any query href has and before its fragment.
// It works on the text rather than a re-serialised url.URL so that the rest
// of the (space-trimmed) href stays byte for byte what the catalog sent.
func appendQuery(href, query string) string {
	base, fragment, hasFragment := strings.Cut(strings.TrimSpace(href), "#")
	switch {
	case strings.HasSuffix(base, "?") || strings.HasSuffix(base, "&"):
		base += query
	case strings.Contains(base, "?"):
		base += "&" + query
	default:
		base += "?" + query
	}
	if hasFragment {
		return base + "#" + fragment
	}
	return base
}
