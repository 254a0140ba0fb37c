package probe

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

func addrList(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// TestResolveDNSServer resolves through a real DNS server on loopback, as
// --dns-server does.
func TestResolveDNSServer(t *testing.T) {
	t.Parallel()
	d := testserver.StartDNS(t, map[string][]netip.Addr{
		// Answers in no particular order: Resolve sorts them.
		"multi.pinprobe.test.": addrList("2001:db8::1", "192.0.2.10", "192.0.2.9"),
		// Its AAAA answer also carries ::ffff:192.0.2.9 (the edit below).
		"dup.pinprobe.test.":    addrList("192.0.2.9", "2001:db8::1"),
		"v4only.pinprobe.test.": addrList("192.0.2.20"),
		"v6only.pinprobe.test.": addrList("2001:db8::20"),
		"empty.pinprobe.test.":  nil, // the name exists but has no address
		// Answered only over TCP: over UDP the reply is truncated and empty.
		"big.pinprobe.test.": addrList("192.0.2.30", "2001:db8::30"),
		// Answered as the chain alias → mid → multi, as a recursive resolver does.
		"alias.pinprobe.test.": addrList("192.0.2.40", "2001:db8::40"),
	})
	d.Truncate("big.pinprobe.test.")
	d.ServFail("servfail.pinprobe.test.")
	d.Rcode("refused.pinprobe.test.", dns.RcodeRefused)
	d.Edit(func(m *dns.Msg, _ bool) {
		q := m.Question[0]
		switch strings.ToLower(q.Name) {
		case "dup.pinprobe.test.":
			if q.Qtype == dns.TypeAAAA { // an IPv4-mapped address, as some servers answer
				mapped := &dns.AAAA{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeAAAA, Class: dns.ClassINET, Ttl: 60}, AAAA: netip.MustParseAddr("::ffff:192.0.2.9").AsSlice()}
				m.Answer = append([]dns.RR{mapped}, m.Answer...)
			}
		case "alias.pinprobe.test.":
			for _, rr := range m.Answer {
				rr.Header().Name = "multi.pinprobe.test."
			}
			m.Answer = append([]dns.RR{
				&dns.CNAME{Hdr: dns.RR_Header{Name: "alias.pinprobe.test.", Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 60}, Target: "mid.pinprobe.test."},
				&dns.CNAME{Hdr: dns.RR_Header{Name: "mid.pinprobe.test.", Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 60}, Target: "multi.pinprobe.test."},
			}, m.Answer...)
		}
	})
	source := "dns " + d.Addr().String()
	tests := []struct {
		host    string
		only    Family
		want    []netip.Addr
		wantErr string
	}{
		{host: "multi.pinprobe.test", want: addrList("192.0.2.9", "192.0.2.10", "2001:db8::1")},
		{host: "MULTI.pinprobe.test.", want: addrList("192.0.2.9", "192.0.2.10", "2001:db8::1")},
		{host: "multi.pinprobe.test", only: IPv4, want: addrList("192.0.2.9", "192.0.2.10")},
		{host: "multi.pinprobe.test", only: IPv6, want: addrList("2001:db8::1")},
		{host: "dup.pinprobe.test", want: addrList("192.0.2.9", "2001:db8::1")},
		{host: "v4only.pinprobe.test", want: addrList("192.0.2.20")},
		{host: "v6only.pinprobe.test", want: addrList("2001:db8::20")},
		{host: "v4only.pinprobe.test", only: IPv6, wantErr: "resolve v4only.pinprobe.test (" + source + "): no ipv6 address among 192.0.2.20"},
		{host: "v6only.pinprobe.test", only: IPv4, wantErr: "no ipv4 address among 2001:db8::20"},
		{host: "nx.pinprobe.test", wantErr: "resolve nx.pinprobe.test (" + source + "): no such host"},
		{host: "empty.pinprobe.test", wantErr: "resolve empty.pinprobe.test (" + source + "): no addresses"},
		{host: "big.pinprobe.test", want: addrList("192.0.2.30", "2001:db8::30")},
		{host: "alias.pinprobe.test", want: addrList("192.0.2.40", "2001:db8::40")},
		{host: "servfail.pinprobe.test", wantErr: "resolve servfail.pinprobe.test (" + source + "): server answered SERVFAIL"},
		{host: "refused.pinprobe.test", wantErr: "resolve refused.pinprobe.test (" + source + "): server answered REFUSED"},
	}
	for _, tt := range tests {
		t.Run(tt.host+"/"+string(tt.only), func(t *testing.T) {
			r := &Resolver{Server: d.Addr(), Only: tt.only, Timeout: 5 * time.Second}
			got := r.Resolve(t.Context(), tt.host, 443)
			if got.Source != source {
				t.Errorf("Source = %q; want %q", got.Source, source)
			}
			if got.Host != tt.host || got.Port != 443 {
				t.Errorf("Host, Port = %q, %d; want %q, 443", got.Host, got.Port, tt.host)
			}
			checkResolution(t, got, tt.want, tt.wantErr)
		})
	}
	if d.Queries("multi.pinprobe.test.", dns.TypeA) == 0 || d.Queries("multi.pinprobe.test.", dns.TypeAAAA) == 0 {
		t.Errorf("DNS server was not asked for A and AAAA of multi.pinprobe.test.")
	}
	for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
		if udp, tcp := d.Queries("big.pinprobe.test.", qtype)-d.QueriesTCP("big.pinprobe.test.", qtype), d.QueriesTCP("big.pinprobe.test.", qtype); udp != 1 || tcp != 1 {
			t.Errorf("big.pinprobe.test. %s asked %d times over UDP and %d over TCP; want once each", dns.TypeToString[qtype], udp, tcp)
		}
		if n := d.QueriesTCP("multi.pinprobe.test.", qtype); n != 0 {
			t.Errorf("multi.pinprobe.test. %s asked %d times over TCP; want UDP only when not truncated", dns.TypeToString[qtype], n)
		}
	}
}

