package compare

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
)

// simScope accumulates one scope of a simulated report, its latencies in
// the sparse histogram the collector keeps (the dense hdr one's buckets,
// quantiles and encoding, without copying and clearing 188 kB a scope).
type simScope struct {
	h              *report.Hist
	n, failed      int64
	minUS, maxUS   int64
	header, value  string
	target, family string
	address        string
}

// simScopes are the scopes of simulated reports, reused from run to run:
// a run's histograms and their encoding cost more than the comparison.
type simScopes struct {
	free []*simScope
}

func (p *simScopes) get() *simScope {
	if len(p.free) == 0 {
		return &simScope{h: report.NewLatencyHist(), minUS: math.MaxInt64}
	}
	s := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	s.h.Reset()
	*s = simScope{h: s.h, minUS: math.MaxInt64}
	return s
}

func (s *simScope) add(us int64, failed bool) {
	s.h.Record(us)
	s.n++
	if failed {
		s.failed++
	}
	s.minUS, s.maxUS = min(s.minUS, us), max(s.maxUS, us)
}

// stats are the scope's figures as a saved report holds them; s goes back
// to p.
func (p *simScopes) stats(s *simScope) report.Stats {
	defer func() { p.free = append(p.free, s) }()
	lo, hi := report.MicrosToMillis(s.minUS), report.MicrosToMillis(s.maxUS)
	q := func(pct float64) float64 { return min(max(report.MicrosToMillis(s.h.ValueAtQuantile(pct)), lo), hi) }
	st := report.Stats{Requests: s.n, OK: s.n - s.failed, Failed: s.failed, FailureRate: stat.Round(float64(s.failed)/float64(s.n), 6),
		Status: map[string]int64{"200": s.n - s.failed}, Errors: map[string]int64{},
		LatencyMS: report.Latency{Min: lo, P50: q(50), P90: q(90), P99: q(99), P999: q(99.9), Max: hi}, HDR: s.h.Encode()}
	if s.failed > 0 {
		st.Status["503"] = s.failed
	}
	return st
}

// simLaw is a healthy backend's behaviour: latencies log-normal around
// median with spread sigma, each request failing with probability fail.
type simLaw struct {
	median time.Duration
	sigma  float64
	fail   float64
}

// simRun is the report of one healthy run of https://app.example.com/ on
// three addresses (192.0.2.1, 192.0.2.2 and 2001:db8::1), n requests each,
// served in turn by four instances (X-Served-By i0 to i3) shared by the
// addresses, each address by its law; scale multiplies every latency.
func simRun(p *simScopes, rng *rand.Rand, n int, laws [3]simLaw, scale float64) *report.Report {
	const target = "https://app.example.com/"
	addrs := [3]string{"192.0.2.1", "192.0.2.2", "2001:db8::1"}
	total := p.get()
	fams := map[string]*simScope{"ipv4": p.get(), "ipv6": p.get()}
	var eps [3]*simScope
	var groups [4]*simScope
	for i := range groups {
		groups[i] = p.get()
		groups[i].header, groups[i].value = "X-Served-By", "i"+strconv.Itoa(i)
	}
	for a, law := range laws {
		e := p.get()
		e.target, e.address, e.family = target, addrs[a], "ipv4"
		if a == 2 {
			e.family = "ipv6"
		}
		eps[a] = e
		for k := range n {
			d := time.Duration(float64(law.median) * scale * math.Exp(law.sigma*rng.NormFloat64()))
			us, failed := report.Micros(d), rng.Float64() < law.fail
			for _, s := range []*simScope{total, fams[e.family], e, groups[(k+a)%4]} {
				s.add(us, failed)
			}
		}
	}
	r := &report.Report{Version: "0.1.0", Plan: report.Plan{FailStatus: "5xx"}, Totals: p.stats(total),
		Families: report.FamilyStats{}}
	for fam, s := range fams {
		st := p.stats(s)
		r.Families[fam] = &st
	}
	for _, e := range eps {
		r.Endpoints = append(r.Endpoints, report.Endpoint{Stats: p.stats(e), Target: target, Host: "app.example.com", Address: e.address, Port: 443, Family: e.family})
	}
	for _, g := range groups {
		r.Groups = append(r.Groups, report.Group{Header: g.header, Value: g.value, Stats: p.stats(g)})
	}
	return r
}

// regressedAt re-decides c at level alpha (split over its comparisons)
// with tolerance tol, from the p-values it holds: whether any scope got
// worse or slower, and which kind of test said so.
func regressedAt(c *Comparison, alpha float64, tol Tolerance) (any, failures, p50, p99 bool) {
	each := alpha / float64(max(c.Comparisons, 1))
	for _, sc := range c.Scopes() {
		if sc.Tested && sc.PWorse < each {
			failures = true
		}
		l := sc.Latency
		l.decide(each, tol, sc.Baseline != nil)
		p50 = p50 || l.P50.Change == LatencySlower
		p99 = p99 || l.P99.Change == LatencySlower
	}
	return failures || p50 || p99, failures, p50, p99
}

