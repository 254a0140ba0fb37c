package probe

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// seen records, server side, what each request looked like on the wire.
type seen struct {
	mu sync.Mutex
	s  snap
}

// snap is what a seen server saw: requests, and their counts by local
// address, SNI, ProtoMajor and Host.
type snap struct {
	reqs  int
	addrs map[netip.Addr]int
	sni   map[string]int
	proto map[int]int
	hosts map[string]int
}

func newSeen() *seen {
	s := &seen{}
	s.reset()
	return s
}

func (s *seen) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.s = snap{addrs: map[netip.Addr]int{}, sni: map[string]int{}, proto: map[int]int{}, hosts: map[string]int{}}
}

// snap is a copy of what s saw so far.
func (s *seen) snap() snap {
	s.mu.Lock()
	defer s.mu.Unlock()
	return snap{s.s.reqs, maps.Clone(s.s.addrs), maps.Clone(s.s.sni), maps.Clone(s.s.proto), maps.Clone(s.s.hosts)}
}

func (s *seen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.s.reqs++
	s.s.addrs[testserver.LocalAddr(r).Addr()]++
	if r.TLS != nil {
		s.s.sni[r.TLS.ServerName]++
	}
	s.s.proto[r.ProtoMajor]++
	s.s.hosts[r.Host]++
	s.mu.Unlock()
	w.Write([]byte("ok\n"))
}

func (s snap) String() string {
	return fmt.Sprintf("requests=%d addrs=%v sni=%v proto=%v hosts=%v", s.reqs, s.addrs, s.sni, s.proto, s.hosts)
}

// TestTLSVerifiesHostNameThroughPinning serves a certificate for the host
// name only (no IP SANs) on 127.0.0.1 and [::1]. With the test CA every
// request succeeds, the server sees the host name as SNI and the protocol
// that --http asked for; without it, or for another name, every request
// fails with class tls and none reaches a handler. Every request path that
// speaks the protocol runs it, ClientAuto too (it offers h2 on the fast path
// and gives way when the server chooses it, as this one does).
func TestTLSVerifiesHostNameThroughPinning(t *testing.T) {
	t.Parallel()
	pki := testserver.NewPKI(t)
	srv := newSeen()
	addrs := []netip.Addr{testserver.Lo4a, testserver.Lo6}
	port := testserver.ServeSamePort(t, srv, pki.ServerConfig(testHost), addrs...)
	trusted := &tls.Config{RootCAs: pki.Pool}

	tests := []struct {
		name      string
		host      string
		tls       *tls.Config
		http      HTTPVersion
		wantProto int // 0: every request fails with class tls
	}{
		{"http2", testHost, trusted, HTTP2, 2},
		{"http1.1", testHost, trusted, HTTP1, 1},
		{"auto", testHost, trusted, HTTPAuto, 2}, // HTTP/1.1 on ClientFast, which offers only that
		{"unknown CA", testHost, nil, HTTPAuto, 0},
		{"unknown CA http1.1", testHost, &tls.Config{}, HTTP1, 0},
		{"wrong host name", "other.pinprobe.test", trusted, HTTP2, 0},
	}
	for _, tt := range tests {
		for _, client := range clientsFor(tt.http) {
			t.Run(tt.name+"/"+string(client), func(t *testing.T) {
				srv.reset()
				eps := endpoints(t, "https://"+tt.host+":"+strconv.Itoa(int(port))+"/", addrs...)
				o := Options{
					ConnOptions: ConnOptions{TLS: tt.tls, HTTP: tt.http, Timeout: 5 * time.Second},
					Rate:        200, Requests: 20, Concurrency: 2, Client: client,
				}
				wantProto := tt.wantProto
				if client == ClientFast && wantProto == 2 {
					wantProto = 1 // the fast client offers only http/1.1
				}
				rs := attack(t, eps, o, 10*time.Second)
				tl := tallyOf(rs)
				if sent, _ := tl.total(); sent != 20 {
					t.Fatalf("%d requests; want 20", sent)
				}
				for _, r := range sentOnly(rs) {
					if wantProto == 0 {
						if r.Class != ClassTLS || r.Status != 0 {
							t.Errorf("endpoint %d: status %d class %q (%v); want class tls", r.Endpoint, r.Status, r.Class, r.Err)
						}
						continue
					}
					if r.Err != nil || r.Status != http.StatusOK {
						t.Errorf("endpoint %d: status %d, %v; want 200", r.Endpoint, r.Status, r.Err)
					}
					if want := eps[r.Endpoint].AddrPort(); r.Remote != want {
						t.Errorf("endpoint %d: Remote = %v; want %v", r.Endpoint, r.Remote, want)
					}
				}
				got := srv.snap()
				if wantProto == 0 {
					if got.reqs != 0 {
						t.Errorf("server saw %d requests through a failed handshake", got.reqs)
					}
					return
				}
				if got.reqs != 20 || got.sni[testHost] != 20 || got.proto[wantProto] != 20 || got.hosts[testHost+":"+strconv.Itoa(int(port))] != 20 {
					t.Errorf("server saw %s; want 20 requests, all with SNI %q, HTTP/%d", got, testHost, wantProto)
				}
				for _, a := range addrs {
					if got.addrs[a] != tl.sent[endpointOf(eps, a)] {
						t.Errorf("%s: server saw %d requests, pinprobe counted %d", a, got.addrs[a], tl.sent[endpointOf(eps, a)])
					}
				}
			})
		}
	}
}

