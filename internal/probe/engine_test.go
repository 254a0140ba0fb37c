package probe

import (
	"context"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// loadServer serves every address on one port, counts requests and the most
// in flight per address, and holds the answers of the addresses in delay
// for that long.
type loadServer struct {
	hits     *testserver.Hits
	mu       sync.Mutex
	inflight map[netip.Addr]int
	peak     map[netip.Addr]int
}

// startLoad serves addrs on one port and returns the server and an
// endpoint of the test host on each address, IDs in order.
func startLoad(t *testing.T, delay map[netip.Addr]time.Duration, addrs ...netip.Addr) (*loadServer, []*Endpoint) {
	t.Helper()
	ls := &loadServer{hits: testserver.NewHits(), inflight: map[netip.Addr]int{}, peak: map[netip.Addr]int{}}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ls.hits.Add(r)
		a := testserver.LocalAddr(r).Addr()
		ls.mu.Lock()
		ls.inflight[a]++
		ls.peak[a] = max(ls.peak[a], ls.inflight[a])
		ls.mu.Unlock()
		defer func() {
			ls.mu.Lock()
			ls.inflight[a]--
			ls.mu.Unlock()
		}()
		if d := delay[a]; d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-r.Context().Done():
			}
		}
		w.Write([]byte("ok\n"))
	})
	port := testserver.ServeSamePort(t, handler, nil, addrs...)
	return ls, endpoints(t, hostURL("http", port), addrs...)
}

func (ls *loadServer) peakOf(a netip.Addr) int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.peak[a]
}

// checkServed compares the server's per-address counts with pinprobe's.
func checkServed(t *testing.T, ls *loadServer, eps []*Endpoint, tl tally) {
	t.Helper()
	served, _ := ls.hits.Snapshot()
	for _, ep := range eps {
		if served[ep.Addr] != tl.sent[ep.ID] {
			t.Errorf("%s: server saw %d requests, pinprobe reported %d", ep.Addr, served[ep.Addr], tl.sent[ep.ID])
		}
	}
}

// TestRateSplitsEvenly sends 200 req/s for 2 s over three endpoints: 400
// requests, a third each.
func TestRateSplitsEvenly(t *testing.T) {
	check.Long(t, "seconds of live traffic")
	addrs := []netip.Addr{testserver.Lo4a, testserver.Lo4b, testserver.Lo6}
	ls, eps := startLoad(t, nil, addrs...)
	start := time.Now()
	rs := attack(t, eps, Options{Rate: 200, Duration: 2 * time.Second, Concurrency: 10}, 10*time.Second)
	took := time.Since(start)
	tl := tallyOf(rs)
	sent, dropped := tl.total()
	t.Logf("%d sent, %d dropped in %v: %v", sent, dropped, took, tl.sent)
	if !within(float64(sent), 400, 0.05) {
		t.Errorf("%d requests in total; want 400 ± 5%%", sent)
	}
	for _, ep := range eps {
		if !within(float64(tl.sent[ep.ID]), float64(sent)/3, 0.05) {
			t.Errorf("%s: %d requests; want a third of %d ± 5%%", ep.Addr, tl.sent[ep.ID], sent)
		}
	}
	if took < 2*time.Second || took > 3*time.Second {
		t.Errorf("run took %v; want 2s (plus the last answers)", took)
	}
	checkServed(t, ls, eps, tl)
}

