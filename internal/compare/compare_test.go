package compare_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/cmpfix"
	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/report"
)

// fisherAllOnOneSide is the exact probability that all k failures of two
// groups of n fall in one given group: C(n,k)/C(2n,k), as a product.
func fisherAllOnOneSide(k, n int) float64 {
	p := 1.0
	for i := range k {
		p *= float64(n-i) / float64(2*n-i)
	}
	return p
}

// runs are the reports of a run of before and one of after, an hour
// later.
func runs(t *testing.T, before, after []fixture.CmpEndpoint) (b, a *report.Report) {
	return fixture.CmpRun(t, fixture.CmpStart, before...), fixture.CmpRun(t, fixture.CmpStart.Add(time.Hour), after...)
}

func scopeOf(t *testing.T, c *compare.Comparison, scope string) *compare.ScopeChange {
	t.Helper()
	for _, sc := range c.Scopes() {
		if sc.Scope == scope {
			return sc
		}
	}
	t.Fatalf("no scope %q in the comparison", scope)
	return nil
}

func TestCompareGatewayChange(t *testing.T) {
	c := cmpfix.GoldenComparison(t)
	if got, want := c.Conclusion, "regression: 127.0.0.2 0% → 12%, p<1e-9; also ::1 removed"; got != want {
		t.Errorf("conclusion %q; want %q", got, want)
	}
	if !c.Regressed() || c.Status != compare.Regressed {
		t.Errorf("status %q, Regressed() %v; want regressed, true", c.Status, c.Regressed())
	}
	ids := func(l []compare.EndpointID) []string {
		var out []string
		for _, id := range l {
			out = append(out, id.Address+" "+id.Family)
		}
		return out
	}
	if got := ids(c.Added); !slices.Equal(got, []string{"127.0.0.3 ipv4"}) {
		t.Errorf("added %q; want 127.0.0.3", got)
	}
	if got := ids(c.Removed); !slices.Equal(got, []string{"::1 ipv6"}) {
		t.Errorf("removed %q; want ::1", got)
	}
	// 5 failure-rate tests (total, IPv4, 127.0.0.1, 127.0.0.2, and the new
	// 127.0.0.3 against its URL before), 6 share tests (200 and 502 in the
	// total, IPv4 and 127.0.0.2) and 2 latency tests each of IPv4 and
	// 127.0.0.1: the total, 127.0.0.2 and 127.0.0.3 (against 33% before)
	// have failure rates 10 points or more apart, which their latencies hold.
	if c.Comparisons != 15 || !check.Near(c.AlphaEach, 0.001/15, 1e-12) || c.Alpha != 0.001 {
		t.Errorf("%d comparisons, alpha %v each %v; want 15, 0.001, 0.001/15", c.Comparisons, c.Alpha, c.AlphaEach)
	}
	for _, sc := range c.Scopes() {
		wantTested := sc.Scope == "family ipv4" || sc.Scope == "endpoint 127.0.0.1 (https://sign.example.com/)"
		if l := sc.Latency; l.Tested != wantTested || l.Change != compare.LatencySame {
			t.Errorf("%s: latency tested %v (%q), %s; want tested %v, same", sc.Scope, l.Tested, l.Untested, l.Change, wantTested)
		}
	}
	if u := scopeOf(t, c, "endpoint 127.0.0.2 (https://sign.example.com/)").Latency.Untested; u != "its failure rate moved from 0% to 12%, and the latencies hold the failures'" {
		t.Errorf("127.0.0.2: latency untested because %q; want the failure rate's move", u)
	}
	one := fisherAllOnOneSide(36, 300)
	tests := []struct {
		scope          string
		change         string
		p, pWorse      float64 // 0: not checked
		before, after  string  // "failed/requests", "" for none
		wantBaselineOf string
	}{
		{"total", compare.ChangeBetter, 0, 0, "300/900", "36/900", ""},
		{"family ipv4", compare.ChangeWorse, 0, 0, "0/600", "36/900", ""},
		{"family ipv6", compare.ChangeRemoved, 1, 1, "300/300", "", ""},
		{"endpoint 127.0.0.1 (https://sign.example.com/)", compare.ChangeSame, 1, 1, "0/300", "0/300", ""},
		{"endpoint 127.0.0.2 (https://sign.example.com/)", compare.ChangeWorse, 2 * one, one, "0/300", "36/300", ""},
		{"endpoint ::1 (https://sign.example.com/)", compare.ChangeRemoved, 1, 1, "300/300", "", ""},
		{"endpoint 127.0.0.3 (https://sign.example.com/)", compare.ChangeAdded, 0, 1, "", "0/300", "the endpoints of https://sign.example.com/ before"},
	}
	counts := func(s *compare.Side) string {
		if s == nil {
			return ""
		}
		return strconv.FormatInt(s.Failed, 10) + "/" + strconv.FormatInt(s.Requests, 10)
	}
	for _, tt := range tests {
		sc := scopeOf(t, c, tt.scope)
		if sc.Change != tt.change || counts(sc.Before) != tt.before || counts(sc.After) != tt.after {
			t.Errorf("%s: %s, %q → %q; want %s, %q → %q", tt.scope, sc.Change, counts(sc.Before), counts(sc.After), tt.change, tt.before, tt.after)
		}
		if tt.p > 0 && !check.Near(sc.P, tt.p, 1e-6) {
			t.Errorf("%s: p %v; want %v", tt.scope, sc.P, tt.p)
		}
		if tt.pWorse > 0 && !check.Near(sc.PWorse, tt.pWorse, 1e-6) {
			t.Errorf("%s: p_worse %v; want %v", tt.scope, sc.PWorse, tt.pWorse)
		}
		if sc.BaselineScope != tt.wantBaselineOf {
			t.Errorf("%s: baseline %q; want %q", tt.scope, sc.BaselineScope, tt.wantBaselineOf)
		}
	}
	if one > 1e-9 || one < 1e-13 {
		t.Errorf("36 of 36 failures on one side of 300+300: p %v; want about 1e-11", one)
	}
	// The 502s of 127.0.0.2 appeared, significantly; its 200s fell.
	b := scopeOf(t, c, "endpoint 127.0.0.2 (https://sign.example.com/)")
	var got []string
	for _, a := range b.Answers {
		got = append(got, a.Answer+" "+a.Change)
		if a.Answer == "502" && (!a.Failure || !a.Significant || !check.Near(a.P, 2*one, 1e-6) || a.AfterShare != 0.12) {
			t.Errorf("127.0.0.2 answer 502: %+v; want a failure, significant, p %v, share 0.12", a, 2*one)
		}
	}
	if want := []string{"200 less", "502 appeared"}; !slices.Equal(got, want) {
		t.Errorf("127.0.0.2 answers %q; want %q", got, want)
	}
	if latency := b.After.P50MS; latency < 3 || latency > 3.5 {
		t.Errorf("127.0.0.2 p50 after %vms; want about 3.2ms", latency)
	}
}

