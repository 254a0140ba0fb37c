package probe

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// The fault suite: every misbehaviour of testserver.StartFault, written
// against the engine's interface (Start, Options) and run once per request
// path, to its end and cancelled mid-run (SIGINT), beside a healthy Fleet.
// For each fault it asserts every request's class (or status), that each
// ended within its timeout and the run on time, that the server's counts
// (connections, request heads) equal pinprobe's (nothing retried or lost),
// that requests == ok + failed == Run.Sent(), and that the healthy
// endpoints were not touched.

// suiteTimeout bounds every request of the fault suite: short, so that the
// faults that hang cost little, long enough for two cores loaded by a whole
// repository's tests to dial, finish a TLS handshake or read a 1 MiB head
// in time. One such read takes 50 ms under -race on an idle machine, and
// once took 2 s in CI, beside Chromium and two other packages' tests; so
// 1.5 s, doubled under -race.
var suiteTimeout = scaled(1500 * time.Millisecond)

// suiteSlack is how much later than its bound a request or a run may end on
// a loaded machine.
var suiteSlack = scaled(1500 * time.Millisecond)

// faultCase is what one fault must yield on every path.
type faultCase struct {
	fault  testserver.Fault
	class  ErrorClass // of every request; ClassNone: every request succeeds
	status int        // of every request; 0: no response
	// noHeads: the server reads no request (it refuses, never reads, or
	// the handshake fails); otherwise it reads every request sent.
	noHeads bool
	// fresh: every request goes on a connection of its own.
	fresh bool
	// atTimeout: every request ends at its timeout, not before.
	atTimeout bool
	// http selects the protocol (the h2c fault needs HTTP2).
	http HTTPVersion
	// alt is another status a request may have (MixedALPN: 200 over
	// HTTP/2, 204 over HTTP/1.1).
	alt int
	// stdMisreads: net/http may take the body a 204 or 304 should not
	// have for the answer to the next request (README, Limitations), so
	// the std path is not run; the others must never.
	stdMisreads bool
}

// h1Faults are the faults every path meets with HTTP/1.1.
var h1Faults = []faultCase{
	{fault: testserver.Refuse, class: ClassConnectRefused, noHeads: true, fresh: true},
	{fault: testserver.ResetAfterRequest, class: ClassReset, fresh: true},
	{fault: testserver.CloseAfterRequest, class: ClassEOF, fresh: true},
	{fault: testserver.AcceptNoRead, class: ClassTimeout, noHeads: true, fresh: true, atTimeout: true},
	{fault: testserver.ReadNoAnswer, class: ClassTimeout, fresh: true, atTimeout: true},
	{fault: testserver.SlowHeaders, class: ClassTimeout, fresh: true, atTimeout: true},
	{fault: testserver.Garbage, class: ClassProtocol, fresh: true},
	{fault: testserver.CloseMidHeaders, class: ClassEOF, fresh: true},
	{fault: testserver.CloseMidBody, class: ClassEOF, status: http.StatusOK, fresh: true},
	{fault: testserver.HugeHeaders, class: ClassProtocol, fresh: true},
	{fault: testserver.EndlessChunked, class: ClassTimeout, status: http.StatusOK, fresh: true, atTimeout: true},
	{fault: testserver.TrickleHuge, class: ClassTimeout, status: http.StatusOK, fresh: true, atTimeout: true},
	{fault: testserver.Informational, status: http.StatusOK},
	{fault: testserver.EndlessInformational, class: ClassTimeout, fresh: true, atTimeout: true},
	{fault: testserver.SwitchingProtocols, class: ClassProtocol, status: http.StatusSwitchingProtocols, fresh: true},
	{fault: testserver.ConnectionClose, status: http.StatusOK, fresh: true},
	{fault: testserver.HTTP10, status: http.StatusOK, fresh: true},
	{fault: testserver.TLSSelfSigned, class: ClassTLS, noHeads: true, fresh: true},
	{fault: testserver.TLSExpired, class: ClassTLS, noHeads: true, fresh: true},
	{fault: testserver.TLSWrongHost, class: ClassTLS, noHeads: true, fresh: true},
	{fault: testserver.BadStatus, class: ClassProtocol, fresh: true},
	{fault: testserver.MalformedHead, class: ClassProtocol, fresh: true},
	{fault: testserver.MalformedChunked, class: ClassProtocol, status: http.StatusOK, fresh: true},
	{fault: testserver.NoContentBody, status: http.StatusNoContent, fresh: true, stdMisreads: true},
	{fault: testserver.NotModifiedBody, status: http.StatusNotModified, fresh: true, stdMisreads: true},
}

