package probe

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// trickle writes s to c one byte every 5 ms until it is written or c fails.
func trickle(c net.Conn, s string) bool {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for i := range len(s) {
		if _, err := c.Write([]byte{s[i]}); err != nil {
			return false
		}
		<-tick.C
	}
	return true
}

// forever returns a string of n copies of s: "endless" for a test whose
// timeout ends long before it does.
func forever(s string) string { return strings.Repeat(s, 100000) }

// TestEveryRequestBounded answers in ways that would keep a request alive
// for ever and that the fault suite (suite_test.go) does not cover: every
// request must end within the timeout (plus scheduling slack) with the class
// the answer deserves, on both request paths, and the run must end on time.
func TestEveryRequestBounded(t *testing.T) {
	t.Parallel()
	const timeout = time.Second // short, but long enough for a loaded machine to get answers
	tests := []struct {
		name       string
		serve      func(c net.Conn, closed *atomic.Int64)
		body       []byte // request body: big enough to fill the socket buffers
		wantClass  ErrorClass
		wantStatus int
		wantErr    string
	}{
		{
			name: "101 without an upgrade",
			serve: func(c net.Conn, closed *atomic.Int64) {
				if readRequest(c) {
					io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\n\r\n")
					io.Copy(io.Discard, c)
					closed.Add(1)
				}
			},
			wantClass: ClassProtocol, wantStatus: http.StatusSwitchingProtocols, wantErr: "switched protocols",
		},
		{
			name: "endless 1xx, fast",
			serve: func(c net.Conn, _ *atomic.Int64) {
				if !readRequest(c) {
					return
				}
				hint := "HTTP/1.1 103 Early Hints\r\nLink: </" + strings.Repeat("a", 64<<10) + ">; rel=preload\r\n\r\n"
				for { // until the client gives up and closes it
					if _, err := io.WriteString(c, hint); err != nil {
						return
					}
				}
			},
			// Both paths allow 8 informational responses (and 1 MiB of
			// heads); on a slow machine the timeout may come first.
			wantClass: ClassProtocol, wantErr: "more than 8 informational",
		},
		{
			name: "endless 1xx, trickled",
			serve: func(c net.Conn, _ *atomic.Int64) {
				if readRequest(c) {
					trickle(c, forever("HTTP/1.1 103 Early Hints\r\n\r\n"))
				}
			},
			wantClass: ClassTimeout,
		},
		{
			name: "endless chunked body of 1-byte chunks",
			serve: func(c net.Conn, _ *atomic.Int64) {
				if readRequest(c) {
					io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
					trickle(c, forever("1\r\nx\r\n"))
				}
			},
			wantClass: ClassTimeout, wantStatus: http.StatusOK,
		},
		{
			name:      "accept and never read a 16 MiB body",
			serve:     func(c net.Conn, _ *atomic.Int64) { waitClosed(c) },
			body:      make([]byte, 16<<20),
			wantClass: ClassTimeout,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eachClient(t, func(t *testing.T, client ClientKind) {
				var closed atomic.Int64
				port := testserver.StartRaw(t, testserver.Lo4a, func(c net.Conn) { tt.serve(c, &closed) }).Port()
				eps := endpoints(t, hostURL("http", port), testserver.Lo4a)
				if tt.body != nil {
					eps[0].Target.Method, eps[0].Target.Body = http.MethodPost, tt.body
				}
				o := Options{Rate: 100, Requests: 2, Concurrency: 2, Client: client, ConnOptions: ConnOptions{Timeout: timeout, HTTP: HTTP1}}
				start := time.Now()
				rs := sentOnly(attack(t, eps, o, 20*time.Second))
				took := time.Since(start)
				if len(rs) != 2 {
					t.Fatalf("%d results; want 2", len(rs))
				}
				for _, r := range rs {
					if tt.wantClass == ClassProtocol && tt.wantStatus == 0 && r.Class == ClassTimeout {
						continue
					}
					if r.Class != tt.wantClass || r.Status != tt.wantStatus || r.Err == nil || !strings.Contains(r.Err.Error(), tt.wantErr) {
						t.Errorf("status %d, class %q (%v); want status %d, class %q, an error saying %q", r.Status, r.Class, r.Err, tt.wantStatus, tt.wantClass, tt.wantErr)
					}
					// Slack for a loaded machine; a request that is not bounded
					// never ends at all (the run would hit collect's limit).
					if r.Latency > timeout+2*time.Second {
						t.Errorf("request took %v with a %v timeout", r.Latency, timeout)
					}
				}
				if took > timeout+3*time.Second {
					t.Errorf("run took %v with a %v timeout", took, timeout)
				}
				if tt.wantStatus == http.StatusSwitchingProtocols {
					waitFor(t, "the switched connections to be closed", func() bool { return closed.Load() == 2 })
				}
			})
		})
	}
}

// waitClosed blocks until the peer closes c or the test's server goes.
func waitClosed(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var b [1]byte
	for {
		if _, err := c.Read(b[:]); err != nil {
			return
		}
	}
}

// waitFor polls cond until it holds, failing the test after 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after 5s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, not synchronising
	}
}

// TestCancelWaitIsBounded cancels a run whose requests are never answered:
// sending stops at once and the channel closes within the timeout of the
// requests in flight, every one of which times out.
func TestCancelWaitIsBounded(t *testing.T) {
	t.Parallel()
	eachClient(t, testCancelWaitIsBounded)
}

func testCancelWaitIsBounded(t *testing.T, client ClientKind) {
	const timeout = 500 * time.Millisecond
	var accepted atomic.Int64
	port := testserver.StartRaw(t, testserver.Lo4a, func(c net.Conn) {
		if readRequest(c) {
			accepted.Add(1)
			waitClosed(c)
		}
	}).Port()
	eps := endpoints(t, hostURL("http", port), testserver.Lo4a)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	run, err := Start(ctx, eps, Options{Rate: 100, Duration: time.Minute, Concurrency: 100, Client: client, ConnOptions: ConnOptions{Timeout: timeout}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "requests in flight", func() bool { return accepted.Load() >= 5 })
	cancel()
	cancelled := time.Now()
	rs := sentOnly(collect(t, run.Results(), 10*time.Second))
	if took := time.Since(cancelled); took > timeout+2*time.Second {
		t.Errorf("channel closed %v after the cancel; want within the %v timeout", took, timeout)
	}
	if int64(len(rs)) != run.Sent() || len(rs) < 5 {
		t.Errorf("%d results of %d sent; want every one sent, at least 5", len(rs), run.Sent())
	}
	for _, r := range rs {
		if r.Class != ClassTimeout {
			t.Errorf("class %q (%v); want timeout", r.Class, r.Err)
		}
	}
}
