package judge_test

import (
	"pinprobe/report"
	"pinprobe/report/judge"
	"pinprobe/report/render"
	"slices"
	"strings"
	"testing"
)

// TestJudgeTwoFaultsNamesEverySuspect: one IPv4 address refuses connections
// and the IPv6 address answers 503, two faults at once: the summary, the
// Markdown title and the text verdict name both, and say how each fails.
func TestJudgeTwoFaultsNamesEverySuspect(t *testing.T) {
	r := judge.VtReport(judge.VtEndpoint{Addr: "127.0.0.1", N: 40}, judge.VtEndpoint{Addr: "127.0.0.2", Failed: 40, N: 40}, judge.VtEndpoint{Addr: "::1", Failed: 40, N: 40})
	r.Plan.FailStatus = "5xx"
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		e.Status, e.Errors = map[string]int64{}, map[string]int64{}
		switch e.Address {
		case "127.0.0.1":
			e.Status["200"] = 40
		case "127.0.0.2":
			e.Errors["connect_refused"] = 40
		case "::1":
			e.Status["503"] = 40
		}
	}
	v := judge.Judge(r, judge.TestAlpha)
	if v.Status != report.VerdictConcentrated || !slices.Equal(judge.VtSuspects(v), []string{"127.0.0.2", "::1"}) {
		t.Fatalf("verdict %s, suspects %v; want concentrated on 127.0.0.2 and ::1\nsummary: %s", v.Status, judge.VtSuspects(v), v.Summary)
	}
	for _, want := range []string{"Failures concentrate on 127.0.0.2 and ::1", "127.0.0.2 refuses connections (40 of 40 failed)",
		"::1 answers 503 (40 of 40 failed)", "against 0 of 40 on the other endpoints"} {
		if !strings.Contains(v.Summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, v.Summary)
		}
	}
	r.Verdict = v
	if got := render.VerdictWords(r); got != "failures concentrate on 127.0.0.2 and ::1" {
		t.Errorf("title says %q; want both addresses", got)
	}
}