// h2Faults need HTTP/2: net/http serves them, through ClientStd or through
// ClientAuto, whose fast path gives way when ALPN chooses h2.
var h2Faults = []faultCase{
	{fault: testserver.H2GoAway, status: http.StatusOK},
	{fault: testserver.H2CGoAway, status: http.StatusOK, http: HTTP2},
	{fault: testserver.H2BadStatus, class: ClassProtocol},
	{fault: testserver.H2ResetInternal, class: ClassProtocol},
	// ClientAuto speaks each connection's protocol on its own path, and
	// never HTTP/1.1 through net/http.
	{fault: testserver.MixedALPN, status: http.StatusOK, alt: http.StatusNoContent, stdMisreads: true},
}

// TestFaultSuite runs every HTTP/1.1 fault on both request paths.
func TestFaultSuite(t *testing.T) {
	t.Parallel()
	eachClient(t, func(t *testing.T, client ClientKind) {
		faultSuite(t, client, slices.DeleteFunc(slices.Clone(h1Faults), func(fc faultCase) bool { return fc.stdMisreads && client == ClientStd }), "")
	})
}

// TestFaultSuiteHTTP2 runs the HTTP/2 faults (GOAWAY mid-run over TLS and
// over h2c) through net/http, reached directly and through ClientAuto.
func TestFaultSuiteHTTP2(t *testing.T) {
	t.Parallel()
	check.Long(t, "seconds of live traffic")
	for _, fc := range h2Faults {
		t.Run(fc.fault.String(), func(t *testing.T) {
			cs := []ClientKind{ClientStd, ClientAuto}
			if fc.stdMisreads {
				cs = cs[1:]
			}
			eachClientOf(t, cs, func(t *testing.T, client ClientKind) {
				faultSuite(t, client, []faultCase{fc}, fc.http)
			})
		})
	}
}

// faultSuite runs the faults of cases, with a healthy fleet on 127.0.0.1
// and [::1], once to the end and once cancelled mid-run.
func faultSuite(t *testing.T, client ClientKind, cases []faultCase, version HTTPVersion) {
	for _, cancel := range []bool{false, true} {
		name := "complete"
		if cancel {
			name = "cancelled"
		}
		t.Run(name, func(t *testing.T) {
			pki := testserver.NewPKI(t)
			servers := make([]*testserver.FaultServer, len(cases))
			var eps []*Endpoint
			for i, fc := range cases {
				// A third of the timeout between the pieces of the slow
				// faults: a few 1xx responses, never the 8 that fail.
				servers[i] = testserver.StartFault(t, fc.fault, testserver.FaultOptions{PKI: pki, Interval: suiteTimeout / 3})
				eps = append(eps, endpoint(t, len(eps), servers[i].URL(), servers[i].Addr().Addr()))
			}
			fleet := testserver.StartFleet(t, testserver.FleetOptions{H2C: version == HTTP2}, testserver.AvailableLoopbacks()...)
			healthy := map[int]*testserver.Backend{}
			for _, b := range fleet.Backends() {
				healthy[len(eps)] = b
				eps = append(eps, endpoint(t, len(eps), fleet.URL(), b.Addr()))
			}
			// About 12 requests per endpoint (6 under -race, whose 1 MiB
			// heads cost a lot on both ends).
			perEndpoint, duration := 20.0, 600*time.Millisecond // requests/s
			if raceEnabled {
				perEndpoint, duration = 5, 1200*time.Millisecond
			}
			o := Options{
				Rate: perEndpoint * float64(len(eps)), Duration: duration, Concurrency: 8, Client: client,
				ConnOptions: ConnOptions{Timeout: suiteTimeout, HTTP: version, TLS: &tls.Config{RootCAs: pki.Pool}},
			}
			if cancel {
				o.Duration = time.Minute
			}
			ctx, stop := context.WithCancel(t.Context())
			defer stop()
			start := time.Now()
			run, err := Start(ctx, eps, o)
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			end := start.Add(o.Duration)
			if cancel {
				end = start.Add(duration * 2 / 3)
				time.AfterFunc(duration*2/3, stop)
			}
			rs := collect(t, run.Results(), time.Until(end)+suiteTimeout+lateGrace+10*time.Second)
			if took := time.Since(end); took > suiteTimeout+lateGrace+suiteSlack {
				t.Errorf("results closed %v after the run's end; want within the %v timeout", took, suiteTimeout)
			}
			byEP := map[int][]Result{}
			dropped := map[int]int{}
			sent := 0
			for _, r := range rs {
				if !r.Request() {
					dropped[r.Endpoint] += r.Dropped + r.Missed
					continue
				}
				byEP[r.Endpoint] = append(byEP[r.Endpoint], r)
				sent++
			}
			if int64(sent) != run.Sent() {
				t.Errorf("%d results; the run sent %d", sent, run.Sent())
			}
			for i, fc := range cases {
				t.Run(fc.fault.String(), func(t *testing.T) {
					checkFault(t, fc, client, servers[i], byEP[i])
				})
			}
			for id, b := range healthy {
				got := byEP[id]
				if len(got) == 0 {
					t.Errorf("healthy %s: no requests", b.Addr())
				}
				for _, r := range got {
					if r.Err != nil || r.Status != http.StatusOK {
						t.Errorf("healthy %s: status %d, %v; want 200 beside the faults", b.Addr(), r.Status, r.Err)
					}
				}
				// A request is dropped only when 8 are in flight: on a
				// loaded machine, never for most of them.
				if dropped[id] > len(got) {
					t.Errorf("healthy %s: %d requests sent, %d dropped; want most sent", b.Addr(), len(got), dropped[id])
				}
				waitFor(t, fmt.Sprintf("healthy %s to have seen %d requests", b.Addr(), len(got)), func() bool { return b.Hits() == int64(len(got)) })
			}
			fleet.CheckPlacement(t)
		})
	}
}

