package testserver

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// RawServer accepts TCP connections on one loopback listener and hands
// each to a function of the test, for behaviours no Fault covers. When the
// test ends it stops accepting, closes every open connection (so a serve
// blocked reading or writing returns) and waits, at most 5s, for every serve
// to return, failing the test otherwise.
type RawServer struct {
	addr  netip.AddrPort
	serve func(net.Conn)
	conns atomic.Int64

	ln      net.Listener
	done    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	open    map[net.Conn]struct{}
	stopped bool
}

// StartRaw listens on a free port of addr and runs serve on its own
// goroutine for every connection accepted; the connection is closed when
// serve returns. serve must return once Done is closed or its connection
// is closed under it.
func StartRaw(t testing.TB, addr netip.Addr, serve func(c net.Conn)) *RawServer {
	t.Helper()
	s := listenRaw(t, addr)
	s.start(serve)
	return s
}

// ServeRaw is StartRaw on a listener the test bound itself (with socket
// options of its own, say); ln is closed when the test ends.
func ServeRaw(t testing.TB, ln net.Listener, serve func(c net.Conn)) *RawServer {
	t.Helper()
	s := rawOn(t, ln)
	s.start(serve)
	return s
}

// listenRaw listens on addr; start begins accepting.
func listenRaw(t testing.TB, addr netip.Addr) *RawServer {
	t.Helper()
	ln, err := net.Listen("tcp", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		t.Fatalf("testserver: listen on %s: %v", addr, err)
	}
	return rawOn(t, ln)
}

// rawOn is listenRaw on a listener already bound, so other servers can
// share its port on other addresses.
func rawOn(t testing.TB, ln net.Listener) *RawServer {
	t.Helper()
	s := &RawServer{addr: addrPortOf(ln.Addr()), ln: ln, done: make(chan struct{}), open: map[net.Conn]struct{}{}}
	t.Cleanup(func() { s.shutdown(t) })
	return s
}

func (s *RawServer) start(serve func(net.Conn)) {
	s.serve = serve
	s.wg.Add(1)
	go s.acceptLoop()
}

func (s *RawServer) acceptLoop() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.stopped {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.open[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		s.conns.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.open, c)
				s.mu.Unlock()
				c.Close()
			}()
			s.serve(c)
		}()
	}
}

// shutdown stops the server and waits, a bounded time, for its goroutines.
func (s *RawServer) shutdown(t testing.TB) {
	s.mu.Lock()
	s.stopped = true
	close(s.done)
	s.ln.Close()
	for c := range s.open {
		c.Close()
	}
	s.mu.Unlock()
	finished := make(chan struct{})
	go func() { s.wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Errorf("testserver: server on %s: connections still served 5s after the test ended", s.addr)
	}
}

// Addr is the server's address and port.
func (s *RawServer) Addr() netip.AddrPort { return s.addr }

// Port is the server's port.
func (s *RawServer) Port() uint16 { return s.addr.Port() }

// Conns is the number of connections accepted.
func (s *RawServer) Conns() int64 { return s.conns.Load() }

// Open is the number of connections open now.
func (s *RawServer) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

// Done is closed when the test ends.
func (s *RawServer) Done() <-chan struct{} { return s.done }

// ResetConn closes c with SO_LINGER 0, so the kernel sends a TCP RST instead of
// a FIN; c must be a TCP connection (as from StartRaw or a hijacked HTTP
// connection).
func ResetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// SilentListener returns the address of a listener on addr that accepts
// connections and never reads from nor writes to them: a client's request
// can only time out. It is StartFault(t, AcceptNoRead, …).
func SilentListener(t testing.TB, addr netip.Addr) netip.AddrPort {
	t.Helper()
	return StartFault(t, AcceptNoRead, FaultOptions{Addr: addr}).Addr()
}