// TestRateSlowEndpointDrops gives one of three endpoints a backend that takes
// 300 ms with --concurrency 2: the others keep their full share, and the slow
// one's due requests are either sent or counted as dropped. At 20 req/s per
// endpoint the fast ones' two workers have 100 ms per request, which even
// -race on a loaded machine keeps up with.
func TestRateSlowEndpointDrops(t *testing.T) {
	check.Long(t, "seconds of live traffic")
	addrs := []netip.Addr{testserver.Lo4a, testserver.Lo4b, testserver.Lo6}
	slow := testserver.Lo6
	ls, eps := startLoad(t, map[netip.Addr]time.Duration{slow: 300 * time.Millisecond}, addrs...)
	rs := attack(t, eps, Options{Rate: 60, Duration: 2 * time.Second, Concurrency: 2}, 10*time.Second)
	tl := tallyOf(rs)
	t.Logf("sent %v, dropped %v", tl.sent, tl.dropped)
	share := 120.0 / 3
	for _, ep := range eps {
		sent, dropped := tl.sent[ep.ID], tl.dropped[ep.ID]
		if ep.Addr != slow {
			if !within(float64(sent), share, 0.05) {
				t.Errorf("%s: %d requests beside a slow endpoint; want %.0f ± 5%%", ep.Addr, sent, share)
			}
			continue
		}
		if dropped == 0 {
			t.Errorf("%s: no drops with 2 slots of 300 ms and a request due every 50 ms", ep.Addr)
		}
		// 2 slots × (2 s / 300 ms + the last one) at most.
		if sent < 6 || sent > 16 {
			t.Errorf("%s: %d requests sent; want 6..16", ep.Addr, sent)
		}
		if !within(float64(sent+dropped), share, 0.05) {
			t.Errorf("%s: %d sent + %d dropped = %d; want its share %.0f ± 5%%", ep.Addr, sent, dropped, sent+dropped, share)
		}
		if peak := ls.peakOf(ep.Addr); peak > 2 {
			t.Errorf("%s: %d requests in flight at once; want at most --concurrency 2", ep.Addr, peak)
		}
	}
	checkServed(t, ls, eps, tl)
}

// TestRequestsBound stops after exactly --requests requests, in the open and
// the closed model, on both request paths.
func TestRequestsBound(t *testing.T) {
	t.Parallel()
	check.Long(t, "seconds of live traffic")
	tests := []struct {
		name string
		opts Options
		want int
	}{
		{"open", Options{Rate: 1000, Requests: 37, Duration: time.Minute, Concurrency: 10}, 37},
		{"open, one endpoint's worth", Options{Rate: 30, Requests: 1, Concurrency: 10}, 1},
		{"closed", Options{Max: true, Concurrency: 4, Requests: 200}, 200},
		{"closed, fewer than workers", Options{Max: true, Concurrency: 4, Requests: 5}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachClient(t, func(t *testing.T, client ClientKind) {
				o := tt.opts
				o.Client = client
				testRequestsBound(t, o, tt.want)
			})
		})
	}
}

func testRequestsBound(t *testing.T, opts Options, want int) {
	addrs := []netip.Addr{testserver.Lo4a, testserver.Lo4b, testserver.Lo6}
	ls, eps := startLoad(t, nil, addrs...)
	rs := attack(t, eps, opts, 10*time.Second)
	tl := tallyOf(rs)
	sent, dropped := tl.total()
	if sent != want || ls.hits.Total() != want {
		t.Errorf("%d results, server saw %d; want exactly %d", sent, ls.hits.Total(), want)
	}
	if opts.Max && dropped != 0 {
		t.Errorf("closed model dropped %d", dropped)
	}
	for _, r := range sentOnly(rs) {
		if r.Err != nil || r.Status != http.StatusOK {
			t.Errorf("status %d, %v; want 200", r.Status, r.Err)
		}
	}
	if opts.Max {
		for _, a := range addrs {
			if peak := ls.peakOf(a); peak > opts.Concurrency {
				t.Errorf("%s: %d in flight; want at most %d", a, peak, opts.Concurrency)
			}
		}
	}
	checkServed(t, ls, eps, tl)
}

// TestCancelMidRun cancels the context while requests are in flight: sending
// stops, the requests in flight finish (not cancelled) and are reported, and
// the channel closes; on both request paths.
func TestCancelMidRun(t *testing.T) {
	t.Parallel()
	check.Long(t, "seconds of live traffic")
	tests := []struct {
		name string
		opts Options
	}{
		{"open", Options{Rate: 100, Duration: time.Minute, Concurrency: 10}},
		{"closed", Options{Max: true, Concurrency: 3}}, // no bound but the context
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachClient(t, func(t *testing.T, client ClientKind) {
				o := tt.opts
				o.Client = client
				testCancelMidRun(t, o)
			})
		})
	}
}