// checkFault checks one fault endpoint's results against fc and against
// what its server counted.
func checkFault(t *testing.T, fc faultCase, client ClientKind, s *testserver.FaultServer, rs []Result) {
	if len(rs) == 0 {
		t.Fatalf("no requests sent")
	}
	ok, failed := 0, 0
	var slowest time.Duration
	conns := map[uint64]bool{}
	reachedNoConn := 0 // requests whose connection the server accepted but that report none
	for i, r := range rs {
		if r.Err == nil && r.Status < 500 {
			ok++
		} else {
			failed++
		}
		if r.Class != fc.class || r.Status != fc.status && (fc.alt == 0 || r.Status != fc.alt) || (r.Err != nil) != (fc.class != ClassNone) {
			t.Errorf("request %d: status %d, class %q (%v); want status %d, class %q", i, r.Status, r.Class, r.Err, fc.status, fc.class)
		}
		slowest = max(slowest, r.Latency)
		if r.Latency > suiteTimeout+suiteSlack {
			t.Errorf("request %d took %v; want at most the %v timeout", i, r.Latency, suiteTimeout)
		}
		if fc.atTimeout && r.Latency < suiteTimeout {
			t.Errorf("request %d: %s after %v; want it at the %v timeout", i, r.Class, r.Latency, suiteTimeout)
		}
		if fc.fresh && (r.Reused || r.ConnReq > 1) {
			t.Errorf("request %d: request %d of connection %d; want a connection of its own", i, r.ConnReq, r.ConnID)
		}
		if r.ConnID != 0 {
			conns[r.ConnID] = true
		} else if r.Class == ClassTLS {
			reachedNoConn++
		}
	}
	if ok+failed != len(rs) || (fc.class == ClassNone) != (failed == 0) {
		t.Errorf("%d requests: %d ok, %d failed", len(rs), ok, failed)
	}
	wantHeads := int64(len(rs))
	if fc.noHeads {
		wantHeads = 0
	}
	wantConns := int64(len(conns) + reachedNoConn)
	// Every connection carried what it was dialled for: ClientAuto hands
	// the one on which its fast path found h2 to net/http.
	countsMatch := func() bool { return s.Heads() == wantHeads && s.Conns() == wantConns }
	deadline := time.Now().Add(5 * time.Second)
	for !countsMatch() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // polling the server's counters, not synchronising
	}
	if !countsMatch() {
		t.Errorf("server read %d requests on %d connections; pinprobe sent %d on %d connections", s.Heads(), s.Conns(), wantHeads, wantConns)
	}
	if fc.fault == testserver.H2GoAway || fc.fault == testserver.H2CGoAway {
		if s.GoAways() == 0 {
			t.Errorf("no GOAWAY sent in %d requests", len(rs))
		}
	}
	t.Logf("%d requests (%d ok) on %d connections, the slowest %v; the server accepted %d and read %d requests",
		len(rs), ok, len(conns), slowest.Round(time.Millisecond), s.Conns(), s.Heads())
	// A connection is reused only once a request on it has ended: when
	// every request was sent before any had ended (each slow 1xx response
	// outlasting the time between requests on a slow machine), each needed
	// a connection of its own.
	freed := false
	for _, a := range rs {
		for _, b := range rs {
			freed = freed || a.Start.Add(a.Latency).Before(b.Start)
		}
	}
	if fc.fault == testserver.Informational && freed && len(conns) >= len(rs) && len(rs) > 4 {
		t.Errorf("%d requests on %d connections; want keep-alive", len(rs), len(conns))
	}
}

