package judge

import (
	"math/rand/v2"
	"pinprobe/report"
	"pinprobe/report/collect"
	"sort"
	"time"
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

// simulate runs cfg and returns the results in the order they complete,
// which is the order a collector receives them.
func simulate(cfg simConfig, rng *rand.Rand) []simResult {
	type conn struct {
		id     uint64
		inst   int
		freeAt time.Duration
		used   int
	}
	var idle []*conn // most recently freed last, as the transport reuses them
	var busy []*conn
	next := uint64(1)
	out := make([]simResult, 0, cfg.requests)
	instances := max(cfg.instances, 1)
	for i := range cfg.requests {
		t := time.Duration(float64(i) / cfg.rate * float64(time.Second))
		// Connections whose request finished by t are idle again.
		keep := busy[:0]
		var freed []*conn
		for _, c := range busy {
			if c.freeAt <= t {
				freed = append(freed, c)
			} else {
				keep = append(keep, c)
			}
		}
		busy = keep
		sort.Slice(freed, func(a, b int) bool { return freed[a].freeAt < freed[b].freeAt })
		idle = append(idle, freed...)
		var c *conn
		reused := false
		if len(idle) > 0 {
			c, idle = idle[len(idle)-1], idle[:len(idle)-1]
			reused = true
		} else {
			inst := rng.IntN(instances)
			if cfg.roundRobin {
				inst = int(next-1) % instances
			}
			c = &conn{id: next, inst: inst}
			next++
		}
		failed := rng.Float64() < cfg.fail(t, c.inst)
		lat := cfg.latency
		if failed && cfg.failLat > 0 {
			lat = cfg.failLat
		}
		// A little jitter, so results complete out of order now and then.
		lat += time.Duration(rng.Int64N(int64(lat)/4 + 1))
		c.used++
		c.freeAt = t + lat
		out = append(out, simResult{conn: c.id, inst: c.inst, start: simEpoch.Add(t), done: simEpoch.Add(t + lat), failed: failed, reused: reused, latency: lat})
		closed := c.used >= cfg.perConn || (failed && rng.Float64() < cfg.closeProb)
		if !closed {
			busy = append(busy, c)
		}
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

// burst fails with probability in during [from, from+d), base outside.
func burst(base, in float64, from, d time.Duration) func(time.Duration, int) float64 {
	return func(t time.Duration, _ int) float64 {
		if t >= from && t < from+d {
			return in
		}
		return base
	}
}
