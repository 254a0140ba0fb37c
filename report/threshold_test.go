package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/report"
	"github.com/pinprobe/pinprobe/report/render"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		err  bool
	}{
		{"0.1%", 0.001, false}, {"0.001", 0.001, false}, {"5%", 0.05, false}, {"0", 0, false}, {"100%", 1, false},
		{"1", 1, false}, {"1.5", 0, true}, {"-1%", 0, true}, {"abc", 0, true}, {"%", 0, true}, {"NaN", 0, true},
	}
	for _, tt := range tests {
		got, err := report.ParseRate(tt.in)
		if (err != nil) != tt.err || (!tt.err && abs(got-tt.want) > 1e-12) {
			t.Errorf("ParseRate(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// TestCheckLimitsEveryScope: one bad endpoint breaches the gate although the
// total is within it; a scope without requests is not judged and does not pass.
func TestCheckLimitsEveryScope(t *testing.T) {
	r := fixture.GoldenReport(t) // 2001:db8::7 fails 75%, 198.51.100.20 24%; the total 27.7%
	byScope := func(ts []report.Threshold) map[string]report.Threshold {
		m := map[string]report.Threshold{}
		for _, th := range ts {
			m[th.Name+" "+th.Scope] = th
		}
		return m
	}

	ts := report.CheckLimits(r, report.Limits{MaxFailureRate: 0.30})
	if n := len(ts); n != 1+2+4 {
		t.Fatalf("%d checks; want 7 (total, 2 families, 4 endpoints)", n)
	}
	m := byScope(ts)
	for scope, want := range map[string]string{
		"max-failure-rate total":                                                       report.ThresholdOK,
		"max-failure-rate family ipv4":                                                 report.ThresholdOK,
		"max-failure-rate family ipv6":                                                 report.ThresholdBreached,
		"max-failure-rate endpoint 2001:db8::7 (https://sign.example.com/)":            report.ThresholdBreached,
		"max-failure-rate endpoint 198.51.100.20 (http://api.example.com:8080/health)": report.ThresholdOK,
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
	if got := m["max-p99 endpoint 2001:db8::20 (http://api.example.com:8080/health)"]; got.Status != report.ThresholdBreached || *got.Value != 57 {
		t.Errorf("max-p99 on 2001:db8::20: %+v; want breached at 57 ms", got)
	}
	if got := m["max-p99 endpoint 2001:db8::7 (https://sign.example.com/)"]; got.Status != report.ThresholdOK {
		t.Errorf("max-p99 on 2001:db8::7: %+v; want ok", got)
	}

	// An endpoint that no request reached is not judged, and fails the gate.
	r.Endpoints[3].Stats = report.Stats{Status: map[string]int64{}, Errors: map[string]int64{}}
	ts = report.CheckLimits(r, report.Limits{MaxFailureRate: 1})
	m = byScope(ts)
	if got := m["max-failure-rate endpoint 2001:db8::20 (http://api.example.com:8080/health)"]; got.Status != report.ThresholdNotJudged || got.OK || got.Value != nil {
		t.Errorf("endpoint without requests: %+v; want not-judged, not ok, no value", got)
	}
	if !report.Breached(ts) {
		t.Errorf("a not-judged scope passed the gate")
	}
	r.Thresholds = ts
	v := render.NewView(r)
	if !strings.Contains(v.Gate.Summary, "1 not judged") || v.Gate.Passed {
		t.Errorf("gate summary %q (passed %v); want it to count 1 not judged and fail", v.Gate.Summary, v.Gate.Passed)
	}

	// The verdict gate.
	ts = report.CheckLimits(fixture.GoldenReport(t), report.Limits{MaxFailureRate: -1, FailOnVerdict: true})
	if len(ts) != 1 || ts[0].OK || *ts[0].Value != 1 {
		t.Errorf("fail-on-verdict with one suspect: %+v; want one breached check with value 1", ts)
	}
	if ts := report.CheckLimits(fixture.GoldenReport(t), report.NoLimits); len(ts) != 0 || report.Breached(ts) {
		t.Errorf("no limits: %d checks; want none", len(ts))
	}
}
