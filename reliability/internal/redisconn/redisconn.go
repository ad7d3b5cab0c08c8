// Package redisconn is what the stores that keep state in Redis
// (reliability/idempotency and reliability/sharedstate) share: reading a
// Redis URL without letting its password into a message, and the logger
// go-redis writes its own messages to.
package redisconn

import (
	"context"
	"fmt"
	"net/url"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/reliability/redact"
)

// BadURLError is a Redis URL that go-redis does not accept. Neither field
// contains the URL's password.
type BadURLError struct {
	URL    string // the URL with its credentials hidden (redact.URL)
	Reason string // why go-redis refused it
}

func (e *BadURLError) Error() string {
	return fmt.Sprintf("%s is not a Redis URL (%s); want redis://[user:password@]host:port[/db] or rediss://… for TLS", e.URL, e.Reason)
}

// ParseURL reads rawURL as go-redis does (redis:// or rediss://, query
// options included), without connecting.
func ParseURL(rawURL string) (*redis.Options, *BadURLError) {
	o, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, &BadURLError{URL: redact.URL(rawURL), Reason: reason(err, rawURL)}
	}
	return o, nil
}

// reason keeps a password that go-redis's error quotes from reaching a
// message; an error about a URL that does not even parse is not quoted at
// all (where its password is cannot be known).
func reason(err error, rawURL string) string {
	if _, perr := url.Parse(rawURL); perr != nil {
		return "it does not parse as a URL; want redis://[user:password@]host:port[/db] or rediss://…"
	}
	return redact.Password(err.Error(), rawURL)
}

// loggerOnce: go-redis has one logger per process, shared by every client
// (the shared state's and the idempotency store's); the first caller of
// SetLogger sets it.
var loggerOnce sync.Once

// SetLogger sends go-redis's own messages (a dial that failed, say) to log
// as debug events rather than as plain lines on stderr: the stores' callers
// log the failures that matter, once per outage. Only the first call in a
// process has an effect.
func SetLogger(log zerolog.Logger) {
	loggerOnce.Do(func() { redis.SetLogger(logger{log}) })
}

type logger struct{ log zerolog.Logger }

func (l logger) Printf(_ context.Context, format string, v ...any) {
	l.log.Debug().Str("event", "redis_client").Msg(fmt.Sprintf(format, v...))
}
