package compare_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/render"
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
	c := fixture.GoldenComparison(t)
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
		// regression does not pass (it was IMPROVED, exit 0).
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
			c := compare.Reports(fixture.CmpRun(t, fixture.CmpStart, tt.before...), fixture.CmpRun(t, fixture.CmpStart.Add(time.Hour), tt.after...))
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
	c := fixture.GoldenComparison(t)
	var buf bytes.Buffer
	if err := compare.JSON(&buf, c); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "status", "conclusion", "before", "after", "alpha", "comparisons", "alpha_each",
		"totals", "families", "endpoints", "added", "removed", "notes"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("compare JSON has no %q", k)
		}
	}
	if doc["schema"] != compare.CompareSchema || doc["status"] != "regressed" {
		t.Errorf("schema %v status %v; want %s, regressed", doc["schema"], doc["status"], compare.CompareSchema)
	}
	var back compare.Comparison
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Conclusion != c.Conclusion || len(back.Endpoints) != len(c.Endpoints) || back.Endpoints[2].After != nil {
		t.Errorf("decoded back: %q with %d endpoints; want %q with %d, ::1 after null", back.Conclusion, len(back.Endpoints), c.Conclusion, len(c.Endpoints))
	}
	if !strings.Contains(buf.String(), `"after": null`) {
		t.Errorf("a removed endpoint's after is not null in JSON")
	}
}

