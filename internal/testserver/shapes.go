package testserver

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The kinds of a TruthSuspect, and the words of Truth.Avoid.
const (
	// KindEndpoint is an address: every connection to it fails alike.
	KindEndpoint = "endpoint"
	// KindGroup is an instance named by a response header.
	KindGroup = "group"
	// KindConnections is one or more instances behind an address, seen
	// through the connections their failures stick to.
	KindConnections = "connections"
	// KindFamily, in Truth.Avoid only, is blaming an address family as a
	// whole.
	KindFamily = "family"
)

// The words of TruthSuspect.How.
const (
	How502 = "502" // answers 502 Bad Gateway
	How503 = "503" // answers 503 Service Unavailable
	// HowReset accepts each connection, then resets it (RST) unanswered.
	// The reset can reach the client before its connect has returned, so
	// a client sees some as connect errors ("connect: connection reset by
	// peer") and the others when it writes or reads its first request.
	HowReset = "reset"
	// HowWindow answers 503 to every request during alternate windows of
	// time, 200 between.
	HowWindow = "window"
)

// DefaultWindow is the length of each window of the flapping shape when
// ShapeOptions names none.
const DefaultWindow = time.Second

// ShapeOptions configure ShapesWith.
type ShapeOptions struct {
	// Host is the made-up host name of every shape's URL; DefaultHost
	// when "".
	Host string
	// Window is the length of each window of the flapping shape;
	// DefaultWindow when 0. A test that drives the servers for only a
	// second or so shortens it.
	Window time.Duration
}

// Shape is one way failures can sit among addresses, instances and time,
// served on loopback with its ground truth.
type Shape struct {
	// Name names the shape ("sticky-instances"); a healthy twin's name
	// ends in "-healthy".
	Name string
	// Start starts a new server of the shape, skipping the test if this
	// machine lacks one of its addresses (see ListenSamePort); it stops
	// when the test ends.
	Start func(t testing.TB) *ShapeServer
}

// Truth is what a correct verdict says of a shape.
type Truth struct {
	// Healthy says nothing is wrong: a correct verdict blames nothing.
	Healthy bool
	// Suspects are what a correct verdict names, every one of them.
	Suspects []TruthSuspect
	// Family is the family a correct verdict frames the fault as
	// ("ipv6"): every address of it fails and no other address does; ""
	// otherwise.
	Family string
	// Avoid lists what a correct verdict must not claim: a kind of suspect
	// (KindEndpoint, KindGroup, KindConnections) or KindFamily (an address
	// family as a whole). KindConnections in Avoid means no failure sticks
	// to a connection, so no instance is broken.
	Avoid []string
}

// TruthSuspect is one thing a correct verdict names.
type TruthSuspect struct {
	// Kind is KindEndpoint, KindGroup or KindConnections.
	Kind string
	// Address is the address; for a group, the one address it sits
	// behind, "" when it spans several.
	Address string
	// Family is the family of Address: "ipv4" or "ipv6"; "" without one.
	Family string
	// Group is the header and value naming a group: "X-Served-By: gw-3".
	Group string
	// How is how it fails: How502, How503, HowReset or HowWindow.
	How string
	// Connections is set for a group behind one address whose failures
	// stick to that address's connections: the same failures, which the
	// verdict gives as the instance's evidence, not as a second suspect.
	Connections bool
}

// AddrCounts is what a ShapeServer counted on one address, server side.
type AddrCounts struct {
	Conns    int64 // TCP connections accepted
	Requests int64 // requests answered
	Failures int64 // answers of 500 and above
	Resets   int64 // connections reset unanswered
}

// ShapeServer is a running Shape: servers on one port of every address of
// the shape, counting what they answer.
type ShapeServer struct {
	// URL is "http://HOST:PORT/". Only a client that pins the addresses
	// reaches it.
	URL string
	// Host is the made-up host name of URL.
	Host string
	// Port is the port of every address.
	Port uint16
	// Addrs are every address Host stands for, in the shape's order.
	Addrs []netip.Addr
	// Truth is what a correct verdict says.
	Truth Truth
	// Header is the response header in which the server names who
	// answered: "X-Backend" (the address) or "X-Served-By" (the
	// instance); "" when no header does.
	Header string
	// Window is the length of each time window of a flapping shape; 0
	// for a shape without windows.
	Window time.Duration

	started time.Time
	fronts  map[netip.Addr]*Sticky    // the HTTP server of each address
	resets  map[netip.Addr]*RawServer // the addresses that reset every connection
	sticky  *Sticky                   // the gateway whose instances count, if any
	pool    *shapePool                // the pool every request is routed to, if any
}

