package probe

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

// dnsServer is a real DNS server on a loopback UDP port answering A and AAAA
// queries from zone and NXDOMAIN for every other name.
type dnsServer struct {
	addr    netip.AddrPort
	mu      sync.Mutex
	queries map[string]int // "name type" → count
}

func startDNS(t *testing.T, zone map[string][]netip.Addr) *dnsServer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &dnsServer{addr: pc.LocalAddr().(*net.UDPAddr).AddrPort(), queries: map[string]int{}}
	started := make(chan struct{})
	srv := &dns.Server{
		PacketConn:        pc,
		NotifyStartedFunc: func() { close(started) },
		Handler: dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
			m := new(dns.Msg)
			m.SetReply(req)
			m.Authoritative = true
			m.RecursionAvailable = true
			q := req.Question[0]
			name := strings.ToLower(q.Name)
			d.mu.Lock()
			d.queries[name+" "+dns.TypeToString[q.Qtype]]++
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
			w.WriteMsg(m)
		}),
	}
	go srv.ActivateAndServe()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("DNS server did not start")
	}
	t.Cleanup(func() { srv.Shutdown() })
	return d
}

func (d *dnsServer) asked(name, qtype string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queries[name+" "+qtype]
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
		{host: "empty.pinprobe.test", wantErr: "no such host"},
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
			if !slices.Equal(got.Addrs, tt.want) {
				t.Errorf("Addrs = %v; want %v", got.Addrs, tt.want)
			}
			switch {
			case tt.wantErr == "" && got.Err != nil:
				t.Errorf("Err = %v; want none", got.Err)
			case tt.wantErr != "" && (got.Err == nil || !strings.Contains(got.Err.Error(), tt.wantErr)):
				t.Errorf("Err = %v; want one containing %q", got.Err, tt.wantErr)
			}
		})
	}
	if d.asked("multi.pinprobe.test.", "A") == 0 || d.asked("multi.pinprobe.test.", "AAAA") == 0 {
		t.Errorf("DNS server was not asked for A and AAAA of multi.pinprobe.test.")
	}
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

// TestResolveStaticAndLiteral covers --resolve and IP-literal hosts: neither
// asks DNS, and the family filter still applies.
func TestResolveStaticAndLiteral(t *testing.T) {
	t.Parallel()
	// A DNS server that knows none of the names: a query that reaches it
	// would fail the lookup.
	d := startDNS(t, nil)
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
			if !slices.Equal(got.Addrs, tt.want) {
				t.Errorf("Addrs = %v; want %v", got.Addrs, tt.want)
			}
			switch {
			case tt.wantErr == "" && got.Err != nil:
				t.Errorf("Err = %v; want none", got.Err)
			case tt.wantErr != "" && (got.Err == nil || !strings.Contains(got.Err.Error(), tt.wantErr)):
				t.Errorf("Err = %v; want one containing %q", got.Err, tt.wantErr)
			}
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
