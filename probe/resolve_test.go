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
)

// dnsServer is a real DNS server on a loopback port, over UDP and TCP,
// answering A and AAAA queries from zone and NXDOMAIN for every other name.
type dnsServer struct {
	addr    netip.AddrPort
	mu      sync.Mutex
	queries map[string]int // "name type" → count, over either transport
	overTCP map[string]int // "name type" → count over TCP
}

// startDNS starts a dnsServer. edit, when not nil, changes each reply before
// it is sent; tcp tells which transport the query came over.
func startDNS(t *testing.T, zone map[string][]netip.Addr, edit func(m *dns.Msg, tcp bool)) *dnsServer {
	t.Helper()
	pc, ln := listenUDPAndTCP(t)
	d := &dnsServer{addr: pc.LocalAddr().(*net.UDPAddr).AddrPort(), queries: map[string]int{}, overTCP: map[string]int{}}
	handler := dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(req)
		m.Authoritative = true
		m.RecursionAvailable = true
		q := req.Question[0]
		name := strings.ToLower(q.Name)
		key := name + " " + dns.TypeToString[q.Qtype]
		tcp := w.LocalAddr().Network() == "tcp"
		d.mu.Lock()
		d.queries[key]++
		if tcp {
			d.overTCP[key]++
		}
		d.mu.Unlock()
		addrs, ok := zone[name]
		if !ok {
			m.Rcode = dns.RcodeNameError
		}
		hdr := dns.RR_Header{Name: q.Name, Rrtype: q.Qtype, Class: dns.ClassINET, Ttl: 60}
		for _, a := range addrs {
			switch {
			case q.Qtype == dns.TypeA && a.Is4():
				m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: a.AsSlice()})
			case q.Qtype == dns.TypeAAAA && !a.Is4():
				m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: a.AsSlice()})
			}
		}
		if edit != nil {
			edit(m, tcp)
		}
		w.WriteMsg(m)
	})
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: handler}, {Listener: ln, Handler: handler}} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go srv.ActivateAndServe()
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("DNS server did not start")
		}
		t.Cleanup(func() { srv.Shutdown() })
	}
	return d
}

// listenUDPAndTCP listens on one loopback port for both UDP and TCP.
func listenUDPAndTCP(t *testing.T) (net.PacketConn, net.Listener) {
	t.Helper()
	var lastErr error
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln
		}
		pc.Close()
		lastErr = err
	}
	t.Fatalf("no loopback port free for both UDP and TCP: %v", lastErr)
	return nil, nil
}

func (d *dnsServer) asked(name, qtype string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queries[name+" "+qtype]
}

func (d *dnsServer) askedTCP(name, qtype string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.overTCP[name+" "+qtype]
}

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
	d := startDNS(t, map[string][]netip.Addr{
		// Answers in no particular order: Resolve sorts them.
		"multi.pinprobe.test.":  addrList("2001:db8::1", "192.0.2.10", "192.0.2.9"),
		"dup.pinprobe.test.":    addrList("192.0.2.9", "::ffff:192.0.2.9", "2001:db8::1"),
		"v4only.pinprobe.test.": addrList("192.0.2.20"),
		"v6only.pinprobe.test.": addrList("2001:db8::20"),
		"empty.pinprobe.test.":  nil, // the name exists but has no address
		// Answered only over TCP: over UDP the reply is truncated and empty.
		"big.pinprobe.test.": addrList("192.0.2.30", "2001:db8::30"),
		// Answered as the chain alias → mid → multi, as a recursive resolver does.
		"alias.pinprobe.test.": addrList("192.0.2.40", "2001:db8::40"),
		// Answered by the edit below with these rcodes.
		"servfail.pinprobe.test.": nil,
		"refused.pinprobe.test.":  nil,
	}, func(m *dns.Msg, tcp bool) {
		switch strings.ToLower(m.Question[0].Name) {
		case "big.pinprobe.test.":
			if !tcp {
				m.Truncated, m.Answer = true, nil
			}
		case "alias.pinprobe.test.":
			for _, rr := range m.Answer {
				rr.Header().Name = "multi.pinprobe.test."
			}
			m.Answer = append([]dns.RR{
				&dns.CNAME{Hdr: dns.RR_Header{Name: "alias.pinprobe.test.", Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 60}, Target: "mid.pinprobe.test."},
				&dns.CNAME{Hdr: dns.RR_Header{Name: "mid.pinprobe.test.", Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 60}, Target: "multi.pinprobe.test."},
			}, m.Answer...)
		case "servfail.pinprobe.test.":
			m.Rcode = dns.RcodeServerFailure
		case "refused.pinprobe.test.":
			m.Rcode = dns.RcodeRefused
		}
	})
	source := "dns " + d.addr.String()
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
			r := &Resolver{Server: d.addr, Only: tt.only, Timeout: 5 * time.Second}
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
	if d.asked("multi.pinprobe.test.", "A") == 0 || d.asked("multi.pinprobe.test.", "AAAA") == 0 {
		t.Errorf("DNS server was not asked for A and AAAA of multi.pinprobe.test.")
	}
	for _, qtype := range []string{"A", "AAAA"} {
		if udp, tcp := d.asked("big.pinprobe.test.", qtype)-d.askedTCP("big.pinprobe.test.", qtype), d.askedTCP("big.pinprobe.test.", qtype); udp != 1 || tcp != 1 {
			t.Errorf("big.pinprobe.test. %s asked %d times over UDP and %d over TCP; want once each", qtype, udp, tcp)
		}
		if n := d.askedTCP("multi.pinprobe.test.", qtype); n != 0 {
			t.Errorf("multi.pinprobe.test. %s asked %d times over TCP; want UDP only when not truncated", qtype, n)
		}
	}
}

