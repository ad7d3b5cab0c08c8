package transport

import (
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"
)

// ServeMetrics serves metrics (the reliability layer's Prometheus registry)
// at /metrics on addr, for stdio mode's --metrics-addr: behind token when
// one is set, and behind the Host and Origin checks of /mcp. It returns
// the bound address and a function that stops it.
func ServeMetrics(addr string, metrics http.Handler, token string, logger zerolog.Logger) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", guardMetrics(metrics))
	srv := &http.Server{Handler: requireBearerToken(token, mux), ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout: time.Minute, MaxHeaderBytes: httpMaxHeaderBytes}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error().Err(err).Msg("metrics server stopped")
		}
	}()
	logger.Info().Str("addr", ln.Addr().String()).Msg("serving /metrics")
	return ln.Addr().String(), func() { _ = srv.Close(); <-done }, nil
}

// guardMetrics is /metrics with the same Host and Origin checks as /mcp:
// without a token (loopback) a web page could otherwise read it through
// DNS rebinding.
func guardMetrics(metrics http.Handler) http.Handler {
	return rejectForeignHost(rejectForeignOrigin(metrics))
}
