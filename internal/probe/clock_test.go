package probe

import (
	"context"
	"math"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// The engine's pacing and workers, on the clock of a synctest bubble:
// senders that answer after a set time instead of a network, so that what
// is tested is when requests go out, how many workers carry them and what
// is dropped, exactly and in no time. The tests of engine_test.go and
// workers_test.go say the same over loopback, within the slack a real
// machine needs.

// clockLoad is what a server would count of a clock run: requests in
// flight per endpoint, their peak, and when each request was sent.
type clockLoad struct {
	start time.Time

	mu       sync.Mutex
	inFlight map[int]int
	peak     map[int]int
	sent     map[int][]time.Duration // from start
}

func (l *clockLoad) begin(ep int, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight[ep]++
	l.peak[ep] = max(l.peak[ep], l.inFlight[ep])
	l.sent[ep] = append(l.sent[ep], at.Sub(l.start))
}

func (l *clockLoad) end(ep int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight[ep]--
}

// clockSender answers each request delay after it is sent, on one
// connection (the worker's), numbered as the engine numbers them.
type clockSender struct {
	s     *stream
	delay time.Duration
	load  *clockLoad
	conn  uint64
	reqs  int
}

func (c *clockSender) do(start time.Time) Result {
	if c.conn == 0 {
		c.conn = c.s.state.conns.Add(1)
	}
	c.reqs++
	ep := c.s.ep.ID
	c.load.begin(ep, time.Now())
	time.Sleep(c.delay)
	c.load.end(ep)
	return Result{Endpoint: ep, Start: start, Latency: time.Since(start), TTFB: time.Since(start), Status: 200,
		ConnID: c.conn, ConnReq: c.reqs, Reused: c.reqs > 1}
}

func (c *clockSender) close() {}

// onClock sets o to send through clockSenders, each endpoint answering
// after its delay (none: at once), and returns the load they count from
// now on.
func onClock(o *Options, delay map[int]time.Duration) *clockLoad {
	load := &clockLoad{start: time.Now(), inFlight: map[int]int{}, peak: map[int]int{}, sent: map[int][]time.Duration{}}
	o.sender = func(s *stream, _ context.Context) sender {
		return &clockSender{s: s, delay: delay[s.ep.ID], load: load}
	}
	if o.cpu == nil {
		o.cpu = fixedCPU(true) // the machine's load is not on this clock
	}
	return load
}

// clockRun runs an attack on eps with o inside the caller's bubble (see
// onClock), and returns its results, the load and how long it took on the
// bubble's clock.
func clockRun(t *testing.T, eps []*Endpoint, o Options, delay map[int]time.Duration) ([]Result, *clockLoad, time.Duration) {
	t.Helper()
	load := onClock(&o, delay)
	rs := attack(t, eps, o, time.Hour)
	return rs, load, time.Since(load.start)
}

// perWindow counts the times of sent in each of n windows of width w from
// the start.
func perWindow(sent []time.Duration, w time.Duration, n int) []int {
	out := make([]int, n)
	for _, at := range sent {
		if i := int(at / w); i < n {
			out[i]++
		}
	}
	return out
}

// lateness is how much later than due the latest of sent was, for
// requests due every 1/rate from first on.
func lateness(sent []time.Duration, first time.Duration, rate float64) time.Duration {
	var most time.Duration
	for i, at := range sent {
		most = max(most, at-first-time.Duration(float64(i)*float64(time.Second)/rate))
	}
	return most
}

// clockEndpoints are n endpoints of one made-up target; no address is
// dialled.
func clockEndpoints(t *testing.T, n int) []*Endpoint {
	addrs := []netip.Addr{testserver.Lo4a, testserver.Lo4b, testserver.Lo6, testserver.Lo4c}
	return endpoints(t, hostURL("http", 80), addrs[:n]...)
}

// TestClockRateSplitsEvenly: 200 req/s for 2 s over three endpoints is 400
// requests, 133 or 134 each, each sent when it is due: the endpoints take
// turns in slots 5 ms apart, and the run ends at 2 s.
func TestClockRateSplitsEvenly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eps := clockEndpoints(t, 3)
		rs, load, took := clockRun(t, eps, Options{Rate: 200, Duration: 2 * time.Second, Concurrency: 10}, nil)
		tl := tallyOf(rs)
		sent, dropped := tl.total()
		if sent != 400 || dropped != 0 {
			t.Errorf("%d sent, %d dropped; want 400, none dropped", sent, dropped)
		}
		var all []time.Duration
		for _, ep := range eps {
			if n := tl.sent[ep.ID]; n != 133 && n != 134 {
				t.Errorf("%s: %d requests; want a third of 400", ep.Addr, n)
			}
			all = append(all, load.sent[ep.ID]...)
		}
		slots := map[time.Duration]int{}
		for _, at := range all {
			slots[at]++
			if at%(5*time.Millisecond) != 0 || at >= 2*time.Second {
				t.Errorf("a request sent %v into the run; want every one on a 5 ms slot before 2s", at)
				break
			}
		}
		if len(slots) != 400 {
			t.Errorf("%d distinct send times for 400 requests; want one slot each", len(slots))
		}
		if took != 2*time.Second {
			t.Errorf("the run took %v; want 2s", took)
		}
	})
}

