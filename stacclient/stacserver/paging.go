package stacserver

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// pageToken is what a next link carries. It is encoded as base64url JSON:
// opaque to clients, deterministic for the same query and page.
type pageToken struct {
	Offset int    `json:"o"`
	Query  string `json:"q,omitempty"` // queryHash of the search it belongs to
	Gen    int    `json:"g,omitempty"` // page generation, for GrowingNextHref
	Limit  int    `json:"l,omitempty"` // page size, kept when a next request omits limit
}

// growthPerPage is how many characters each GrowingNextHref link adds.
const growthPerPage = 512

func encodeToken(t pageToken) string {
	b, _ := json.Marshal(t)
	s := base64.RawURLEncoding.EncodeToString(b)
	if t.Gen > 0 {
		// Padding after "~" is ignored by decodeToken; it only makes the
		// href grow without bound, as some servers' next links do. It is
		// as incompressible as a real server's state would be.
		s += "~" + growthPadding(growthPerPage*t.Gen)
	}
	return s
}

func decodeToken(param, s string) (pageToken, error) {
	raw := strings.TrimPrefix(s, "next:")
	raw, _, _ = strings.Cut(raw, "~")
	var t pageToken
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	if err != nil || t.Offset < 0 {
		return t, badParam(param, s, "the opaque token from this server's next link, unchanged", "not a token this server issued")
	}
	return t, nil
}

// offsetFromToken reads the page offset from token, next or cursor.
func offsetFromToken(values url.Values, queryHash string) (int, error) {
	for _, p := range []string{"token", "next", "cursor"} {
		if s := values.Get(p); s != "" {
			t, err := decodeToken(p, s)
			if err != nil {
				return 0, err
			}
			if t.Query != queryHash {
				return 0, badParam(p, s, "the token from this query's next link", "the token belongs to a different query")
			}
			return t.Offset, nil
		}
	}
	return 0, nil
}

func queryHash(q *searchQuery) string {
	sum := sha256.Sum256([]byte(q.fingerprint()))
	return hex.EncodeToString(sum[:6])
}

// pageLimit applies the default, the maximum and the limit mode to a
// requested page size (0 = not given).
func (s *Server) pageLimit(raw string) (int, error) {
	if raw == "" {
		return s.opts.defaultLimit(), nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, badParam("limit", raw, limitAccepted, "not a whole number")
	}
	if n < 1 {
		return 0, badParam("limit", raw, limitAccepted, "must be at least 1")
	}
	return s.clampLimit(n)
}

func (s *Server) clampLimit(n int) (int, error) {
	if n == 0 {
		return s.opts.defaultLimit(), nil
	}
	if max := s.opts.maxLimit(); n > max {
		if s.opts.LimitMode == LimitReject {
			return 0, &apiError{status: 422, code: "UnprocessableEntity", description: fmt.Sprintf(
				"parameter \"limit\": %d is above the maximum %d (accepted: 1..%d)", n, max, max)}
		}
		return max, nil
	}
	return n, nil
}

// pageBounds is the [start,end) slice of total items for one page.
func pageBounds(total, offset, limit int) (start, end int) {
	start = min(offset, total)
	return start, min(start+limit, total)
}

// nextOffset says where the next page starts, applying the pagination
// faults; ok is false on the last page.
func (s *Server) nextOffset(total, offset, start, end int) (next int, ok bool) {
	switch {
	case start >= total:
		return 0, false // an empty page ends the chain, even a faulty one
	case s.opts.RepeatNextLink:
		return offset, true
	case end >= total:
		if s.opts.TrailingEmptyPage {
			return total, true
		}
		return 0, false
	case s.opts.DuplicateAcrossPages && end-start > 1:
		return end - 1, true
	}
	return end, true
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// growthPadding is n base64url characters of a SHA-256 chain: deterministic,
// and no shorter once compressed than real opaque state.
func growthPadding(n int) string {
	var b strings.Builder
	sum := sha256.Sum256([]byte("growing next href"))
	for b.Len() < n {
		b.WriteString(base64.RawURLEncoding.EncodeToString(sum[:]))
		sum = sha256.Sum256(sum[:])
	}
	return b.String()[:n]
}