// TestFaultVariants sends 3 requests to each variant of every fault that
// has several (testserver.Variants), one server a variant, on every path
// that speaks its protocol: each must come out as its fault case says, as
// checkFault checks it in the suite, where the variants take turns.
func TestFaultVariants(t *testing.T) {
	t.Parallel()
	check.Long(t, "seconds of live traffic")
	pki := testserver.NewPKI(t)
	for _, fc := range slices.Concat(h1Faults, h2Faults) {
		names := testserver.Variants(fc.fault)
		if len(names) == 0 {
			continue
		}
		cs := clients
		if slices.Contains(h2Faults, fc) {
			cs = []ClientKind{ClientStd, ClientAuto}
		}
		for i, name := range names {
			t.Run(fc.fault.String()+"/"+name, func(t *testing.T) {
				eachClientOf(t, cs, func(t *testing.T, client ClientKind) {
					s := testserver.StartFault(t, fc.fault, testserver.FaultOptions{PKI: pki, Variant: i + 1})
					o := Options{Rate: 100, Requests: 3, Client: client,
						ConnOptions: ConnOptions{Timeout: suiteTimeout, HTTP: fc.http, TLS: &tls.Config{RootCAs: pki.Pool}}}
					rs := attack(t, []*Endpoint{endpoint(t, 0, s.URL(), s.Addr().Addr())}, o, 20*time.Second)
					checkFault(t, fc, client, s, sentOnly(rs))
				})
			})
		}
	}
}

// TestFaultSuiteCoversEveryFault keeps the suite whole: a fault added to
// testserver must be added here.
func TestFaultSuiteCoversEveryFault(t *testing.T) {
	var covered []testserver.Fault
	for _, fc := range slices.Concat(h1Faults, h2Faults) {
		covered = append(covered, fc.fault)
	}
	for _, f := range testserver.Faults() {
		if !slices.Contains(covered, f) {
			t.Errorf("fault %s: not in the suite", f)
		}
	}
}

// TestFaultMemoryBounded loads the faults that send the most, 1 MiB heads
// and endless bodies, with 8 workers each as fast as they go, and samples
// the heap: it must stay under a bound that does not grow with what the
// servers send (memBoundBase plus memPerWorker per worker), and the run must
// keep nothing once it has ended. It runs alone (not in parallel), so the
// heap is the run's.
func TestFaultMemoryBounded(t *testing.T) {
	const (
		workers      = 8 // per endpoint
		memBoundBase = 16 << 20
		memPerWorker = 2 << 20 // at most a 1 MiB head and its copy at a time
		retainBound  = 4 << 20
	)
	for _, client := range clients {
		t.Run(string(client), func(t *testing.T) {
			var eps []*Endpoint
			for _, f := range []testserver.Fault{testserver.HugeHeaders, testserver.EndlessChunked, testserver.TrickleHuge} {
				s := testserver.StartFault(t, f, testserver.FaultOptions{Interval: 50 * time.Microsecond})
				eps = append(eps, endpoint(t, len(eps), s.URL(), s.Addr().Addr()))
			}
			o := Options{Max: true, Concurrency: workers, Duration: 500 * time.Millisecond, Client: client, GroupBy: []string{"X-Filler-0001"},
				Evidence:    Evidence{Failed: func(int) bool { return true }, Samples: 5},
				ConnOptions: ConnOptions{Timeout: 300 * time.Millisecond}}
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			before := ms.HeapAlloc
			run, err := Start(t.Context(), eps, o)
			if err != nil {
				t.Fatal(err)
			}
			peak := uint64(0)
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			n := 0
			var bytes int64
			for results := run.Results(); results != nil; {
				select {
				case r, ok := <-results:
					if !ok {
						results = nil
						continue
					}
					n++
					bytes += r.Bytes
				case <-tick.C:
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapAlloc)
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&ms)
			after := ms.HeapAlloc
			bound := uint64(memBoundBase + memPerWorker*workers*len(eps))
			t.Logf("%d requests read %d MiB of bodies; heap %d MiB before, %d MiB at the peak, %d MiB after (bound %d MiB)",
				n, bytes>>20, before>>20, peak>>20, after>>20, bound>>20)
			if peak > before+bound {
				t.Errorf("heap peaked at %d MiB, %d MiB over the start; want at most %d MiB over it", peak>>20, (peak-before)>>20, bound>>20)
			}
			if after > before+retainBound {
				t.Errorf("heap %d MiB after the run, %d MiB before; want at most %d MiB kept", after>>20, before>>20, retainBound>>20)
			}
			if n < 3*workers {
				t.Errorf("%d requests in half a second of %d workers; want the faults loaded", n, 3*workers)
			}
		})
	}
}