// TestClockDropsOnlyWhenAllBusy: every answer takes 120 ms at 20 req/s,
// so two or three requests are in flight at once. With --concurrency 30
// every request goes out when due and few workers are made; with
// --concurrency 1 one is in flight at a time, a request due while it is
// busy is dropped, never sent late, and every due request is one or the
// other. (120 ms, not 100: an answer that ends just as a request falls
// due is a tie the clock does not break, and the count would depend on
// which goroutine runs first.)
func TestClockDropsOnlyWhenAllBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, c := range []int{30, 1} {
			rs, load, _ := clockRun(t, clockEndpoints(t, 1), Options{Rate: 20, Duration: time.Second, Concurrency: c},
				map[int]time.Duration{0: 120 * time.Millisecond})
			tl := tallyOf(rs)
			sent, dropped := tl.total()
			conns := connCount(rs)
			t.Logf("-c %d: %d sent at %v, %d dropped, %d in flight at most, %d connections", c, sent, load.sent[0], dropped, load.peak[0], conns)
			if sent+dropped != 20 {
				t.Errorf("-c %d: %d sent + %d dropped; want the 20 due", c, sent, dropped)
			}
			for _, at := range load.sent[0] {
				if at%(50*time.Millisecond) != 0 {
					t.Errorf("-c %d: a request sent %v into the run; want each when due, on the 50 ms beat", c, at)
				}
			}
			switch c {
			case 30:
				if dropped != 0 || load.peak[0] > 3 || conns > 4 {
					t.Errorf("-c 30: %d dropped, %d in flight, %d connections; want none dropped, at most 3 in flight and 4 connections", dropped, load.peak[0], conns)
				}
			case 1:
				// The worker is free 120 ms after each send and takes the
				// next request due: one in three, at 0, 150 ms, … 900 ms.
				if load.peak[0] != 1 || conns != 1 || sent != 7 {
					t.Errorf("-c 1: %d in flight, %d connections, %d sent; want 1, 1 and 7", load.peak[0], conns, sent)
				}
			}
		}
	})
}

// TestClockSlowEndpointDrops: one of three endpoints answers after 310 ms
// (not on the beat: see TestClockDropsOnlyWhenAllBusy) with --concurrency
// 2 at 20 req/s each. The others send every request of their share when
// due, in their slots of the layout; the slow one has two requests in
// flight at most, each worker taking the next request due once it is free
// (every 310 to 360 ms), and drops the rest.
func TestClockSlowEndpointDrops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eps := clockEndpoints(t, 3)
		rs, load, _ := clockRun(t, eps, Options{Rate: 60, Duration: 2 * time.Second, Concurrency: 2},
			map[int]time.Duration{2: 310 * time.Millisecond})
		tl := tallyOf(rs)
		t.Logf("sent %v, dropped %v, in flight at most %v", tl.sent, tl.dropped, load.peak)
		for _, id := range []int{0, 1} {
			if tl.sent[id] != 40 || tl.dropped[id] != 0 {
				t.Errorf("%s: %d sent, %d dropped; want its 40", eps[id].Addr, tl.sent[id], tl.dropped[id])
			}
			// The endpoints take turns in slots of the 60 req/s beat, in
			// an order that changes from cycle to cycle (see pacer): one
			// request in each 50 ms cycle, sent on a slot.
			if n := perWindow(load.sent[id], 50*time.Millisecond, 40); !slices.Equal(n, slices.Repeat([]int{1}, 40)) {
				t.Errorf("%s: requests per 50 ms %v; want one in each", eps[id].Addr, n)
			}
			for _, at := range load.sent[id] {
				if slot := time.Duration(math.Round(at.Seconds()*60)) * time.Second / 60; at-slot > time.Microsecond || slot-at > time.Microsecond {
					t.Errorf("%s: a request sent %v into the run; want it on a slot of the 60 req/s beat", eps[id].Addr, at)
					break
				}
			}
		}
		sent, dropped := tl.sent[2], tl.dropped[2]
		if sent+dropped != 40 || load.peak[2] > 2 || sent < 2*(2000/360) || sent > 2*(2000/310+1) {
			t.Errorf("slow: %d sent + %d dropped, %d in flight at most; want its 40, 2 in flight, 10 to 14 sent", sent, dropped, load.peak[2])
		}
	})
}

