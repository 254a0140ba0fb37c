package compare_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/cmpfix"
	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/fixture"
)

// every is a latency law for fixture.CmpEndpoint.LatencyOf: d, plus a
// spread of 0 to 45 µs in steps of 5 from request to request.
func every(d time.Duration) func(int) time.Duration {
	return func(k int) time.Duration { return d + time.Duration(k%10)*5*time.Microsecond }
}

// TestCompareLatency: a slowdown beyond the tolerance (the server adding
// 50 ms to every answer) is a regression, and a jitter within it never
// is, however many requests make it significant.
func TestCompareLatency(t *testing.T) {
	ep := func(addr string, n int, lat func(int) time.Duration) fixture.CmpEndpoint {
		return fixture.CmpEndpoint{Address: addr, N: n, LatencyOf: lat}
	}
	three := func(n int, lat func(int) time.Duration) []fixture.CmpEndpoint {
		return []fixture.CmpEndpoint{ep("127.0.0.1", n, lat), ep("127.0.0.2", n, lat), ep("::1", n, lat)}
	}
	// 5% of the requests 100 ms late: the median stays, the p99 does not.
	tail := func(k int) time.Duration {
		if k%20 == 7 {
			return 100*time.Millisecond + every(2*time.Millisecond)(k)
		}
		return every(2 * time.Millisecond)(k)
	}
	loose, none := compare.Tolerance{Ratio: 0.5}, compare.Tolerance{}
	tests := []struct {
		name          string
		before, after []fixture.CmpEndpoint
		tol           *compare.Tolerance
		status        string
		conclusion    string // its beginning
	}{
		{"50 ms added to 0.26 ms", three(50, every(260*time.Microsecond)), three(50, every(50*time.Millisecond+260*time.Microsecond)), nil,
			compare.Regressed, "regression: every endpoint slower, in total p50 0.28 → 50.3ms, p99 0.30 → 50.3ms, p<1e-9"},
		{"2% jitter on loopback, 20,000 requests each", three(20000, every(300*time.Microsecond)), three(20000, every(306*time.Microsecond)), nil,
			compare.Unchanged, "no significant change (total 0% → 0%, p=1; p50 0.32 → 0.33ms)"},
		{"25% at 20 ms", three(300, every(20*time.Millisecond)), three(300, every(25*time.Millisecond)), nil,
			compare.Regressed, "regression: every endpoint slower, in total p50 20.0 → 25.0ms, p99 20.0 → 25.0ms, p<1e-9"},
		{"25% at 20 ms within --max-latency-increase 50%", three(300, every(20*time.Millisecond)), three(300, every(25*time.Millisecond)), &loose,
			compare.Unchanged, "no significant change (total 0% → 0%, p=1; p50 20.0 → 25.0ms)"},
		{"2% jitter with --max-latency-increase 0", three(20000, every(300*time.Microsecond)), three(20000, every(306*time.Microsecond)), &none,
			compare.Regressed, "regression: every endpoint slower, in total p50 0.32 → 0.33ms, p99 0.34 → 0.35ms, p<1e-9"},
		{"one request in twenty 100 ms late", three(2000, every(2*time.Millisecond)), three(2000, tail), nil,
			compare.Regressed, "regression: every endpoint slower, in total p99 2.04 → 102ms, p<1e-9"},
		{"one address slower", three(300, every(2*time.Millisecond)),
			[]fixture.CmpEndpoint{ep("127.0.0.1", 300, every(2*time.Millisecond)), ep("127.0.0.2", 300, every(9*time.Millisecond)), ep("::1", 300, every(2*time.Millisecond))}, nil,
			compare.Regressed, "regression: 127.0.0.2 slower: p50 2.02 → 9.02ms, p99 2.04 → 9.04ms, p<1e-9"},
		{"faster", three(300, every(50*time.Millisecond)), three(300, every(2*time.Millisecond)), nil,
			compare.Improved, "improvement: every endpoint faster, in total p50 50.0 → 2.02ms, p99 50.0 → 2.04ms, p<1e-9"},
		{"a failure that became an answer is no slowdown",
			[]fixture.CmpEndpoint{{Address: "127.0.0.1", N: 300, Failed: 300, FailStatus: 502, LatencyOf: every(time.Millisecond)}},
			[]fixture.CmpEndpoint{ep("127.0.0.1", 300, every(80*time.Millisecond))}, nil,
			compare.Improved, "failures gone: 127.0.0.1 100% → 0%, p<1e-9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := compare.DefaultOptions()
			if tt.tol != nil {
				o.MaxLatencyIncrease = *tt.tol
			}
			b, a := runs(t, tt.before, tt.after)
			c := compare.ReportsWith(b, a, o)
			if c.Status != tt.status || !strings.HasPrefix(c.Conclusion, tt.conclusion) {
				t.Errorf("%s: %q; want %s: %q…", c.Status, c.Conclusion, tt.status, tt.conclusion)
			}
			if c.FailsGate() != (tt.status == compare.Regressed) {
				t.Errorf("FailsGate() = %v; want %v", c.FailsGate(), tt.status == compare.Regressed)
			}
			if c.MaxLatencyIncrease != o.MaxLatencyIncrease {
				t.Errorf("max_latency_increase %+v; want %+v", c.MaxLatencyIncrease, o.MaxLatencyIncrease)
			}
		})
	}
}

