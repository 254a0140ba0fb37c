package report_test

import (
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/report"
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

// TestGateAbandoned: requests a second interrupt abandoned may have failed,
// or be slower than any: the gate proves nothing they could break. 992
// requests that answered at once beside 496 abandoned pass no limit of 1%
// or 800 ms, though none of the 992 failed.
func TestGateAbandoned(t *testing.T) {
	r := docfix.GateReport(300, time.Millisecond, [2]int64{992, 0})
	for _, s := range []*report.Stats{&r.Totals, r.Families["ipv4"], &r.Endpoints[0].Stats} {
		s.Abandoned = 496
	}
	for _, th := range report.CheckLimits(r, report.Limits{MaxFailureRate: 0.01, MaxP99: 800 * time.Millisecond}) {
		if th.OK || th.Status != report.ThresholdNotProven {
			t.Errorf("%s %s: %+v; want not proven", th.Name, th.Scope, th)
		}
		if th.Name == "max-p99" && th.Bound != nil {
			t.Errorf("%s: bound %v; a third of the requests unanswered bound no p99", th.Scope, *th.Bound)
		}
		if th.Name == "max-failure-rate" && (th.Bound == nil || *th.Bound < 0.33) {
			t.Errorf("%s: bound %v; want at least the abandoned third", th.Scope, th.Bound)
		}
	}
}

// TestGateRoundsUp: a bound is never rounded below itself: 2,993 requests
// without a failure show only below 0.10004%, not 0.1%.
func TestGateRoundsUp(t *testing.T) {
	r := docfix.GateReport(10, time.Millisecond, [2]int64{2993, 0})
	for _, th := range report.CheckLimits(r, report.Limits{MaxFailureRate: 0.001}) {
		if th.OK || *th.Bound <= 0.001 || th.NeedRequests != 2995 {
			t.Errorf("2993 requests: %+v (bound %v); want not proven, 2995 needed", th, *th.Bound)
		}
	}
	r = docfix.GateReport(10, time.Millisecond, [2]int64{2995, 0})
	for _, th := range report.CheckLimits(r, report.Limits{MaxFailureRate: 0.001}) {
		if !th.OK {
			t.Errorf("2995 requests: %+v; want proven", th)
		}
	}
}

// TestGateSummary: the gate's line, the same in the exit's error and every
// format (render's Gate.Summary is it).
func TestGateSummary(t *testing.T) {
	b := func(v float64) *float64 { return &v }
	ok := report.Threshold{Status: report.ThresholdOK, OK: true, Limit: 0.01, Bound: b(0.005), Confidence: 0.95}
	zero := report.Threshold{Status: report.ThresholdOK, OK: true, Limit: 0, Bound: b(0.003), Confidence: 0.95}
	breached := report.Threshold{Status: report.ThresholdBreached}
	unproven := report.Threshold{Status: report.ThresholdNotProven}
	unjudged := report.Threshold{Status: report.ThresholdNotJudged}
	for _, tt := range []struct {
		ts   []report.Threshold
		want string
	}{
		{nil, ""},
		{[]report.Threshold{ok}, "passed: its 1 check, proven at 95%"},
		{[]report.Threshold{ok, ok}, "passed: all 2 checks, each proven at 95%"},
		{[]report.Threshold{ok, zero}, "passed: all 2 checks (no request failed, as --max-failure-rate 0 asks: no run proves a rate of 0)"},
		{[]report.Threshold{ok, breached, unproven, unjudged}, "FAILED: 1 of 4 checks breached, 1 not proven, 1 not judged (no request reached the scope)"},
		{[]report.Threshold{unproven}, "FAILED: 1 of 1 check not proven"},
	} {
		if got := report.GateSummary(tt.ts); got != tt.want {
			t.Errorf("GateSummary(%d checks) = %q; want %q", len(tt.ts), got, tt.want)
		}
	}
}
