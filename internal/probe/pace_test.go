package probe

import (
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

func TestPlannedRequests(t *testing.T) {
	ones := func(n int, v int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	tests := []struct {
		name      string
		opts      Options
		endpoints int
		want      []int64 // nil: no plan
		wantTotal int64
	}{
		{"the brief's warning: 2 req/s over 20 for 5 s", Options{Rate: 2, Duration: 5 * time.Second}, 20,
			append(ones(10, 1), ones(10, 0)...), 10},
		{"50 req/s over 50 for 3 s", Options{Rate: 50, Duration: 3 * time.Second}, 50, ones(50, 3), 150},
		{"1000 req/s over 1000 for 3 s", Options{Rate: 1000, Duration: 3 * time.Second}, 1000, ones(1000, 3), 3000},
		{"one endpoint, a request due at the end is not sent", Options{Rate: 1, Duration: time.Second}, 1, []int64{1}, 1},
		{"one endpoint, thirds", Options{Rate: 3, Duration: time.Second}, 1, []int64{3}, 3},
		// Which endpoint sends a partial cycle's requests turns with the
		// cycle (see pacer): the figures follow turn.
		{"uneven: 10 req/s over 3 for 1 s", Options{Rate: 10, Duration: time.Second}, 3, []int64{4, 3, 3}, 10},
		{"uneven: 30 req/s over 7 for 1.1 s", Options{Rate: 30, Duration: 1100 * time.Millisecond}, 7, []int64{5, 5, 5, 4, 4, 5, 5}, 33},
		{"requests only", Options{Rate: 10, Requests: 25}, 3, []int64{9, 8, 8}, 25},
		{"fewer requests than endpoints", Options{Rate: 10, Requests: 2}, 3, []int64{1, 1, 0}, 2},
		{"requests within the duration", Options{Rate: 10, Duration: time.Second, Requests: 5}, 3, []int64{1, 2, 2}, 5},
		{"duration within the requests", Options{Rate: 10, Duration: time.Second, Requests: 500}, 3, []int64{4, 3, 3}, 10},
		{"closed model", Options{Max: true, Requests: 10}, 3, nil, 0},
		{"no bound", Options{Rate: 10}, 3, nil, 0},
	}
	for _, tt := range tests {
		got := PlannedRequests(tt.opts, tt.endpoints)
		total := sumOf(got)
		if !slices.Equal(got, tt.want) || total != tt.wantTotal {
			t.Errorf("%s: PlannedRequests = %v (total %d); want %v (total %d)", tt.name, got, total, tt.want, tt.wantTotal)
		}
	}
}

// TestPacerLayout: the endpoints of a layout take one slot each in every
// cycle, the first cycle in their order, and every slot once in each block
// of share cycles; each endpoint's requests are due
// in order; and over many cycles the order turns, so that a gateway handing
// requests to its backends in turn does not give an address the same
// backend every time (2 addresses of one nginx upstream of 2 servers, one
// of them failing, would name one address).
func TestPacerLayout(t *testing.T) {
	const cycles = 4000
	for _, share := range []int{1, 2, 3, 4, 6} {
		ps := layout(seq(share), 0, 1e9, 0) // one slot a nanosecond
		byBackend := map[int][]int{}        // backends -> endpoint -> requests on backend 0
		for _, b := range []int{2, 3, 4} {
			byBackend[b] = make([]int, share)
		}
		taken := make([][]bool, share) // endpoint -> slots taken in this block
		for id := range taken {
			taken[id] = make([]bool, share)
		}
		for k := range int64(cycles) {
			seen := make([]bool, share)
			for id := range share {
				p := ps[id]
				due := p.at(k)
				if k == 0 && due != time.Duration(id) {
					t.Fatalf("share %d: endpoint %d's first request due at %v; want %dns", share, id, due, id)
				}
				if k > 0 && due <= p.at(k-1) {
					t.Fatalf("share %d: endpoint %d's request %d due at %v, not after %v", share, id, k, due, p.at(k-1))
				}
				slot := int(due) - int(k)*share
				if slot < 0 || slot >= share || seen[slot] {
					t.Fatalf("share %d cycle %d: endpoint %d in slot %d, outside the cycle or taken", share, k, id, slot)
				}
				seen[slot] = true
				if k%int64(share) == 0 {
					clear(taken[id])
				}
				if taken[id][slot] {
					t.Fatalf("share %d cycle %d: endpoint %d in slot %d twice in a block of %d cycles", share, k, id, slot, share)
				}
				taken[id][slot] = true
				for b, on0 := range byBackend {
					if int(due)%b == 0 { // the gateway's request number, round robin
						on0[id]++
					}
				}
			}
		}
		for b, on0 := range byBackend {
			for id, n := range on0 {
				// Each backend 1/b of the time: when b divides share, to
				// within a block of cycles (every endpoint takes every slot
				// once a block); else within 5 standard deviations.
				want := float64(cycles) / float64(b)
				tol := 5 * math.Sqrt(want*(1-1/float64(b)))
				if share%b == 0 {
					tol = float64(share)
				}
				if share > 1 && math.Abs(float64(n)-want) > tol {
					t.Errorf("share %d, %d backends in turn: endpoint %d had backend 0 %d times in %d; want about %.0f", share, b, id, n, cycles, want)
				}
			}
		}
	}
}

// sumOf is the sum of a plan's requests.
func sumOf(plan []int64) int64 {
	var n int64
	for _, k := range plan {
		n += k
	}
	return n
}

// seq is 0, 1, ..., n-1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// pathServer counts, server side, the requests for each URL path.
type pathServer struct {
	mu     sync.Mutex
	byPath map[string]int
	total  int
}

func (p *pathServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.byPath[r.URL.Path]++
	p.total++
	p.mu.Unlock()
	w.Write([]byte("ok\n"))
}

func (p *pathServer) count(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byPath[path]
}

// startPaths serves 127.0.0.1 and returns n endpoints on it, one URL path
// each ("/0", "/1", ...), IDs in order, with the server counting them.
func startPaths(t *testing.T, n int) (*pathServer, []*Endpoint) {
	t.Helper()
	srv := &pathServer{byPath: map[string]int{}}
	port := testserver.ServeSamePort(t, srv, nil, testserver.Lo4a)
	eps := make([]*Endpoint, n)
	for i := range eps {
		eps[i] = endpoint(t, i, hostURL("http", port)+strconv.Itoa(i), testserver.Lo4a)
	}
	return srv, eps
}

// TestRatesFromTheFirstRequest runs many endpoints with a large
// --concurrency: the requests sent must be the plan, endpoint by endpoint,
// from the first request on (no burst at the start, no total rate per
// endpoint while the streams start), and the server must have seen them.
func TestRatesFromTheFirstRequest(t *testing.T) {
	check.Long(t, "seconds of live traffic")
	tests := []struct {
		name      string
		endpoints int
		opts      Options
		wantEach  int64 // every endpoint's plan; 0: uneven, see PlannedRequests
	}{
		{"50 endpoints", 50, Options{Rate: 50, Duration: 2 * time.Second, Concurrency: 2000}, 2},
		// Every endpoint's one request is a new connection: under the race
		// detector an eighth of them, so that they fit in the run.
		{"many endpoints", 1000 / check.RaceScale, Options{Rate: 500.0 / check.RaceScale, Duration: 2 * time.Second, Concurrency: 2000}, 1},
		{"uneven", 7, Options{Rate: 30, Duration: 1100 * time.Millisecond, Concurrency: 100}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, eps := startPaths(t, tt.endpoints)
			plan := PlannedRequests(tt.opts, len(eps))
			start := time.Now()
			rs := attack(t, eps, tt.opts, 20*time.Second)
			took := time.Since(start)
			tl := tallyOf(rs)
			sent, dropped := tl.total()
			planned := sumOf(plan)
			t.Logf("%d sent, %d dropped, %d planned, in %v", sent, dropped, planned, took)
			if int64(sent) != planned || dropped != 0 {
				t.Errorf("%d sent, %d dropped; want the %d planned, none dropped", sent, dropped, planned)
			}
			for i, ep := range eps {
				if tt.wantEach > 0 && plan[i] != tt.wantEach {
					t.Errorf("endpoint %d: planned %d; want %d", i, plan[i], tt.wantEach)
				}
				if got := tl.sent[ep.ID]; int64(got) != plan[i] {
					t.Errorf("endpoint %d: %d requests; want %d as planned", i, got, plan[i])
				}
				if got := srv.count("/" + strconv.Itoa(i)); got != tl.sent[ep.ID] {
					t.Errorf("endpoint %d: server saw %d requests; pinprobe reported %d", i, got, tl.sent[ep.ID])
				}
			}
			if took > tt.opts.Duration+lateGrace+2*time.Second {
				t.Errorf("run took %v; want %v plus the last answers", took, tt.opts.Duration)
			}
		})
	}
}

// TestRequestsBudgetMatchesPlan: with --requests alone the total is exact
// and each endpoint gets its planned share, give or take one.
func TestRequestsBudgetMatchesPlan(t *testing.T) {
	srv, eps := startPaths(t, 3)
	o := Options{Rate: 100, Requests: 25, Concurrency: 10}
	plan := PlannedRequests(o, len(eps))
	tl := tallyOf(attack(t, eps, o, 10*time.Second))
	if sent, _ := tl.total(); sent != 25 || srv.total != 25 {
		t.Errorf("%d sent, server saw %d; want 25", sent, srv.total)
	}
	for i := range eps {
		if d := int64(tl.sent[i]) - plan[i]; d < -1 || d > 1 {
			t.Errorf("endpoint %d: %d requests; want %d ± 1", i, tl.sent[i], plan[i])
		}
	}
}

// TestResplit removes one of two endpoints mid-run and adds it back: the
// rate is split again each time, so the one left gets the whole rate while
// alone, and the run's total follows the total rate throughout.
func TestResplit(t *testing.T) {
	check.Long(t, "seconds of live traffic")
	_, eps := startPaths(t, 2)
	o := Options{Rate: 100, Duration: 2 * time.Second, Concurrency: 10}
	run, err := Start(t.Context(), eps, o)
	if err != nil {
		t.Fatal(err)
	}
	start, _ := run.Sending()
	removeAt := time.NewTimer(time.Until(start.Add(500 * time.Millisecond)))
	addAt := time.NewTimer(time.Until(start.Add(1300 * time.Millisecond)))
	defer removeAt.Stop()
	defer addAt.Stop()
	var rs []Result
	var removed, added time.Duration
	timeout := time.After(10 * time.Second)
	for results := run.Results(); results != nil; {
		select {
		case r, ok := <-results:
			if !ok {
				results = nil
				continue
			}
			rs = append(rs, r)
		case <-removeAt.C:
			removed = time.Since(start)
			run.Remove(1)
		case <-addAt.C:
			added = time.Since(start)
			if err := run.Add(eps[1]); err != nil {
				t.Fatal(err)
			}
		case <-timeout:
			t.Fatal("run still going after 10s")
		}
	}
	tl := tallyOf(rs)
	sent, dropped := tl.total()
	// 50 req/s each while both run, 100 for the one left alone.
	want0 := 50*removed.Seconds() + 100*(added-removed).Seconds() + 50*(2-added.Seconds())
	want1 := 50*removed.Seconds() + 50*(2-added.Seconds())
	t.Logf("removed at %v, added at %v: %v sent (%d dropped); want about %.0f and %.0f", removed, added, tl.sent, dropped, want0, want1)
	if d := float64(tl.sent[0]) - want0; d < -6 || d > 6 {
		t.Errorf("endpoint 0: %d requests; want %.0f ± 6", tl.sent[0], want0)
	}
	if d := float64(tl.sent[1]) - want1; d < -6 || d > 6 {
		t.Errorf("endpoint 1: %d requests; want %.0f ± 6", tl.sent[1], want1)
	}
	if sent < 190 || sent > 206 {
		t.Errorf("%d requests in all; want 200 at 100 req/s for 2 s, give or take a re-split", sent)
	}
}

// TestPacerLook drives a scheduler's looks on a virtual clock as schedule
// does: it sleeps until each request is due and wakes wake late, each send
// takes work, and before some requests the process is stopped (it neither
// sleeps nor sends). A stop longer than pauseGap skips the requests due in
// it, counted once with when and how long, and the schedule goes on from
// the first request due after it, never sending the ones it missed at
// once; late wake-ups, a shorter stop and a client too slow for its rate
// (behind a little more at every look) skip nothing.
func TestPacerLook(t *testing.T) {
	s, ms := time.Second, time.Millisecond
	type gap struct {
		from, length time.Duration
		missed       int64
	}
	tests := []struct {
		name       string
		rate       float64
		end        time.Duration
		wake, work time.Duration
		stops      map[int64]time.Duration // request number -> how long the process is stopped before its look
		wantSent   int64
		wantGaps   []gap
	}{
		{name: "2000 req/s stopped 3 s at 1 s: 6000 missed, none sent at once", rate: 2000, end: 5 * s,
			stops: map[int64]time.Duration{2000: 3 * s}, wantSent: 4000, wantGaps: []gap{{1 * s, 3 * s, 6000}}},
		{name: "two stops", rate: 100, end: 10 * s, stops: map[int64]time.Duration{100: 2 * s, 700: 1500 * ms},
			wantSent: 650, wantGaps: []gap{{1 * s, 2 * s, 200}, {7 * s, 1500 * ms, 150}}},
		{name: "stopped across the end: what was due before it", rate: 100, end: 2 * s,
			stops: map[int64]time.Duration{150: 3 * s}, wantSent: 150, wantGaps: []gap{{1500 * ms, 3 * s, 50}}},
		{name: "stopped 900 ms: only late, everything sent", rate: 100, end: 5 * s,
			stops: map[int64]time.Duration{100: 900 * ms}, wantSent: 500},
		{name: "every wake-up 30 ms late", rate: 100, end: 5 * s, wake: 30 * ms, wantSent: 500},
		{name: "a client too slow for its rate falls behind, skips nothing", rate: 1000, end: 2 * s, work: 2 * ms, wantSent: 2000},
	}
	for _, tt := range tests {
		p := startPacer(0, 1, tt.rate, 0)
		var clock, lag time.Duration
		var sent int64
		var gaps []gap
		for {
			due := p.next()
			if due >= tt.end {
				break
			}
			if clock < due { // it sleeps until the request is due
				clock, lag = due+tt.wake, 0
			}
			clock += tt.stops[p.k]
			var missed int64
			if lag, missed = p.look(clock, lag, tt.end); missed > 0 {
				gaps = append(gaps, gap{due, clock - due, missed})
				continue
			}
			p.k++
			sent++
			clock += tt.work
		}
		if sent != tt.wantSent || !slices.Equal(gaps, tt.wantGaps) {
			t.Errorf("%s: %d sent, gaps %v; want %d, %v", tt.name, sent, gaps, tt.wantSent, tt.wantGaps)
		}
	}
	if stalled(pauseGap, 0) || !stalled(pauseGap+time.Millisecond, 0) || stalled(pauseGap+time.Second, time.Second) {
		t.Errorf("stalled: the line is a jump of more than %v since the last look", pauseGap)
	}
}

// TestPaceGrain: with a grain every due time is a whole number of grains
// from the run's start, each grain holds exactly the requests whose own
// times fall in it (so the rate over a grain is exact), and the plan counts
// what the grained schedule sends.
func TestPaceGrain(t *testing.T) {
	for _, rate := range []float64{2000, 333.3, 50000} {
		for _, share := range []int{1, 3} {
			for _, grain := range []time.Duration{10 * time.Millisecond, 7 * time.Millisecond} {
				exact := layout(seq(share), 0, rate, 0)
				grained := layout(seq(share), 0, rate, grain)
				perGrain := map[time.Duration]int{}
				wantPer := map[time.Duration]int{}
				for id := range share {
					e, g := exact[id], grained[id]
					last := time.Duration(-1)
					for k := int64(0); k < int64(rate/float64(share)); k++ {
						at, want := g.at(k), e.at(k)
						if at%grain != 0 || at > want || want-at >= grain || at < last {
							t.Fatalf("rate %v share %d grain %v: request %d due at %v; want %v brought down to a whole grain, in order", rate, share, grain, k, at, want)
						}
						last = at
						perGrain[at]++
						wantPer[want/grain*grain]++
					}
				}
				if !maps.Equal(perGrain, wantPer) {
					t.Errorf("rate %v share %d grain %v: requests per grain differ from the exact schedule's", rate, share, grain)
				}
				end := 100 * grain
				o := Options{Rate: rate, Duration: end, PaceGrain: grain}
				for i, n := range PlannedRequests(o, share) {
					p := grained[i]
					if want := p.countBefore(end); n != want || (n > 0 && p.at(n-1) >= end) || p.at(n) < end {
						t.Errorf("rate %v share %d grain %v: endpoint %d planned %d; want %d, the requests due before %v", rate, share, grain, i, n, want, end)
					}
				}
			}
		}
	}
}

// TestPaceGrainSendsTogether runs 1,000 req/s for a second against a
// loopback server with a 20 ms grain: every planned request is sent or
// counted as dropped, three quarters at least sent; the same run without a
// grain spreads them (about half within 5 ms of a grain's start). That each
// grain's requests leave together at its start is TestClockPaceGrain's, on
// a clock without stalls; over real sockets it is only logged.
func TestPaceGrainSendsTogether(t *testing.T) {
	check.Long(t, "seconds of live traffic")
	const grain = 20 * time.Millisecond
	_, eps := startLoad(t, nil, testserver.Lo4a)
	near := func(o Options) (share float64, full, grains int, sent, dropped int) {
		rs := attack(t, eps, o, 10*time.Second)
		var starts []time.Time
		for _, r := range rs {
			if r.Request() {
				starts = append(starts, r.Start)
			}
		}
		sent, dropped = tallyOf(rs).total()
		if len(starts) == 0 {
			t.Fatal("nothing sent")
		}
		t0 := slices.MinFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
		count := map[int64]int{}
		close := 0
		for _, s := range starts {
			d := s.Sub(t0)
			i := (d + grain/2) / grain // the grain it belongs to, whatever the first request's own delay
			if off := d - i*grain; off > -5*time.Millisecond && off < 5*time.Millisecond {
				close++
			}
			count[int64(i)]++
		}
		for _, n := range count {
			if n == int(o.Rate*grain.Seconds()) {
				full++
			}
		}
		return float64(close) / float64(len(starts)), full, len(count), sent, dropped
	}
	o := Options{Rate: 1000, Duration: time.Second, Concurrency: 50, PaceGrain: grain}
	share, full, grains, sent, dropped := near(o)
	t.Logf("grain %v: %d sent, %d dropped, %.0f%% within 5 ms of their grain's start, %d of %d grains with 20", grain, sent, dropped, share*100, full, grains)
	if want := PlannedRequests(o, 1)[0]; int64(sent+dropped) != want || sent < int(want)*3/4 {
		t.Errorf("%d sent, %d dropped; want the %d planned, three quarters of them sent", sent, dropped, want)
	}
	o.PaceGrain = 0
	share, _, _, _, _ = near(o)
	t.Logf("no grain: %.0f%% within 5 ms of a 20 ms grain's start", share*100)
	if share > 0.75 {
		t.Errorf("without a grain %.0f%% were within 5 ms of a grain's start; want them spread (about half)", share*100)
	}
}