// TestClockWorkers: 300 ms answers at 100 and 400 req/s need 30 and 120
// requests in flight, more than the warm workers. With CPU to spare the
// endpoint grows to that, every request sent (within a beat of when it was
// due) and none dropped. Without, it stops at BusyWorkers: 100 req/s still
// fit; at 400 the requests that find no worker wait for one and are timed
// from when they were due (the wait is the server's slowness), and what
// still waits at the end is dropped. A client behind its own schedule
// grows no further either, but its waits are its own: those requests are
// timed from when they were sent.
func TestClockWorkers(t *testing.T) {
	const hold = 300 * time.Millisecond
	for _, tt := range []struct {
		name  string
		cpu   cpuGauge
		rate  float64
		peak  int  // requests in flight at most
		drops bool // some dropped
		timed time.Duration
	}{
		{"spare CPU, 100 req/s", fixedCPU(true), 100, 31, false, hold},
		{"spare CPU, 400 req/s", fixedCPU(true), 400, 123, false, hold + 10*time.Millisecond},
		{"no spare CPU, 100 req/s", fixedCPU(false), 100, 31, false, hold},
		{"no spare CPU, 400 req/s", fixedCPU(false), 400, BusyWorkers, true, time.Second},
		{"behind, 100 req/s", behindCPU{}, 100, 31, false, hold},
		{"behind, 400 req/s", behindCPU{}, 400, BusyWorkers, true, hold},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rs, load, _ := clockRun(t, clockEndpoints(t, 1), Options{Rate: tt.rate, Duration: time.Second, Concurrency: 1000, cpu: tt.cpu},
					map[int]time.Duration{0: hold})
				sent, dropped := tallyOf(rs).total()
				var slowest time.Duration
				for _, r := range sentOnly(rs) {
					slowest = max(slowest, r.Latency)
				}
				late := lateness(load.sent[0], 0, tt.rate)
				t.Logf("%d sent, %d dropped, %d in flight at most, up to %v late, slowest %v", sent, dropped, load.peak[0], late, slowest)
				if sent+dropped != int(tt.rate) || (dropped > 0) != tt.drops {
					t.Errorf("%d sent + %d dropped; want the %.0f due, drops: %v", sent, dropped, tt.rate, tt.drops)
				}
				if p := load.peak[0]; p > tt.peak || p < tt.peak*9/10 {
					t.Errorf("%d in flight at most; want %d", p, tt.peak)
				}
				if !tt.drops && late > 10*time.Millisecond {
					t.Errorf("a request sent %v after it was due; want each within a beat", late)
				}
				if slowest > tt.timed || slowest < hold {
					t.Errorf("slowest request %v; want %v to %v", slowest, hold, tt.timed)
				}
			})
		})
	}
}

// TestClockResplit: 100 req/s over two endpoints; the second leaves at
// 0.5 s and comes back at 1.3 s. While both run each takes 50 req/s, the
// one left alone 100: 25 + 80 + 35 and 25 + 35 requests of the 200.
func TestClockResplit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eps := clockEndpoints(t, 2)
		o := Options{Rate: 100, Duration: 2 * time.Second, Concurrency: 10}
		load := onClock(&o, nil)
		run, err := Start(t.Context(), eps, o)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(505 * time.Millisecond)
			run.Remove(1)
			time.Sleep(800 * time.Millisecond) // to 1.305 s
			if err := run.Add(eps[1]); err != nil {
				t.Error(err)
			}
		}()
		var rs []Result
		for r := range run.Results() {
			rs = append(rs, r)
		}
		tl := tallyOf(rs)
		sent, dropped := tl.total()
		t.Logf("sent %v, dropped %d", tl.sent, dropped)
		// The endpoints' turns change order from cycle to cycle, so which
		// one has the slot just before a re-split is not fixed: a request
		// or two either way.
		if d := tl.sent[0] - 140; d < -2 || d > 2 || dropped != 0 {
			t.Errorf("endpoint 0: %d requests, %d dropped; want 140 ± 2, none dropped", tl.sent[0], dropped)
		}
		if d := tl.sent[1] - 60; d < -2 || d > 2 {
			t.Errorf("endpoint 1: %d requests; want 60 ± 2", tl.sent[1])
		}
		for _, at := range load.sent[1] {
			if at > 505*time.Millisecond && at < 1305*time.Millisecond {
				t.Errorf("endpoint 1: a request sent %v into the run, while it was removed", at)
			}
		}
		// The rate holds through both re-splits: 10 requests in every
		// 100 ms, give or take the one a re-split moves.
		all := append(slices.Clone(load.sent[0]), load.sent[1]...)
		for i, n := range perWindow(all, 100*time.Millisecond, 20) {
			if n < 9 || n > 11 {
				t.Errorf("%d requests from %v to %v; want 10 ± 1 at 100 req/s", n, time.Duration(i)*100*time.Millisecond, time.Duration(i+1)*100*time.Millisecond)
			}
		}
		if sent < 198 || sent > 202 {
			t.Errorf("%d requests in all; want 200 ± 2", sent)
		}
	})
}

