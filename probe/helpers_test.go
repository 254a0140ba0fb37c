package probe

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The loopback addresses the tests serve on. 127.0.0.2 needs no
// configuration on Linux (all of 127/8 is local); [::1] needs IPv6.
var (
	lo4a = netip.MustParseAddr("127.0.0.1")
	lo4b = netip.MustParseAddr("127.0.0.2")
	lo6  = netip.MustParseAddr("::1")
)

// testHost is the made-up name the tests pin (.test is reserved, RFC 2606).
const testHost = "app.pinprobe.test"

// listenSamePort binds one TCP port on every address, the first address
// choosing it. A port taken on a later address makes it start over.
func listenSamePort(t *testing.T, addrs ...netip.Addr) (uint16, []net.Listener) {
	t.Helper()
	var lastErr error
	for range 50 {
		first, err := net.Listen("tcp", netip.AddrPortFrom(addrs[0], 0).String())
		if err != nil {
			t.Skipf("cannot listen on %s: %v", addrs[0], err)
		}
		port := uint16(first.Addr().(*net.TCPAddr).Port)
		lns := []net.Listener{first}
		retry := false
		for _, a := range addrs[1:] {
			ln, err := net.Listen("tcp", netip.AddrPortFrom(a, port).String())
			if errors.Is(err, syscall.EADDRINUSE) {
				retry, lastErr = true, err
				break
			}
			if err != nil {
				for _, ln := range lns {
					ln.Close()
				}
				t.Skipf("cannot listen on %s: %v", a, err)
			}
			lns = append(lns, ln)
		}
		if !retry {
			return port, lns
		}
		for _, ln := range lns {
			ln.Close()
		}
	}
	t.Fatalf("no port free on all of %v: %v", addrs, lastErr)
	return 0, nil
}

// serveOn starts an httptest server with h on ln, closed when the test ends.
// setup, when not nil, adjusts the server before it starts.
func serveOn(t *testing.T, ln net.Listener, h http.Handler, tlsCfg *tls.Config, setup func(*httptest.Server)) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.Listener.Close()
	s.Listener = ln
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // failed handshakes are what some tests want
	if setup != nil {
		setup(s)
	}
	if tlsCfg != nil {
		s.TLS = tlsCfg
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

// serveSamePort serves h on one port of every address and returns the port.
func serveSamePort(t *testing.T, h http.Handler, tlsCfg *tls.Config, addrs ...netip.Addr) uint16 {
	t.Helper()
	port, lns := listenSamePort(t, addrs...)
	for _, ln := range lns {
		serveOn(t, ln, h, tlsCfg, nil)
	}
	return port
}

// localAddr is the address the server accepted r's connection on.
func localAddr(r *http.Request) netip.Addr {
	a, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return addrPortOf(a).Addr()
}

// hits counts, server side, the requests each local address received.
type hits struct {
	mu     sync.Mutex
	byAddr map[netip.Addr]int
	hosts  map[string]int // Host headers seen
}

func newHits() *hits {
	return &hits{byAddr: map[netip.Addr]int{}, hosts: map[string]int{}}
}

func (h *hits) add(r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.byAddr[localAddr(r)]++
	h.hosts[r.Host]++
}

func (h *hits) snapshot() (map[netip.Addr]int, map[string]int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	byAddr := make(map[netip.Addr]int, len(h.byAddr))
	for k, v := range h.byAddr {
		byAddr[k] = v
	}
	hosts := make(map[string]int, len(h.hosts))
	for k, v := range h.hosts {
		hosts[k] = v
	}
	return byAddr, hosts
}

func (h *hits) total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, v := range h.byAddr {
		n += v
	}
	return n
}

// endpoints pins the target raw to each address, IDs in order.
func endpoints(t *testing.T, raw string, addrs ...netip.Addr) []*Endpoint {
	t.Helper()
	tg, err := ParseTarget(raw)
	if err != nil {
		t.Fatalf("ParseTarget(%q): %v", raw, err)
	}
	eps := make([]*Endpoint, len(addrs))
	for i, a := range addrs {
		eps[i] = &Endpoint{ID: i, Target: tg, Addr: a}
	}
	return eps
}

func hostURL(scheme string, port uint16) string {
	return scheme + "://" + net.JoinHostPort(testHost, strconv.Itoa(int(port))) + "/"
}

