package judge

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
)

// bruteRepeatP enumerates, stratum by stratum, every placement of the
// stratum's failures among its requests (the first AfterFailure of them
// being the after-failure class), and sums the probability of a total of
// after-failure failures at least the observed one.
func bruteRepeatP(strata []report.RepeatCounts) float64 {
	dist := map[int]float64{0: 1}
	obs := 0
	for _, s := range strata {
		n := int(s.AfterFailure + s.AfterOK)
		k := int(s.AfterFailureFailed + s.AfterOKFailed)
		obs += int(s.AfterFailureFailed)
		ways := map[int]float64{}
		total := 0.0
		for mask := 0; mask < 1<<n; mask++ {
			if bits.OnesCount(uint(mask)) != k {
				continue
			}
			total++
			ways[bits.OnesCount(uint(mask&(1<<s.AfterFailure-1)))]++
		}
		next := map[int]float64{}
		for a, p := range dist {
			for x, w := range ways {
				next[a+x] += p * w / total
			}
		}
		dist = next
	}
	p := 0.0
	for a, q := range dist {
		if a >= obs {
			p += q
		}
	}
	return p
}

// The stratified p-value is the enumeration's; one stratum is Fisher's
// one-sided test.
func TestRepeatTestExact(t *testing.T) {
	tests := [][]report.RepeatCounts{
		{{AfterFailure: 3, AfterFailureFailed: 2, AfterOK: 9, AfterOKFailed: 1}},
		{{AfterFailure: 3, AfterFailureFailed: 2, AfterOK: 9, AfterOKFailed: 1}, {AfterFailure: 2, AfterFailureFailed: 2, AfterOK: 6, AfterOKFailed: 0}},
		{{AfterFailure: 3, AfterFailureFailed: 2, AfterOK: 9, AfterOKFailed: 1}, {AfterFailure: 2, AfterFailureFailed: 0, AfterOK: 6, AfterOKFailed: 2}, {AfterFailure: 4, AfterFailureFailed: 4, AfterOK: 4, AfterOKFailed: 0}},
		{{AfterFailure: 1, AfterFailureFailed: 1, AfterOK: 5, AfterOKFailed: 0}, {AfterFailure: 1, AfterFailureFailed: 1, AfterOK: 5, AfterOKFailed: 0}, {AfterFailure: 1, AfterFailureFailed: 0, AfterOK: 5, AfterOKFailed: 1}},
		{{AfterFailure: 4, AfterFailureFailed: 1, AfterOK: 4, AfterOKFailed: 3}},                                                                         // fewer after failures: p near 1
		{{AfterFailure: 2, AfterFailureFailed: 2, AfterOK: 3, AfterOKFailed: 3}, {AfterFailure: 3, AfterFailureFailed: 1, AfterOK: 3, AfterOKFailed: 1}}, // a stratum with all failed weighs nothing
	}
	for _, strata := range tests {
		t.Run(fmt.Sprint(strata), func(t *testing.T) {
			want := bruteRepeatP(strata)
			got := RepeatTest(strata)
			if got.Method != "exact" && got.Strata > 0 {
				t.Errorf("method = %q; want exact", got.Method)
			}
			if math.Abs(got.P-want) > 1e-12+1e-9*want {
				t.Errorf("p = %.12g; want %.12g", got.P, want)
			}
			if len(strata) == 1 {
				s := strata[0]
				if f := stat.FisherGreater(s.AfterFailureFailed, s.AfterFailure, s.AfterOKFailed, s.AfterOK); math.Abs(got.P-f) > 1e-12 {
					t.Errorf("p = %.12g; want Fisher's %.12g", got.P, f)
				}
			}
		})
	}
	r := RepeatTest(tests[2])
	if r.AfterFailure != 9 || r.AfterFailureFailed != 6 || r.AfterOK != 19 || r.AfterOKFailed != 3 || r.Strata != 3 {
		t.Errorf("totals = %+v; want 6 of 9 after a failure, 3 of 19 after successes, 3 strata", r)
	}
	if r.AfterFailureRate != 0.666667 || r.AfterOKRate != 0.157895 {
		t.Errorf("rates = %v, %v; want 0.666667, 0.157895", r.AfterFailureRate, r.AfterOKRate)
	}
}

// Nothing to compare gives p = 1.
func TestRepeatTestDegenerate(t *testing.T) {
	for _, strata := range [][]report.RepeatCounts{
		nil,
		{{AfterFailure: 0, AfterFailureFailed: 0, AfterOK: 40, AfterOKFailed: 3}},                                                                        // no request after a failure: failures close connections
		{{AfterFailure: 5, AfterFailureFailed: 0, AfterOK: 40, AfterOKFailed: 0}},                                                                        // no failure
		{{AfterFailure: 5, AfterFailureFailed: 5, AfterOK: 40, AfterOKFailed: 40}},                                                                       // all failed
		{{AfterFailure: 5, AfterFailureFailed: 5, AfterOK: 0, AfterOKFailed: 0}, {AfterFailure: 0, AfterFailureFailed: 0, AfterOK: 7, AfterOKFailed: 1}}, // the classes never meet in a stratum
	} {
		if r := RepeatTest(strata); r.P != 1 || r.Strata != 0 {
			t.Errorf("RepeatTest(%v) = p %v over %d strata; want 1 over 0", strata, r.P, r.Strata)
		}
	}
}