// The latency tests count in the Bonferroni split beside the failure
// tests, two per scope tested; each side's p50 and p99 carry their 95%
// intervals where there are requests enough.
func TestCompareLatencyFigures(t *testing.T) {
	c := cmpfix.LatencyComparison(t)
	tests := 0
	for _, sc := range c.Scopes() {
		if sc.Tested {
			tests++
		}
		if sc.Latency.Tested {
			tests += 2
		}
		for _, a := range sc.Answers {
			if a.Tested {
				tests++
			}
		}
	}
	if c.Comparisons != tests || c.AlphaEach != c.Alpha/float64(tests) {
		t.Errorf("%d comparisons, α each %v; want the %d tests made, α/%d", c.Comparisons, c.AlphaEach, tests, tests)
	}
	gw3 := scopeOf(t, c, "group X-Served-By: gw-3")
	l := gw3.Latency
	if !l.Tested || l.Change != compare.LatencySlower || l.P50.Change != compare.LatencySlower || l.P99.Change != compare.LatencySlower ||
		l.P50.PSlower > 1e-9 || l.P50.PFaster < 0.5 || l.P50.ToleranceMS != 2 || l.P50.ChangeMS < 39.9 || l.P50.ChangeMS > 40.1 {
		t.Errorf("gw-3 latency %+v; want p50 and p99 slower by 40 ms, p<1e-9, tolerance 2 ms", l)
	}
	gw1 := scopeOf(t, c, "group X-Served-By: gw-1")
	if l := gw1.Latency; !l.Tested || l.Change != compare.LatencySame || l.P50.PSlower < 0.01 || l.P50.PFaster < 0.01 {
		t.Errorf("gw-1 latency %+v; want the same, p well above the level", l)
	}
	for _, s := range []*compare.Side{gw3.Before, gw3.After} {
		for _, q := range []struct {
			point float64
			ci    *[2]float64
		}{{s.P50MS, s.P50CI95MS}, {s.P99MS, s.P99CI95MS}} {
			if q.ci == nil || q.ci[0] > q.point || q.ci[1] < q.point {
				t.Errorf("gw-3: %v ms, 95%% CI %v; want an interval around it", q.point, q.ci)
			}
		}
	}
	// 400 requests hold a p99 interval (368 do), 300 not.
	if s := scopeOf(t, c, "endpoint 127.0.0.3 (https://sign.example.com:8443/)").After; s.P99CI95MS == nil {
		t.Errorf("127.0.0.3 after, 400 requests: no p99 interval")
	}
	g := cmpfix.GoldenComparison(t)
	if s := scopeOf(t, g, "endpoint 127.0.0.1 (https://sign.example.com/)").Before; s.P99CI95MS != nil || s.P50CI95MS == nil {
		t.Errorf("300 requests: p50 interval %v, p99 %v; want one for p50 only", s.P50CI95MS, s.P99CI95MS)
	}
	if c.Match != compare.MatchHost || scopeOf(t, c, "endpoint 127.0.0.1 (https://sign.example.com:8443/)").AfterTarget != "https://sign.example.com:9443/" {
		t.Errorf("match %q; want host, and 127.0.0.1 matched with its endpoint of port 9443", c.Match)
	}
}

// Latency is not compared when a run's machine could not send many of its
// requests: it slowed itself.
func TestCompareLatencyClientErrors(t *testing.T) {
	before, after := runs(t, []fixture.CmpEndpoint{{Address: "127.0.0.1", N: 300, LatencyOf: every(time.Millisecond)}},
		[]fixture.CmpEndpoint{{Address: "127.0.0.1", N: 300, LatencyOf: every(90 * time.Millisecond)}})
	after.Totals.ClientErrors = 100
	c := compare.Reports(before, after)
	if c.Status != compare.Unchanged || c.Totals.Latency.Tested || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "latency is not compared") {
		t.Errorf("%s, total latency tested %v, notes %q; want unchanged, untested, a note", c.Status, c.Totals.Latency.Tested, c.Notes)
	}
}
