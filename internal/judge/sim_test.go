package judge

import (
	"math/rand/v2"
	"sort"
	"time"

	"github.com/pinprobe/pinprobe/internal/collect"
	"github.com/pinprobe/pinprobe/internal/report"
)

// simConfig describes one simulated endpoint: requests sent open-loop at a
// fixed rate over a pool of keep-alive connections, as the engine does,
// with the failure mechanism under test. Nothing here touches a network:
// the statistics are judged on data whose truth is known.
type simConfig struct {
	requests int
	rate     float64 // requests per second
	perConn  int     // most requests per connection
	// fail returns the failure probability of a request started at
	// offset t on a connection to instance inst (0..instances-1).
	fail       func(t time.Duration, inst int) float64
	instances  int
	roundRobin bool    // connections go to instances in turn, else at random
	closeProb  float64 // chance a failure closes its connection
	latency    time.Duration
	failLat    time.Duration // latency of a failed request
}

// simResult is one request as the collector sees it.
type simResult struct {
	conn    uint64
	inst    int
	start   time.Time
	done    time.Time
	failed  bool
	reused  bool
	latency time.Duration
}

var simEpoch = time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)

// simRotation is how many connections the engine's requests rotate over
// (probe.Rotation): the simulation hands requests round as it does.
const simRotation = 4

// simulate runs cfg and returns the results in the order they complete,
// which is the order a collector receives them. As in the engine, each
// worker owns one connection at a time; a request goes to one of the
// simRotation most recently idle workers that has not had its turn this
// round, drawn at random (a new worker while there are fewer), and a
// connection that reached perConn requests, or that a failure closed, is
// replaced by the worker's next request.
func simulate(cfg simConfig, rng *rand.Rand) []simResult {
	type conn struct {
		id   uint64
		inst int
		used int
	}
	type worker struct {
		c      *conn
		freeAt time.Duration
		round  int
	}
	var idle []*worker // most recently idle last
	var busy []*worker
	next := uint64(1)
	out := make([]simResult, 0, cfg.requests)
	instances := max(cfg.instances, 1)
	workers, round := 0, 0
	for i := range cfg.requests {
		t := time.Duration(float64(i) / cfg.rate * float64(time.Second))
		// Workers whose request finished by t are idle again.
		keep := busy[:0]
		var freed []*worker
		for _, w := range busy {
			if w.freeAt <= t {
				freed = append(freed, w)
			} else {
				keep = append(keep, w)
			}
		}
		busy = keep
		sort.Slice(freed, func(a, b int) bool { return freed[a].freeAt < freed[b].freeAt })
		idle = append(idle, freed...)
		var w *worker
		switch {
		case workers < simRotation:
			w = &worker{round: round}
			workers++
		case len(idle) > 0:
			lo := max(len(idle)-simRotation, 0)
			var waiting []int
			for k := lo; k < len(idle); k++ {
				if idle[k].round != round {
					waiting = append(waiting, k)
				}
			}
			if len(waiting) == 0 {
				round++
				for k := lo; k < len(idle); k++ {
					waiting = append(waiting, k)
				}
			}
			k := waiting[rng.IntN(len(waiting))]
			w = idle[k]
			w.round = round
			idle = append(idle[:k], idle[k+1:]...)
		default:
			w = &worker{}
			workers++
		}
		reused := w.c != nil
		if !reused {
			inst := rng.IntN(instances)
			if cfg.roundRobin {
				inst = int(next-1) % instances
			}
			w.c = &conn{id: next, inst: inst}
			next++
		}
		c := w.c
		failed := rng.Float64() < cfg.fail(t, c.inst)
		lat := cfg.latency
		if failed && cfg.failLat > 0 {
			lat = cfg.failLat
		}
		// A little jitter, so results complete out of order now and then.
		lat += time.Duration(rng.Int64N(int64(lat)/4 + 1))
		c.used++
		w.freeAt = t + lat
		out = append(out, simResult{conn: c.id, inst: c.inst, start: simEpoch.Add(t), done: simEpoch.Add(t + lat), failed: failed, reused: reused, latency: lat})
		if c.used >= cfg.perConn || (failed && rng.Float64() < cfg.closeProb) {
			w.c = nil
		}
		busy = append(busy, w)
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].done.Before(out[b].done) })
	return out
}

// simConns feeds results to a connTable, as the aggregator will.
func simConns(rs []simResult) report.Conns {
	var tab collect.ConnTable
	for _, r := range rs {
		tab.Add(r.conn, uint16(40000+r.conn%20000), r.start, r.failed, r.reused)
	}
	return tab.Summary()
}

// steady is a failure probability that never changes.
func steady(p float64) func(time.Duration, int) float64 {
	return func(time.Duration, int) float64 { return p }
}

// badInstance fails instance 0 with probability bad, the others with base.
func badInstance(base, bad float64) func(time.Duration, int) float64 {
	return func(_ time.Duration, inst int) float64 {
		if inst == 0 {
			return bad
		}
		return base
	}
}