// healthyConfigs are endpoints where every request fails independently:
// connections kept alive through failures or closed by them, slow
// failures, high and low rates, and a failure rate that drifts over the
// run (what the strata are for).
func healthyConfigs() []simConfig {
	base := simConfig{requests: 1000, rate: 50, perConn: 4, latency: 20 * time.Millisecond, instances: 4}
	var out []simConfig
	for _, v := range []struct {
		fail      func(time.Duration, int) float64
		closeProb float64
		rate      float64
		failLat   time.Duration
	}{
		{steady(0.02), 0, 50, 0},
		{steady(0.1), 0, 50, 0},
		{steady(0.3), 0, 200, 0},
		{steady(0.05), 1, 50, 0},
		{steady(0.2), 0.5, 200, 300 * time.Millisecond},
		{steady(0.05), 0, 500, 0},
		{steady(0.1), 0, 5, 0},
		// 1% for the first half, then 20%.
		{func(t time.Duration, _ int) float64 {
			if t < 10*time.Second {
				return 0.01
			}
			return 0.2
		}, 0, 50, 0},
	} {
		c := base
		c.fail, c.closeProb, c.rate, c.failLat = v.fail, v.closeProb, v.rate, v.failLat
		out = append(out, c)
	}
	return out
}

// Under independent failures, however connections end, RepeatTest alarms
// at most as often as its level, while ClusterTest on per-connection
// counts alarms on nearly every run where failures close connections:
// the reason RepeatTest exists.
func TestRepeatTestFalsePositiveRate(t *testing.T) {
	t.Parallel() // CPU-bound: let it share the cores with the others
	rng := rand.New(rand.NewPCG(33, 34))
	cfgs := healthyConfigs()
	const runs = 3200 / check.RateScale
	var lv levels
	var tested int
	for i := range runs {
		cs := simConns(simulate(cfgs[i%len(cfgs)], rng))
		r := RepeatTest(cs.Repeat)
		if r.Strata > 0 {
			tested++
		}
		lv.add(r.P)
	}
	t.Logf("RepeatTest on healthy endpoints: %d/%d below 0.01 (%.4f), %d/%d below 0.001 (%.5f); %d with something to compare",
		lv.at01, runs, float64(lv.at01)/runs, lv.at001, runs, float64(lv.at001)/runs, tested)
	lv.check(t, runs)
	if tested < runs/2 {
		t.Errorf("only %d of %d runs had both classes; want most", tested, runs)
	}

	// Failures close their connection: ClusterTest is fooled.
	closing := healthyConfigs()[3]
	const few = 60
	fooled := 0
	for range few {
		cs := simConns(simulate(closing, rng))
		if ClusterTest(RecordCounts(&cs)).Significant(0.001) {
			fooled++
		}
		if r := RepeatTest(cs.Repeat); r.AfterFailure != 0 || r.P != 1 {
			t.Fatalf("failures close connections, yet %d requests came after one (p %v)", r.AfterFailure, r.P)
		}
	}
	t.Logf("ClusterTest on per-connection counts when failures close connections: %d/%d healthy runs below 0.001", fooled, few)
	if fooled < few*9/10 {
		t.Errorf("ClusterTest alarmed on %d of %d; the doc says nearly all, update it", fooled, few)
	}
}

// Power: one instance of four behind the address fails half its requests,
// connections of at most 4 requests go to the instances in turn (a
// quarter of them on the bad one), 50 requests per second of 5 ms each, so
// a connection is free again for the next request and carries 4.
func TestRepeatTestPower(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	for _, tc := range []struct {
		conns     int
		closeProb float64
		minPower  float64
	}{
		{48, 0, 0.9},
		{48, 0.5, 0.55},
		{12, 0, 0.1},
		{256, 0, 0.99},
	} {
		cfg := simConfig{requests: 4 * tc.conns, rate: 50, perConn: 4, latency: 5 * time.Millisecond,
			instances: 4, roundRobin: true, fail: badInstance(0, 0.5), closeProb: tc.closeProb}
		const runs = 1000 / check.RaceScale
		detected := 0
		var conns int64
		for range runs {
			cs := simConns(simulate(cfg, rng))
			conns += cs.Connections
			if RepeatTest(cs.Repeat).Significant(0.001) {
				detected++
			}
		}
		power := float64(detected) / runs
		t.Logf("RepeatTest power at α=0.001: %d requests on %.1f connections (at most 4 each), a quarter on an instance failing 50%%, failures closing %.0f%%: %.3f",
			cfg.requests, float64(conns)/runs, tc.closeProb*100, power)
		if power < tc.minPower {
			t.Errorf("%d connections, close %.1f: power %.3f; want at least %.3f", tc.conns, tc.closeProb, power, tc.minPower)
		}
	}
}

