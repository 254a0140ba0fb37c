package testserver

import (
	"context"
	"crypto/tls"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// Assignment is how a Sticky assigns a new connection to an instance.
type Assignment int

const (
	// RoundRobin assigns connections to the instances in turn.
	RoundRobin Assignment = iota
	// RandomAssignment draws the instance of each connection from a PRNG
	// seeded with StickyOptions.Seed.
	RandomAssignment
)

// Instance is one of the servers a Sticky fronts.
type Instance struct {
	// Name is stamped on every response in the instance header ("gw-2").
	Name string
	// Policy answers the instance's requests, numbered per instance; OK
	// when nil.
	Policy Policy
}

// StickyOptions configure StartSticky.
type StickyOptions struct {
	// Instances are the K instances behind the address(es); at least one.
	Instances []Instance
	// Assign chooses the instance of each new connection.
	Assign Assignment
	// Seed seeds RandomAssignment.
	Seed uint64
	// Header names the header that carries the instance's name;
	// "X-Served-By" when empty.
	Header string
	// NoHeader sends no instance header: a client tells the instances
	// apart only by the connections their failures stick to.
	NoHeader bool
	// Host is the host name of URL and of the TLS certificate;
	// DefaultHost when empty.
	Host string
	// PKI, when set, serves HTTPS with a leaf of PKI for Host.
	PKI *PKI
}

// Sticky is a gateway on one port of one or more loopback addresses that
// fronts K instances the way a TCP load balancer does: each accepted
// connection is assigned to one instance and stays on it for all its
// requests. Every response names its instance in a header. It counts, per
// instance and per connection, the requests and the failures (answers of
// 500 and above).
type Sticky struct {
	host   string
	scheme string
	port   uint16
	addrs  []netip.Addr
	header string
	insts  []*stickyInstance
	assign Assignment

	release chan struct{}
	once    sync.Once

	mu    sync.Mutex
	next  int
	rng   *rand.Rand
	conns []*stickyConn
}

type stickyConn struct {
	ConnStats
	inst *stickyInstance
}

type stickyInstance struct {
	Instance
	n atomic.Int64
}

// ConnStats is what a Sticky counted on one connection.
type ConnStats struct {
	Remote   netip.AddrPort // the client's address and port
	Local    netip.AddrPort // the gateway's address and port
	Instance string         // the instance the connection was assigned to
	Requests int64
	Failures int64 // answers of 500 and above
}

// InstanceStats is what a Sticky counted for one instance.
type InstanceStats struct {
	Conns    int64
	Requests int64
	Failures int64
}

type stickyConnKey struct{}

// StartSticky starts the gateway on one port of every address (see
// ListenSamePort, which may skip the test); it stops when the test ends.
func StartSticky(t testing.TB, o StickyOptions, addrs ...netip.Addr) *Sticky {
	t.Helper()
	if len(addrs) == 0 {
		addrs = []netip.Addr{Lo4a}
	}
	port, lns := ListenSamePort(t, addrs...)
	return serveSticky(t, o, port, lns)
}

// serveSticky is StartSticky on listeners already bound to port, so other
// servers can share the port on other addresses.
func serveSticky(t testing.TB, o StickyOptions, port uint16, lns []net.Listener) *Sticky {
	t.Helper()
	if len(o.Instances) == 0 {
		t.Fatal("testserver: StartSticky needs at least one instance")
	}
	switch {
	case o.NoHeader:
		o.Header = ""
	case o.Header == "":
		o.Header = "X-Served-By"
	}
	if o.Host == "" {
		o.Host = DefaultHost
	}
	var addrs []netip.Addr
	for _, ln := range lns {
		addrs = append(addrs, addrPortOf(ln.Addr()).Addr())
	}
	s := &Sticky{host: o.Host, scheme: "http", port: port, addrs: addrs, header: o.Header,
		assign: o.Assign, release: make(chan struct{}), rng: rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))}
	names := map[string]bool{}
	for _, in := range o.Instances {
		if names[in.Name] {
			t.Fatalf("testserver: two sticky instances named %q", in.Name)
		}
		names[in.Name] = true
		if in.Policy == nil {
			in.Policy = OK
		}
		s.insts = append(s.insts, &stickyInstance{Instance: in})
	}
	setup := func(hs *httptest.Server) {
		hs.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, stickyConnKey{}, s.accept(c))
		}
	}
	for _, ln := range lns {
		var cfg *tls.Config
		s.scheme, cfg = tlsFor(o.PKI, o.Host)
		Serve(t, ln, s, cfg, setup)
	}
	return s
}

// accept assigns the new connection c to an instance.
func (s *Sticky) accept(c net.Conn) *stickyConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	var i int
	switch s.assign {
	case RandomAssignment:
		i = s.rng.IntN(len(s.insts))
	default:
		i = s.next % len(s.insts)
		s.next++
	}
	sc := &stickyConn{inst: s.insts[i],
		ConnStats: ConnStats{Remote: addrPortOf(c.RemoteAddr()), Local: addrPortOf(c.LocalAddr()), Instance: s.insts[i].Name}}
	s.conns = append(s.conns, sc)
	return sc
}

// ServeHTTP answers r by the policy of its connection's instance.
func (s *Sticky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sc := r.Context().Value(stickyConnKey{}).(*stickyConn)
	inst := sc.inst
	a := inst.Policy(inst.n.Add(1), r)
	if s.header != "" {
		w.Header().Set(s.header, inst.Name)
	}
	status := respond(w, r, a, inst.Name, s.release)
	s.mu.Lock()
	sc.Requests++
	if status >= 500 {
		sc.Failures++
	}
	s.mu.Unlock()
}

// Release lets the requests an Answer holds be answered, and every later
// one pass. It is safe to call more than once.
func (s *Sticky) Release() { s.once.Do(func() { close(s.release) }) }

// Port is the gateway's port on every address.
func (s *Sticky) Port() uint16 { return s.port }

// Addrs lists the gateway's addresses.
func (s *Sticky) Addrs() []netip.Addr { return slices.Clone(s.addrs) }

// URL is "http://HOST:PORT/" (https with a PKI).
func (s *Sticky) URL() string { return s.scheme + "://" + hostPort(s.host, s.port) + "/" }

// Header is the name of the instance header; "" with NoHeader.
func (s *Sticky) Header() string { return s.header }

// Conns returns the counts of every connection, in the order accepted.
func (s *Sticky) Conns() []ConnStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ConnStats, len(s.conns))
	for i, c := range s.conns {
		out[i] = c.ConnStats
	}
	return out
}

// Conn returns the counts of the connection from the client address and
// port remote, the last one when the client reused the port.
func (s *Sticky) Conn(remote netip.AddrPort) (ConnStats, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	remote = netip.AddrPortFrom(remote.Addr().Unmap(), remote.Port())
	for i := len(s.conns) - 1; i >= 0; i-- {
		if s.conns[i].Remote == remote {
			return s.conns[i].ConnStats, true
		}
	}
	return ConnStats{}, false
}

// Stats returns the counts of every instance by name.
func (s *Sticky) Stats() map[string]InstanceStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]InstanceStats{}
	for _, in := range s.insts {
		m[in.Name] = InstanceStats{}
	}
	for _, c := range s.conns {
		st := m[c.Instance]
		st.Conns++
		st.Requests += c.Requests
		st.Failures += c.Failures
		m[c.Instance] = st
	}
	return m
}
