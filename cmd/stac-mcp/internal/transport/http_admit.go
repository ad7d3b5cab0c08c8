package transport

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// admitListener holds at most max connections. With a bearer token
// configured (evict), past the cap the accepted connection takes the slot
// of the oldest one that never proved the token and is idle between
// requests, or has sent nothing for newGrace since it connected. 600 idle
// unauthenticated loopback connections, exempt from the per-address cap,
// pushed the p99 of authenticated calls to 9.5 s by holding every slot;
// now they are closed as clients that have a use for the slot
// arrive. When no connection is evictable, Accept waits for one to close
// or become evictable. Without a token nobody is authenticated, and the
// cap only makes Accept wait, as before.
type admitListener struct {
	net.Listener
	max     int
	evict   bool               // a token is configured: unauthenticated idle connections give up their slots
	evicted prometheus.Counter // set by ServeHTTP; nil in tests that do not count

	mu     sync.Mutex
	open   map[*admittedConn]struct{}
	seq    uint64        // order of the last state change, for "oldest"
	freed  chan struct{} // signalled when a slot may have freed
	done   chan struct{} // closed by Close
	closed sync.Once
}

func newAdmitListener(ln net.Listener, max int) *admitListener {
	return &admitListener{Listener: ln, max: max, open: map[*admittedConn]struct{}{},
		freed: make(chan struct{}, 1), done: make(chan struct{})}
}

// admittedConn is a connection the admitListener counts.
type admittedConn struct {
	net.Conn
	l *admitListener

	// guarded by l.mu
	state         http.ConnState
	since         uint64    // l.seq at the last state change
	at            time.Time // time of the last state change
	authenticated bool

	once sync.Once
}

func (c *admittedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

func (l *admitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		l.mu.Lock()
		if len(l.open) < l.max {
			l.seq++
			ac := &admittedConn{Conn: c, l: l, state: http.StateNew, since: l.seq, at: time.Now()}
			l.open[ac] = struct{}{}
			l.mu.Unlock()
			return ac, nil
		}
		victim, wait := l.evictableLocked(time.Now())
		l.mu.Unlock()
		if victim != nil {
			_ = victim.Close() // frees its slot (release)
			if l.evicted != nil {
				l.evicted.Inc()
			}
			continue
		}
		var ripe <-chan time.Time // a silent connection reaches newGrace
		var timer *time.Timer
		if wait > 0 {
			timer = time.NewTimer(wait)
			ripe = timer.C
		}
		select {
		case <-l.freed:
		case <-ripe:
		case <-l.done:
			_ = c.Close()
			return nil, net.ErrClosed
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// newGrace is how long a connection may send nothing and keep its slot at
// the cap: a client sends its request as soon as it has connected (its
// bytes may already wait in the socket while the server has not read
// them), so a connection this young is not yet idle.
const newGrace = time.Second

// evictableLocked is the connection idle (or silent since newGrace) the
// longest that never proved the token, or nil and how long until a silent
// one becomes evictable (0: none will by time alone).
func (l *admitListener) evictableLocked(now time.Time) (victim *admittedConn, wait time.Duration) {
	if !l.evict {
		return nil, 0
	}
	for c := range l.open {
		if c.authenticated {
			continue
		}
		switch c.state {
		case http.StateIdle:
		case http.StateNew:
			if age := now.Sub(c.at); age < newGrace {
				if w := newGrace - age; wait == 0 || w < wait {
					wait = w
				}
				continue
			}
		default:
			continue
		}
		if victim == nil || c.since < victim.since {
			victim = c
		}
	}
	return victim, wait
}

func (l *admitListener) release(c *admittedConn) {
	l.mu.Lock()
	delete(l.open, c)
	l.mu.Unlock()
	l.signal()
}

func (l *admitListener) signal() {
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

func (l *admitListener) Close() error {
	l.closed.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// connState is the http.Server's ConnState hook: it tells the listener
// which connections are serving a request and which sit idle.
func (l *admitListener) connState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*admittedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	c.state = state
	l.seq++
	c.since, c.at = l.seq, time.Now()
	l.mu.Unlock()
	if state == http.StateIdle {
		l.signal()
	}
}

// connKey carries the connection a request arrived on (ConnContext), so
// the token check can mark it authenticated.
type connKey struct{}

func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// markAuthenticated records that the request's connection proved the
// bearer token: it keeps its slot however long it idles (up to
// IdleTimeout).
func markAuthenticated(ctx context.Context) {
	c, ok := ctx.Value(connKey{}).(*admittedConn)
	if !ok {
		return
	}
	c.l.mu.Lock()
	c.authenticated = true
	c.l.mu.Unlock()
}