// collect drains results until Attack closes the channel, failing the test
// when that takes longer than limit.
func collect(t *testing.T, results <-chan Result, limit time.Duration) []Result {
	t.Helper()
	var out []Result
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		select {
		case r, ok := <-results:
			if !ok {
				return out
			}
			out = append(out, r)
		case <-deadline.C:
			t.Fatalf("results channel still open after %v (%d results so far)", limit, len(out))
		}
	}
}

// attack runs Attack to its end and returns every result.
func attack(t *testing.T, eps []*Endpoint, o Options, limit time.Duration) []Result {
	t.Helper()
	results, err := Attack(t.Context(), eps, o)
	if err != nil {
		t.Fatalf("Attack: %v", err)
	}
	return collect(t, results, limit)
}

// sentOnly returns the results that are requests, leaving out drop counts.
func sentOnly(rs []Result) []Result {
	var out []Result
	for _, r := range rs {
		if r.Dropped == 0 {
			out = append(out, r)
		}
	}
	return out
}

// tally sums results per endpoint.
type tally struct {
	sent    map[int]int // results that are requests
	dropped map[int]int
	status  map[int]map[int]int
	classes map[int]map[ErrorClass]int
}

func tallyOf(rs []Result) tally {
	tl := tally{sent: map[int]int{}, dropped: map[int]int{}, status: map[int]map[int]int{}, classes: map[int]map[ErrorClass]int{}}
	for _, r := range rs {
		if r.Dropped > 0 {
			tl.dropped[r.Endpoint] += r.Dropped
			continue
		}
		tl.sent[r.Endpoint]++
		if tl.status[r.Endpoint] == nil {
			tl.status[r.Endpoint] = map[int]int{}
			tl.classes[r.Endpoint] = map[ErrorClass]int{}
		}
		tl.status[r.Endpoint][r.Status]++
		tl.classes[r.Endpoint][r.Class]++
	}
	return tl
}

func (tl tally) total() (sent, dropped int) {
	for _, n := range tl.sent {
		sent += n
	}
	for _, n := range tl.dropped {
		dropped += n
	}
	return sent, dropped
}

// testPKI is a CA made for one test run and a server certificate it signed.
type testPKI struct {
	roots  *x509.CertPool
	server tls.Certificate
}

// newTestPKI makes an ECDSA CA and a server certificate valid for the DNS
// names only: no IP SANs, so only a connection that verifies the host name
// (not the pinned address) succeeds.
func newTestPKI(t *testing.T, names ...string) *testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "pinprobe test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	return &testPKI{roots: roots, server: tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key}}
}

// serverConfig serves the certificate, offering HTTP/2 and HTTP/1.1 by ALPN.
func (p *testPKI) serverConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{p.server}, NextProtos: []string{"h2", "http/1.1"}}
}

// closedPort returns a loopback address and port nothing listens on.
func closedPort(t *testing.T, a netip.Addr) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", netip.AddrPortFrom(a, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	return port
}

// within reports whether got is within frac of want.
func within(got, want, frac float64) bool {
	return got >= want*(1-frac) && got <= want*(1+frac)
}

// clients are the request paths the engine's tests run on: net/http and
// the HTTP/1.1 fast path. What a report shows must come out the same on
// both, so the tests of behaviour take the path as a parameter.
var clients = []ClientKind{ClientStd, ClientFast}

// eachClient runs f once per request path, as parallel subtests named after
// the path.
func eachClient(t *testing.T, f func(t *testing.T, client ClientKind)) {
	t.Helper()
	eachClientOf(t, clients, f)
}

// eachClientOf is eachClient over the paths cs.
func eachClientOf(t *testing.T, cs []ClientKind, f func(t *testing.T, client ClientKind)) {
	t.Helper()
	for _, c := range cs {
		t.Run(string(c), func(t *testing.T) {
			t.Parallel()
			f(t, c)
		})
	}
}

// scaled is d, or 2 d under the race detector, which slows TLS handshakes,
// parsing and the servers alike: for the bounds of tests that depend on
// how fast a loaded machine answers.
func scaled(d time.Duration) time.Duration {
	if raceEnabled {
		return 2 * d
	}
	return d
}
