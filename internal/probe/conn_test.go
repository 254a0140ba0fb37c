package probe

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// connSeen is what a connLog server saw of one request.
type connSeen struct {
	port  uint16 // the client's port: one per connection
	nth   int64  // the request's place on its connection, from 1
	close bool   // it asked to close the connection
	proto int
}

// connLog serves "ok" and records, per request, the client's port and the
// request's place on its connection.
type connLog struct {
	mu   sync.Mutex
	reqs []connSeen
}

func (l *connLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.record(r)
	w.Write([]byte("ok\n"))
}

// record logs r and returns its place on its connection (0 on a server
// without numberPerConn).
func (l *connLog) record(r *http.Request) int64 {
	n := connNth(r)
	ap, _ := netip.ParseAddrPort(r.RemoteAddr)
	l.mu.Lock()
	l.reqs = append(l.reqs, connSeen{port: ap.Port(), nth: n, close: r.Close, proto: r.ProtoMajor})
	l.mu.Unlock()
	return n
}

func (l *connLog) seen() []connSeen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

// ports counts the requests the server saw per client port.
func (l *connLog) ports() map[uint16]int {
	out := map[uint16]int{}
	for _, s := range l.seen() {
		out[s.port]++
	}
	return out
}

// protoCase is one protocol a connection test runs over.
type protoCase struct {
	name   string
	scheme string
	http   HTTPVersion
	proto  int
}

var connProtos = []protoCase{
	{"HTTP/1.1", "http", HTTP1, 1},
	{"h2c", "http", HTTP2, 2},
	{"HTTP/1.1 over TLS", "https", HTTP1, 1},
	{"HTTP/2 over TLS", "https", HTTP2, 2},
	{"auto over TLS, h2 chosen", "https", HTTPAuto, 2},
}

// clients are the request paths that speak pc: both for HTTP/1.1; for
// HTTP/2 net/http, also reached through ClientAuto (which, for --http auto
// over TLS, dials on the fast path offering h2 and hands the connection
// to net/http when the server chooses it).
func (pc protoCase) clients() []ClientKind {
	if pc.proto == 2 {
		return []ClientKind{ClientStd, ClientAuto}
	}
	return clients
}

// startConnLog serves a connLog on 127.0.0.1 for pc: TLS with the test CA
// for https, cleartext HTTP/2 allowed for http.
func startConnLog(t *testing.T, pc protoCase, pki *testserver.PKI) (*connLog, *Endpoint) {
	t.Helper()
	l := &connLog{}
	port, lns := testserver.ListenSamePort(t, testserver.Lo4a)
	var tlsCfg *tls.Config
	if pc.scheme == "https" {
		tlsCfg = pki.ServerConfig(testHost)
	}
	testserver.Serve(t, lns[0], l, tlsCfg, testserver.EnableH2C, numberPerConn, func(s *httptest.Server) {
		s.Config.Protocols.SetHTTP2(true) // over TLS as well
	})
	return l, endpoints(t, hostURL(pc.scheme, port), testserver.Lo4a)[0]
}

// TestConnRequests: with ConnRequests 4, 40 requests of one worker go over
// 10 connections, 4 each in order; over HTTP/1 the 4th asks the server to
// close, and the server sees 10 client ports; on every path that speaks the
// protocol.
func TestConnRequests(t *testing.T) {
	t.Parallel()
	check.Long(t, "seconds of live traffic")
	pki := testserver.NewPKI(t)
	for _, pc := range connProtos {
		t.Run(pc.name, func(t *testing.T) {
			eachClientOf(t, pc.clients(), func(t *testing.T, client ClientKind) { testConnRequests(t, pc, client, pki) })
		})
	}
}

