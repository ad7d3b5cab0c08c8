package reliability

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/rs/zerolog"
)

// Log event names. Every event carries correlation_id and tool_name.
const (
	eventRetryAttempt = "retry_attempt"
	eventHedgeAttempt = "hedge_attempt"
	eventReplay       = "connection_replay"
	eventRetryGiveUp  = "retry_give_up"
	eventTimeoutAbort = "timeout_abort"
	eventToolComplete = "tool_complete"
)

// NewLogger builds the process logger from STAC_MCP_LOG_LEVEL and
// STAC_MCP_LOG_FORMAT values: level is one of trace, debug, info, warn,
// error (empty: info); format is json (default, empty) or console. w should
// be os.Stderr: stdout belongs to the MCP stdio transport.
func NewLogger(level, format string, w io.Writer) (zerolog.Logger, error) {
	lvl := zerolog.InfoLevel
	if level = strings.ToLower(strings.TrimSpace(level)); level != "" {
		parsed, err := zerolog.ParseLevel(level)
		if err != nil || parsed == zerolog.NoLevel || parsed > zerolog.ErrorLevel {
			return zerolog.Nop(), fmt.Errorf("STAC_MCP_LOG_LEVEL=%q is not valid; accepted: trace, debug, info, warn, error", level)
		}
		lvl = parsed
	}
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "", "json":
	case "console":
		w = zerolog.ConsoleWriter{Out: w, NoColor: true}
	default:
		return zerolog.Nop(), fmt.Errorf("STAC_MCP_LOG_FORMAT=%q is not valid; accepted: json (default) or console", format)
	}
	// Strings are cut in the JSON line, before the console format reads it.
	return zerolog.New(CapLogLines(w)).Level(lvl).With().Timestamp().Logger(), nil
}

// NewSlogLogger adapts logger for libraries that log through log/slog (the
// MCP SDK). Records carrying a session id are logged at debug whatever
// level the library chose: over http a session id is what lets a client
// act in that session, and info-level logs are routinely shipped to log
// stores that more people can read.
func NewSlogLogger(logger zerolog.Logger) *slog.Logger {
	return slog.New(&sessionIDsAtDebug{next: zerolog.NewSlogHandler(logger)})
}

// sessionIDKeys are the attribute keys the SDK puts session ids under.
var sessionIDKeys = []string{"session_id", "sessionid", "sessionID"}

type sessionIDsAtDebug struct {
	next slog.Handler
	// carries: an attribute added with WithAttrs holds a session id, so
	// every record of this handler does.
	carries bool
}

func (h *sessionIDsAtDebug) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *sessionIDsAtDebug) Handle(ctx context.Context, r slog.Record) error {
	if r.Level > slog.LevelDebug && (h.carries || recordHasSessionID(r)) {
		if !h.next.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return h.next.Handle(ctx, r)
}

func (h *sessionIDsAtDebug) WithAttrs(attrs []slog.Attr) slog.Handler {
	carries := h.carries || slices.ContainsFunc(attrs, isSessionIDAttr)
	return &sessionIDsAtDebug{next: h.next.WithAttrs(attrs), carries: carries}
}

func (h *sessionIDsAtDebug) WithGroup(name string) slog.Handler {
	return &sessionIDsAtDebug{next: h.next.WithGroup(name), carries: h.carries}
}

func recordHasSessionID(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = isSessionIDAttr(a)
		return !found
	})
	return found
}

func isSessionIDAttr(a slog.Attr) bool {
	if a.Value.Kind() == slog.KindGroup {
		return slices.ContainsFunc(a.Value.Group(), isSessionIDAttr)
	}
	return slices.Contains(sessionIDKeys, a.Key)
}
