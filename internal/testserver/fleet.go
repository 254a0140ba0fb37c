package testserver

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DefaultHost is the made-up host name a Fleet expects when FleetOptions
// names none (.test is reserved, RFC 2606).
const DefaultHost = "app.test"

// FleetOptions configure StartFleet.
type FleetOptions struct {
	// Host is the host name requests must carry in Host (and SNI);
	// DefaultHost when empty.
	Host string
	// Policies answers per address; addresses without one use Each.
	Policies map[netip.Addr]Policy
	// Each answers for the addresses without a policy; OK when nil.
	Each Policy
	// NotifyAt closes Reached() when the fleet as a whole receives its
	// NotifyAt-th request; 0 never does.
	NotifyAt int64
	// Hold makes the requests from the NotifyAt-th on wait for Release.
	Hold bool
	// PKI, when set, makes the fleet serve HTTPS with a leaf of PKI for
	// Host, offering h2 and http/1.1 by ALPN.
	PKI *PKI
	// H2C makes a cleartext fleet also speak HTTP/2 by prior knowledge.
	H2C bool
	// IDHeader names the request-ID header recorded and echoed;
	// "X-Request-Id" when empty.
	IDHeader string
}

// Fleet is a set of HTTP servers on one port of several loopback addresses,
// each answering by its policy. Every server records each request it
// handles (see Seen) and checks, server side, that it arrived on its own
// address with the fleet's Host (and SNI), so a test can prove where each
// request went.
type Fleet struct {
	host     string
	scheme   string
	port     uint16
	idHeader string
	backends []*Backend

	total    atomic.Int64
	notifyAt int64
	reached  chan struct{}
	hold     bool
	release  chan struct{}
	once     sync.Once
}

// Backend is the server of one address of a Fleet.
type Backend struct {
	f      *Fleet
	addr   netip.Addr
	policy Policy

	n        atomic.Int64
	inFlight atomic.Int64
	misplace atomic.Int64
	mu       sync.Mutex
	seen     []Seen
}

// Seen is what a server recorded of one request.
type Seen struct {
	N      int64          // the request's number at its server, from 1
	At     time.Time      // arrival, when the handler started
	Local  netip.AddrPort // where the server accepted the connection
	Remote netip.AddrPort // the client's address and port
	Host   string         // the Host header
	SNI    string         // the TLS server name; "" over cleartext
	IDs    []string       // the values of the request-ID header
	Proto  string         // "HTTP/1.1", "HTTP/2.0"
	Method string
	Path   string
	Status int // the status answered (0 while the request is held)
}

// StartFleet starts one server per address, all on the same port; it skips
// the test where an address is missing (see ListenSamePort). The servers
// stop when the test ends.
func StartFleet(t testing.TB, o FleetOptions, addrs ...netip.Addr) *Fleet {
	t.Helper()
	if o.Host == "" {
		o.Host = DefaultHost
	}
	if o.Each == nil {
		o.Each = OK
	}
	if o.IDHeader == "" {
		o.IDHeader = "X-Request-Id"
	}
	port, lns := ListenSamePort(t, addrs...)
	f := &Fleet{host: o.Host, scheme: "http", port: port, idHeader: o.IDHeader,
		notifyAt: o.NotifyAt, reached: make(chan struct{}), hold: o.Hold, release: make(chan struct{})}
	var setup []func(*httptest.Server)
	if o.H2C {
		setup = append(setup, EnableH2C)
	}
	for _, ln := range lns {
		b := &Backend{f: f, addr: addrPortOf(ln.Addr()).Addr()}
		b.policy = o.Policies[b.addr]
		if b.policy == nil {
			b.policy = o.Each
		}
		var cfg *tls.Config
		f.scheme, cfg = tlsFor(o.PKI, o.Host)
		Serve(t, ln, b, cfg, setup...)
		f.backends = append(f.backends, b)
	}
	t.Cleanup(f.Release) // before the servers close, which wait for held requests
	return f
}

// ServeHTTP records r, checks where it arrived and answers by the policy.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := b.f
	s := Seen{N: b.n.Add(1), At: time.Now(), Local: LocalAddr(r), Remote: RemoteAddr(r), Host: r.Host,
		IDs: r.Header.Values(f.idHeader), Proto: r.Proto, Method: r.Method, Path: r.URL.Path}
	if r.TLS != nil {
		s.SNI = r.TLS.ServerName
	}
	b.inFlight.Add(1)
	defer b.inFlight.Add(-1)
	if s.Local.Addr() != b.addr || s.Host != hostPort(f.host, f.port) || (r.TLS != nil && s.SNI != f.host) {
		b.misplace.Add(1)
	}
	b.mu.Lock()
	i := len(b.seen)
	b.seen = append(b.seen, s)
	b.mu.Unlock()

	total := f.total.Add(1)
	if total == f.notifyAt {
		close(f.reached)
	}
	a := b.policy(s.N, r)
	if f.hold && f.notifyAt > 0 && total >= f.notifyAt {
		a.Hold = true
	}
	if len(s.IDs) > 0 {
		w.Header().Set(f.idHeader, s.IDs[0]) // as gateways echo it
	}
	status := respond(w, r, a, b.addr.String(), f.release)
	b.mu.Lock()
	b.seen[i].Status = status
	b.mu.Unlock()
}