func testConnRequests(t *testing.T, pc protoCase, client ClientKind, pki *testserver.PKI) {
	l, ep := startConnLog(t, pc, pki)
	// ClientAuto's first connection, dialled by its fast path, carries
	// the first request in net/http: no dial is lost to finding h2.
	const firstID = 1
	o := Options{Max: true, Concurrency: 1, Requests: 40, Client: client, ConnOptions: ConnOptions{
		HTTP: pc.http, TLS: &tls.Config{RootCAs: pki.Pool}, ConnRequests: 4, Timeout: 5 * time.Second,
	}}
	rs := attack(t, []*Endpoint{ep}, o, 20*time.Second)
	if len(rs) != 40 {
		t.Fatalf("%d results; want 40", len(rs))
	}
	var prevID uint64
	for i, r := range rs {
		// A connection of its own every 4 requests; net/http may dial
		// one it does not use (numbered all the same).
		wantReq, newConn := i%4+1, i%4 == 0
		if r.Err != nil || r.Status != http.StatusOK {
			t.Errorf("request %d: status %d, %v", i, r.Status, r.Err)
		}
		if r.ConnReq != wantReq || r.Reused != (wantReq > 1) || (r.ConnID > prevID) != newConn || (newConn && i == 0 && r.ConnID != firstID) {
			t.Errorf("request %d: connection %d request %d reused %v after connection %d; want request %d, a new connection: %v", i, r.ConnID, r.ConnReq, r.Reused, prevID, wantReq, newConn)
		}
		prevID = r.ConnID
		if r.Remote != ep.AddrPort() || !r.Local.IsValid() {
			t.Errorf("request %d: %v -> %v; want a local address and %v", i, r.Local, r.Remote, ep.AddrPort())
		}
		// Phases: connect (and TLS) only on a new connection.
		fresh, tlsOn := r.ConnReq == 1, pc.scheme == "https"
		if (r.Connect > 0) != fresh || (r.TLS > 0) != (fresh && tlsOn) || r.TTFB <= 0 || r.TTFB > r.Latency {
			t.Errorf("request %d (#%d on its connection): connect %v, TLS %v, first byte %v of %v", i, r.ConnReq, r.Connect, r.TLS, r.TTFB, r.Latency)
		}
	}
	seen := l.seen()
	ports := l.ports()
	if len(ports) != 10 {
		t.Errorf("server saw %d client ports (%v); want 10", len(ports), ports)
	}
	for p, n := range ports {
		if n != 4 {
			t.Errorf("port %d carried %d requests; want 4", p, n)
		}
	}
	for i, s := range seen {
		wantClose := pc.proto == 1 && s.nth == 4
		if s.close != wantClose || s.proto != pc.proto {
			t.Errorf("request %d (#%d on its connection): Connection: close %v, HTTP/%d; want %v, HTTP/%d", i, s.nth, s.close, s.proto, wantClose, pc.proto)
		}
	}
}

// TestConnAge: with ConnAge 150 ms, a worker sending every 10 ms for 0.6 s
// replaces its connection about every 150 ms, and never sends on a
// connection older than that; on every path that speaks the protocol. Under
// -race the times double: a TLS handshake there can outlast 150 ms, and
// then every request would need a new connection.
func TestConnAge(t *testing.T) {
	t.Parallel()
	check.Long(t, "seconds of live traffic")
	pki := testserver.NewPKI(t)
	for _, pc := range connProtos {
		t.Run(pc.name, func(t *testing.T) {
			eachClientOf(t, pc.clients(), func(t *testing.T, client ClientKind) { testConnAge(t, pc, client, pki) })
		})
	}
}

func testConnAge(t *testing.T, pc protoCase, client ClientKind, pki *testserver.PKI) {
	age, slack := scaled(150*time.Millisecond), scaled(50*time.Millisecond)
	l, ep := startConnLog(t, pc, pki)
	o := Options{Rate: 100, Duration: 4 * age, Concurrency: 1, Client: client, ConnOptions: ConnOptions{
		HTTP: pc.http, TLS: &tls.Config{RootCAs: pki.Pool}, ConnAge: age, Timeout: 5 * time.Second,
	}}
	rs := sentOnly(attack(t, []*Endpoint{ep}, o, 20*time.Second))
	first := map[uint64]time.Time{}
	reqs := map[uint64]int{}
	for _, r := range rs {
		if r.Err != nil || r.Status != http.StatusOK {
			t.Errorf("status %d, %v", r.Status, r.Err)
			continue
		}
		reqs[r.ConnID]++
		if r.ConnReq != reqs[r.ConnID] {
			t.Errorf("connection %d: request %d; want %d", r.ConnID, r.ConnReq, reqs[r.ConnID])
		}
		if r.ConnReq == 1 {
			// Its first byte came after the connection was dialled.
			first[r.ConnID] = r.Start.Add(r.TTFB)
		} else if old := r.Start.Sub(first[r.ConnID]); old >= age+slack {
			t.Errorf("connection %d reused %v after its first byte; want a new one after %v", r.ConnID, old, age)
		}
	}
	// A connection takes requests for less than age from when it was
	// dialled, which is before its first request's first byte, so covering
	// the requests' starts takes at least this many.
	least, window := 0, time.Time{}
	for _, r := range rs {
		if least == 0 || r.Start.Sub(window) >= age+slack {
			least, window = least+1, r.Start.Add(r.TTFB)
		}
	}
	ports := l.ports()
	t.Logf("%d requests on %d connections (at least %d), server saw %d ports", len(rs), len(reqs), least, len(ports))
	if len(reqs) < least || len(ports) != len(reqs) || least < 2 {
		t.Errorf("%d requests on %d connections, server saw %d ports; want at least %d connections, 2 or more", len(rs), len(reqs), len(ports), least)
	}
}

// TestConnNumbersSurviveReAdd removes an endpoint mid-run and adds it back:
// its connection numbers and request IDs go on instead of starting over (no
// number names two connections, no ID two requests), on both request paths.
func TestConnNumbersSurviveReAdd(t *testing.T) {
	t.Parallel()
	eachClient(t, testConnNumbersSurviveReAdd)
}