func TestCompareConclusions(t *testing.T) {
	healthy := func(addr string) fixture.CmpEndpoint {
		return fixture.CmpEndpoint{Address: addr, N: 300, Latency: 2 * time.Millisecond}
	}
	failing := func(addr string, failed int) fixture.CmpEndpoint {
		return fixture.CmpEndpoint{Address: addr, N: 300, Failed: failed, FailStatus: 502, Latency: time.Millisecond}
	}
	tests := []struct {
		name          string
		before, after []fixture.CmpEndpoint
		status        string
		conclusion    string
	}{
		{"IPv6 fixed by removing it",
			[]fixture.CmpEndpoint{healthy("127.0.0.1"), healthy("127.0.0.2"), failing("::1", 300)},
			[]fixture.CmpEndpoint{healthy("127.0.0.1"), healthy("127.0.0.2")},
			compare.Improved, "IPv6 failures gone: ::1 removed; 127.0.0.1, 127.0.0.2 0% → 0%"},
		{"IPv6 fixed in place",
			[]fixture.CmpEndpoint{healthy("127.0.0.1"), failing("::1", 300)},
			[]fixture.CmpEndpoint{healthy("127.0.0.1"), healthy("::1")},
			compare.Improved, "IPv6 failures gone: ::1 100% → 0%, p<1e-9; 127.0.0.1 0% → 0%"},
		{"nothing changed",
			[]fixture.CmpEndpoint{failing("127.0.0.1", 3), failing("127.0.0.2", 2)},
			[]fixture.CmpEndpoint{failing("127.0.0.1", 2), failing("127.0.0.2", 4)},
			compare.Unchanged, "no significant change (total 0.83% → 1%, p=1; p50 1.20 → 1.20ms): 127.0.0.1 1% → 0.67%; 127.0.0.2 0.67% → 1.3%"},
		{"a new address fails",
			[]fixture.CmpEndpoint{healthy("127.0.0.1"), healthy("127.0.0.2")},
			[]fixture.CmpEndpoint{healthy("127.0.0.1"), healthy("127.0.0.2"), failing("127.0.0.3", 90)},
			compare.Regressed, "regression: 127.0.0.3 (new) 30% against 0% before, p<1e-9"},
		{"a healthy address added",
			[]fixture.CmpEndpoint{healthy("127.0.0.1")},
			[]fixture.CmpEndpoint{healthy("127.0.0.1"), healthy("127.0.0.2")},
			compare.Unchanged, "no significant change (total 0% → 0%, p=1; p50 2.20 → 2.20ms): 127.0.0.1 0% → 0%; 127.0.0.2 added (0%)"},
		{"too few to tell",
			[]fixture.CmpEndpoint{healthy("127.0.0.1")},
			[]fixture.CmpEndpoint{{Address: "127.0.0.1", N: 300, Failed: 2, FailStatus: 503, Latency: time.Millisecond}},
			compare.Unchanged, "no significant change (total 0% → 0.67%, p=0.5; p50 2.20 → 1.20ms): 127.0.0.1 0% → 0.67%"},
		{"two URLs",
			[]fixture.CmpEndpoint{healthy("127.0.0.1"), {Target: "https://sign.example.com/api", Address: "127.0.0.1", N: 300}},
			[]fixture.CmpEndpoint{healthy("127.0.0.1"), {Target: "https://sign.example.com/api", Address: "127.0.0.1", N: 300, Failed: 60, FailStatus: 500}},
			compare.Regressed, "regression: 127.0.0.1 /api 0% → 20%, p<1e-9"},
		{"no requests after",
			[]fixture.CmpEndpoint{healthy("127.0.0.1")},
			[]fixture.CmpEndpoint{{Address: "127.0.0.1"}},
			compare.Disjoint, "nothing to compare: no request in after"},
		// Reports with no endpoint in common compare nothing: what vanished
		// is no improvement, their totals are not tested, and --fail-on-
		// regression does not pass.
		{"other hosts",
			[]fixture.CmpEndpoint{failing("127.0.0.1", 300)},
			[]fixture.CmpEndpoint{{Target: "https://api.example.com/", Address: "127.0.0.3", N: 300, Latency: time.Millisecond}},
			compare.Disjoint, "no endpoint in common: BEFORE probed 127.0.0.1 at https://sign.example.com/; AFTER probed 127.0.0.3 at https://api.example.com/; the hosts differ"},
		{"other addresses of the URL",
			[]fixture.CmpEndpoint{failing("::1", 300), failing("127.0.0.2", 30)},
			[]fixture.CmpEndpoint{healthy("127.0.0.1")},
			compare.Disjoint, "no endpoint in common: BEFORE probed ::1, 127.0.0.2 at https://sign.example.com/; AFTER probed 127.0.0.1 at https://sign.example.com/; the same URL on other addresses: --match host compares them"},
		{"other addresses of the URL, failing",
			[]fixture.CmpEndpoint{healthy("127.0.0.1")},
			[]fixture.CmpEndpoint{failing("127.0.0.3", 90)},
			compare.Regressed, "regression: 127.0.0.3 (new) 30% against 0% before, p<1e-9; no endpoint in common: BEFORE probed 127.0.0.1 at https://sign.example.com/; AFTER probed 127.0.0.3 at https://sign.example.com/; the same URL on other addresses: --match host compares them"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := compare.Reports(runs(t, tt.before, tt.after))
			if c.Status != tt.status || c.Conclusion != tt.conclusion {
				t.Errorf("%s: %q; want %s: %q", c.Status, c.Conclusion, tt.status, tt.conclusion)
			}
			if c.Regressed() != (tt.status == compare.Regressed) {
				t.Errorf("Regressed() = %v; want %v", c.Regressed(), tt.status == compare.Regressed)
			}
			if fails := tt.status == compare.Regressed || tt.status == compare.Disjoint; c.FailsGate() != fails {
				t.Errorf("FailsGate() = %v; want %v", c.FailsGate(), fails)
			}
			if c.Status == compare.Disjoint {
				for _, sc := range c.Scopes() {
					if sc.Change == compare.ChangeBetter || sc.Tested && sc.Baseline == nil {
						t.Errorf("%s: %s, tested %v; nothing in common, want it shown untested", sc.Scope, sc.Change, sc.Tested)
					}
				}
			}
		})
	}
}