// TestResolveDNSServerSkipsEtcHosts: with a DNS server, names in /etc/hosts
// such as localhost are asked of that server like any other.
func TestResolveDNSServerSkipsEtcHosts(t *testing.T) {
	t.Parallel()
	t.Run("NXDOMAIN", func(t *testing.T) {
		t.Parallel()
		d := testserver.StartDNS(t, nil)
		r := &Resolver{Server: d.Addr(), Timeout: time.Second}
		got := r.Resolve(t.Context(), "localhost", 80)
		if want := "resolve localhost (dns " + d.Addr().String() + "): no such host"; got.Err == nil || got.Err.Error() != want || len(got.Addrs) != 0 {
			t.Errorf("Resolve = %v, %v; want no address and %q", got.Addrs, got.Err, want)
		}
		if d.Queries("localhost.", dns.TypeA) != 1 || d.Queries("localhost.", dns.TypeAAAA) != 1 {
			t.Errorf("the DNS server was not asked for A and AAAA of localhost.")
		}
	})
	t.Run("the server's answer", func(t *testing.T) {
		t.Parallel()
		d := testserver.StartDNS(t, map[string][]netip.Addr{"localhost.": addrList("192.0.2.50")})
		r := &Resolver{Server: d.Addr(), Timeout: time.Second}
		got := r.Resolve(t.Context(), "localhost", 80)
		if want := addrList("192.0.2.50"); got.Err != nil || !slices.Equal(got.Addrs, want) {
			t.Errorf("Resolve = %v, %v; want %v", got.Addrs, got.Err, want)
		}
	})
	t.Run("closed port", func(t *testing.T) {
		t.Parallel()
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := pc.LocalAddr().(*net.UDPAddr).AddrPort()
		pc.Close()
		r := &Resolver{Server: closed, Timeout: time.Second}
		start := time.Now()
		got := r.Resolve(t.Context(), "localhost", 80)
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("Resolve took %v with a 1s timeout", took)
		}
		prefix := "resolve localhost (dns " + closed.String() + "): "
		if got.Err == nil || len(got.Addrs) != 0 || got.Source != "dns "+closed.String() ||
			!strings.HasPrefix(got.Err.Error(), prefix) || !strings.Contains(got.Err.Error(), "refused") && !strings.Contains(got.Err.Error(), "timed out") {
			t.Errorf("Resolve = %v (%s), %v; want no address and an error %q then refused or timed out", got.Addrs, got.Source, got.Err, prefix)
		}
	})
}

// TestResolveDNSTimeout bounds a resolution against a server that never answers.
func TestResolveDNSTimeout(t *testing.T) {
	t.Parallel()
	silent := testserver.StartDNS(t, nil)
	silent.Silence()
	r := &Resolver{Server: silent.Addr(), Timeout: 300 * time.Millisecond}
	start := time.Now()
	got := r.Resolve(t.Context(), "slow.pinprobe.test", 80)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Resolve took %v with a 300ms timeout", took)
	}
	if got.Err == nil || !strings.Contains(got.Err.Error(), "timed out") || len(got.Addrs) != 0 {
		t.Errorf("Resolve = %v, %v; want no address and an error containing \"timed out\"", got.Addrs, got.Err)
	}
	select { // the timeout was the server's silence, not a query lost on the way
	case <-silent.Queried():
	case <-time.After(10 * time.Second):
		t.Error("the DNS server received no query")
	}
}

