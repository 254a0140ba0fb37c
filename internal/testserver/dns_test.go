package testserver

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// ask sends one query over net ("udp" or "tcp") and returns the reply.
func ask(t *testing.T, d *DNS, network, name string, qtype uint16, timeout time.Duration) (*dns.Msg, error) {
	t.Helper()
	c := &dns.Client{Net: network, Timeout: timeout}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	r, _, err := c.Exchange(m, d.Addr().String())
	return r, err
}

// answerAddrs lists the A and AAAA records of r.
func answerAddrs(r *dns.Msg) []netip.Addr {
	var out []netip.Addr
	for _, rr := range r.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			a, _ := netip.AddrFromSlice(rr.A)
			out = append(out, a.Unmap())
		case *dns.AAAA:
			a, _ := netip.AddrFromSlice(rr.AAAA)
			out = append(out, a)
		}
	}
	return out
}

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

func TestDNS(t *testing.T) {
	t.Parallel()
	d := StartDNS(t, map[string][]netip.Addr{
		"App.Test":   addrs("127.0.0.1", "::1"),
		"empty.test": nil,
		"fail.test":  addrs("127.0.0.1"),
		"quiet.test": addrs("127.0.0.1"),
	})
	d.ServFail("fail.test")
	d.Silence("quiet.test")
	tests := []struct {
		name      string
		qtype     uint16
		wantRcode int
		want      []netip.Addr
	}{
		{"app.test", dns.TypeA, dns.RcodeSuccess, addrs("127.0.0.1")},
		{"APP.test.", dns.TypeAAAA, dns.RcodeSuccess, addrs("::1")},
		{"empty.test", dns.TypeA, dns.RcodeSuccess, nil},
		{"nx.test", dns.TypeA, dns.RcodeNameError, nil},
		{"fail.test", dns.TypeA, dns.RcodeServerFailure, nil},
	}
	for _, tt := range tests {
		r, err := ask(t, d, "udp", tt.name, tt.qtype, 2*time.Second)
		if err != nil {
			t.Errorf("%s %s: %v", tt.name, dns.TypeToString[tt.qtype], err)
			continue
		}
		if got := answerAddrs(r); r.Rcode != tt.wantRcode || !slices.Equal(got, tt.want) {
			t.Errorf("%s %s: rcode %s, %v; want %s, %v", tt.name, dns.TypeToString[tt.qtype],
				dns.RcodeToString[r.Rcode], got, dns.RcodeToString[tt.wantRcode], tt.want)
		}
	}
	if _, err := ask(t, d, "udp", "quiet.test", dns.TypeA, 200*time.Millisecond); err == nil {
		t.Errorf("quiet.test: answered; want silence (a timeout)")
	}
	select {
	case <-d.Queried():
	default:
		t.Errorf("Queried() not closed after queries")
	}
	if d.Queries("app.test", dns.TypeA) != 1 || d.Queries("app.test.", dns.TypeAAAA) != 1 || d.Queries("quiet.test", dns.TypeA) != 1 {
		t.Errorf("Queries: app A %d, app AAAA %d, quiet A %d; want 1 each",
			d.Queries("app.test", dns.TypeA), d.Queries("app.test", dns.TypeAAAA), d.Queries("quiet.test", dns.TypeA))
	}

	// Changes during the test: Set, NXDomain, then a script per A query.
	d.Set("app.test", addrs("127.0.0.2")...)
	if r, _ := ask(t, d, "udp", "app.test", dns.TypeA, 2*time.Second); r == nil || !slices.Equal(answerAddrs(r), addrs("127.0.0.2")) {
		t.Errorf("after Set: %v; want 127.0.0.2", r)
	}
	d.NXDomain("app.test")
	if r, _ := ask(t, d, "udp", "app.test", dns.TypeA, 2*time.Second); r == nil || r.Rcode != dns.RcodeNameError {
		t.Errorf("after NXDomain: %v; want NXDOMAIN", r)
	}
	d.Play("app.test", addrs("127.0.0.1"), addrs("127.0.0.2", "::1"), addrs("127.0.0.3"))
	var got [][]netip.Addr
	for range 4 {
		a, _ := ask(t, d, "udp", "app.test", dns.TypeA, 2*time.Second)
		aaaa, _ := ask(t, d, "tcp", "app.test", dns.TypeAAAA, 2*time.Second)
		got = append(got, append(answerAddrs(a), answerAddrs(aaaa)...))
	}
	want := [][]netip.Addr{addrs("127.0.0.1"), addrs("127.0.0.2", "::1"), addrs("127.0.0.3"), addrs("127.0.0.3")}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Play: resolutions %v; want %v", got, want)
	}
	if n := d.QueriesTCP("app.test", dns.TypeAAAA); n != 4 {
		t.Errorf("QueriesTCP(app.test, AAAA) = %d; want 4", n)
	}

	d.Silence()
	if _, err := ask(t, d, "tcp", "app.test", dns.TypeA, 200*time.Millisecond); err == nil {
		t.Errorf("after Silence(): answered; want no answer")
	}
}

// TestDNSTruncate resolves through Go's resolver, which retries over TCP
// when the UDP answer is truncated.
func TestDNSTruncate(t *testing.T) {
	t.Parallel()
	d := StartDNS(t, map[string][]netip.Addr{"big.test": addrs("127.0.0.9", "::9")})
	d.Truncate("big.test")
	d.SetTTL(time.Minute)
	r, err := ask(t, d, "udp", "big.test", dns.TypeA, 2*time.Second)
	if err != nil || !r.Truncated || len(r.Answer) != 0 {
		t.Fatalf("UDP: %v, %v; want a truncated empty answer", r, err)
	}
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var dl net.Dialer
		return dl.DialContext(ctx, network, d.Addr().String())
	}}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	got, err := res.LookupNetIP(ctx, "ip", "big.test")
	slices.SortFunc(got, netip.Addr.Compare)
	if err != nil || !slices.Equal(got, addrs("127.0.0.9", "::9")) {
		t.Errorf("LookupNetIP: %v, %v; want 127.0.0.9 ::9", got, err)
	}
	if d.QueriesTCP("big.test", dns.TypeA) == 0 || d.QueriesTCP("big.test", dns.TypeAAAA) == 0 {
		t.Errorf("no query over TCP: %d A, %d AAAA", d.QueriesTCP("big.test", dns.TypeA), d.QueriesTCP("big.test", dns.TypeAAAA))
	}
	r, err = ask(t, d, "tcp", "big.test", dns.TypeA, 2*time.Second)
	if err != nil || len(r.Answer) != 1 || r.Answer[0].Header().Ttl != 60 {
		t.Errorf("TCP: %v, %v; want one A record with TTL 60", r, err)
	}
}