// clientsFor returns the request paths that speak v: net/http and, for
// HTTP/2, ClientAuto (the fast path giving way); both paths otherwise.
func clientsFor(v HTTPVersion) []ClientKind {
	if v == HTTP2 {
		return []ClientKind{ClientStd, ClientAuto}
	}
	return append(slices.Clone(clients), ClientAuto)
}

// TestTLSErrorIsVerification checks the class tls rests on the verification
// error itself, not on its text.
func TestTLSErrorIsVerification(t *testing.T) {
	t.Parallel()
	eachClient(t, testTLSErrorIsVerification)
}

func testTLSErrorIsVerification(t *testing.T, client ClientKind) {
	pki := testserver.NewPKI(t)
	port := testserver.ServeSamePort(t, newSeen(), pki.ServerConfig(testHost), testserver.Lo4a)
	eps := endpoints(t, hostURL("https", port), testserver.Lo4a)
	rs := sentOnly(attack(t, eps, Options{Rate: 100, Requests: 1, Client: client}, 10*time.Second))
	if len(rs) != 1 {
		t.Fatalf("%d results; want 1", len(rs))
	}
	var unknown x509.UnknownAuthorityError
	if !errors.As(rs[0].Err, &unknown) {
		t.Errorf("error %v (%T); want an x509.UnknownAuthorityError inside", rs[0].Err, rs[0].Err)
	}
}

// TestH2C sends HTTP/2 by prior knowledge over cleartext when --http 2 is
// asked for an http:// URL, and HTTP/1.1 otherwise.
func TestH2C(t *testing.T) {
	t.Parallel()
	srv := newSeen()
	port, lns := testserver.ListenSamePort(t, testserver.Lo4a, testserver.Lo6)
	for _, ln := range lns {
		testserver.Serve(t, ln, srv, nil, testserver.EnableH2C)
	}
	tests := []struct {
		http      HTTPVersion
		wantProto int
	}{
		{HTTP2, 2},
		{HTTP1, 1},
		{HTTPAuto, 1}, // no ALPN without TLS: auto means HTTP/1.1 on http://
	}
	for _, tt := range tests {
		for _, client := range clientsFor(tt.http) {
			t.Run(string(tt.http)+"/"+string(client), func(t *testing.T) {
				srv.reset()
				eps := endpoints(t, hostURL("http", port), testserver.Lo4a, testserver.Lo6)
				o := Options{ConnOptions: ConnOptions{HTTP: tt.http}, Rate: 200, Requests: 10, Concurrency: 2, Client: client}
				rs := sentOnly(attack(t, eps, o, 10*time.Second))
				for _, r := range rs {
					if r.Err != nil || r.Status != http.StatusOK {
						t.Errorf("endpoint %d: status %d, %v; want 200", r.Endpoint, r.Status, r.Err)
					}
				}
				if got := srv.snap(); len(rs) != 10 || got.reqs != 10 || got.proto[tt.wantProto] != 10 {
					t.Errorf("%d results, server saw %s; want 10 requests over HTTP/%d", len(rs), got, tt.wantProto)
				}
			})
		}
	}
}

