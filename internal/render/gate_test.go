package render_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/render"
	"github.com/pinprobe/pinprobe/internal/report"
)

// TestCheckLimitsEveryScope: one bad endpoint breaches the gate although the
// total is within it; a scope without requests is not judged and does not pass.
func TestCheckLimitsEveryScope(t *testing.T) {
	r := docfix.SavedGolden(t) // 2001:db8::7 fails 75%, 198.51.100.20 24%; the total 27.7%
	byScope := func(ts []report.Threshold) map[string]report.Threshold {
		m := map[string]report.Threshold{}
		for _, th := range ts {
			m[th.Name+" "+th.Scope] = th
		}
		return m
	}

	ts := report.CheckLimits(r, report.Limits{MaxFailureRate: 0.30})
	if n := len(ts); n != 1+2+3 {
		t.Fatalf("%d checks; want 6 (total, 2 families, 3 endpoints: 2001:db8::20 left DNS, so no run could prove it)", n)
	}
	m := byScope(ts)
	for scope, want := range map[string]string{
		// 36 of 130: shown below 35%, not 30%.
		"max-failure-rate total": report.ThresholdNotProven,
		// 6 of 65: below 17%.
		"max-failure-rate family ipv4":                                                 report.ThresholdOK,
		"max-failure-rate family ipv6":                                                 report.ThresholdBreached,
		"max-failure-rate endpoint 2001:db8::7 (https://sign.example.com/)":            report.ThresholdBreached,
		"max-failure-rate endpoint 198.51.100.20 (http://api.example.com:8080/health)": report.ThresholdNotProven,
	} {
		if got := m[scope]; got.Status != want {
			t.Errorf("%s: status %q; want %q", scope, got.Status, want)
		}
	}
	if !report.Breached(ts) {
		t.Errorf("Breached = false; want true")
	}

	// p99: the golden endpoints' p99s are 22.5 to 57 ms.
	ts = report.CheckLimits(r, report.Limits{MaxFailureRate: -1, MaxP99: 40 * time.Millisecond})
	m = byScope(ts)
	if got := m["max-p99 family ipv6"]; got.Status != report.ThresholdBreached || *got.Value <= 40 {
		t.Errorf("max-p99 of ipv6: %+v; want breached, past 40 ms", got)
	}
	if _, ok := m["max-p99 endpoint 2001:db8::20 (http://api.example.com:8080/health)"]; ok {
		t.Errorf("2001:db8::20, which left DNS, is checked on its own")
	}
	if got := m["max-p99 endpoint 2001:db8::7 (https://sign.example.com/)"]; got.Status != report.ThresholdNotProven || got.Bound != nil || got.NeedRequests != 299 {
		t.Errorf("max-p99 on 2001:db8::7 (40 requests): %+v; want not proven, no bound, 299 requests needed", got)
	}

	// An endpoint that no request reached is not judged, and fails the gate.
	r.Endpoints[2].Stats = report.Stats{Status: map[string]int64{}, Errors: map[string]int64{}}
	ts = report.CheckLimits(r, report.Limits{MaxFailureRate: 1})
	m = byScope(ts)
	if got := m["max-failure-rate endpoint 198.51.100.20 (http://api.example.com:8080/health)"]; got.Status != report.ThresholdNotJudged || got.OK || got.Value != nil {
		t.Errorf("endpoint without requests: %+v; want not-judged, not ok, no value", got)
	}
	if !report.Breached(ts) {
		t.Errorf("a not-judged scope passed the gate")
	}
	r.Thresholds = ts
	v := render.NewView(r)
	if !strings.Contains(v.Gate.Summary, "1 of 6 checks not judged") || v.Gate.Passed {
		t.Errorf("gate summary %q (passed %v); want it to count 1 not judged and fail", v.Gate.Summary, v.Gate.Passed)
	}

	// The verdict gate.
	ts = report.CheckLimits(docfix.SavedGolden(t), report.Limits{MaxFailureRate: -1, FailOnVerdict: true})
	if len(ts) != 1 || ts[0].OK || *ts[0].Value != 1 {
		t.Errorf("fail-on-verdict with one suspect: %+v; want one breached check with value 1", ts)
	}
	if ts := report.CheckLimits(docfix.SavedGolden(t), report.NoLimits); len(ts) != 0 || report.Breached(ts) {
		t.Errorf("no limits: %d checks; want none", len(ts))
	}
}

