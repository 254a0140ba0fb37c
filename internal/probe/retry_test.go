package probe

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// resettingServer answers on 127.0.0.1 and [::1] (same port) and resets
// every third request of each keep-alive connection: it reads the request
// in full, then closes the connection with SO_LINGER 0 (a RST) instead of
// answering. The third request of a connection always travels on a reused
// connection, which is where net/http would silently resend it.
func resettingServer(t *testing.T, served *atomic.Int64) uint16 {
	t.Helper()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		served.Add(1)
		if connNth(r)%3 != 0 {
			w.Write([]byte("ok\n"))
			return
		}
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		testserver.ResetConn(c)
	})
	port, lns := testserver.ListenSamePort(t, testserver.Lo4a, testserver.Lo6)
	for _, ln := range lns {
		testserver.Serve(t, ln, handler, nil, numberPerConn)
	}
	return port
}

// TestNoSilentRetries proves every request is sent exactly once, on both
// request paths: a request reset on a reused keep-alive connection is
// reported as reset, never resent (as net/http would), for replayable and
// non-replayable requests alike.
func TestNoSilentRetries(t *testing.T) {
	t.Parallel()
	eachClient(t, testNoSilentRetries)
}

func testNoSilentRetries(t *testing.T, client ClientKind) {
	var served atomic.Int64
	port := resettingServer(t, &served)
	tests := []struct {
		name   string
		method string
		header http.Header
		body   string
	}{
		{name: "GET", method: http.MethodGet},
		{name: "HEAD", method: http.MethodHead},
		{name: "OPTIONS", method: http.MethodOptions},
		{name: "GET with body", method: http.MethodGet, body: "q=1"},
		{name: "POST with Idempotency-Key", method: http.MethodPost, header: http.Header{"Idempotency-Key": {"k1"}}, body: `{"a":1}`},
		{name: "PUT with X-Idempotency-Key, no body", method: http.MethodPut, header: http.Header{"X-Idempotency-Key": {"k2"}}},
		{name: "POST", method: http.MethodPost, body: `{"a":1}`},
		{name: "DELETE", method: http.MethodDelete},
	}
	const requests = 90
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			served.Store(0)
			eps := endpoints(t, hostURL("http", port), testserver.Lo4a, testserver.Lo6)
			eps[0].Target.Method, eps[0].Target.Header = tt.method, tt.header
			if tt.body != "" {
				eps[0].Target.Body = []byte(tt.body)
			}
			o := Options{Max: true, Concurrency: 2, Requests: requests, Client: client, ConnOptions: ConnOptions{Timeout: 5 * time.Second, Concurrency: 2}}
			rs := attack(t, eps, o, 20*time.Second)
			if len(rs) != requests {
				t.Fatalf("%d results; want %d", len(rs), requests)
			}
			if got := served.Load(); got != requests {
				t.Errorf("server read %d requests; pinprobe sent %d: net/http resent some", got, requests)
			}
			failed := 0
			for _, r := range rs {
				switch {
				case r.Err == nil && r.Status == http.StatusOK:
					continue
				case r.Class != ClassReset || r.Status != 0:
					t.Errorf("status %d, class %q (%v); want 200 or a reset", r.Status, r.Class, r.Err)
				case !r.Reused:
					t.Errorf("reset on a fresh connection; the server resets only the third request of a connection")
				}
				failed++
			}
			// Every connection fails its third request: with four connections
			// at a time, about a third of the requests.
			if failed < requests/3-4 {
				t.Errorf("%d resets in %d requests; want about %d", failed, requests, requests/3)
			}
		})
	}
}

// TestNoRetryOnServerClosedIdle covers the other case net/http retries: the
// server closes a kept-alive connection (FIN) after reading a request
// without answering. The request is reported once, as eof, on both paths.
func TestNoRetryOnServerClosedIdle(t *testing.T) {
	t.Parallel()
	eachClient(t, testNoRetryOnServerClosedIdle)
}

func testNoRetryOnServerClosedIdle(t *testing.T, client ClientKind) {
	var served, conns atomic.Int64
	port, lns := testserver.ListenSamePort(t, testserver.Lo4a)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		if connNth(r)%2 != 0 {
			w.Write([]byte("ok\n"))
			return
		}
		c, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			c.Close() // a FIN, no answer
		}
	})
	testserver.Serve(t, lns[0], handler, nil, numberPerConn, func(s *httptest.Server) {
		s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				conns.Add(1)
			}
		}
	})
	eps := endpoints(t, hostURL("http", port), testserver.Lo4a)
	rs := attack(t, eps, Options{Max: true, Concurrency: 1, Requests: 40, Client: client}, 20*time.Second)
	if len(rs) != 40 || served.Load() != 40 {
		t.Fatalf("%d results, server read %d requests; want 40 and 40", len(rs), served.Load())
	}
	eofs := 0
	for _, r := range rs {
		if r.Err == nil {
			continue
		}
		eofs++
		if r.Class != ClassEOF || !r.Reused {
			t.Errorf("class %q, reused %v (%v); want eof on a reused connection", r.Class, r.Reused, r.Err)
		}
	}
	if eofs != 20 || conns.Load() != 20 {
		t.Errorf("%d failures over %d connections; want 20 over 20", eofs, conns.Load())
	}
}