// TestCompareMergedReports: a comparison reads merged reports like any
// other, and warns when the failure definitions differ.
func TestCompareMergedReports(t *testing.T) {
	a := fixture.CmpRun(t, fixture.CmpStart, fixture.CmpEndpoint{Address: "127.0.0.1", N: 100, Latency: time.Millisecond})
	b := fixture.CmpRun(t, fixture.CmpStart, fixture.CmpEndpoint{Address: "127.0.0.1", N: 100, Failed: 50, FailStatus: 503, Latency: time.Millisecond})
	merged, err := fixture.MergeJudged([]*report.Report{a, b}, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	after := fixture.CmpRun(t, fixture.CmpStart.Add(time.Hour), fixture.CmpEndpoint{Address: "127.0.0.1", N: 200, Latency: time.Millisecond})
	after.Plan.FailStatus = "5xx,429"
	c := compare.Reports(merged, after)
	if c.Before.Inputs != 2 || c.Before.Requests != 200 || c.Before.Failed != 50 {
		t.Errorf("before: %d inputs, %d requests, %d failed; want 2, 200, 50", c.Before.Inputs, c.Before.Requests, c.Before.Failed)
	}
	if c.Status != compare.Improved || !strings.HasPrefix(c.Conclusion, "failures gone: 127.0.0.1 25% → 0%") {
		t.Errorf("%s: %q; want improved: failures gone: 127.0.0.1 25%% → 0%%…", c.Status, c.Conclusion)
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "before --fail-status 5xx, after 5xx,429") {
		t.Errorf("notes %q; want one about the different --fail-status", c.Notes)
	}
}

func TestCompareJSON(t *testing.T) {
	c := cmpfix.GoldenComparison(t)
	out := cmpfix.CompareJSON(t, c) // valid against the schema too
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "status", "conclusion", "before", "after", "alpha", "comparisons", "alpha_each",
		"totals", "families", "endpoints", "added", "removed", "notes"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("compare JSON has no %q", k)
		}
	}
	if doc["schema"] != compare.Schema || doc["status"] != "regressed" {
		t.Errorf("schema %v status %v; want %s, regressed", doc["schema"], doc["status"], compare.Schema)
	}
	var back compare.Comparison
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if back.Conclusion != c.Conclusion || len(back.Endpoints) != len(c.Endpoints) || back.Endpoints[2].After != nil {
		t.Errorf("decoded back: %q with %d endpoints; want %q with %d, ::1 after null", back.Conclusion, len(back.Endpoints), c.Conclusion, len(c.Endpoints))
	}
	if !strings.Contains(string(out), `"after": null`) {
		t.Errorf("a removed endpoint's after is not null in JSON")
	}
}