// TestCompareGolden renders the gateway change as text at 80 and 120
// columns and as Markdown, and the deploy that made an instance slow (with
// --match host) alike, and two comparisons of runs with nothing in common
// (the demo's port moved; another host): every text line fits, and each is
// what testdata holds.
func TestCompareGolden(t *testing.T) {
	gateway, latency := fixture.GoldenComparison(t), fixture.LatencyComparison(t)
	// A run of the demo's gateway that took another port, against one on
	// 47080, and a run of another host: nothing in common, said so.
	ep := func(target, addr string, failed int) fixture.CmpEndpoint {
		return fixture.CmpEndpoint{Target: target, Address: addr, N: 300, Failed: failed, FailStatus: 502, Latency: time.Millisecond}
	}
	onPort := fixture.CmpRun(t, fixture.CmpStart,
		ep("http://sign.pinprobe.test:47080/sign", "127.0.0.1", 0), ep("http://sign.pinprobe.test:47080/sign", "::1", 300))
	moved := fixture.CmpRun(t, fixture.CmpStart.Add(time.Hour),
		ep("http://sign.pinprobe.test:39115/sign", "127.0.0.1", 0), ep("http://sign.pinprobe.test:39115/sign", "::1", 300))
	other := fixture.CmpRun(t, fixture.CmpStart.Add(time.Hour), ep("https://other.example.com/", "192.0.2.7", 0))
	portMoved, otherHost := compare.Reports(onPort, moved), compare.Reports(onPort, other)
	portMoved.Before.File, portMoved.After.File = "a.json", "b.json"
	otherHost.Before.File, otherHost.After.File = "a.json", "other.json"
	for _, f := range []struct {
		file   string
		c      *compare.Comparison
		render render.CompareRenderer
		width  int
	}{
		{"compare-text-80.golden", gateway, render.CompareText(render.Options{Width: 80}), 80},
		{"compare-text-120.golden", gateway, render.CompareText(render.Options{Width: 120}), 120},
		{"compare-markdown.golden", gateway, render.CompareMarkdown, 0},
		{"compare-latency-text-80.golden", latency, render.CompareText(render.Options{Width: 80}), 80},
		{"compare-latency-text-120.golden", latency, render.CompareText(render.Options{Width: 120}), 120},
		{"compare-latency-markdown.golden", latency, render.CompareMarkdown, 0},
		{"compare-port-moved-text-80.golden", portMoved, render.CompareText(render.Options{Width: 80}), 80},
		{"compare-other-host-text-120.golden", otherHost, render.CompareText(render.Options{Width: 120}), 120},
		{"compare-brief-text-80.golden", gateway, render.CompareBriefText(render.Options{Width: 80}), 80},
		{"compare-brief-latency-text-80.golden", latency, render.CompareBriefText(render.Options{Width: 80}), 80},
		{"compare-brief-latency-markdown.golden", latency, render.CompareBriefMarkdown, 0},
	} {
		t.Run(f.file, func(t *testing.T) {
			c := f.c
			var buf bytes.Buffer
			if err := f.render(&buf, c); err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(buf.String(), "\n") {
				if n := utf8.RuneCountInString(line); f.width > 0 && n > f.width {
					t.Errorf("line %d is %d columns wide; want at most %d: %q", i+1, n, f.width, line)
				}
			}
			golden := filepath.Join("testdata", f.file)
			if *fixture.Update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./report -run TestCompareGolden -update to create it)", err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("output differs from %s (rerun with -update if the change is intended)\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

// TestCompareBrief: compare --brief fits one screen (40 lines) in text at
// 80 and 120 columns and in Markdown, even when 30 endpoints got worse; it
// starts with the conclusion, keeps the families and the scopes that
// changed (the worse first), counts the ones it leaves out, and drops what
// only the full comparison shows (the latency intervals, the method). The
// full comparison of the same runs is longer than one screen.
func TestCompareBrief(t *testing.T) {
	var before, after []fixture.CmpEndpoint
	for i := range 30 {
		addr := fmt.Sprintf("127.0.0.%d", i+1)
		before = append(before, fixture.CmpEndpoint{Address: addr, N: 300, FailStatus: 502, Latency: time.Millisecond})
		after = append(after, fixture.CmpEndpoint{Address: addr, N: 300, Failed: 60, FailStatus: 502, Latency: time.Millisecond})
	}
	after = append(after, fixture.CmpEndpoint{Address: "::1", N: 300, Failed: 300, FailStatus: 503, Latency: time.Millisecond})
	many := compare.Reports(fixture.CmpRun(t, fixture.CmpStart, before...), fixture.CmpRun(t, fixture.CmpStart.Add(time.Hour), after...))
	many.Before.File, many.After.File = "before.json", "after.json"
	for name, c := range map[string]*compare.Comparison{"gateway": fixture.GoldenComparison(t), "latency": fixture.LatencyComparison(t), "many": many} {
		for _, f := range []struct {
			format string
			width  int
		}{{"text", 80}, {"text", 120}, {"markdown", 0}} {
			brief, err := render.CompareForFormat(f.format, render.Options{Width: f.width, Brief: true})
			if err != nil {
				t.Fatal(err)
			}
			full, _ := render.CompareForFormat(f.format, render.Options{Width: f.width})
			var b, w bytes.Buffer
			if err := brief(&b, c); err != nil {
				t.Fatal(err)
			}
			if err := full(&w, c); err != nil {
				t.Fatal(err)
			}
			out, where := b.String(), fmt.Sprintf("%s %s %d", name, f.format, f.width)
			lines := strings.Count(out, "\n")
			if lines > 40 {
				t.Errorf("%s: the brief comparison has %d lines; want at most 40:\n%s", where, lines, out)
			}
			if full := strings.Count(w.String(), "\n"); lines >= full {
				t.Errorf("%s: the brief comparison has %d lines, the full one %d", where, lines, full)
			}
			first := strings.ToUpper(c.Status)
			if f.format == "markdown" {
				first = "# pinprobe compare: " + c.Status
			}
			if !strings.HasPrefix(out, first) || !strings.Contains(out, strings.Fields(c.Headline())[0]) {
				t.Errorf("%s: the brief comparison does not start with the conclusion:\n%.300s", where, out)
			}
			for _, not := range []string{"METHOD", "How this was decided", "95% CI"} {
				if strings.Contains(out, not) {
					t.Errorf("%s: the brief comparison has %q", where, not)
				}
			}
			// A scope that got slower keeps its figures, even at 80
			// columns (the rates in percent go first).
			if name == "latency" && !strings.Contains(out, "2.45→42.4ms") {
				t.Errorf("%s: the brief comparison lost the p99 of the scopes that got slower:\n%s", where, out)
			}
			if !strings.Contains(out, "IPv4") && !strings.Contains(out, "ipv4") {
				t.Errorf("%s: the brief comparison has no family row:\n%s", where, out)
			}
		}
	}
	var b bytes.Buffer
	if err := render.CompareBriefText(render.Options{Width: 80})(&b, many); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// the 30 worse endpoints and ::1 (added, all failed): 8 shown, the
	// rest counted.
	if !strings.Contains(out, "31 of 31 endpoints and instances changed") || !strings.Contains(out, "… 23 more in the full comparison") {
		t.Errorf("the brief comparison of 31 changed endpoints does not count them:\n%s", out)
	}
	if !strings.Contains(out, "127.0.0.1: 502 appeared") {
		t.Errorf("the brief comparison does not show the 502s that appeared on 127.0.0.1:\n%s", out)
	}
}

func TestCompareMarkdownIsSafe(t *testing.T) {
	c := fixture.GoldenComparison(t)
	c.Before.File = "x|y`*.json"
	c.Notes = append(c.Notes, "<script>alert(1)</script>")
	var buf bytes.Buffer
	if err := render.CompareMarkdown(&buf, c); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	fixture.CheckMarkdown(t, doc)
	if strings.Contains(strings.ReplaceAll(doc, `\<script>`, ""), "<script>") || !strings.Contains(doc, "`x\\|y`") {
		t.Errorf("markdown holds a raw <script> tag or an unescaped file name:\n%s", doc)
	}
}

func TestCompareTextColor(t *testing.T) {
	c := fixture.GoldenComparison(t)
	var plain, color bytes.Buffer
	if err := render.CompareText(render.Options{})(&plain, c); err != nil {
		t.Fatal(err)
	}
	if err := render.CompareText(render.Options{Color: true})(&color, c); err != nil {
		t.Fatal(err)
	}
	if got := fixture.Ansi.ReplaceAllString(color.String(), ""); got != plain.String() {
		t.Errorf("colored text without its escapes differs from the plain text")
	}
	red := 0
	for _, line := range strings.Split(color.String(), "\n") {
		if strings.HasPrefix(line, render.AnsiRed) {
			red++
		}
	}
	// The conclusion, IPv4 and 127.0.0.2 each with its latencies on the
	// line under it (80 columns), and its 502s.
	if red != 6 {
		t.Errorf("%d red lines; want 6:\n%s", red, color.String())
	}
}

func TestCompareRenderersReturnWriteErrors(t *testing.T) {
	c := fixture.GoldenComparison(t)
	for _, format := range []string{"text", "json", "markdown"} {
		render, err := render.CompareForFormat(format, render.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 100, 1000} {
			if err := render(&fixture.FailingWriter{N: n}, c); !errors.Is(err, fixture.ErrDiskFull) {
				t.Errorf("%s, writer failing after %d bytes: err = %v; want %v", format, n, err, fixture.ErrDiskFull)
			}
		}
	}
	if _, err := render.CompareForFormat("html", render.Options{}); err == nil {
		t.Errorf("CompareForFormat(html) = nil error; want one")
	}
}
