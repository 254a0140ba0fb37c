package probe

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// testHost is the made-up name the tests pin (.test is reserved, RFC 2606).
const testHost = "app.pinprobe.test"

// endpoint pins the target raw to addr as endpoint id.
func endpoint(t testing.TB, id int, raw string, addr netip.Addr) *Endpoint {
	t.Helper()
	eps := endpoints(t, raw, addr)
	eps[0].ID = id
	return eps[0]
}

// endpoints pins the target raw to each address, IDs in order, all of them
// sharing one Target.
func endpoints(t testing.TB, raw string, addrs ...netip.Addr) []*Endpoint {
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

// cannedServer answers every request head on a connection with the next
// of resps in turn, and closes the connection after a request that says
// Connection: close. It reads heads without net/http through a small
// buffer, so that allocation counts and benchmarks measure the client. It
// expects requests without bodies.
func cannedServer(t testing.TB, resps ...string) netip.AddrPort {
	out := make([][]byte, len(resps))
	for i, r := range resps {
		out[i] = []byte(r)
	}
	return testserver.StartRaw(t, testserver.Lo4a, func(c net.Conn) {
		var buf [512]byte
		n, next := 0, 0
		for {
			k, err := c.Read(buf[n:])
			if err != nil {
				return
			}
			n += k
			for {
				i := bytes.Index(buf[:n], []byte("\r\n\r\n"))
				if i < 0 {
					break
				}
				closing := saysClose(buf[:i])
				if _, err := c.Write(out[next]); err != nil || closing {
					return
				}
				next = (next + 1) % len(out)
				n = copy(buf[:], buf[i+4:n])
			}
			if n == len(buf) {
				return
			}
		}
	}).Addr()
}

// saysClose reports whether a request head has Connection: close, in any
// case, without allocating.
func saysClose(head []byte) bool {
	const line = "connection: close"
	for i := 0; i+len(line) <= len(head); i++ {
		if bytes.EqualFold(head[i:i+len(line)], []byte(line)) {
			return true
		}
	}
	return false
}

// connNthKey holds, in a request's context, its connection's request count.
type connNthKey struct{}

// numberPerConn is a setup function for testserver.Serve: connNth then
// numbers the requests of each connection.
func numberPerConn(s *httptest.Server) {
	s.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connNthKey{}, new(atomic.Int64))
	}
}

// connNth counts r on its connection and returns its place there, from 1;
// 0 on a server without numberPerConn.
func connNth(r *http.Request) int64 {
	if n, ok := r.Context().Value(connNthKey{}).(*atomic.Int64); ok {
		return n.Add(1)
	}
	return 0
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

// sentOnly returns the results that are requests, leaving out drop counts
// and pauses.
func sentOnly(rs []Result) []Result {
	var out []Result
	for _, r := range rs {
		if r.Request() {
			out = append(out, r)
		}
	}
	return out
}

// tally sums results per endpoint.
type tally struct {
	sent    map[int]int // results that are requests
	dropped map[int]int // due but not sent: drops, and the requests of a pause (a machine too loaded to run the test)
	status  map[int]map[int]int
	classes map[int]map[ErrorClass]int
}

func tallyOf(rs []Result) tally {
	tl := tally{sent: map[int]int{}, dropped: map[int]int{}, status: map[int]map[int]int{}, classes: map[int]map[ErrorClass]int{}}
	for _, r := range rs {
		if !r.Request() {
			tl.dropped[r.Endpoint] += r.Dropped + r.Missed
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

// connCount is the number of connections the requests of rs went on.
func connCount(rs []Result) int {
	conns := map[[2]uint64]bool{}
	for _, r := range sentOnly(rs) {
		conns[[2]uint64{uint64(r.Endpoint), r.ConnID}] = true
	}
	return len(conns)
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