// TestPathsAgree sends the same sequence of requests through both paths to
// servers that answer alike, and compares every field a report reads, one
// request at a time: status, bytes, connection numbers, the GroupBy values
// (a repeated header joined, a present but empty one kept), the failure
// fingerprint (Server, BodyHash, Exemplar), the evidence of the samples
// (protocol, bounded header, body prefix), the request IDs, the phases.
func TestPathsAgree(t *testing.T) {
	t.Parallel()
	pki := testserver.NewPKI(t)
	answers := []func(w http.ResponseWriter){
		func(w http.ResponseWriter) { w.Write([]byte("ok\n")) },
		func(w http.ResponseWriter) {
			w.Header().Set("Server", "nginx/1.22.1")
			w.Header().Set("X-Served-By", "gw-2")
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte("<html><body>502 Bad Gateway, request 7f3a9</body></html>"))
		},
		func(w http.ResponseWriter) {
			w.Header().Add("X-Pool", "blue")
			w.Header().Add("X-Pool", "canary")
			w.Header().Set("X-Served-By", "")
			w.WriteHeader(http.StatusServiceUnavailable)
			for range 3 {
				w.Write([]byte(strings.Repeat("overloaded ", 100)))
				w.(http.Flusher).Flush() // chunked
			}
		},
		func(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) },
		func(w http.ResponseWriter) {
			w.Header().Set("Server", strings.Repeat("s", 2000))
			w.Header().Set("X-Served-By", strings.Repeat("n", 2000))
			for i := range 100 {
				w.Header().Set(fmt.Sprintf("X-Many-%03d", i), "v")
			}
			w.WriteHeader(http.StatusInternalServerError)
			w.Write(make([]byte, 100_000))
		},
		func(w http.ResponseWriter) {
			w.Header().Set("Connection", "close")
			w.Write([]byte("bye\n"))
		},
	}
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			got := map[ClientKind][]Result{}
			for _, client := range clients {
				var n atomic.Int64
				var tlsCfg *tls.Config
				if scheme == "https" {
					tlsCfg = pki.ServerConfig(testHost)
				}
				port := testserver.ServeSamePort(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Date", "Mon, 30 Nov 2026 12:00:00 GMT")
					answers[(n.Add(1)-1)%int64(len(answers))](w)
				}), tlsCfg, testserver.Lo4a)
				ep := endpoints(t, hostURL(scheme, port), testserver.Lo4a)[0]
				o := Options{Max: true, Concurrency: 1, Requests: 3 * int64(len(answers)), Client: client, RequestID: true,
					GroupBy:  []string{"X-Served-By", "x-pool"},
					Evidence: Evidence{Failed: func(s int) bool { return s >= 500 }, Samples: 4},
					ConnOptions: ConnOptions{Timeout: 5 * time.Second, ConnRequests: 4, HTTP: HTTP1,
						TLS: &tls.Config{RootCAs: pki.Pool}}}
				got[client] = attack(t, []*Endpoint{ep}, o, 20*time.Second)
			}
			std, fast := got[ClientStd], got[ClientFast]
			if len(std) != len(fast) || len(std) != 3*len(answers) {
				t.Fatalf("%d results on std, %d on fast; want %d each", len(std), len(fast), 3*len(answers))
			}
			for i := range std {
				a, b := describe(std[i]), describe(fast[i])
				if a != b {
					t.Errorf("request %d differs:\nstd:  %s\nfast: %s", i, a, b)
				}
			}
		})
	}
}

