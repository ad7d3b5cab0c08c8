package transport

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// fakeListener hands out prepared connections.
type fakeListener struct {
	conns chan net.Conn
}

func (l *fakeListener) Accept() (net.Conn, error) {
	c, ok := <-l.conns
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}
func (l *fakeListener) Close() error   { return nil }
func (l *fakeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

type fakeConn struct {
	net.Conn
	remote string
	mu     sync.Mutex
	closed bool
}

func (c *fakeConn) RemoteAddr() net.Addr { a, _ := net.ResolveTCPAddr("tcp", c.remote); return a }
func (c *fakeConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}
func (c *fakeConn) isClosed() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.closed }

// TestPerAddressConnectionLimit: one remote address cannot hold more than
// STAC_MCP_HTTP_MAX_CONNS_PER_IP connections (the next is closed at once),
// other addresses are unaffected, loopback peers are exempt, and a closed
// connection frees its address's slot.
func TestPerAddressConnectionLimit(t *testing.T) {
	t.Parallel()
	fl := &fakeListener{conns: make(chan net.Conn, 16)}
	refused := prometheus.NewCounter(prometheus.CounterOpts{Name: "refused"})
	ln := limitListener(fl, Limits{MaxConns: 100, MaxConnsPerIP: 2}, refused)
	mk := func(addr string) *fakeConn { c := &fakeConn{remote: addr}; fl.conns <- c; return c }
	accept := func() net.Conn {
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a1, a2 := mk("203.0.113.5:1001"), mk("203.0.113.5:1002")
	first, _ := accept(), accept()
	a3 := mk("203.0.113.5:1003")
	b1 := mk("198.51.100.7:2001")
	if got := accept(); got.RemoteAddr().String() != b1.remote {
		t.Errorf("accepted %s, want the other address's connection (the third from 203.0.113.5 refused)", got.RemoteAddr())
	}
	if !a3.isClosed() || a1.isClosed() || a2.isClosed() {
		t.Errorf("closed: third %v, first two %v %v; want only the third closed", a3.isClosed(), a1.isClosed(), a2.isClosed())
	}
	for i := range 5 {
		mk(fmt.Sprintf("127.0.0.1:%d", 3000+i))
		accept() // loopback: never limited
	}
	_ = first.Close()
	mk("203.0.113.5:1004")
	if got := accept(); got.RemoteAddr().String() != "203.0.113.5:1004" {
		t.Errorf("after one of its connections closed, the address is still refused (got %s)", got.RemoteAddr())
	}
	if n := testutil.ToFloat64(refused); n != 1 {
		t.Errorf("refused counter %v, want 1", n)
	}
}

// TestConnectionCapMakesAcceptWait: past MaxConns the listener accepts no
// more connections (they wait in the kernel's backlog, so the process
// never runs out of descriptors) until one closes. In a synctest bubble,
// "the third Accept is still waiting" is a state, not a timeout.
func TestConnectionCapMakesAcceptWait(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fl := &fakeListener{conns: make(chan net.Conn, 3)}
		ln := limitListener(fl, Limits{MaxConns: 2}, prometheus.NewCounter(prometheus.CounterOpts{Name: "refused"}))
		for i := range 3 {
			fl.conns <- &fakeConn{remote: fmt.Sprintf("203.0.113.%d:1000", i+1)}
		}
		first, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		second, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		// Both serve a request: neither slot can be given up.
		ln.connState(first, http.StateActive)
		ln.connState(second, http.StateActive)
		third := make(chan net.Conn, 1)
		go func() {
			c, _ := ln.Accept()
			third <- c
		}()
		synctest.Wait()
		select {
		case c := <-third:
			t.Fatalf("a third connection (%s) was accepted while two were open with MaxConns 2", c.RemoteAddr())
		default:
		}
		_ = first.Close()
		synctest.Wait()
		select {
		case c := <-third:
			if c == nil || c.RemoteAddr().String() != "203.0.113.3:1000" {
				t.Errorf("accepted %v once a slot freed, want the waiting 203.0.113.3:1000", c)
			}
		default:
			t.Fatal("the waiting connection was not accepted once a slot freed")
		}
	})
}