// TestGateNeedsProof: a release gate passes only what its requests prove.
// Three requests that did not fail prove nothing about 0.1%, nor 3 fast
// ones about a p99: each such check is not proven, fails the gate, and
// says how many requests (and how long at the planned rate) would prove
// it; 3,000 requests prove both.
func TestGateNeedsProof(t *testing.T) {
	limits := report.Limits{MaxFailureRate: 0.001, MaxP99: 800 * time.Millisecond, FailOnVerdict: true}
	r := docfix.GateReport(10, 2*time.Millisecond, [2]int64{3, 0})
	ts := report.CheckLimits(r, limits)
	if !report.Breached(ts) {
		t.Fatalf("3 requests passed the gate: %+v", ts)
	}
	for _, th := range ts {
		switch th.Name {
		case "max-failure-rate":
			// 1 - 0.05^(1/3) = 63.2%; 0.001 needs log(0.05)/log(0.999) = 2995
			// requests, 299.5 s at 10 req/s for the one endpoint.
			if th.Status != report.ThresholdNotProven || th.OK || th.Bound == nil || math.Abs(*th.Bound-0.631597) > 1e-6 ||
				th.NeedRequests != 2995 || th.NeedS != 300 || th.Confidence != 0.95 {
				t.Errorf("%s %s: %+v; want not proven, bound 0.631597, 2995 requests in 300 s", th.Name, th.Scope, th)
			}
		case "max-p99":
			if th.Status != report.ThresholdNotProven || th.Bound != nil || th.NeedRequests != 299 || th.NeedS != 30 {
				t.Errorf("%s %s: %+v; want not proven, no bound, 299 requests in 30 s", th.Name, th.Scope, th)
			}
		case "fail-on-verdict":
			if th.Status != report.ThresholdOK || th.SmallestFault != nil {
				t.Errorf("%s: %+v; want passed, no smallest fault with one address", th.Name, th)
			}
		}
	}
	r.Thresholds = ts
	g := render.NewView(r).Gate
	for _, w := range []string{"FAILED: 6 of 7 checks not proven", "a run of about 5m at this rate (-d 5m)", "2,995 requests",
		"no URL had two addresses"} {
		if !strings.Contains(g.Summary+" "+g.Prove+" "+g.Seen, w) {
			t.Errorf("gate %q / %q / %q does not say %q", g.Summary, g.Prove, g.Seen, w)
		}
	}
	if l := strings.Join(g.Lines, "\n"); !strings.Contains(l, "max-failure-rate, total: not proven, 0% in 3 requests shows it only below 64% (at 95%), not below 0.1%") ||
		!strings.Contains(l, "max-p99, total: not proven, p99 2.00ms in 3 requests: too few to bound a p99 (95% needs 299 at least)") {
		t.Errorf("gate lines:\n%s", l)
	}

	// 3,000 requests without a failure, all at 2 ms: proven.
	r = docfix.GateReport(10, 2*time.Millisecond, [2]int64{3000, 0})
	ts = report.CheckLimits(r, limits)
	if report.Breached(ts) {
		t.Errorf("3000 requests without a failure did not pass: %+v", ts)
	}
	for _, th := range ts {
		if th.Name == "max-p99" && (th.Bound == nil || *th.Bound != 2 || th.NeedRequests != 0) {
			t.Errorf("p99 of 3000 values of 2 ms: %+v; want bound 2 ms", th)
		}
	}
	r.Thresholds = ts
	if g := render.NewView(r).Gate; g.Summary != "passed: all 7 checks, each proven at 95%" || g.Prove != "" {
		t.Errorf("gate %q, prove %q", g.Summary, g.Prove)
	}

	// At 99%, 3,000 are not enough: log(0.01)/log(0.999) = 4603.
	limits.Confidence = 0.99
	for _, th := range report.CheckLimits(r, limits) {
		if th.Name == "max-failure-rate" && (th.Status != report.ThresholdNotProven || th.NeedRequests != 4603) {
			t.Errorf("at 99%%: %+v; want not proven, 4603 requests", th)
		}
	}

	// A rate measured above the limit is breached whatever its bound; one
	// measured within it but too near it to prove says no run would.
	r = docfix.GateReport(10, time.Millisecond, [2]int64{1000, 2})
	for _, th := range report.CheckLimits(r, report.Limits{MaxFailureRate: 0.001}) {
		if th.Status != report.ThresholdBreached {
			t.Errorf("2 of 1000 against 0.1%%: %+v; want breached", th)
		}
	}
	r = docfix.GateReport(10, time.Millisecond, [2]int64{1_000_000, 999})
	ts = report.CheckLimits(r, report.Limits{MaxFailureRate: 0.001})
	for _, th := range ts {
		if th.Status != report.ThresholdNotProven || th.NeedRequests != 0 {
			t.Errorf("999 of 1,000,000 against 0.1%%: %+v; want not proven, and no run that would", th)
		}
	}
	r.Thresholds = ts
	if p := render.NewView(r).Gate.Prove; !strings.Contains(p, "No run of up to a billion requests would prove") {
		t.Errorf("prove %q", p)
	}

	// --max-failure-rate 0 asks that none fail: passed, with the bound
	// that 5 requests show, which is no proof, and the gate says so.
	r = docfix.GateReport(10, time.Millisecond, [2]int64{5, 0})
	ts = report.CheckLimits(r, report.Limits{MaxFailureRate: 0})
	for _, th := range ts {
		if th.Status != report.ThresholdOK || *th.Bound != 0.450720 {
			t.Errorf("none of 5 failed, limit 0: %+v; want passed, bound 45%%", th)
		}
	}
	r.Thresholds = ts
	if g := render.NewView(r).Gate; g.Summary != "passed: all 3 checks (no request failed, as --max-failure-rate 0 asks: no run proves a rate of 0)" {
		t.Errorf("gate %q", g.Summary)
	}

	// A p99 is bounded by the 299th of 299 values, and one slow value in
	// 299 is past the bound: not proven, though the p99 (the 296th) is fast.
	r = docfix.GateReport(10, time.Millisecond, [2]int64{299, 0})
	h := report.NewLatencyHist()
	for i := range 299 {
		h.Record(map[bool]int64{true: 900_000, false: 1000}[i == 0])
	}
	for _, s := range []*report.Stats{&r.Totals, r.Families["ipv4"], &r.Endpoints[0].Stats} {
		s.HDR, s.LatencyMS.P99 = h.Encode(), report.MicrosToMillis(h.ValueAtQuantile(99))
	}
	for _, th := range report.CheckLimits(r, report.Limits{MaxFailureRate: -1, MaxP99: 800 * time.Millisecond}) {
		if th.Status != report.ThresholdNotProven || *th.Value > 1.01 || th.Bound == nil || *th.Bound < 800 || th.NeedRequests <= 299 {
			t.Errorf("one value of 299 past the limit: %+v; want p99 1 ms, bound past 800 ms, more requests needed", th)
		}
	}
}