// front is what answers on one address of a shape.
type front struct {
	addr      netip.Addr
	policy    Policy     // answers a plain address; shapeOK when nil
	echo      bool       // names the address in X-Backend
	reset     bool       // resets every connection instead
	instances []Instance // sticky instances behind the address, instead of policy
	noHeader  bool       // the instances name themselves in no header
}

// shapeDef defines a shape and its healthy twin: fronts returns what
// answers on each address, with the fault when sick.
type shapeDef struct {
	name     string
	header   string
	windowed bool // fails by the clock, in windows of ShapeOptions.Window
	truth    Truth
	fronts   func(s *ShapeServer, sick bool) []front
}

// Shapes is the whole table of shapes (shapeDefs: each one's addresses, faults
// and the truth a correct verdict states), each followed by its healthy twin
// (same addresses, instances and headers, nothing failing), with DefaultHost and
// DefaultWindow. Healthy answers are "200 ok" bodies that name nobody.
func Shapes() []Shape { return ShapesWith(ShapeOptions{}) }

// ShapesWith is Shapes with o's host and window.
func ShapesWith(o ShapeOptions) []Shape {
	if o.Host == "" {
		o.Host = DefaultHost
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	var out []Shape
	for _, d := range shapeDefs() {
		for _, sick := range []bool{true, false} {
			name := d.name
			if !sick {
				name += "-healthy"
			}
			out = append(out, Shape{Name: name, Start: func(t testing.TB) *ShapeServer {
				t.Helper()
				return startShape(t, o, d, sick)
			}})
		}
	}
	return out
}

func shapeDefs() []shapeDef {
	return []shapeDef{{
		// The gateway echoes the address that answered: the header and
		// the address name the same scope, and the verdict names the
		// address.
		name:   "echo-address",
		header: "X-Backend",
		truth: Truth{Suspects: []TruthSuspect{endpointSuspect(Lo6, How502)}, Family: "ipv6",
			Avoid: []string{KindConnections}},
		fronts: func(s *ShapeServer, sick bool) []front {
			return []front{{addr: Lo4a, echo: true}, {addr: Lo4b, echo: true}, {addr: Lo6, echo: true, policy: when(sick, Azure502)}}
		},
	}, {
		name:   "echo-two-ipv4",
		header: "X-Backend",
		truth: Truth{Suspects: []TruthSuspect{endpointSuspect(Lo4b, How503), endpointSuspect(Lo4c, How503)},
			Avoid: []string{KindFamily, KindConnections}},
		fronts: func(s *ShapeServer, sick bool) []front {
			fail := when(sick, unavailable)
			return []front{{addr: Lo4a, echo: true}, {addr: Lo4b, echo: true, policy: fail},
				{addr: Lo4c, echo: true, policy: fail}, {addr: Lo4d, echo: true}, {addr: Lo6, echo: true}}
		},
	}, {
		// Every request, not connection, goes to one of the pool's
		// instances, whichever address it came through.
		name:   "shared-pool",
		header: "X-Served-By",
		truth: Truth{Suspects: []TruthSuspect{{Kind: KindGroup, Group: "X-Served-By: pool-2", How: How502}},
			Avoid: []string{KindEndpoint, KindConnections, KindFamily}},
		fronts: func(s *ShapeServer, sick bool) []front {
			s.pool = newShapePool("X-Served-By", 1, []Instance{
				{Name: "pool-1"}, {Name: "pool-2", Policy: when(sick, Azure502)}, {Name: "pool-3"}, {Name: "pool-4"}})
			return []front{{addr: Lo4a, policy: s.pool.answer}, {addr: Lo4b, policy: s.pool.answer}, {addr: Lo6, policy: s.pool.answer}}
		},
	}, {
		// 127.0.0.2 fronts four instances, each TCP connection kept on
		// the one it was assigned, in turn.
		name:   "sticky-instances",
		header: "X-Served-By",
		truth: Truth{Suspects: []TruthSuspect{
			{Kind: KindGroup, Address: Lo4b.String(), Family: "ipv4", Group: "X-Served-By: gw-3", How: How502, Connections: true}},
			Avoid: []string{KindFamily}},
		fronts: func(s *ShapeServer, sick bool) []front {
			return []front{{addr: Lo4a}, {addr: Lo4b, instances: gateways(sick)}, {addr: Lo6}}
		},
	}, {
		name: "sticky-no-header",
		truth: Truth{Suspects: []TruthSuspect{{Kind: KindConnections, Address: Lo4b.String(), Family: "ipv4", How: How502}},
			Avoid: []string{KindGroup, KindFamily}},
		fronts: func(s *ShapeServer, sick bool) []front {
			return []front{{addr: Lo4a}, {addr: Lo4b, instances: gateways(sick), noHeader: true}, {addr: Lo6}}
		},
	}, {
		// 127.0.0.2 fails by the clock, on every connection alike: no
		// instance is broken.
		name: "flapping-window",
		truth: Truth{Suspects: []TruthSuspect{endpointSuspect(Lo4b, HowWindow)},
			Avoid: []string{KindConnections, KindFamily}},
		windowed: true,
		fronts: func(s *ShapeServer, sick bool) []front {
			return []front{{addr: Lo4a}, {addr: Lo4b, policy: when(sick, s.flapping)}, {addr: Lo6}}
		},
	}, {
		name: "reset-and-503",
		truth: Truth{Suspects: []TruthSuspect{endpointSuspect(Lo4b, HowReset), endpointSuspect(Lo4c, How503)},
			Avoid: []string{KindFamily, KindConnections}},
		fronts: func(s *ShapeServer, sick bool) []front {
			return []front{{addr: Lo4a}, {addr: Lo4b, reset: sick}, {addr: Lo4c, policy: when(sick, unavailable)}}
		},
	}, {
		name: "family-ipv6",
		truth: Truth{Suspects: []TruthSuspect{endpointSuspect(Lo6, How502)}, Family: "ipv6",
			Avoid: []string{KindConnections}},
		fronts: func(s *ShapeServer, sick bool) []front {
			return []front{{addr: Lo4a}, {addr: Lo4b}, {addr: Lo6, policy: when(sick, Azure502)}}
		},
	}}
}

// when is p for a sick shape and nil (shapeOK) for its healthy twin.
func when(sick bool, p Policy) Policy {
	if sick {
		return p
	}
	return nil
}

// gateways are gw-1 to gw-4, gw-3 answering nginx's 502 when sick; their
// bodies name no instance.
func gateways(sick bool) []Instance {
	gw3 := shapeOK
	if sick {
		gw3 = Nginx502
	}
	return []Instance{{Name: "gw-1", Policy: shapeOK}, {Name: "gw-2", Policy: shapeOK}, {Name: "gw-3", Policy: gw3}, {Name: "gw-4", Policy: shapeOK}}
}

func endpointSuspect(a netip.Addr, how string) TruthSuspect {
	return TruthSuspect{Kind: KindEndpoint, Address: a.String(), Family: familyOf(a), How: how}
}

// familyOf names a's family as the reports do.
func familyOf(a netip.Addr) string {
	if a.Unmap().Is4() {
		return "ipv4"
	}
	return "ipv6"
}

// shapeOK answers 200 with a body that names nobody, so only what a shape
// means to show (a header, a connection) tells its servers apart.
func shapeOK(n int64, r *http.Request) Answer { return Answer{Status: http.StatusOK, Body: "ok\n"} }

// unavailable answers nginx's "503 Service Temporarily Unavailable" page.
func unavailable(n int64, r *http.Request) Answer {
	return errorPage(http.StatusServiceUnavailable, "503 Service Temporarily Unavailable", "nginx/1.22.1", "")
}

// flapping answers 503 in the failing windows (see FailsAt), 200 between.
func (s *ShapeServer) flapping(n int64, r *http.Request) Answer {
	if s.FailsAt(time.Now()) {
		return unavailable(n, r)
	}
	return shapeOK(n, r)
}

// startShape serves d (sick or its healthy twin) on one port of each of
// its addresses.
func startShape(t testing.TB, o ShapeOptions, d shapeDef, sick bool) *ShapeServer {
	t.Helper()
	s := &ShapeServer{Host: o.Host, Header: d.header, Truth: Truth{Healthy: true},
		fronts: map[netip.Addr]*Sticky{}, resets: map[netip.Addr]*RawServer{}}
	if sick {
		s.Truth = Truth{Suspects: slices.Clone(d.truth.Suspects), Family: d.truth.Family, Avoid: slices.Clone(d.truth.Avoid)}
		if d.windowed {
			s.Window = o.Window
		}
	}
	fronts := d.fronts(s, sick)
	for _, f := range fronts {
		s.Addrs = append(s.Addrs, f.addr)
	}
	port, lns := ListenSamePort(t, s.Addrs...)
	s.Port, s.URL = port, "http://"+hostPort(s.Host, port)+"/"
	s.started = time.Now() // before any server starts: their policies read it
	for i, f := range fronts {
		ln := lns[i : i+1]
		switch {
		case f.reset:
			r := rawOn(t, ln[0])
			r.start(ResetConn)
			s.resets[f.addr] = r
		case f.instances != nil:
			s.sticky = serveSticky(t, StickyOptions{Instances: f.instances, Host: s.Host, NoHeader: f.noHeader}, port, ln)
			s.fronts[f.addr] = s.sticky
		default:
			// A plain address is a gateway of one instance, named after
			// the address, which counts its connections alike.
			p := f.policy
			if p == nil {
				p = shapeOK
			}
			s.fronts[f.addr] = serveSticky(t, StickyOptions{Instances: []Instance{{Name: f.addr.String(), Policy: p}},
				Host: s.Host, Header: "X-Backend", NoHeader: !f.echo}, port, ln)
		}
	}
	return s
}

// FailsAt reports whether at falls in one of a flapping shape's failing
// windows: the odd ones (the 2nd, the 4th, …) counted from the server's
// start. It is false for a shape without windows.
func (s *ShapeServer) FailsAt(at time.Time) bool {
	if s.Window <= 0 || at.Before(s.started) {
		return false
	}
	return (at.Sub(s.started)/s.Window)%2 == 1
}

// Resolve is the "host:port:addr,addr…" value of --resolve that maps Host
// to every address of the shape.
func (s *ShapeServer) Resolve() string {
	addrs := make([]string, len(s.Addrs))
	for i, a := range s.Addrs {
		addrs[i] = a.String()
	}
	return fmt.Sprintf("%s:%d:%s", s.Host, s.Port, strings.Join(addrs, ","))
}

// Counts returns what each address counted, keyed by the address as
// reports print it ("::1").
func (s *ShapeServer) Counts() map[string]AddrCounts {
	m := map[string]AddrCounts{}
	for _, a := range s.Addrs {
		if r, ok := s.resets[a]; ok {
			n := r.Conns()
			m[a.String()] = AddrCounts{Conns: n, Resets: n}
			continue
		}
		var c AddrCounts
		for _, cs := range s.fronts[a].Conns() {
			c.Conns++
			c.Requests += cs.Requests
			c.Failures += cs.Failures
		}
		m[a.String()] = c
	}
	return m
}

// Conns returns the counts of every HTTP connection accepted, address by
// address, each in the order accepted. Instance names the sticky instance
// a connection was kept on; it is "" on an address without instances.
func (s *ShapeServer) Conns() []ConnStats {
	var out []ConnStats
	for _, a := range s.Addrs {
		f, ok := s.fronts[a]
		if !ok {
			continue
		}
		for _, cs := range f.Conns() {
			if f != s.sticky {
				cs.Instance = ""
			}
			out = append(out, cs)
		}
	}
	return out
}

// Instances returns the counts of every instance, by name ("gw-3",
// "pool-2"); empty for a shape without instances. A pool routes requests,
// not connections, so its instances count no Conns.
func (s *ShapeServer) Instances() map[string]InstanceStats {
	switch {
	case s.sticky != nil:
		return s.sticky.Stats()
	case s.pool != nil:
		return s.pool.stats()
	}
	return map[string]InstanceStats{}
}

// shapePool is a backend pool shared by every address: each request goes
// to an instance drawn from a seeded PRNG, which names itself in a header.
// Drawing per request, not in turn, keeps a client that spreads its
// requests over connections in turn from seeing an instance stick to one.
type shapePool struct {
	header string
	insts  []*poolInstance

	mu  sync.Mutex
	rng *rand.Rand
}

type poolInstance struct {
	Instance
	n, failures atomic.Int64
}

func newShapePool(header string, seed uint64, insts []Instance) *shapePool {
	p := &shapePool{header: header, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	for _, in := range insts {
		if in.Policy == nil {
			in.Policy = shapeOK
		}
		p.insts = append(p.insts, &poolInstance{Instance: in})
	}
	return p
}

// answer is the Policy of every address: it routes the request to an
// instance and answers by the instance's policy, naming it.
func (p *shapePool) answer(n int64, r *http.Request) Answer {
	p.mu.Lock()
	in := p.insts[p.rng.IntN(len(p.insts))]
	p.mu.Unlock()
	a := in.Policy(in.n.Add(1), r)
	if a.Status >= 500 {
		in.failures.Add(1)
	}
	h := maps.Clone(a.Header)
	if h == nil {
		h = map[string]string{}
	}
	h[p.header] = in.Name
	a.Header = h
	return a
}

func (p *shapePool) stats() map[string]InstanceStats {
	m := map[string]InstanceStats{}
	for _, in := range p.insts {
		m[in.Name] = InstanceStats{Requests: in.n.Load(), Failures: in.failures.Load()}
	}
	return m
}
