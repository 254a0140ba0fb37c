package testserver

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// DNS is a DNS server on one port of 127.0.0.1, over UDP and TCP, that
// answers A and AAAA queries from a zone a test may change while it runs.
// Names outside the zone are NXDOMAIN. Names are matched without regard to
// case, with or without the final dot. Play, Rcode, Silence and Truncate add
// a name the zone lacks, with no address.
type DNS struct {
	addr netip.AddrPort

	mu      sync.Mutex
	names   map[string]*dnsName
	muteAll bool
	ttl     uint32
	edit    func(m *dns.Msg, tcp bool)
	queries map[dnsKey]int
	overTCP map[dnsKey]int
	queried chan struct{}
	once    sync.Once
}

type dnsName struct {
	addrs    []netip.Addr
	script   [][]netip.Addr // answers of the next A queries, in turn
	rcode    int            // answered instead of the records when not RcodeSuccess
	silent   bool
	truncate bool
}

type dnsKey struct {
	name  string
	qtype uint16
}

// StartDNS starts a DNS server whose zone is records (name → addresses; a
// name with no address exists and answers empty). Records have TTL 0 (see
// SetTTL). The server stops when the test ends.
func StartDNS(t testing.TB, records map[string][]netip.Addr) *DNS {
	t.Helper()
	d := &DNS{names: map[string]*dnsName{}, queries: map[dnsKey]int{}, overTCP: map[dnsKey]int{}, queried: make(chan struct{})}
	for name, addrs := range records {
		d.names[fqdn(name)] = &dnsName{addrs: slices.Clone(addrs)}
	}
	pc, ln := listenUDPAndTCP(t)
	d.addr = addrPortOf(pc.LocalAddr())
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: d}, {Listener: ln, Handler: d}} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go srv.ActivateAndServe()
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("testserver: the DNS server did not start within 5s")
		}
		t.Cleanup(func() { srv.Shutdown() })
	}
	return d
}

// listenUDPAndTCP listens on one port of 127.0.0.1 for both UDP and TCP.
func listenUDPAndTCP(t testing.TB) (net.PacketConn, net.Listener) {
	t.Helper()
	var lastErr error
	for range 20 {
		pc, err := net.ListenPacket("udp", netip.AddrPortFrom(Lo4a, 0).String())
		if err != nil {
			t.Fatalf("testserver: dns: listen: %v", err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln
		}
		pc.Close()
		lastErr = err
	}
	t.Fatalf("testserver: dns: no loopback port free for both UDP and TCP: %v", lastErr)
	return nil, nil
}

func fqdn(name string) string { return dns.Fqdn(strings.ToLower(name)) }

// ServeDNS answers one query; it implements dns.Handler.
func (d *DNS) ServeDNS(w dns.ResponseWriter, q *dns.Msg) {
	d.once.Do(func() { close(d.queried) })
	tcp := w.LocalAddr().Network() == "tcp"
	m := new(dns.Msg)
	m.SetReply(q)
	m.Authoritative = true
	m.RecursionAvailable = true
	if len(q.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		w.WriteMsg(m)
		return
	}
	qq := q.Question[0]
	key := dnsKey{fqdn(qq.Name), qq.Qtype}
	d.mu.Lock()
	d.queries[key]++
	if tcp {
		d.overTCP[key]++
	}
	e, ok := d.names[key.name]
	if d.muteAll || ok && e.silent {
		d.mu.Unlock()
		return
	}
	var addrs []netip.Addr
	var rcode int
	var truncate bool
	if ok {
		if qq.Qtype == dns.TypeA && len(e.script) > 0 {
			e.addrs, e.script = e.script[0], e.script[1:]
		}
		addrs, rcode, truncate = slices.Clone(e.addrs), e.rcode, e.truncate
	}
	ttl, edit := d.ttl, d.edit
	d.mu.Unlock()

	switch {
	case !ok:
		m.Rcode = dns.RcodeNameError
	case rcode != dns.RcodeSuccess:
		m.Rcode = rcode
	case truncate && !tcp:
		m.Truncated = true
	default:
		hdr := dns.RR_Header{Name: qq.Name, Class: dns.ClassINET, Ttl: ttl}
		for _, a := range addrs {
			switch {
			case qq.Qtype == dns.TypeA && a.Unmap().Is4():
				hdr.Rrtype = dns.TypeA
				m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: a.Unmap().AsSlice()})
			case qq.Qtype == dns.TypeAAAA && a.Is6() && !a.Is4In6():
				hdr.Rrtype = dns.TypeAAAA
				m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: a.AsSlice()})
			}
		}
	}
	if edit != nil {
		edit(m, tcp)
	}
	w.WriteMsg(m)
}

// Addr is the server's address and port, the same for UDP and TCP: the
// value of --dns-server is Addr().String().
func (d *DNS) Addr() netip.AddrPort { return d.addr }

// entry returns name's entry, adding it to the zone; d.mu must be held.
func (d *DNS) entry(name string) *dnsName {
	e := d.names[fqdn(name)]
	if e == nil {
		e = &dnsName{}
		d.names[fqdn(name)] = e
	}
	return e
}

// Set makes name answer addrs from now on (none: an empty answer), undoing
// any Play, rcode, silence or truncation of the name.
func (d *DNS) Set(name string, addrs ...netip.Addr) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.names[fqdn(name)] = &dnsName{addrs: slices.Clone(addrs)}
}

// Play scripts name's answers: each of its next A queries switches the
// name's addresses to the next set, and the last set stays. AAAA queries
// answer from the current set, so a resolver that asks A then AAAA sees
// one set per resolution.
func (d *DNS) Play(name string, sets ...[]netip.Addr) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.entry(name)
	e.script = nil
	for _, s := range sets {
		e.script = append(e.script, slices.Clone(s))
	}
}

// NXDomain removes name from the zone: it answers NXDOMAIN.
func (d *DNS) NXDomain(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.names, fqdn(name))
}

// ServFail makes name answer SERVFAIL.
func (d *DNS) ServFail(name string) { d.Rcode(name, dns.RcodeServerFailure) }

// Rcode makes name answer rcode (dns.RcodeRefused, …) without records;
// dns.RcodeSuccess answers its records again.
func (d *DNS) Rcode(name string, rcode int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.entry(name).rcode = rcode
}

// Silence makes the server read the queries for names and answer none;
// without names, every query.
func (d *DNS) Silence(names ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(names) == 0 {
		d.muteAll = true
	}
	for _, n := range names {
		d.entry(n).silent = true
	}
}

// Truncate makes names answer over UDP with the TC bit set and no records,
// so a resolver retries over TCP, where the records are.
func (d *DNS) Truncate(names ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, n := range names {
		d.entry(n).truncate = true
	}
}

// SetTTL sets the TTL of the records answered from now on.
func (d *DNS) SetTTL(ttl time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ttl = uint32(ttl / time.Second)
}

// Edit sets a function that changes every reply just before it is sent (a
// CNAME chain, odd flags); tcp tells which transport the query came over.
func (d *DNS) Edit(edit func(m *dns.Msg, tcp bool)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.edit = edit
}

// Queries is the number of queries of type qtype (dns.TypeA, …) for name
// the server received, over UDP and TCP, answered or not.
func (d *DNS) Queries(name string, qtype uint16) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queries[dnsKey{fqdn(name), qtype}]
}

// QueriesTCP is the part of Queries that came over TCP.
func (d *DNS) QueriesTCP(name string, qtype uint16) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.overTCP[dnsKey{fqdn(name), qtype}]
}

// Queried is closed when the server receives its first query.
func (d *DNS) Queried() <-chan struct{} { return d.queried }