// False regressions, counted: pairs of healthy runs of the same backends
// (fast and slow, tight and spread, failing 0 to 5%) compared by every
// test the comparison makes. Their rate must stay within the level, with
// the default tolerance and without it; and a real 2% slowdown of a fast
// backend, which the tests see, is never a regression by default.
func TestFalseRegressionRate(t *testing.T) {
	check.Long(t, "the simulations of many runs")
	t.Parallel() // CPU-bound: let it share the cores with the others
	rng := rand.New(rand.NewPCG(16, 1))
	pool := &simScopes{}
	runs := 1000 / check.RateScale
	medians := []time.Duration{300 * time.Microsecond, 2 * time.Millisecond, 40 * time.Millisecond}
	sizes := []int{300, 1000, 2000}
	type tally struct{ any, failures, p50, p99 int }
	var def, bare001, bare05 tally
	count := func(t *tally, any, f, p50, p99 bool) {
		for _, x := range []struct {
			hit bool
			n   *int
		}{{any, &t.any}, {f, &t.failures}, {p50, &t.p50}, {p99, &t.p99}} {
			if x.hit {
				(*x.n)++
			}
		}
	}
	tests := 0
	for i := range runs {
		var laws [3]simLaw
		for a := range laws {
			laws[a] = simLaw{median: medians[(i+a)%3], sigma: []float64{0.1, 0.5, 1}[(i/3+a)%3], fail: []float64{0, 0.01, 0.05}[(i/9+a)%3]}
		}
		n := sizes[(i/27)%3]
		c := compareReports(simRun(pool, rng, n, laws, 1), simRun(pool, rng, n, laws, 1), DefaultOptions())
		tests += c.Comparisons
		if c.Status == Regressed {
			def.any++
		}
		a, f, p50, p99 := regressedAt(c, 0.001, DefaultTolerance)
		if a != (c.Status == Regressed) {
			t.Fatalf("run %d: re-decided at the comparison's own level: regressed %v; the comparison says %s", i, a, c.Status)
		}
		count(&def, false, f, p50, p99)
		a, f, p50, p99 = regressedAt(c, 0.001, Tolerance{})
		count(&bare001, a, f, p50, p99)
		a, f, p50, p99 = regressedAt(c, 0.05, Tolerance{})
		count(&bare05, a, f, p50, p99)
	}
	for _, r := range []struct {
		name  string
		alpha float64
		t     tally
	}{{"α=0.001, --max-latency-increase 20%,2ms (the default)", 0.001, def}, {"α=0.001, --max-latency-increase 0", 0.001, bare001}, {"α=0.05, --max-latency-increase 0", 0.05, bare05}} {
		t.Logf("%s: %d of %d healthy pairs called regressed (%.4f; by failure rates %d, p50 %d, p99 %d), %.1f tests a pair",
			r.name, r.t.any, runs, float64(r.t.any)/float64(runs), r.t.failures, r.t.p50, r.t.p99, float64(tests)/float64(runs))
		if lim := check.BinomialUpper(runs, r.alpha, 0.001); r.t.any > lim {
			t.Errorf("%s: %d of %d healthy pairs regressed; want at most %d", r.name, r.t.any, runs, lim)
		}
	}
	if def.any != 0 {
		t.Errorf("the default: %d false regressions in %d healthy pairs; want none", def.any, runs)
	}

	// A 2% slowdown of a fast backend, 10,000 requests an address: seen by
	// the tests, never a regression under the default tolerance.
	jitter := runs / 20
	seen, regressed := 0, 0
	for i := range jitter {
		laws := [3]simLaw{{300 * time.Microsecond, 0.2, 0}, {300 * time.Microsecond, 0.2, 0}, {300 * time.Microsecond, 0.2, 0}}
		c := compareReports(simRun(pool, rng, 10000, laws, 1), simRun(pool, rng, 10000, laws, 1.02), DefaultOptions())
		if c.Status == Regressed {
			regressed++
			t.Errorf("2%% jitter, pair %d: %s", i, c.Conclusion)
		}
		if a, _, _, _ := regressedAt(c, 0.001, Tolerance{}); a {
			seen++
		}
	}
	t.Logf("2%% slower at 0.3 ms, 10,000 requests an address: significant in %d of %d pairs, a regression in %d", seen, jitter, regressed)
	if seen < jitter/2 {
		t.Errorf("2%% slower at 10,000 requests: significant in %d of %d pairs; the tests should see it", seen, jitter)
	}
}