// TestResolveDNSCancel: cancelling the context ends a resolution waiting
// for a server that never answers, well before the timeout.
func TestResolveDNSCancel(t *testing.T) {
	t.Parallel()
	silent := testserver.StartDNS(t, nil)
	silent.Silence()
	ctx, cancel := context.WithCancel(t.Context())
	r := &Resolver{Server: silent.Addr(), Timeout: time.Minute}
	done := make(chan Resolution, 1)
	go func() { done <- r.Resolve(ctx, "slow.pinprobe.test", 80) }()
	select {
	case <-silent.Queried():
	case <-time.After(10 * time.Second):
		t.Fatal("no DNS query within 10s")
	}
	cancel()
	select {
	case got := <-done:
		if got.Err == nil || !strings.Contains(got.Err.Error(), "canceled") || len(got.Addrs) != 0 {
			t.Errorf("Resolve = %v, %v; want no address and a cancellation", got.Addrs, got.Err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Resolve did not return within 10s of the cancellation (timeout 1m)")
	}
}

// TestResolveStaticAndLiteral covers --resolve and IP-literal hosts: neither
// asks DNS, and the family filter still applies.
func TestResolveStaticAndLiteral(t *testing.T) {
	t.Parallel()
	// A DNS server that knows none of the names: a query that reaches it
	// would fail the lookup. It notes every question it is asked.
	d := testserver.StartDNS(t, nil)
	var mu sync.Mutex
	asked := map[string]int{} // "name type"
	d.Edit(func(m *dns.Msg, _ bool) {
		q := m.Question[0]
		mu.Lock()
		defer mu.Unlock()
		asked[strings.ToLower(q.Name)+" "+dns.TypeToString[q.Qtype]]++
	})
	static := map[string][]netip.Addr{
		StaticKey("App.Pinprobe.Test.", 8443): addrList("::1", "127.0.0.2", "127.0.0.1", "::ffff:127.0.0.1"),
	}
	tests := []struct {
		name       string
		host       string
		port       uint16
		only       Family
		source     string // StaticSource
		want       []netip.Addr
		wantSource string
		wantErr    string
	}{
		{name: "static", host: "app.pinprobe.test", port: 8443, want: addrList("127.0.0.1", "127.0.0.2", "::1"), wantSource: "resolve"},
		{name: "static case and dot", host: "APP.pinprobe.test.", port: 8443, want: addrList("127.0.0.1", "127.0.0.2", "::1"), wantSource: "resolve"},
		{name: "static source", host: "app.pinprobe.test", port: 8443, source: "demo", want: addrList("127.0.0.1", "127.0.0.2", "::1"), wantSource: "demo"},
		{name: "static -4", host: "app.pinprobe.test", port: 8443, only: IPv4, want: addrList("127.0.0.1", "127.0.0.2"), wantSource: "resolve"},
		{name: "static -6", host: "app.pinprobe.test", port: 8443, only: IPv6, want: addrList("::1"), wantSource: "resolve"},
		{name: "static other port asks DNS", host: "app.pinprobe.test", port: 443, wantSource: "dns " + d.Addr().String(), wantErr: "no such host"},
		{name: "literal v4", host: "127.0.0.2", port: 80, want: addrList("127.0.0.2"), wantSource: "literal"},
		{name: "literal v6", host: "::1", port: 80, want: addrList("::1"), wantSource: "literal"},
		{name: "literal v4-mapped", host: "::ffff:127.0.0.1", port: 80, want: addrList("127.0.0.1"), wantSource: "literal"},
		{name: "literal -4", host: "::1", port: 80, only: IPv4, wantSource: "literal", wantErr: "resolve ::1 (literal): no ipv4 address among ::1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Resolver{Static: static, StaticSource: tt.source, Server: d.Addr(), Only: tt.only}
			got := r.Resolve(t.Context(), tt.host, tt.port)
			if got.Source != tt.wantSource {
				t.Errorf("Source = %q; want %q", got.Source, tt.wantSource)
			}
			checkResolution(t, got, tt.want, tt.wantErr)
		})
	}
	mu.Lock()
	defer mu.Unlock()
	for q := range asked {
		if !strings.HasPrefix(q, "app.pinprobe.test. ") {
			t.Errorf("DNS was asked %q; static and literal hosts must not be looked up", q)
		}
	}
	// Only the port --resolve does not cover is looked up: A and AAAA once.
	for _, q := range []string{"app.pinprobe.test. A", "app.pinprobe.test. AAAA"} {
		if asked[q] != 1 {
			t.Errorf("DNS was asked %q %d times; want once, for the other port", q, asked[q])
		}
	}
}

func TestParseResolve(t *testing.T) {
	tests := []struct {
		in        string
		wantKey   string
		wantAddrs []netip.Addr
		wantErr   string
	}{
		{in: "app.test:443:127.0.0.1", wantKey: "app.test:443", wantAddrs: addrList("127.0.0.1")},
		{in: "App.Test.:443:127.0.0.1", wantKey: "app.test:443", wantAddrs: addrList("127.0.0.1")},
		{in: "app.test:443:127.0.0.1,127.0.0.2", wantKey: "app.test:443", wantAddrs: addrList("127.0.0.1", "127.0.0.2")},
		{in: "app.test:443:[::1]", wantKey: "app.test:443", wantAddrs: addrList("::1")},
		{in: "app.test:443:::1", wantKey: "app.test:443", wantAddrs: addrList("::1")},
		{in: "app.test:443:2001:db8::7", wantKey: "app.test:443", wantAddrs: addrList("2001:db8::7")},
		{in: "app.test:8443:[2001:db8::7],127.0.0.1, ::1", wantKey: "app.test:8443", wantAddrs: addrList("2001:db8::7", "127.0.0.1", "::1")},
		{in: "app.test:443:::ffff:127.0.0.1", wantKey: "app.test:443", wantAddrs: addrList("127.0.0.1")},
		{in: "app.test:1:127.0.0.1", wantKey: "app.test:1", wantAddrs: addrList("127.0.0.1")},
		{in: "app.test:65535:127.0.0.1", wantKey: "app.test:65535", wantAddrs: addrList("127.0.0.1")},

		{in: "app.test:0:127.0.0.1", wantErr: `port "0" out of range`},
		{in: "app.test:65536:127.0.0.1", wantErr: `port "65536" out of range`},
		{in: "app.test:https:127.0.0.1", wantErr: `port "https" out of range`},
		{in: "app.test::127.0.0.1", wantErr: `port "" out of range`},
		{in: "app.test:443:example.com", wantErr: `"example.com" is not an IP address`},
		{in: "app.test:443:127.0.0.1,", wantErr: `"" is not an IP address`},
		{in: "app.test:443:127.0.0.256", wantErr: `"127.0.0.256" is not an IP address`},
		{in: "app.test:443:fe80::1%eth0", wantErr: `zoned address "fe80::1%eth0" is not supported`},
		{in: "app.test:443:", wantErr: "want HOST:PORT:ADDR"},
		{in: "app.test:443", wantErr: "want HOST:PORT:ADDR"},
		{in: "app.test", wantErr: "want HOST:PORT:ADDR"},
		{in: ":443:127.0.0.1", wantErr: "want HOST:PORT:ADDR"},
		{in: "", wantErr: "want HOST:PORT:ADDR"},
		{in: "[::1:443:127.0.0.1", wantErr: "want HOST:PORT:ADDR"},
	}
	for _, tt := range tests {
		key, addrs, err := ParseResolve(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseResolve(%q) = %q, %v, %v; want error containing %q", tt.in, key, addrs, err, tt.wantErr)
			}
			continue
		}
		if err != nil || key != tt.wantKey || !slices.Equal(addrs, tt.wantAddrs) {
			t.Errorf("ParseResolve(%q) = %q, %v, %v; want %q, %v", tt.in, key, addrs, err, tt.wantKey, tt.wantAddrs)
		}
	}
}

