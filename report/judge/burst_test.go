package judge

import (
	"math/rand/v2"
	"pinprobe/internal/check"
	"pinprobe/report"
	"testing"
	"time"
)

// Connections alike over time are not bursts: independent failures, and
// failures that stick to the connections of one bad instance, however the
// connections end.
func TestBurstTestFalsePositiveRate(t *testing.T) {
	t.Parallel() // CPU-bound: let it share the cores with the others
	rng := rand.New(rand.NewPCG(41, 42))
	cfgs := healthyConfigs()[:7] // not the drifting one: that is a change over time
	for _, close := range []float64{0, 0.5} {
		c := simConfig{requests: 1000, rate: 50, perConn: 4, latency: 20 * time.Millisecond,
			instances: 4, fail: badInstance(0.01, 0.5), closeProb: close}
		cfgs = append(cfgs, c)
	}
	const runs = 1800 / check.RaceScale
	var at05, at01, tested int
	for i := range runs {
		cs := simConns(simulate(cfgs[i%len(cfgs)], rng))
		r := BurstTest(cs.Records)
		if r.Method != ClusterNone {
			tested++
		}
		if r.P < 0.05 {
			at05++
		}
		if r.P < 0.01 {
			at01++
		}
	}
	t.Logf("BurstTest on endpoints alike over time: %d/%d below 0.05 (%.4f), %d/%d below 0.01 (%.4f)",
		at05, runs, float64(at05)/runs, at01, runs, float64(at01)/runs)
	if lim := binomUpper(runs, 0.05, 0.001); at05 > lim {
		t.Errorf("%d of %d below 0.05; want at most %d", at05, runs, lim)
	}
	if lim := binomUpper(runs, 0.01, 0.001); at01 > lim {
		t.Errorf("%d of %d below 0.01; want at most %d", at01, runs, lim)
	}
	if tested < runs*9/10 {
		t.Errorf("tested %d of %d runs; want nearly all", tested, runs)
	}
}

// A burst makes failures repeat on the connections open during it, so
// RepeatTest alone would blame connections; BurstTest finds the burst and
// the rule "RepeatTest below α and BurstTest not below 0.05" blames almost
// never. The worst stretch covers the burst.
func TestBurstTestFindsBursts(t *testing.T) {
	t.Parallel() // CPU-bound: let it share the cores with the others
	rng := rand.New(rand.NewPCG(43, 44))
	for _, tc := range []struct {
		name       string
		rate       float64
		from, span time.Duration
		in         float64
	}{
		{"3s outage at 50/s", 50, 5 * time.Second, 3 * time.Second, 0.9},
		{"300ms outage at 50/s", 50, 5 * time.Second, 300 * time.Millisecond, 0.9},
		{"300ms outage at 500/s", 500, time.Second, 300 * time.Millisecond, 0.9},
		{"100ms half-outage at 500/s", 500, time.Second, 100 * time.Millisecond, 0.5},
	} {
		cfg := simConfig{requests: 1000, rate: tc.rate, perConn: 4, latency: 20 * time.Millisecond,
			instances: 4, fail: burst(0.01, tc.in, tc.from, tc.span)}
		const runs = 160 / check.RaceScale
		var found, repeats, blamed, located int
		for range runs {
			cs := simConns(simulate(cfg, rng))
			b := BurstTest(cs.Records)
			rep := RepeatTest(cs.Repeat)
			if b.Significant(0.05) {
				found++
			}
			if rep.Significant(0.001) {
				repeats++
				if !b.Significant(0.05) {
					blamed++
				}
			}
			if w := b.Worst; w != nil && !w.From.After(simEpoch.Add(tc.from+tc.span)) && !w.To.Before(simEpoch.Add(tc.from)) {
				located++
			}
		}
		t.Logf("%s: BurstTest below 0.05 in %d/%d; RepeatTest below 0.001 in %d; connections blamed in %d; worst stretch overlaps the burst in %d",
			tc.name, found, runs, repeats, blamed, located)
		if found < runs*95/100 {
			t.Errorf("%s: burst found in %d of %d; want at least 95%%", tc.name, found, runs)
		}
		if blamed > runs*3/100 {
			t.Errorf("%s: connections blamed in %d of %d; want at most 3%%", tc.name, blamed, runs)
		}
		if located < runs*95/100 {
			t.Errorf("%s: worst stretch on the burst in %d of %d; want at least 95%%", tc.name, located, runs)
		}
	}
}

// Too few connections, or nothing to compare, gives p = 1.
func TestBurstTestDegenerate(t *testing.T) {
	t0 := time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)
	mk := func(n int, failed func(i int) int64) []report.ConnRecord {
		rs := make([]report.ConnRecord, n)
		for i := range rs {
			at := report.Time{Time: t0.Add(time.Duration(i) * time.Second)}
			rs[i] = report.ConnRecord{ID: uint64(i + 1), First: at, Last: at, Requests: 4, Failed: failed(i)}
		}
		return rs
	}
	for _, tc := range []struct {
		name string
		recs []report.ConnRecord
	}{
		{"none", nil},
		{"15 connections", mk(15, func(i int) int64 { return int64(i % 2) })},
		{"no failure", mk(64, func(int) int64 { return 0 })},
		{"all failed", mk(64, func(int) int64 { return 4 })},
	} {
		if r := BurstTest(tc.recs); r.P != 1 || r.Significant(0.05) {
			t.Errorf("%s: p = %v; want 1", tc.name, r.P)
		}
	}
	// Every failure in the last stretch: found, and that stretch is worst.
	r := BurstTest(mk(64, func(i int) int64 { return int64(i / 56 * 3) }))
	if w := r.Worst; r.Groups != 8 || r.P > 0.001 || w == nil || w.Failed != 24 || w.Connections != 8 || !w.From.Equal(t0.Add(56*time.Second)) {
		t.Errorf("got %d groups, p %v, worst %+v; want 8, p<0.001, 24 failures on the 8 connections from +56s", r.Groups, r.P, w)
	}
	if r := BurstTest(mk(15, func(int) int64 { return 1 })); r.Worst != nil {
		t.Errorf("15 connections: worst %+v; want none", r.Worst)
	}
}

func BenchmarkBurstTest(b *testing.B) {
	rng := rand.New(rand.NewPCG(45, 46))
	for _, bc := range []struct {
		name string
		fail func(time.Duration, int) float64
	}{
		{"256conns/instance", badInstance(0.01, 0.5)},
		{"256conns/burst", burst(0.01, 0.9, 5*time.Second, time.Second)},
	} {
		cfg := simConfig{requests: 1024, rate: 50, perConn: 4, latency: 5 * time.Millisecond, instances: 4, fail: bc.fail}
		recs := simConns(simulate(cfg, rng)).Records
		b.Run(bc.name, func(b *testing.B) {
			var r BurstResult
			for b.Loop() {
				r = BurstTest(recs)
			}
			b.ReportMetric(float64(r.Permutations), "perms")
		})
	}
}
