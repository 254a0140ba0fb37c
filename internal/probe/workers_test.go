package probe

import (
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestLazyWorkers: a --concurrency of 10,000 per endpoint over 50 endpoints
// at a low rate starts a worker (and a connection) only when a request is
// due and none is idle (or, for its first Rotation requests, to rotate
// over), so the goroutines stay few: one scheduler per endpoint, a worker
// for each of its 2 requests, and net/http's two per connection (none on
// the fast path). The paths run one after the other: the test counts
// goroutines.
func TestLazyWorkers(t *testing.T) {
	check.Long(t, "seconds of live traffic")
	for _, client := range clients {
		t.Run(string(client), func(t *testing.T) { testLazyWorkers(t, client) })
	}
}

func testLazyWorkers(t *testing.T, client ClientKind) {
	_, eps := startPaths(t, 50)
	before := runtime.NumGoroutine()
	o := Options{Rate: 100, Duration: time.Second, Concurrency: 10000, Client: client}
	results, err := Attack(t.Context(), eps, o)
	if err != nil {
		t.Fatal(err)
	}
	peak := 0
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var rs []Result
	deadline := time.After(10 * time.Second)
	for results != nil {
		select {
		case r, ok := <-results:
			if !ok {
				results = nil
				continue
			}
			rs = append(rs, r)
		case <-tick.C:
			peak = max(peak, runtime.NumGoroutine()-before)
		case <-deadline:
			t.Fatalf("run still going after 10s")
		}
	}
	tl := tallyOf(rs)
	sent, dropped := tl.total()
	conns := connCount(rs)
	t.Logf("%d sent, %d dropped, %d connections, at most %d goroutines more than before", sent, dropped, conns, peak)
	if sent != 100 || dropped != 0 {
		t.Errorf("%d sent, %d dropped; want 100, none dropped", sent, dropped)
	}
	// Eager workers would be 500,000 goroutines; these are 50 schedulers,
	// ~100 workers, ~200 client and ~100 server connection goroutines.
	if peak > 1000 {
		t.Errorf("%d goroutines at the peak for 50 endpoints at 2 req/s each; want a few hundred", peak)
	}
	// Each endpoint's 2 requests start the workers they rotate over: one
	// connection each, never more.
	if want := 50 * min(2, Rotation); conns > want {
		t.Errorf("%d connections for 100 requests answered at once; want at most %d, one per worker", conns, want)
	}
}

// TestDropsOnlyWhenAllBusy holds every answer 100 ms at 20 req/s, so about
// two requests are in flight at once: with --concurrency 30 nothing is
// dropped and far fewer than 30 workers (connections) are made; with
// --concurrency 1 the excess is dropped, never more than 1 in flight.
func TestDropsOnlyWhenAllBusy(t *testing.T) {
	check.Long(t, "seconds of live traffic")
	tests := []struct {
		concurrency int
		wantDrops   bool
	}{
		{30, false},
		{1, true},
	}
	for _, tt := range tests {
		ls, eps := startLoad(t, map[netip.Addr]time.Duration{testserver.Lo4a: 100 * time.Millisecond}, testserver.Lo4a)
		o := Options{Rate: 20, Duration: time.Second, Concurrency: tt.concurrency}
		rs := attack(t, eps, o, 10*time.Second)
		tl := tallyOf(rs)
		sent, dropped := tl.total()
		conns := connCount(rs)
		peak := ls.peakOf(testserver.Lo4a)
		t.Logf("-c %d: %d sent, %d dropped, %d connections, %d in flight at most", tt.concurrency, sent, dropped, conns, peak)
		if sent+dropped != 20 {
			t.Errorf("-c %d: %d sent + %d dropped; want the 20 due", tt.concurrency, sent, dropped)
		}
		if (dropped > 0) != tt.wantDrops {
			t.Errorf("-c %d: %d dropped with %d in flight at most; want drops: %v", tt.concurrency, dropped, peak, tt.wantDrops)
		}
		if peak > tt.concurrency || conns > tt.concurrency {
			t.Errorf("-c %d: %d in flight, %d connections; want at most %d", tt.concurrency, peak, conns, tt.concurrency)
		}
		// Two or three are busy at a time; a loaded machine may need a few more.
		if !tt.wantDrops && conns > 10 {
			t.Errorf("-c %d: %d connections for ~2 requests in flight; want workers made only as needed", tt.concurrency, conns)
		}
	}
}

// TestWorkersGrowForASlowBackend: a backend that holds every answer 300 ms
// at 100 req/s needs about 30 requests in flight, more than the 8 warm
// workers: workers are added once requests are seen stuck, so every
// planned request is sent (none dropped) and none much later than due.
func TestWorkersGrowForASlowBackend(t *testing.T) {
	t.Parallel()
	ls, eps := startLoad(t, map[netip.Addr]time.Duration{testserver.Lo4a: 300 * time.Millisecond}, testserver.Lo4a)
	// The machine's own load (other test packages) is not the question.
	o := Options{Rate: 100, Duration: time.Second, Concurrency: 1000, cpu: fixedCPU(true)}
	rs := attack(t, eps, o, 10*time.Second)
	sent, dropped := tallyOf(rs).total()
	if sent != 100 || dropped != 0 {
		t.Errorf("%d sent, %d dropped; want the 100 planned, none dropped", sent, dropped)
	}
	if peak := ls.peakOf(testserver.Lo4a); peak < 20 {
		t.Errorf("%d in flight at most; want about 30 (rate × latency)", peak)
	}
}

// fixedCPU is a cpuGauge that always gives the same answer.
type fixedCPU bool

func (f fixedCPU) spareCPU(time.Time) bool { return bool(f) }

// late says the client keeps up, whatever the machine's load.
func (f fixedCPU) late(time.Duration) bool { return false }

// TestWorkersWithoutCPU: on a machine with no CPU to spare an endpoint
// grows only to BusyWorkers for stuck requests. 100 req/s of 300 ms
// answers need 30 in flight: all sent. 400 req/s need 120: the endpoint
// stops at BusyWorkers, the requests those cannot carry wait for one to
// come free, and what still waits when the run ends is counted as dropped;
// every planned request is sent or dropped, none lost.
func TestWorkersWithoutCPU(t *testing.T) {
	t.Parallel()
	check.Long(t, "seconds of live traffic")
	for _, tt := range []struct {
		rate      float64
		wantDrops bool
	}{
		{100, false},
		{400, true},
	} {
		ls, eps := startLoad(t, map[netip.Addr]time.Duration{testserver.Lo4a: 300 * time.Millisecond}, testserver.Lo4a)
		o := Options{Rate: tt.rate, Duration: time.Second, Concurrency: 1000, cpu: fixedCPU(false)}
		rs := attack(t, eps, o, 10*time.Second)
		sent, dropped := tallyOf(rs).total()
		peak := ls.peakOf(testserver.Lo4a)
		t.Logf("%.0f req/s: %d sent, %d dropped, %d in flight at most", tt.rate, sent, dropped, peak)
		if sent+dropped != int(tt.rate) {
			t.Errorf("%.0f req/s: %d sent + %d dropped; want the %.0f due", tt.rate, sent, dropped, tt.rate)
		}
		if peak > BusyWorkers {
			t.Errorf("%.0f req/s: %d in flight at most; want at most %d without spare CPU", tt.rate, peak, BusyWorkers)
		}
		if (dropped > 0) != tt.wantDrops {
			t.Errorf("%.0f req/s: %d dropped; want drops: %v", tt.rate, dropped, tt.wantDrops)
		}
		if tt.wantDrops && peak < BusyWorkers/2 {
			t.Errorf("%.0f req/s: %d in flight at most; want growth towards %d", tt.rate, peak, BusyWorkers)
		}
	}
}

// behindCPU is a cpuGauge of a client that is always behind its schedule
// on a machine with CPU to spare: only its own lateness holds growth.
type behindCPU struct{}

func (behindCPU) spareCPU(time.Time) bool { return true }
func (behindCPU) late(time.Duration) bool { return true }

// TestWorkersStopGrowingWhileBehind: a client behind its own schedule
// (short of CPU) adds no workers past BusyWorkers for requests that stay in
// flight, however much CPU the machine seems to have: more connections
// would only slow it further. 400 req/s of 300 ms answers need 120 in
// flight; the endpoint stops at BusyWorkers, every planned request is sent
// or dropped, and the ones that waited for a worker while the client was
// behind are timed from when they were sent: the wait was the client's.
func TestWorkersStopGrowingWhileBehind(t *testing.T) {
	t.Parallel()
	const hold = 300 * time.Millisecond
	ls, eps := startLoad(t, map[netip.Addr]time.Duration{testserver.Lo4a: hold}, testserver.Lo4a)
	o := Options{Rate: 400, Duration: time.Second, Concurrency: 1000, cpu: behindCPU{}}
	rs := attack(t, eps, o, 10*time.Second)
	sent, dropped := tallyOf(rs).total()
	peak := ls.peakOf(testserver.Lo4a)
	var slowest time.Duration
	for _, r := range sentOnly(rs) {
		slowest = max(slowest, r.Latency)
	}
	t.Logf("%d sent, %d dropped, %d in flight at most, slowest %v", sent, dropped, peak, slowest)
	if sent+dropped != 400 {
		t.Errorf("%d sent + %d dropped; want the 400 due", sent, dropped)
	}
	if peak > BusyWorkers {
		t.Errorf("%d in flight at most; want at most %d while the client is behind", peak, BusyWorkers)
	}
	if dropped == 0 || peak < BusyWorkers/2 {
		t.Errorf("%d dropped, %d in flight at most; want growth towards %d and the rest dropped", dropped, peak, BusyWorkers)
	}
	if limit := hold + scaled(250*time.Millisecond); slowest > limit {
		t.Errorf("slowest request %v; want each timed from when it was sent (about %v), not from when it fell due", slowest, hold)
	}
}

// TestOpenModelAllocatesNothingPerRequest: once its workers and
// connections are up, an endpoint paced at a fixed rate allocates nothing
// per request (no timer, no hand-off, no result), on the fast path.
func TestOpenModelAllocatesNothingPerRequest(t *testing.T) {
	check.Long(t, "seconds of live traffic")
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	ap := cannedServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
	ep := endpoints(t, hostURL("http", ap.Port()), ap.Addr())[0]
	count := func(n int64) (requests int, mallocs uint64) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		run, err := Start(t.Context(), []*Endpoint{ep}, Options{Rate: 2000, Requests: n, Client: ClientFast,
			ConnOptions: ConnOptions{Timeout: 5 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		requests = takeRequests(run)
		runtime.ReadMemStats(&after)
		return requests, after.Mallocs - before.Mallocs
	}
	// The difference of a short run and a long one is what the extra
	// requests cost: the workers, connections and buffers are the same.
	n1, m1 := count(400)
	n2, m2 := count(2400)
	per := (float64(m2) - float64(m1)) / float64(n2-n1)
	t.Logf("%d requests: %d allocations; %d requests: %d; %.3f per request", n1, m1, n2, m2, per)
	if n1 != 400 || n2 != 2400 {
		t.Fatalf("%d and %d requests sent; want 400 and 2400", n1, n2)
	}
	if per > 0.05 {
		t.Errorf("%.3f allocations per request; want none", per)
	}
}

// TestClosedModelOutboxesStayBounded: at --rate max a collector that falls
// behind holds the workers up rather than letting each worker's outbox grow
// (and keep its capacity for the rest of the run): every outbox holds at most
// boxCapClosed results and all of them at most pendingCapClosed, and every
// result still arrives once the collector takes them.
func TestClosedModelOutboxesStayBounded(t *testing.T) {
	t.Parallel()
	ap := cannedServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
	ep := endpoints(t, hostURL("http", ap.Port()), ap.Addr())[0]
	const n = 5000
	run, err := Start(t.Context(), []*Endpoint{ep}, Options{Max: true, Concurrency: 4, Requests: n,
		Client: ClientFast, ConnOptions: ConnOptions{Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	// The collector sleeps: the workers fill their outboxes and wait.
	time.Sleep(scaled(300 * time.Millisecond))
	run.boxMu.Lock()
	most, room, boxes := 0, 0, len(run.boxes)
	for _, b := range run.boxes {
		b.mu.Lock()
		most, room = max(most, len(b.buf)), max(room, cap(b.buf))
		b.mu.Unlock()
	}
	run.boxMu.Unlock()
	if pending := run.pending.Load(); pending > pendingCapClosed || pending == 0 {
		t.Errorf("%d results pending while the collector slept; want 1 to %d", pending, pendingCapClosed)
	}
	if most > boxCapClosed || room >= 2*boxCapClosed {
		t.Errorf("an outbox (of %d) holds %d results, room for %d; want at most %d", boxes, most, room, boxCapClosed)
	}
	if requests := takeRequests(run); requests != n {
		t.Errorf("%d results; want %d", requests, n)
	}
}

// takeRequests takes run's results as they are ready until it ends, and
// returns how many were requests. It allocates nothing.
func takeRequests(run *Run) (requests int) {
	for {
		_, more := <-run.Ready()
		for _, r := range run.Take() {
			if r.Request() {
				requests++
			}
		}
		if !more {
			return requests
		}
	}
}