// TestParseResolveFeedsResolve checks a parsed --resolve entry is found by
// the target's host and port as Resolve looks them up.
func TestParseResolveFeedsResolve(t *testing.T) {
	key, addrs, err := ParseResolve("Sign.Example.COM:443:[::1],127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := ParseTarget("https://sign.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	r := &Resolver{Static: map[string][]netip.Addr{key: addrs}}
	got := r.Resolve(t.Context(), tg.Host(), tg.Port())
	if want := addrList("127.0.0.1", "::1"); got.Err != nil || got.Source != "resolve" || !slices.Equal(got.Addrs, want) {
		t.Errorf("Resolve = %v (%s), %v; want %v from resolve", got.Addrs, got.Source, got.Err, want)
	}
}

// checkResolution compares a Resolution's addresses and error with the
// expected ones; wantErr "" means no error, else a part of its text.
func checkResolution(t *testing.T, got Resolution, want []netip.Addr, wantErr string) {
	t.Helper()
	if !slices.Equal(got.Addrs, want) {
		t.Errorf("Addrs = %v; want %v", got.Addrs, want)
	}
	switch {
	case wantErr == "" && got.Err != nil:
		t.Errorf("Err = %v; want none", got.Err)
	case wantErr != "" && (got.Err == nil || !strings.Contains(got.Err.Error(), wantErr)):
		t.Errorf("Err = %v; want one containing %q", got.Err, wantErr)
	}
}