// TestHTTP2WithoutALPN: --http 2 over TLS to a server that offers no
// protocol by ALPN (so net/http would speak HTTP/1.1 to it) is a protocol
// error on every path that speaks HTTP/2: ClientAuto finds out in the
// handshake and sends nothing; ClientStd, whose handshake is net/http's,
// once the answer comes.
func TestHTTP2WithoutALPN(t *testing.T) {
	t.Parallel()
	pki := testserver.NewPKI(t)
	noALPN := &tls.Config{Certificates: []tls.Certificate{pki.Leaf(testHost)}}
	eachClientOf(t, []ClientKind{ClientAuto, ClientStd}, func(t *testing.T, client ClientKind) {
		var heads atomic.Int64
		port := testserver.StartRaw(t, testserver.Lo4a, func(c net.Conn) {
			tc := tls.Server(c, noALPN)
			br := bufio.NewReader(tc)
			for {
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				heads.Add(1)
				io.Copy(io.Discard, req.Body)
				io.WriteString(tc, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
			}
		}).Port()
		o := Options{Rate: 100, Requests: 3, Client: client,
			ConnOptions: ConnOptions{HTTP: HTTP2, Timeout: 5 * time.Second, TLS: &tls.Config{RootCAs: pki.Pool}}}
		rs := sentOnly(attack(t, endpoints(t, hostURL("https", port), testserver.Lo4a), o, 20*time.Second))
		for _, r := range rs {
			if r.Class != ClassProtocol || r.Status != 0 {
				t.Errorf("status %d, class %q (%v); want a protocol error", r.Status, r.Class, r.Err)
			}
		}
		wantHeads := int64(0)
		if client == ClientStd {
			wantHeads = int64(len(rs))
		}
		if len(rs) != 3 || heads.Load() != wantHeads {
			t.Errorf("%d results, the server read %d requests; want 3 and %d", len(rs), heads.Load(), wantHeads)
		}
	})
}

// TestFastClientRefusesHTTP2: ClientFast speaks HTTP/1.1 only, so Start
// refuses --http 2 (and CONNECT) instead of measuring net/http unasked, and
// an unknown client is refused too; ClientAuto hands --http 2 to net/http,
// and refuses CONNECT too: it never speaks HTTP/1.1 through net/http.
func TestFastClientRefusesHTTP2(t *testing.T) {
	eps := endpoints(t, "https://"+testHost+"/", testserver.Lo4a)
	connect := endpoints(t, "http://"+testHost+"/", testserver.Lo4a)
	connect[0].Target.Method = http.MethodConnect
	tests := []struct {
		name    string
		eps     []*Endpoint
		o       Options
		wantErr bool
	}{
		{"fast, --http 2", eps, Options{Client: ClientFast, ConnOptions: ConnOptions{HTTP: HTTP2}}, true},
		{"fast, CONNECT", connect, Options{Client: ClientFast}, true},
		{"unknown client", eps, Options{Client: "curl"}, true},
		{"auto, --http 2", eps, Options{Client: ClientAuto, ConnOptions: ConnOptions{HTTP: HTTP2}}, false},
		{"auto, CONNECT", connect, Options{Client: ClientAuto}, true},
		{"std, CONNECT", connect, Options{Client: ClientStd}, false},
		{"std, --http 2", eps, Options{Client: ClientStd, ConnOptions: ConnOptions{HTTP: HTTP2}}, false},
	}
	for _, tt := range tests {
		tt.o.Rate = 1
		ctx, cancel := context.WithCancel(t.Context())
		run, err := Start(ctx, tt.eps, tt.o)
		cancel()
		if run != nil {
			collect(t, run.Results(), 10*time.Second)
		}
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: Start error %v; want an error: %v", tt.name, err, tt.wantErr)
		}
	}
}

func TestNewTransportRejectsUnknownHTTPVersion(t *testing.T) {
	eps := endpoints(t, "http://"+testHost+"/", testserver.Lo4a)
	if _, err := NewTransport(eps[0], ConnOptions{HTTP: "3"}); err == nil {
		t.Errorf("NewTransport(HTTP: 3) succeeded; want an error")
	}
	if _, err := Attack(t.Context(), eps, Options{ConnOptions: ConnOptions{HTTP: "3"}, Rate: 1}); err == nil {
		t.Errorf("Attack(HTTP: 3) succeeded; want an error")
	}
}

func endpointOf(eps []*Endpoint, a netip.Addr) int {
	for _, ep := range eps {
		if ep.Addr == a {
			return ep.ID
		}
	}
	return -1
}