// TestResolveDNSServerSkipsEtcHosts: with a DNS server, names in /etc/hosts
// such as localhost are asked of that server like any other.
func TestResolveDNSServerSkipsEtcHosts(t *testing.T) {
	t.Parallel()
	t.Run("NXDOMAIN", func(t *testing.T) {
		t.Parallel()
		d := startDNS(t, nil, nil)
		r := &Resolver{Server: d.addr, Timeout: time.Second}
		got := r.Resolve(t.Context(), "localhost", 80)
		if want := "resolve localhost (dns " + d.addr.String() + "): no such host"; got.Err == nil || got.Err.Error() != want || len(got.Addrs) != 0 {
			t.Errorf("Resolve = %v, %v; want no address and %q", got.Addrs, got.Err, want)
		}
		if d.asked("localhost.", "A") != 1 || d.asked("localhost.", "AAAA") != 1 {
			t.Errorf("the DNS server was not asked for A and AAAA of localhost.")
		}
	})
	t.Run("the server's answer", func(t *testing.T) {
		t.Parallel()
		d := startDNS(t, map[string][]netip.Addr{"localhost.": addrList("192.0.2.50")}, nil)
		r := &Resolver{Server: d.addr, Timeout: time.Second}
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
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	r := &Resolver{Server: silent.LocalAddr().(*net.UDPAddr).AddrPort(), Timeout: 300 * time.Millisecond}
	start := time.Now()
	got := r.Resolve(t.Context(), "slow.pinprobe.test", 80)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Resolve took %v with a 300ms timeout", took)
	}
	if got.Err == nil || !strings.Contains(got.Err.Error(), "timed out") || len(got.Addrs) != 0 {
		t.Errorf("Resolve = %v, %v; want no address and an error containing \"timed out\"", got.Addrs, got.Err)
	}
}

// TestResolveDNSCancel: cancelling the context ends a resolution waiting
// for a server that never answers, well before the timeout.
func TestResolveDNSCancel(t *testing.T) {
	t.Parallel()
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	asked := make(chan struct{})
	go func() {
		buf := make([]byte, 1500)
		if _, _, err := silent.ReadFrom(buf); err == nil {
			close(asked)
		}
	}()
	ctx, cancel := context.WithCancel(t.Context())
	r := &Resolver{Server: silent.LocalAddr().(*net.UDPAddr).AddrPort(), Timeout: time.Minute}
	done := make(chan Resolution, 1)
	go func() { done <- r.Resolve(ctx, "slow.pinprobe.test", 80) }()
	select {
	case <-asked:
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
	// would fail the lookup.
	d := startDNS(t, nil, nil)
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
		{name: "static other port asks DNS", host: "app.pinprobe.test", port: 443, wantSource: "dns " + d.addr.String(), wantErr: "no such host"},
		{name: "literal v4", host: "127.0.0.2", port: 80, want: addrList("127.0.0.2"), wantSource: "literal"},
		{name: "literal v6", host: "::1", port: 80, want: addrList("::1"), wantSource: "literal"},
		{name: "literal v4-mapped", host: "::ffff:127.0.0.1", port: 80, want: addrList("127.0.0.1"), wantSource: "literal"},
		{name: "literal -4", host: "::1", port: 80, only: IPv4, wantSource: "literal", wantErr: "resolve ::1 (literal): no ipv4 address among ::1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Resolver{Static: static, StaticSource: tt.source, Server: d.addr, Only: tt.only}
			got := r.Resolve(t.Context(), tt.host, tt.port)
			if got.Source != tt.wantSource {
				t.Errorf("Source = %q; want %q", got.Source, tt.wantSource)
			}
			checkResolution(t, got, tt.want, tt.wantErr)
		})
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for q := range d.queries {
		if !strings.HasPrefix(q, "app.pinprobe.test.") {
			t.Errorf("DNS was asked %q; static and literal hosts must not be looked up", q)
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
