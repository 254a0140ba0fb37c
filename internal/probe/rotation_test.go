package probe

import (
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// connSpan is one connection as the server saw it: the client's port and
// the arrivals of its first and last requests, between which it was open.
type connSpan struct {
	port        uint16
	first, last time.Time
	requests    int
}

// spansOf groups the requests a server saw by connection (client port), in
// the order the connections carried their first request.
func spansOf(seen []testserver.Seen) []connSpan {
	var spans []connSpan
	at := map[uint16]int{}
	for _, s := range seen {
		p := s.Remote.Port()
		i, ok := at[p]
		if !ok {
			i = len(spans)
			at[p] = i
			spans = append(spans, connSpan{port: p, first: s.At})
		}
		spans[i].last = s.At
		spans[i].requests++
	}
	return spans
}

// mostOpen is the most connections seen open at one moment: spans that
// contain the start of one of them. It is a lower bound of the connections
// really open then, since a connection opens before its first request and
// closes after its last.
func mostOpen(spans []connSpan) int {
	most := 0
	for _, s := range spans {
		n := 0
		for _, o := range spans {
			if !o.first.After(s.first) && !o.last.Before(s.first) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// outOfTurn counts the requests (in arrival order) that came on the
// connection of an earlier request of their round, rounds being the
// blocks of k consecutive requests: none when each round goes once round k
// connections, in whatever order, and most of them when one connection at
// a time carries them.
func outOfTurn(seen []testserver.Seen, k int) int {
	n := 0
	for i := range seen {
		for j := i - i%k; j < i; j++ {
			if seen[j].Remote == seen[i].Remote {
				n++
				break
			}
		}
	}
	return n
}

// byArrival returns the requests a fleet saw, all addresses together, in
// the order they arrived.
func byArrival(f *testserver.Fleet) []testserver.Seen {
	seen := f.Seen()
	slices.SortStableFunc(seen, func(a, b testserver.Seen) int { return a.At.Compare(b.At) })
	return seen
}

// mostlyInTurn reports whether at most a quarter of the n requests of a
// run went out of turn (late of them; see outOfTurn). A worker still busy
// when its turn comes (a stall of a loaded machine, a dial under -race) is
// skipped for that turn, which puts the next few requests out of turn
// while the others close the gap; one connection at a time puts three in
// four out of turn.
func mostlyInTurn(late, n int) bool { return late <= n/4 }

// TestRequestsRotateOverConnections: at a modest rate, one endpoint's
// requests (50 at 25 req/s, 4 per connection) go round Rotation connections
// in rounds, as the server sees them by client port: each request of a
// round comes on another connection than the ones before it in the round,
// and Rotation connections are open at the same moment. One worker at a
// time would send every request on the connection of the one before, until
// that connection's 4th.
func TestRequestsRotateOverConnections(t *testing.T) {
	t.Parallel()
	eachClient(t, func(t *testing.T, client ClientKind) {
		f := testserver.StartFleet(t, testserver.FleetOptions{Host: testHost}, testserver.Lo4a)
		eps := endpoints(t, f.URL(), testserver.Lo4a)
		o := Options{Rate: 25, Duration: 2 * time.Second, Concurrency: 100, Client: client,
			ConnOptions: ConnOptions{ConnRequests: 4}}
		rs := attack(t, eps, o, 10*time.Second)
		sent, dropped := tallyOf(rs).total()
		seen := byArrival(f)
		spans := spansOf(seen)
		again, late, open := outOfTurn(seen, 2), outOfTurn(seen, Rotation), mostOpen(spans)
		t.Logf("%d sent, %d dropped; the server saw %d requests on %d connections, %d on the connection of the one before, %d out of turn, %d open at once",
			sent, dropped, len(seen), len(spans), again, late, open)
		f.CheckPlacement(t)
		if sent != 50 || dropped != 0 || len(seen) != sent {
			t.Errorf("%d sent, %d dropped, %d seen by the server; want the 50 planned, all seen", sent, dropped, len(seen))
		}
		// Only where a round ends and the next begins with the same
		// connection (one time in Rotation) does a request follow another
		// on its connection.
		if again > len(seen)/4 {
			t.Errorf("%d of %d requests came on the connection of the one before; want each on another", again, len(seen))
		}
		if !mostlyInTurn(late, len(seen)) {
			t.Errorf("%d of %d requests came on the connection of one of the %d before; want them in turn over %d connections",
				late, len(seen), Rotation-1, Rotation)
		}
		if open < Rotation {
			t.Errorf("at most %d connections open at once; want %d", open, Rotation)
		}
		// At most 4 requests per connection, so at least 50/4 connections.
		for _, s := range spans {
			if s.requests > 4 {
				t.Errorf("connection from port %d carried %d requests; want at most --conn-requests 4", s.port, s.requests)
			}
		}
		if len(spans) < 50/4 {
			t.Errorf("%d connections for 50 requests of at most 4 each; want 13 or more", len(spans))
		}
		conns := connCount(rs)
		if conns != len(spans) {
			t.Errorf("pinprobe reported %d connections, the server saw %d", conns, len(spans))
		}
	})
}

// TestRotationWithinConcurrency: with --concurrency 1 or 2 an endpoint
// rotates over that many connections, never more: with 1, one connection at
// a time; with 2, two open at once, each round of two on both. (A request
// due while both are busy is dropped.)
func TestRotationWithinConcurrency(t *testing.T) {
	t.Parallel()
	check.Long(t, "seconds of live traffic")
	for _, c := range []int{1, 2} {
		t.Run("c="+strconv.Itoa(c), func(t *testing.T) {
			eachClient(t, func(t *testing.T, client ClientKind) {
				f := testserver.StartFleet(t, testserver.FleetOptions{Host: testHost}, testserver.Lo4a)
				eps := endpoints(t, f.URL(), testserver.Lo4a)
				o := Options{Rate: 25, Duration: 2 * time.Second, Concurrency: c, Client: client,
					ConnOptions: ConnOptions{ConnRequests: 4}}
				rs := attack(t, eps, o, 10*time.Second)
				sent, dropped := tallyOf(rs).total()
				seen := byArrival(f)
				spans := spansOf(seen)
				open := mostOpen(spans)
				t.Logf("-c %d: %d sent, %d dropped on %d connections, %d open at once, %d out of turn over %d",
					c, sent, dropped, len(spans), open, outOfTurn(seen, c), c)
				if sent+dropped != 50 || len(seen) != sent {
					t.Errorf("-c %d: %d sent + %d dropped, %d seen by the server; want the 50 planned, every one sent seen", c, sent, dropped, len(seen))
				}
				if open != c {
					t.Errorf("-c %d: %d connections open at once; want %d", c, open, c)
				}
				if late := outOfTurn(seen, c); c > 1 && !mostlyInTurn(late, len(seen)) {
					t.Errorf("-c %d: %d of %d requests came on the connection of the one before; want them in turn over %d",
						c, late, len(seen), c)
				}
			})
		})
	}
}

// TestRotationLeavesExtraWorkersIdle: a backend that holds its first 10
// answers 500 ms at 40 req/s makes the endpoint add workers past its warm
// ones for the stuck requests, over real sockets; once those answers are
// in, most requests go round Rotation connections again. Whether an extra
// worker carries none of them depends on the machine's stalls (a worker
// busy when its turn comes lets one below in), so that is held exactly on
// a clock without stalls, by
// TestClockRotationLeavesExtraWorkersIdle.
func TestRotationLeavesExtraWorkersIdle(t *testing.T) {
	t.Parallel()
	const slow, hold = 10, 500 * time.Millisecond
	f := testserver.StartFleet(t, testserver.FleetOptions{Host: testHost, Each: func(n int64, r *http.Request) testserver.Answer {
		if n <= slow {
			return testserver.Answer{Delay: hold}
		}
		return testserver.Answer{}
	}}, testserver.Lo4a)
	eps := endpoints(t, f.URL(), testserver.Lo4a)
	o := Options{Rate: 40, Duration: 1500 * time.Millisecond, Concurrency: 1000, cpu: fixedCPU(true)}
	rs := attack(t, eps, o, 10*time.Second)
	sent, dropped := tallyOf(rs).total()
	seen := byArrival(f)
	// Past the last slow answer the client read (and a margin for its
	// worker to go idle), every worker the slow answers held is idle again.
	var settled time.Time
	for _, r := range sentOnly(rs) {
		if end := r.Start.Add(r.Latency + 20*time.Millisecond); r.Latency >= hold && end.After(settled) {
			settled = end
		}
	}
	var after []testserver.Seen
	for _, s := range seen {
		if s.At.After(settled) {
			after = append(after, s)
		}
	}
	all, used := spansOf(seen), spansOf(after)
	slices.SortFunc(used, func(a, b connSpan) int { return b.requests - a.requests })
	busiest := 0
	for _, s := range used[:min(Rotation, len(used))] {
		busiest += s.requests
	}
	late := outOfTurn(after, Rotation)
	t.Logf("%d sent, %d dropped on %d connections; %d requests after the slow answers, on %d connections (%d on the %d busiest), %d out of turn",
		sent, dropped, len(all), len(after), len(used), busiest, Rotation, late)
	if sent != 60 || dropped != 0 {
		t.Errorf("%d sent, %d dropped; want the 60 planned, none dropped", sent, dropped)
	}
	if len(all) <= warmWorkers(o.Rate, 0, o.Concurrency) {
		t.Errorf("%d connections; want workers added past the %d warm ones for the stuck requests", len(all), warmWorkers(o.Rate, 0, o.Concurrency))
	}
	if len(after) < 10 {
		t.Fatalf("%d requests after the slow answers; want about 25", len(after))
	}
	// Out of turn is logged, not held: the order in which the server reads
	// requests sent a few milliseconds apart is a loaded machine's (9 of
	// 30 out of turn, beside two busy cores).
	if len(used) < Rotation || busiest*2 < len(after) {
		t.Errorf("%d connections carried the %d requests after the slow answers, %d of them the %d busiest; want most on %d connections",
			len(used), len(after), busiest, Rotation, Rotation)
	}
}

// TestRotationAfterIdleClose: each of the Rotation connections waits
// Rotation periods between its requests, so a server that closes idle
// connections sooner than that closes every one of them between uses. The
// next request on it must notice and dial again, not fail on the closed
// connection. The server closes each connection with its answer
// (answerAndClose), not on a timer that a loaded machine fires late, so a
// client that read the answer has the close behind it.
func TestRotationAfterIdleClose(t *testing.T) {
	t.Parallel()
	eachClient(t, func(t *testing.T, client ClientKind) {
		l := &connLog{}
		port, lns := testserver.ListenSamePort(t, testserver.Lo4a)
		testserver.Serve(t, lns[0], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			l.record(r)
			c, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			answerAndClose(c, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
		}), nil)
		eps := endpoints(t, hostURL("http", port), testserver.Lo4a)
		o := Options{Rate: 10, Duration: 2 * time.Second, Concurrency: 10, Client: client}
		rs := attack(t, eps, o, 10*time.Second)
		sent, dropped := tallyOf(rs).total()
		// A connection reused at once, within h1IdleCheck of its answer,
		// is not looked at (stale): there the server's close races the
		// request by design, as in net/http. A loaded machine that fell
		// behind deals a worker two requests in a row; such a request may
		// fail, and the server never sees it.
		ended := map[uint64]time.Time{} // each connection's last answer
		byStart := sentOnly(rs)
		slices.SortFunc(byStart, func(a, b Result) int { return a.Start.Compare(b.Start) })
		reused, raced := 0, 0
		for _, r := range byStart {
			atOnce := r.Reused && r.Start.Sub(ended[r.ConnID]) < 2*h1IdleCheck
			ended[r.ConnID] = r.Start.Add(r.Latency)
			if r.Reused {
				reused++
			}
			if r.Err == nil && r.Status == http.StatusOK {
				continue
			}
			if atOnce {
				raced++
				continue
			}
			t.Errorf("request %d on connection %d: status %d, %v; want 200 on a fresh connection", r.ConnReq, r.ConnID, r.Status, r.Err)
		}
		t.Logf("%d sent, %d dropped, %d on reused connections (%d failed, reused at once), %d connections seen by the server",
			sent, dropped, reused, raced, len(l.ports()))
		if sent != 20 || dropped != 0 || raced*4 > sent {
			t.Errorf("%d sent, %d dropped, %d failed reused at once; want the 20 planned, at most a quarter of them so", sent, dropped, raced)
		}
		if len(l.seen()) != sent-raced {
			t.Errorf("the server saw %d requests; pinprobe sent %d, %d of them failed at once on a reused connection", len(l.seen()), sent, raced)
		}
	})
}

// TestPoolDealRotates: the Rotation workers that hold requests are dealt
// them in rounds, each worker one request of each round, in an order
// drawn anew; dealing allocates nothing.
func TestPoolDealRotates(t *testing.T) {
	pl := &pool{rot: Rotation, p: startPacer(0, 1, 1000, 0), watch: newWaiter(), watchAt: -1,
		rng: mrand.New(mrand.NewPCG(1, 2))}
	ws := make([]*worker, Rotation)
	for i := range ws {
		ws[i] = &worker{waiter: newWaiter(), pl: pl, k: -1, send: -1}
	}
	// round deals one round to the workers in turn and returns the request
	// each got, then makes them free again (as if each had sent its own).
	round := func() []int64 {
		for _, w := range ws {
			pl.deal(w, 0)
		}
		got := make([]int64, len(ws))
		for i, w := range ws {
			got[i] = w.k
			w.k = -1
			w.timer.Stop()
		}
		pl.held = 0
		return got
	}
	orders := map[string]bool{}
	for r := range 40 {
		got := round()
		first := int64(r * Rotation)
		want := []int64{first, first + 1, first + 2, first + 3}
		if sorted := slices.Sorted(slices.Values(got)); !slices.Equal(sorted, want) {
			t.Fatalf("round %d dealt %v; want each of %v once", r, got, want)
		}
		for i := range got {
			got[i] -= first
		}
		orders[fmt.Sprint(got)] = true
	}
	if len(orders) < 10 {
		t.Errorf("40 rounds went in %d orders; want the order drawn anew each round", len(orders))
	}
	w := ws[0]
	if allocs := testing.AllocsPerRun(100, func() {
		pl.deal(w, 0)
		w.k = -1
		pl.held = 0
		pl.newRound()
	}); allocs != 0 {
		t.Errorf("deal: %v allocations; want none", allocs)
	}
}

// TestRotationDoesNotLineUpWithRoundRobin: a server that hands requests
// round 4 backends in turn (every fourth request to the same one, as
// nginx's upstream round robin does) must not see its backends line up
// with pinprobe's connections, or a failing backend would read as a
// failing instance behind some connections. Each connection's requests
// land on more than one backend.
func TestRotationDoesNotLineUpWithRoundRobin(t *testing.T) {
	t.Parallel()
	check.Long(t, "seconds of live traffic")
	f := testserver.StartFleet(t, testserver.FleetOptions{Host: testHost}, testserver.Lo4a)
	eps := endpoints(t, f.URL(), testserver.Lo4a)
	o := Options{Rate: 100, Duration: 2 * time.Second, Concurrency: 100, ConnOptions: ConnOptions{ConnRequests: 8}}
	attack(t, eps, o, 10*time.Second)
	backends := map[uint16]map[int64]bool{} // client port -> backend n%4 of its requests
	for _, s := range f.Seen() {
		p := s.Remote.Port()
		if backends[p] == nil {
			backends[p] = map[int64]bool{}
		}
		backends[p][s.N%Rotation] = true
	}
	one := 0
	for _, b := range backends {
		if len(b) == 1 {
			one++
		}
	}
	t.Logf("%d connections, %d of them on one backend only", len(backends), one)
	if one*2 > len(backends) {
		t.Errorf("%d of %d connections had all their requests on one backend of the server's round robin; want them spread", one, len(backends))
	}
}
