package testserver

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
)

// Serve starts an httptest server with h on ln (TLS with tlsCfg when not
// nil) and closes it when the test ends. Every request's context is
// cancelled when the test ends, before the server closes, so a handler that
// waits on r.Context() cannot hold the test up. setup functions adjust the
// server before it starts (EnableH2C is one). The server logs nothing: the
// failed handshakes and cut connections are what tests want.
func Serve(t testing.TB, ln net.Listener, h http.Handler, tlsCfg *tls.Config, setup ...func(*httptest.Server)) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.Listener.Close()
	s.Listener = ln
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	base, cancel := context.WithCancel(context.Background())
	s.Config.BaseContext = func(net.Listener) context.Context { return base }
	for _, f := range setup {
		f(s)
	}
	if tlsCfg != nil {
		s.TLS = tlsCfg
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	t.Cleanup(cancel) // runs first: handlers return, then Close stops waiting
	return s
}

// EnableH2C is a setup function for Serve: the server speaks HTTP/1.1 and
// HTTP/2 by prior knowledge over cleartext (h2c).
func EnableH2C(s *httptest.Server) {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	s.Config.Protocols = &p
}

// ServeSamePort serves h on one port of every address (see ListenSamePort,
// which may skip the test) and returns the port.
func ServeSamePort(t testing.TB, h http.Handler, tlsCfg *tls.Config, addrs ...netip.Addr) uint16 {
	t.Helper()
	port, lns := ListenSamePort(t, addrs...)
	for _, ln := range lns {
		Serve(t, ln, h, tlsCfg)
	}
	return port
}

// LocalAddr is the address and port the server accepted r's connection on.
func LocalAddr(r *http.Request) netip.AddrPort {
	a, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return addrPortOf(a)
}

// RemoteAddr is the client's address and port of r's connection.
func RemoteAddr(r *http.Request) netip.AddrPort {
	ap, _ := netip.ParseAddrPort(r.RemoteAddr)
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// Hits counts, server side, the requests each local address received and
// the Host headers they carried. Call Add from a handler. The zero value is
// not usable; use NewHits.
type Hits struct {
	mu     sync.Mutex
	byAddr map[netip.Addr]int
	hosts  map[string]int
}

// NewHits returns an empty Hits.
func NewHits() *Hits { return &Hits{byAddr: map[netip.Addr]int{}, hosts: map[string]int{}} }

// Add counts r.
func (h *Hits) Add(r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.byAddr[LocalAddr(r).Addr()]++
	h.hosts[r.Host]++
}

// Snapshot returns copies of the counts by local address and by Host.
func (h *Hits) Snapshot() (byAddr map[netip.Addr]int, hosts map[string]int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.byAddr), maps.Clone(h.hosts)
}

// Total is the number of requests counted.
func (h *Hits) Total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, v := range h.byAddr {
		n += v
	}
	return n
}
