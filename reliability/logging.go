package reliability

import (
	"fmt"
	"io"
	"strings"

	"github.com/rs/zerolog"
)

// Log event names. Every event carries correlation_id and tool_name.
const (
	eventRetryAttempt = "retry_attempt"
	eventHedgeAttempt = "hedge_attempt"
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
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}