// respond waits as a says (on release for a hold), then writes a, naming
// the server name in the default body. It returns the status written.
func respond(w http.ResponseWriter, r *http.Request, a Answer, name string, release <-chan struct{}) int {
	if a.Hold {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	if a.Delay > 0 {
		tm := time.NewTimer(a.Delay)
		select {
		case <-tm.C:
		case <-r.Context().Done():
			tm.Stop()
		}
	}
	if a.Status == 0 {
		a.Status = http.StatusOK
	}
	if a.Body == "" {
		a.Body = fmt.Sprintf("%s answers %d\n", name, a.Status)
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain")
	for k, v := range a.Header {
		h.Set(k, v)
	}
	w.WriteHeader(a.Status)
	io.WriteString(w, a.Body)
	return a.Status
}

// Release lets the held requests (see FleetOptions.Hold and Answer.Hold) be
// answered, and every later one pass. It is safe to call more than once.
func (f *Fleet) Release() { f.once.Do(func() { close(f.release) }) }

// Reached is closed when the fleet receives its NotifyAt-th request.
func (f *Fleet) Reached() <-chan struct{} { return f.reached }

// Host is the host name the fleet expects.
func (f *Fleet) Host() string { return f.host }

// Port is the port every server listens on.
func (f *Fleet) Port() uint16 { return f.port }

// URL is the fleet's URL with its host name: "http://app.test:PORT/" (https
// with a PKI). Only a client that pins the addresses can reach it.
func (f *Fleet) URL() string { return f.scheme + "://" + hostPort(f.host, f.port) + "/" }

// Resolve is the "host:port:addr,addr…" value of --resolve (pinprobe's and
// curl's) that maps the fleet's host to its addresses, plus extra ones.
func (f *Fleet) Resolve(extra ...string) string {
	var addrs []string
	for _, b := range f.backends {
		addrs = append(addrs, b.addr.String())
	}
	return fmt.Sprintf("%s:%d:%s", f.host, f.port, strings.Join(append(addrs, extra...), ","))
}

// Addrs lists the fleet's addresses in the order they were given.
func (f *Fleet) Addrs() []netip.Addr {
	out := make([]netip.Addr, len(f.backends))
	for i, b := range f.backends {
		out[i] = b.addr
	}
	return out
}

// Backends lists the fleet's servers in the order of their addresses.
func (f *Fleet) Backends() []*Backend { return slices.Clone(f.backends) }

// Backend returns the server of addr, failing the test if there is none.
func (f *Fleet) Backend(t testing.TB, addr netip.Addr) *Backend {
	t.Helper()
	for _, b := range f.backends {
		if b.addr == addr {
			return b
		}
	}
	t.Fatalf("testserver: the fleet has no server on %s; it has %v", addr, f.Addrs())
	return nil
}

// Hits returns the number of requests each address received, keyed by the
// address as reports print it ("::1").
func (f *Fleet) Hits() map[string]int64 {
	m := map[string]int64{}
	for _, b := range f.backends {
		m[b.addr.String()] = b.n.Load()
	}
	return m
}

// Total is the number of requests the fleet received.
func (f *Fleet) Total() int64 { return f.total.Load() }

// InFlight is the number of requests being handled now.
func (f *Fleet) InFlight() int64 {
	var n int64
	for _, b := range f.backends {
		n += b.inFlight.Load()
	}
	return n
}

// Seen returns every request the fleet recorded, address by address.
func (f *Fleet) Seen() []Seen {
	var out []Seen
	for _, b := range f.backends {
		out = append(out, b.Seen()...)
	}
	return out
}

// IDs counts every request-ID value seen over all addresses; missing
// counts requests without one, multiple requests with more than one.
func (f *Fleet) IDs() (ids map[string]int, missing, multiple int) {
	ids = map[string]int{}
	for _, s := range f.Seen() {
		switch len(s.IDs) {
		case 0:
			missing++
		case 1:
		default:
			multiple++
		}
		for _, id := range s.IDs {
			ids[id]++
		}
	}
	return ids, missing, multiple
}

// Clients returns the client addresses and client ports the servers saw,
// each sorted and without repeats.
func (f *Fleet) Clients() ([]netip.Addr, []int) {
	var addrs []netip.Addr
	var ports []int
	for _, s := range f.Seen() {
		addrs = append(addrs, s.Remote.Addr())
		ports = append(ports, int(s.Remote.Port()))
	}
	slices.SortFunc(addrs, netip.Addr.Compare)
	slices.Sort(ports)
	return slices.Compact(addrs), slices.Compact(ports)
}

// CheckPlacement fails the test if any request reached a server on another
// address than its own, or with a Host (or SNI) other than the fleet's.
func (f *Fleet) CheckPlacement(t testing.TB) {
	t.Helper()
	for _, b := range f.backends {
		if n := b.misplace.Load(); n != 0 {
			t.Errorf("server %s: %d requests arrived on another address or with a Host other than %s", b.addr, n, hostPort(f.host, f.port))
		}
	}
}

// Addr is the address the server listens on.
func (b *Backend) Addr() netip.Addr { return b.addr }

// Hits is the number of requests the server received.
func (b *Backend) Hits() int64 { return b.n.Load() }

// InFlight is the number of requests the server is handling now.
func (b *Backend) InFlight() int64 { return b.inFlight.Load() }

// Misplaced is the number of requests that arrived on another address or
// with another Host or SNI (see Fleet.CheckPlacement).
func (b *Backend) Misplaced() int64 { return b.misplace.Load() }

// Seen returns the requests the server recorded, in arrival order.
func (b *Backend) Seen() []Seen {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.seen)
}

// SawID reports whether a request with the request ID id reached the
// server.
func (b *Backend) SawID(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.seen {
		if slices.Contains(s.IDs, id) {
			return true
		}
	}
	return false
}

// Arrivals returns the arrival time of every request, in order.
func (b *Backend) Arrivals() []time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]time.Time, len(b.seen))
	for i, s := range b.seen {
		out[i] = s.At
	}
	return out
}
