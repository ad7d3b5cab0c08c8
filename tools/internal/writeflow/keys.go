package writeflow

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability/idempotency"
)

// KeyProblem says why the store cannot take key ("" when it can); the
// tools refuse such an idempotency_key argument before anything else.
func KeyProblem(key string) string {
	switch {
	case strings.TrimSpace(key) == "":
		return "empty"
	case len(key) > idempotency.MaxKeyLength:
		return fmt.Sprintf("%d bytes long", len(key))
	case strings.IndexFunc(key, unicode.IsControl) >= 0:
		return "contains a control character"
	}
	return ""
}

// CallerOf names who is calling, for the idempotency records: a hash of
// the HTTP bearer token (never the token itself; the server admitted it,
// so only its holders can be this caller, and each configured token is a
// caller of its own), else "http" for every unauthenticated HTTP client
// together (a client's self-declared clientInfo.name is not an identity:
// anyone can send any name), else "stdio" (stdio and the in-process `call`
// command, whose single user is the operator).
func CallerOf(req *mcp.CallToolRequest) string {
	if req == nil {
		return "stdio"
	}
	return CallerOfExtra(req.Extra)
}

// CallerOfExtra is CallerOf for any request's extra (resources/read's too).
func CallerOfExtra(extra *mcp.RequestExtra) string {
	if extra == nil {
		return "stdio"
	}
	if ti := extra.TokenInfo; ti != nil && ti.UserID != "" {
		return "user:" + shortHash("stac-mcp user\x00"+ti.UserID)
	}
	if extra.Header == nil {
		return "stdio"
	}
	if scheme, token, ok := strings.Cut(strings.TrimSpace(extra.Header.Get("Authorization")), " "); ok &&
		strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(token) != "" {
		return "token:" + shortHash("stac-mcp token\x00"+strings.TrimSpace(token))
	}
	return "http"
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// fingerprint binds a key to the catalog and the arguments (the key
// itself excluded); JSON encoding sorts map keys, so it is canonical.
func fingerprint(catalogKey string, args any) string {
	raw, _ := json.Marshal(map[string]any{"catalog": catalogKey, "args": args}) // decoded JSON always encodes
	return shortHash(string(raw))
}

// upstreamKey is the Idempotency-Key sent to the catalog: derived from the
// record's key, so that every send of one write carries the same value
// while two callers' equal keys differ.
func upstreamKey(k idempotency.Key) string {
	return shortHash("stac-mcp upstream\x00" + k.Caller + "\x00" + k.Tool + "\x00" + k.Key)
}