func testConnNumbersSurviveReAdd(t *testing.T, client ClientKind) {
	port := testserver.ServeSamePort(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), nil, testserver.Lo4a)
	ep := endpoints(t, hostURL("http", port), testserver.Lo4a)[0]
	o := Options{Rate: 200, Duration: 2 * time.Second, Concurrency: 4, RequestID: true, Client: client, ConnOptions: ConnOptions{ConnRequests: 3}}
	run, err := Start(t.Context(), []*Endpoint{ep}, o)
	if err != nil {
		t.Fatal(err)
	}
	var rs []Result
	var added time.Time
	timeout := time.After(10 * time.Second)
	for results := run.Results(); results != nil; {
		select {
		case r, ok := <-results:
			if !ok {
				results = nil
				continue
			}
			rs = append(rs, r)
			if len(rs) == 30 {
				run.Remove(ep.ID)
				added = time.Now()
				if err := run.Add(ep); err != nil {
					t.Fatalf("Add: %v", err)
				}
			}
		case <-timeout:
			t.Fatal("run still going after 10s")
		}
	}
	// A number must name one connection: the requests it numbers all went
	// from one local port. Start times cannot tell the two streams apart:
	// the removed stream's workers stop (and close their connections)
	// only once they see its context ended, so one may still send on its
	// connection after Remove has returned, under the number it had.
	ids := map[string]bool{}
	type slot struct {
		conn uint64
		req  int
	}
	slots := map[slot]bool{}
	local := map[uint64]netip.AddrPort{}
	dialedAfter := 0 // connections whose first request started after the return
	for _, r := range sentOnly(rs) {
		if ids[r.RequestID] || slots[slot{r.ConnID, r.ConnReq}] {
			t.Errorf("request %s on connection %d #%d: seen before", r.RequestID, r.ConnID, r.ConnReq)
		}
		ids[r.RequestID], slots[slot{r.ConnID, r.ConnReq}] = true, true
		if r.ConnID == 0 {
			t.Errorf("request %s: no connection (%v)", r.RequestID, r.Err)
			continue
		}
		if l, ok := local[r.ConnID]; ok && l != r.Local {
			t.Errorf("connection number %d names connections from %v and %v; want one number per connection", r.ConnID, l, r.Local)
		}
		local[r.ConnID] = r.Local
		if r.ConnReq == 1 && !r.Start.Before(added) {
			dialedAfter++
		}
	}
	if len(local) == 0 || dialedAfter == 0 {
		t.Fatalf("%d connections, %d of them dialled after the return; want some dialled after it", len(local), dialedAfter)
	}
}

// TestNewConn: --new-conn gives every request a connection of its own, on
// both request paths.
func TestNewConn(t *testing.T) {
	t.Parallel()
	eachClient(t, testNewConn)
}

func testNewConn(t *testing.T, client ClientKind) {
	l, ep := startConnLog(t, connProtos[0], nil)
	o := Options{Rate: 200, Requests: 20, Concurrency: 4, Client: client, ConnOptions: ConnOptions{NewConn: true}}
	rs := sentOnly(attack(t, []*Endpoint{ep}, o, 10*time.Second))
	conns := map[uint64]bool{}
	for _, r := range rs {
		if r.Err != nil || r.ConnReq != 1 || r.Reused || conns[r.ConnID] {
			t.Errorf("connection %d request %d reused %v (%v); want a new connection", r.ConnID, r.ConnReq, r.Reused, r.Err)
		}
		conns[r.ConnID] = true
	}
	if ports := l.ports(); len(rs) != 20 || len(ports) != 20 {
		t.Errorf("%d requests, server saw %d ports; want 20 and 20", len(rs), len(ports))
	}
}

// TestConnRequestsAfterStreamErrors: over HTTP/2 a request can fail (its
// stream reset) while its connection lives on; ConnRequests still holds.
func TestConnRequestsAfterStreamErrors(t *testing.T) {
	t.Parallel()
	l := &connLog{}
	port, lns := testserver.ListenSamePort(t, testserver.Lo4a)
	testserver.Serve(t, lns[0], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l.record(r)%2 == 0 {
			panic(http.ErrAbortHandler) // RST_STREAM; the connection stays
		}
	}), nil, numberPerConn, func(s *httptest.Server) {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		s.Config.Protocols = &p
	})
	ep := endpoints(t, hostURL("http", port), testserver.Lo4a)[0]
	o := Options{Max: true, Concurrency: 1, Requests: 40, ConnOptions: ConnOptions{HTTP: HTTP2, ConnRequests: 3, Timeout: 5 * time.Second}}
	rs := attack(t, []*Endpoint{ep}, o, 20*time.Second)
	failed := 0
	for _, r := range rs {
		if r.Err != nil {
			failed++
		}
		if r.ConnReq > 3 {
			t.Errorf("connection %d carried request %d; want at most 3", r.ConnID, r.ConnReq)
		}
	}
	for p, n := range l.ports() {
		if n > 3 {
			t.Errorf("server: port %d carried %d requests; want at most 3", p, n)
		}
	}
	if failed == 0 || len(rs) != 40 {
		t.Errorf("%d results, %d failed; want 40, some reset", len(rs), failed)
	}
}