// TestPathsUnfold sends requests through both paths to a server whose
// answer folds header values (obs-fold, which RFC 9112 §5.2 has a user
// agent replace with spaces) and pads its Content-Length with zeros: both
// read it alike, the folded values joined by one space.
func TestPathsUnfold(t *testing.T) {
	t.Parallel()
	const answer = "HTTP/1.1 502 Bad Gateway\r\nServer: gw\r\n  1\r\nX-Served-By: node\r\n\t7 \r\n" +
		"Content-Length: 0000000000000000000000000004\r\n\r\nbad\n"
	port := testserver.StartRaw(t, testserver.Lo4a, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			if _, err := io.WriteString(c, answer); err != nil {
				return
			}
		}
	}).Port()
	got := map[ClientKind][]Result{}
	for _, client := range clients {
		o := Options{Max: true, Concurrency: 1, Requests: 3, Client: client, GroupBy: []string{"X-Served-By"},
			Evidence:    Evidence{Failed: func(s int) bool { return s >= 500 }, Samples: 1},
			ConnOptions: ConnOptions{Timeout: 5 * time.Second}}
		got[client] = attack(t, endpoints(t, hostURL("http", port), testserver.Lo4a), o, 20*time.Second)
	}
	std, fast := got[ClientStd], got[ClientFast]
	if len(std) != 3 || len(fast) != 3 {
		t.Fatalf("%d results on std, %d on fast; want 3 each", len(std), len(fast))
	}
	for i := range std {
		if a, b := describe(std[i]), describe(fast[i]); a != b {
			t.Errorf("request %d differs:\nstd:  %s\nfast: %s", i, a, b)
		}
		if r := fast[i]; r.Err != nil || r.Status != 502 || r.Bytes != 4 || r.ConnReq != i+1 || r.Server != "gw 1" || !slices.Equal(r.Groups, []string{"node 7"}) {
			t.Errorf("request %d: %d, %v, %d bytes, request %d of its connection, server %q, groups %q; want 502, 4 bytes on one connection, gw 1, node 7",
				i, r.Status, r.Err, r.Bytes, r.ConnReq, r.Server, r.Groups)
		}
	}
}

// describe renders what a report reads of r, leaving out what differs from
// run to run (times, ports, the run's ID).
func describe(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "status %d class %q err %v bytes %d conn %d#%d reused %v remote %v local-ok %v phases %v/%v/%v",
		r.Status, r.Class, r.Err != nil, r.Bytes, r.ConnID, r.ConnReq, r.Reused, r.Remote.Addr(), r.Local.IsValid(),
		r.Connect > 0, r.TLS > 0, r.TTFB > 0 && r.TTFB <= r.Latency)
	_, id, _ := strings.Cut(r.RequestID, "-0-") // pinprobe-RUN-0-N
	fmt.Fprintf(&b, " id %s groups %q server %q hash %x exemplar %q", id, r.Groups, r.Server, r.BodyHash, r.Exemplar)
	if ev := r.Evidence; ev != nil {
		h := ev.Header.Clone()
		fmt.Fprintf(&b, " evidence %s truncated %v body %q header", ev.Proto, ev.Truncated, ev.Body)
		for _, k := range slices.Sorted(maps.Keys(h)) {
			fmt.Fprintf(&b, " %s=%q", k, h[k])
		}
	}
	return b.String()
}