// 600 idle unauthenticated loopback connections (exempt from the
// per-address cap) held every slot, and authenticated calls queued behind
// them. At the cap, a new connection takes the slot of the oldest one that
// is new or idle and never proved the token; authenticated and busy
// connections keep theirs. Counted, not timed.
func TestIdleUnauthenticatedConnectionsGiveUpTheirSlots(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fl := &fakeListener{conns: make(chan net.Conn, 8)}
		ln := limitListener(fl, Limits{MaxConns: 3, MaxConnsPerIP: 2}, prometheus.NewCounter(prometheus.CounterOpts{Name: "refused"}))
		evicted := prometheus.NewCounter(prometheus.CounterOpts{Name: "evicted"})
		ln.evict, ln.evicted = true, evicted // a token is configured
		accept := func(remote string) (*fakeConn, net.Conn) {
			t.Helper()
			fc := &fakeConn{remote: remote}
			fl.conns <- fc
			c, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			return fc, c
		}
		idleA, _ := accept("127.0.0.1:4001") // silent: never sends a request
		idleB, b := accept("127.0.0.1:4002")
		ln.connState(b, http.StateActive) // a request refused 401...
		ln.connState(b, http.StateIdle)   // ...then idle, never authenticated
		authed, c := accept("127.0.0.1:4003")
		ln.connState(c, http.StateActive)
		markAuthenticated(withConn(context.Background(), c))
		ln.connState(c, http.StateIdle)

		// A client arrives at the cap: the idle connection that never
		// proved the token goes; the silent one is younger than newGrace
		// (its request may be in the socket already) and stays, as does the
		// authenticated one.
		_, first := accept("127.0.0.1:5001")
		if !idleB.isClosed() || idleA.isClosed() || authed.isClosed() {
			t.Errorf("first arrival: closed A %v B %v authenticated %v; want only B", idleA.isClosed(), idleB.isClosed(), authed.isClosed())
		}
		// The next waits until the silent one has been silent for newGrace.
		ln.connState(first, http.StateActive)
		fl.conns <- &fakeConn{remote: "127.0.0.1:5002"}
		arrived := make(chan net.Conn, 1)
		go func() { c, _ := ln.Accept(); arrived <- c }()
		synctest.Wait()
		select {
		case <-arrived:
			t.Fatal("a connection younger than newGrace was evicted")
		default:
		}
		time.Sleep(newGrace)
		synctest.Wait()
		second := <-arrived
		if !idleA.isClosed() || authed.isClosed() {
			t.Errorf("second arrival: closed A %v authenticated %v; want A", idleA.isClosed(), authed.isClosed())
		}
		if n := testutil.ToFloat64(evicted); n != 2 {
			t.Errorf("evicted counter %v, want 2", n)
		}
		// Nothing evictable now (one authenticated, two serving requests):
		// the next waits, as before, until a slot frees.
		ln.connState(second, http.StateActive)
		next := make(chan net.Conn, 1)
		fl.conns <- &fakeConn{remote: "127.0.0.1:5003"}
		go func() { c, _ := ln.Accept(); next <- c }()
		synctest.Wait()
		select {
		case <-next:
			t.Fatal("a connection was admitted while every slot was busy or authenticated")
		default:
		}
		ln.connState(second, http.StateIdle) // idle, never authenticated: evictable
		synctest.Wait()
		select {
		case c := <-next:
			if c == nil || authed.isClosed() || testutil.ToFloat64(evicted) != 3 {
				t.Errorf("admitted %v, authenticated closed %v, evicted %v; want the waiting one, by evicting the idle one", c, authed.isClosed(), testutil.ToFloat64(evicted))
			}
		default:
			t.Fatal("the waiting connection was not admitted once a slot became evictable")
		}
		_ = ln.Close()
	})
}