// TestGateSmallestFault: --fail-on-verdict says, when it passes, the least
// failure rate of one address the run would have seen, and that is less
// the more requests each address had.
func TestGateSmallestFault(t *testing.T) {
	fault := func(n int64) float64 {
		t.Helper()
		r := docfix.GateReport(10, time.Millisecond, [2]int64{n, 0}, [2]int64{n, 0}, [2]int64{n, 0})
		r.Verdict.Level.Each = 0.001 / 5
		ts := report.CheckLimits(r, report.Limits{MaxFailureRate: -1, FailOnVerdict: true})
		if len(ts) != 1 || !ts[0].OK || ts[0].SmallestFault == nil {
			t.Fatalf("%d requests an address: %+v", n, ts)
		}
		r.Thresholds = ts
		want := "No address stood out; an address failing"
		if n < 10 {
			want = "No address stood out, but this run was too short to see one"
		}
		if s := render.NewView(r).Gate.Seen; !strings.Contains(s, want) {
			t.Errorf("%d requests an address: seen %q, want %q", n, s, want)
		}
		return *ts[0].SmallestFault
	}
	f100, f1000 := fault(100), fault(1000)
	if !(f1000 < f100 && f1000 > 0.001 && f100 < 0.3) {
		t.Errorf("smallest fault seen: %v with 100 requests an address, %v with 1000; want less with more, within (0.1%%, 30%%)", f100, f1000)
	}
	if f := fault(3); f != 1 {
		t.Errorf("3 requests an address: smallest fault %v, want 1 (none would be named)", f)
	}
}

// TestGateProveLong: a check that would take more than a day to prove at
// the run's rate says so, not a duration no one runs.
func TestGateProveLong(t *testing.T) {
	r := docfix.GateReport(10, time.Millisecond, [2]int64{100000, 99}) // 0.099%: 27 million requests
	r.Thresholds = report.CheckLimits(r, report.Limits{MaxFailureRate: 0.001})
	p := render.NewView(r).Gate.Prove
	if !strings.Contains(p, "27,067,696 requests") || !strings.Contains(p, "more than a day at this rate") || strings.Contains(p, "-d ") {
		t.Errorf("prove %q", p)
	}
}

// TestGateOutage: --fail-on-verdict does not pass an outage, which names
// no suspect.
func TestGateOutage(t *testing.T) {
	r := docfix.GateReport(10, time.Millisecond, [2]int64{100, 100}, [2]int64{100, 100})
	r.Verdict.Outage = true
	ts := report.CheckLimits(r, report.Limits{MaxFailureRate: -1, FailOnVerdict: true})
	if len(ts) != 1 || ts[0].OK || ts[0].SmallestFault != nil {
		t.Fatalf("an outage: %+v; want the verdict's check failed", ts)
	}
	r.Thresholds = ts
	if l := render.NewView(r).Gate.Lines; len(l) != 1 || !strings.Contains(l[0], "no suspect, but an outage") {
		t.Errorf("gate lines %q", l)
	}
}