// TestNginxEveryPath runs both request paths against a real nginx
// (testserver.Nginx) on one port of 127.0.0.1 and [::1], the [::1] server
// proxying to an upstream nothing listens on: every [::1] request must be
// nginx's own 502 and every 127.0.0.1 request a 200. nginx closes each
// connection after 5 requests (keepalive_requests), announcing it with
// Connection: close: that may cost no request, and nginx's access log must
// hold every request once, by its ID. (A server closing idle connections
// on a timer races the next request whatever the client does; TestH1Stale
// checks that a connection found closed is not used.)
func TestNginxEveryPath(t *testing.T) {
	t.Parallel()
	if !testserver.HasIPv6Loopback() {
		t.Skip("needs IPv6 on loopback")
	}
	lo4, lo6 := testserver.Lo4a, testserver.Lo6
	port := testserver.FreePort(t, lo4, lo6)
	dead := testserver.ClosedAddrPort(t, lo6)
	logs := t.TempDir()
	var conf strings.Builder
	// Each request is logged by its request ID, so that what nginx saw can
	// be compared with what pinprobe sent.
	conf.WriteString("  log_format seen '$http_x_request_id $status';\n")
	fmt.Fprintf(&conf, "  server { listen 127.0.0.1:%d; keepalive_requests 5; access_log %s/%d.log seen; location / { return 200 \"ok\\n\"; } }\n", port, logs, port)
	fmt.Fprintf(&conf, "  server { listen [::1]:%d; keepalive_requests 5; access_log %s/%d.log seen; location / { proxy_pass http://%s; } }\n", port, logs, port, dead)
	testserver.Nginx(t, conf.String(), netip.AddrPortFrom(lo4, port), netip.AddrPortFrom(lo6, port))
	runs := []struct {
		name string
		o    Options
		want int // requests in all
	}{
		{"closed model", Options{Max: true, Concurrency: 2, Requests: 120}, 120},
		{"open model", Options{Rate: 200, Requests: 60, Concurrency: 4}, 60},
	}
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			eachClient(t, func(t *testing.T, client ClientKind) {
				eps := endpoints(t, hostURL("http", port), lo4, lo6)
				o := run.o
				o.Client, o.RequestID = client, true
				o.Evidence = Evidence{Failed: func(s int) bool { return s >= 500 }, Samples: 1}
				o.Timeout = 5 * time.Second
				rs := attack(t, eps, o, 20*time.Second)
				tl := tallyOf(rs)
				// The budget counts what is sent; a loaded machine may also
				// drop requests in the open model, never in the closed one.
				if sent, dropped := tl.total(); sent != run.want || (o.Max && dropped != 0) {
					t.Errorf("%d requests, %d dropped; want %d sent", sent, dropped, run.want)
				}
				for _, ep := range eps {
					want := http.StatusOK
					if ep.Addr == lo6 {
						want = http.StatusBadGateway
					}
					if tl.sent[ep.ID] == 0 || tl.status[ep.ID][want] != tl.sent[ep.ID] {
						t.Errorf("%s: %d requests, statuses %v, errors %v; want every one %d", ep.Addr, tl.sent[ep.ID], tl.status[ep.ID], tl.classes[ep.ID], want)
					}
				}
				conns := map[[2]uint64]int{}
				for _, r := range sentOnly(rs) {
					if r.ConnReq > 5 {
						t.Errorf("%s: request %d of connection %d; nginx closes after 5", eps[r.Endpoint].Addr, r.ConnReq, r.ConnID)
					}
					if r.Status == http.StatusBadGateway && !strings.HasPrefix(r.Server, "nginx/") {
						t.Errorf("502 from server %q; want nginx's own", r.Server)
					}
					if r.Exemplar != nil && !strings.Contains(string(r.Exemplar), "<center>nginx") {
						t.Errorf("502 page %q; want nginx's own", r.Exemplar)
					}
					conns[[2]uint64{uint64(r.Endpoint), r.ConnID}]++
				}
				t.Logf("%d requests on %d connections", len(sentOnly(rs)), len(conns))
				// nginx logged every request once, by the ID pinprobe sent
				// (the log line is written just after the answer).
				sent := sentOnly(rs)
				parts := strings.SplitN(sent[0].RequestID, "-", 3) // pinprobe-RUN-ENDPOINT-N
				runPrefix := parts[0] + "-" + parts[1] + "-"
				logged := map[string]string{}
				lines := 0
				read := func() bool {
					b, err := os.ReadFile(filepath.Join(logs, fmt.Sprintf("%d.log", port)))
					if err != nil {
						t.Fatal(err)
					}
					clear(logged)
					lines = 0
					for _, line := range strings.Split(string(b), "\n") {
						if id, status, _ := strings.Cut(line, " "); strings.HasPrefix(id, runPrefix) {
							logged[id] = status
							lines++
						}
					}
					return lines >= len(sent)
				}
				waitFor(t, "nginx's log", read)
				if lines != len(sent) || len(logged) != len(sent) {
					t.Errorf("nginx logged %d requests (%d distinct IDs) of this run; pinprobe sent %d", lines, len(logged), len(sent))
				}
				for _, r := range sent {
					if logged[r.RequestID] != strconv.Itoa(r.Status) {
						t.Errorf("request %s: nginx logged status %q; pinprobe got %d", r.RequestID, logged[r.RequestID], r.Status)
					}
				}

			})
		})
	}
}