// The Chernoff bound used for very large runs is never below the exact
// p, and not far above it where it matters.
func TestRepeatChernoffBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	small := 0
	for range 50 {
		var pmfs [][]float64
		var ws []int64
		var mean float64
		var span int64
		for range 1 + rng.IntN(30) {
			w := 1 + rng.Int64N(3)
			n := int64(20 + rng.IntN(60))
			k := 1 + rng.Int64N(n-1)
			d := 1 + rng.Int64N(n-1)
			hlo, hhi := max(0, k-(n-d)), min(d, k)
			pmf := make([]float64, hhi-hlo+1)
			for x := hlo; x <= hhi; x++ {
				pmf[x-hlo] = math.Exp(stat.LogChoose(k, x) + stat.LogChoose(n-k, d-x) - stat.LogChoose(n, d))
			}
			pmfs, ws = append(pmfs, pmf), append(ws, w)
			mean += float64(w) * (float64(d)*float64(k)/float64(n) - float64(hlo))
			span += w * (hhi - hlo)
		}
		for _, top := range []int64{int64(mean), int64(mean) + span/8, int64(mean) + span/4, span} {
			exact := repeatExact(pmfs, ws, top)
			bound := chernoffSum(pmfs, ws, top, mean)
			if bound < exact*(1-1e-9) {
				t.Errorf("bound %.4g below exact %.4g (top %d of %d, mean %.1f)", bound, exact, top, span, mean)
			}
			if exact > 1e-300 && exact < 1e-4 {
				small++
			}
			if exact > 1e-300 && exact < 1e-4 && bound > 1000*exact {
				t.Errorf("bound %.4g over 1000 times exact %.4g (top %d of %d, mean %.1f)", bound, exact, top, span, mean)
			}
		}
	}
	if small < 50 {
		t.Errorf("only %d cases with an exact p below 1e-4; want at least 50 to check the bound on", small)
	}
	// A run too large to convolve uses the bound, and still finds a bad
	// instance.
	cfg := simConfig{requests: 100000, rate: 500, perConn: 4, latency: 20 * time.Millisecond,
		instances: 4, fail: badInstance(0.01, 0.5)}
	r := RepeatTest(simConns(simulate(cfg, rng)).Repeat)
	if r.Method != "bound" || r.P > 1e-9 {
		t.Errorf("100000 requests, one instance in four failing 50%%: method %q, p %v; want bound, p<1e-9", r.Method, r.P)
	}
}

func BenchmarkRepeatTest(b *testing.B) {
	rng := rand.New(rand.NewPCG(37, 38))
	for _, n := range []int{1000, 100000} {
		cfg := simConfig{requests: n, rate: 500, perConn: 4, latency: 20 * time.Millisecond,
			instances: 4, fail: badInstance(0.01, 0.5)}
		strata := simConns(simulate(cfg, rng)).Repeat
		b.Run(fmt.Sprintf("%d-requests", n), func(b *testing.B) {
			var r RepeatResult
			for b.Loop() {
				r = RepeatTest(strata)
			}
			b.ReportMetric(float64(len(strata)), "strata")
			b.ReportMetric(r.P, "p")
		})
	}
}

// MomentTest weighs each shape as many strata as it counts: the same p as
// RepeatTest on the strata one by one, by every method.
func TestMomentTestWeighsShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, scale := range []int64{1, 40, 4000} {
		for range 20 {
			var shapes []report.MomentCounts
			var strata []report.RepeatCounts
			for range 1 + rng.IntN(6) {
				a, b := 1+rng.Int64N(4), 1+rng.Int64N(4)
				c := report.RepeatCounts{AfterFailure: a, AfterFailureFailed: rng.Int64N(a + 1), AfterOK: b, AfterOKFailed: rng.Int64N(b + 1)}
				w := scale * (1 + rng.Int64N(3))
				shapes = append(shapes, report.MomentCounts{RepeatCounts: c, Strata: w})
				for range w {
					strata = append(strata, c)
				}
			}
			got, want := MomentTest(shapes), RepeatTest(strata)
			if math.Abs(got.P-want.P) > 1e-6*want.P || got.Method != want.Method || got.Strata != want.Strata || got.AfterFailureFailed != want.AfterFailureFailed {
				t.Errorf("MomentTest(%v) = p %.6g by %s over %d strata; want %.6g by %s over %d", shapes, got.P, got.Method, got.Strata, want.P, want.Method, want.Strata)
			}
		}
	}
}

// TestRepeatTestHugeStrata: a stratum of billions of requests is not
// given a law of one float per possible count: past repeatMaxCells the
// normal law judges it, quickly.
func TestRepeatTestHugeStrata(t *testing.T) {
	start := time.Now()
	r := RepeatTest([]report.RepeatCounts{{AfterFailure: 1 << 35, AfterFailureFailed: 1 << 34, AfterOK: 1 << 35, AfterOKFailed: 1 << 30}})
	if d := time.Since(start); d > 2*time.Second || r.Method != "normal" || !(r.P > 0 && r.P < 1e-9) {
		t.Errorf("RepeatTest of 2^36 requests: p %v by %q in %v; want a tiny p by the normal law, quickly", r.P, r.Method, d)
	}
}