func testCancelMidRun(t *testing.T, opts Options) {
	addrs := []netip.Addr{testserver.Lo4a, testserver.Lo6}
	delay := 50 * time.Millisecond
	ls, eps := startLoad(t, map[netip.Addr]time.Duration{testserver.Lo4a: delay, testserver.Lo6: delay}, addrs...)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	results, err := Attack(ctx, eps, opts)
	if err != nil {
		t.Fatal(err)
	}
	var rs []Result
	for r := range results {
		rs = append(rs, r)
		if len(rs) == 20 {
			break
		}
	}
	cancel()
	cancelled := time.Now()
	rs = append(rs, collect(t, results, 5*time.Second)...)
	if took := time.Since(cancelled); took > 2*time.Second {
		t.Errorf("channel closed %v after cancel; want about one answer's time", took)
	}
	tl := tallyOf(rs)
	sent, _ := tl.total()
	if served := ls.hits.Total(); served != sent {
		t.Errorf("server saw %d requests, pinprobe reported %d", served, sent)
	}
	for _, r := range sentOnly(rs) {
		if r.Err != nil || r.Status != http.StatusOK {
			t.Errorf("status %d, %v: a request in flight was not let finish", r.Status, r.Err)
		}
	}
	checkServed(t, ls, eps, tl)
}

// TestAttackRejectsBadOptions covers the errors Attack returns up front.
func TestAttackRejectsBadOptions(t *testing.T) {
	eps := endpoints(t, "http://"+testHost+"/", testserver.Lo4a)
	tests := []struct {
		name string
		eps  []*Endpoint
		opts Options
	}{
		{"no endpoints", nil, Options{Rate: 1}},
		{"zero rate", eps, Options{}},
		{"negative rate", eps, Options{Rate: -1}},
	}
	for _, tt := range tests {
		if ch, err := Attack(t.Context(), tt.eps, tt.opts); err == nil || ch != nil {
			t.Errorf("%s: Attack = %v, %v; want an error", tt.name, ch, err)
		}
	}
}

// TestTimeoutClassMeansTheTimeoutElapsed answers around the timeout, so
// that answers and the timeout timer race. A request may be classed timeout
// only when the timeout really elapsed: a timer that fires as one request
// ends must not cancel the worker's next request (and, under -race, must not
// race the worker renewing its context).
func TestTimeoutClassMeansTheTimeoutElapsed(t *testing.T) {
	t.Parallel()
	eachClient(t, testTimeoutClassMeansTheTimeoutElapsed)
}

func testTimeoutClassMeansTheTimeoutElapsed(t *testing.T, client ClientKind) {
	const timeout = 2 * time.Millisecond
	var n atomic.Int64
	port := testserver.ServeSamePort(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// 1.5 ms to 2.5 ms, spread evenly around the timeout.
		d := 1500*time.Microsecond + time.Duration(n.Add(1)%11)*100*time.Microsecond
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
		}
	}), nil, testserver.Lo4a)
	eps := endpoints(t, hostURL("http", port), testserver.Lo4a)
	o := Options{Max: true, Concurrency: 8, Requests: 3000, Client: client, ConnOptions: ConnOptions{Timeout: timeout, Concurrency: 8}}
	rs := attack(t, eps, o, 30*time.Second)
	timeouts := 0
	for _, r := range rs {
		if r.Class == ClassTimeout || r.Class == ClassConnectTimeout {
			timeouts++
			if r.Latency < timeout {
				t.Errorf("class %s after %v with a %v timeout: %v", r.Class, r.Latency, timeout, r.Err)
			}
		}
	}
	if timeouts == 0 {
		t.Errorf("no timeouts in %d requests answered around the timeout", len(rs))
	}
}