// TestClockPaceGrain: at 1000 req/s with --pace-grain 20ms every request
// goes out at the start of its grain, 20 at a time; without a grain each
// goes out on its own millisecond.
func TestClockPaceGrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, grain := range []time.Duration{20 * time.Millisecond, 0} {
			o := Options{Rate: 1000, Duration: time.Second, Concurrency: 50, PaceGrain: grain}
			rs, load, _ := clockRun(t, clockEndpoints(t, 1), o, nil)
			sent, dropped := tallyOf(rs).total()
			at := map[time.Duration]int{}
			for _, d := range load.sent[0] {
				at[d]++
			}
			beat, each := grain, 20
			if grain == 0 {
				beat, each = time.Millisecond, 1
			}
			t.Logf("grain %v: %d sent, %d dropped, at %d distinct times", grain, sent, dropped, len(at))
			if sent != 1000 || dropped != 0 || len(at) != 1000/each {
				t.Errorf("grain %v: %d sent, %d dropped, at %d distinct times; want 1000, none, %d", grain, sent, dropped, len(at), 1000/each)
			}
			for d, n := range at {
				if d%beat != 0 || n != each {
					t.Errorf("grain %v: %d requests sent %v into the run; want %d at each multiple of %v", grain, n, d, each, beat)
					break
				}
			}
		}
	})
}

// heldSender answers the first held requests of the run after hold, the
// rest at once, each on its worker's one connection (unlimited reuse).
type heldSender struct {
	s     *stream
	n     *atomic.Int64 // requests of the run so far
	held  int64
	hold  time.Duration
	conn  uint64
	reqs  int
	sends func(conn uint64, at time.Time)
}

func (h *heldSender) do(start time.Time) Result {
	if h.conn == 0 {
		h.conn = h.s.state.conns.Add(1)
	}
	h.reqs++
	h.sends(h.conn, time.Now())
	if h.n.Add(1) <= h.held {
		time.Sleep(h.hold)
	}
	return Result{Endpoint: h.s.ep.ID, Start: start, Latency: time.Since(start), TTFB: time.Since(start), Status: 200,
		ConnID: h.conn, ConnReq: h.reqs, Reused: h.reqs > 1}
}

func (h *heldSender) close() {}

// TestClockRotationLeavesExtraWorkersIdle: the first 10 answers held
// 500 ms at 40 req/s make the endpoint add workers past its warm ones for
// the stuck requests; once those answers are in, every request goes round
// exactly Rotation connections and the extra workers carry none.
// TestRotationLeavesExtraWorkersIdle says it over loopback, within what a
// loaded machine's stalls allow.
func TestClockRotationLeavesExtraWorkersIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const held, hold = 10, 500 * time.Millisecond
		var mu sync.Mutex
		type send struct {
			conn uint64
			at   time.Duration
		}
		var sends []send
		start := time.Now()
		var n atomic.Int64
		o := Options{Rate: 40, Duration: 1500 * time.Millisecond, Concurrency: 1000, cpu: fixedCPU(true)}
		o.sender = func(s *stream, _ context.Context) sender {
			return &heldSender{s: s, n: &n, held: held, hold: hold, sends: func(conn uint64, at time.Time) {
				mu.Lock()
				defer mu.Unlock()
				sends = append(sends, send{conn, at.Sub(start)})
			}}
		}
		rs := attack(t, clockEndpoints(t, 1), o, time.Hour)
		sent, dropped := tallyOf(rs).total()
		// The tenth request, due at 225 ms, is answered at 725 ms; the
		// requests due from then on are the settled ones.
		settled := 225*time.Millisecond + hold
		all, used := map[uint64]bool{}, map[uint64]bool{}
		var order []uint64
		for _, s := range sends {
			all[s.conn] = true
			if s.at > settled {
				used[s.conn] = true
				order = append(order, s.conn)
			}
		}
		t.Logf("%d sent, %d dropped on %d connections; %d requests after the held answers, on %d connections", sent, dropped, len(all), len(order), len(used))
		if sent != 60 || dropped != 0 {
			t.Errorf("%d sent, %d dropped; want the 60 planned, none dropped", sent, dropped)
		}
		if warm := warmWorkers(o.Rate, 0, o.Concurrency); len(all) <= warm {
			t.Errorf("%d connections; want workers added past the %d warm ones for the held requests", len(all), warm)
		}
		if len(order) != 30 || len(used) != Rotation {
			t.Errorf("%d requests after the held answers on %d connections; want the 30 due after 725 ms on exactly the %d in rotation", len(order), len(used), Rotation)
		}
	})
}