// TestPathsSendTheSameRequest sends one request of each shape through both
// paths to a raw server and compares what arrived, parsed: method,
// request-target, Host, every header field (the X-Request-Id's run prefix
// aside), the body's framing and bytes.
func TestPathsSendTheSameRequest(t *testing.T) {
	t.Parallel()
	seen := make(chan string, 1)
	port := testserver.StartRaw(t, testserver.Lo4a, func(c net.Conn) {
		_, req, err := readRaw(c)
		if err != nil {
			return
		}
		body, _ := io.ReadAll(req.Body)
		h := req.Header.Clone()
		if rest, ok := strings.CutPrefix(h.Get("X-Request-Id"), "pinprobe-"); ok {
			_, n, _ := strings.Cut(rest, "-")
			h.Set("X-Request-Id", n) // the endpoint and number, not the run
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s %s host=%q close=%v length=%d te=%q body=%q", req.Method, req.RequestURI, req.Proto, req.Host, req.Close, req.ContentLength, req.TransferEncoding, body)
		for _, k := range slices.Sorted(maps.Keys(h)) {
			fmt.Fprintf(&b, " %s=%q", k, h[k])
		}
		seen <- b.String()
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	}).Port()
	tests := []struct {
		name   string
		url    string // path and query after the host
		method string
		header http.Header
		body   string
		id     bool
		// stdNoLength: the std path leaves out Content-Length: 0.
		stdNoLength bool
	}{
		{name: "GET", url: "/a/b?q=1&r=%20x", method: http.MethodGet, id: true},
		{name: "HEAD", url: "/", method: http.MethodHead},
		{name: "POST without a body", url: "/", method: http.MethodPost},
		{name: "POST", url: "/submit", method: http.MethodPost, body: `{"a":1}`, header: http.Header{"Content-Type": {"application/json"}}},
		// The one difference: the std path sends a replayable PUT (or POST,
		// PATCH) without a body with no Content-Length at all, which is how
		// it keeps net/http from resending it (reqBody.set); the fast path
		// sends Content-Length: 0, as net/http otherwise does. Both mean
		// no body.
		{name: "PUT with an Idempotency-Key, no body", url: "/", method: http.MethodPut, header: http.Header{"Idempotency-Key": {"k1"}}, stdNoLength: true},
		{name: "DELETE", url: "/x", method: http.MethodDelete},
		{name: "OPTIONS", url: "/", method: http.MethodOptions},
		{name: "GET with a body", url: "/", method: http.MethodGet, body: "q=1"},
		{name: "headers", url: "/", method: http.MethodGet, id: true, header: http.Header{
			"Accept-Encoding": {"gzip"}, "X-Multi": {"a", "b"}, "User-Agent": {"curl/8"}, "Cookie": {"s=1"},
			"Host": {"other.pinprobe.test"}, "X-Request-Id": {"mine"},
		}},
		{name: "credentials in the URL", url: "/", method: http.MethodGet},
		{name: "Connection: close from the user", url: "/", method: http.MethodGet, header: http.Header{"Connection": {"close"}}},
	}
	for _, tt := range tests {
		got := map[ClientKind]string{}
		for _, client := range clients {
			host := testHost + ":" + strconv.Itoa(int(port))
			if tt.name == "credentials in the URL" {
				host = "alice:s3cret@" + host
			}
			eps := endpoints(t, "http://"+host+tt.url, testserver.Lo4a)
			eps[0].Target.Method, eps[0].Target.Header, eps[0].Target.Body = tt.method, tt.header, []byte(tt.body)
			o := Options{Rate: 100, Requests: 1, Client: client, RequestID: tt.id, UserAgent: "pinprobe/test"}
			rs := sentOnly(attack(t, eps, o, 10*time.Second))
			if len(rs) != 1 || rs[0].Err != nil {
				t.Fatalf("%s on %s: results %+v; want one success", tt.name, client, rs)
			}
			select {
			case got[client] = <-seen:
			case <-time.After(5 * time.Second):
				t.Fatalf("%s on %s: the server saw no request", tt.name, client)
			}
		}
		if tt.stdNoLength {
			got[ClientFast] = strings.Replace(got[ClientFast], ` Content-Length=["0"]`, "", 1)
		}
		if got[ClientStd] != got[ClientFast] {
			t.Errorf("%s: the server saw\nstd:  %s\nfast: %s", tt.name, got[ClientStd], got[ClientFast])
		}
	}
}
