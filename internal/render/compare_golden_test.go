package render_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/cmpfix"
	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/render"
)

// TestCompareGolden renders the gateway change as text at 80 and 120
// columns and as Markdown, and the deploy that made an instance slow (with
// --match host) alike, and two comparisons of runs with nothing in common
// (the demo's port moved; another host): every text line fits, and each is
// what testdata holds.
func TestCompareGolden(t *testing.T) {
	gateway, latency := cmpfix.GoldenComparison(t), cmpfix.LatencyComparison(t)
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
		{"compare-text-80.golden", gateway, render.Must(render.CompareForFormat("text", render.Options{Width: 80})), 80},
		{"compare-text-120.golden", gateway, render.Must(render.CompareForFormat("text", render.Options{Width: 120})), 120},
		{"compare-markdown.golden", gateway, render.Must(render.CompareForFormat("markdown", render.Options{})), 0},
		{"compare-latency-text-80.golden", latency, render.Must(render.CompareForFormat("text", render.Options{Width: 80})), 80},
		{"compare-latency-text-120.golden", latency, render.Must(render.CompareForFormat("text", render.Options{Width: 120})), 120},
		{"compare-latency-markdown.golden", latency, render.Must(render.CompareForFormat("markdown", render.Options{})), 0},
		{"compare-port-moved-text-80.golden", portMoved, render.Must(render.CompareForFormat("text", render.Options{Width: 80})), 80},
		{"compare-other-host-text-120.golden", otherHost, render.Must(render.CompareForFormat("text", render.Options{Width: 120})), 120},
		{"compare-brief-text-80.golden", gateway, render.Must(render.CompareForFormat("text", render.Options{Width: 80, Brief: true})), 80},
		{"compare-brief-latency-text-80.golden", latency, render.Must(render.CompareForFormat("text", render.Options{Width: 80, Brief: true})), 80},
		{"compare-brief-latency-markdown.golden", latency, render.Must(render.CompareForFormat("markdown", render.Options{Brief: true})), 0},
	} {
		t.Run(f.file, func(t *testing.T) {
			buf := render.Written(t, f.render, f.c)
			if f.width > 0 {
				render.CheckWidth(t, buf, f.width)
			}
			render.CheckGolden(t, filepath.Join("testdata", f.file), buf)
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
	for name, c := range map[string]*compare.Comparison{"gateway": cmpfix.GoldenComparison(t), "latency": cmpfix.LatencyComparison(t), "many": many} {
		for _, f := range []struct {
			format string
			width  int
		}{{"text", 80}, {"text", 120}, {"markdown", 0}} {
			brief := render.Must(render.CompareForFormat(f.format, render.Options{Width: f.width, Brief: true}))
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
	out := render.Written(t, render.Must(render.CompareForFormat("text", render.Options{Width: 80, Brief: true})), many)
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
	c := cmpfix.GoldenComparison(t)
	c.Before.File = "x|y`*.json"
	c.Notes = append(c.Notes, "<script>alert(1)</script>")
	doc := render.Written(t, render.Must(render.CompareForFormat("markdown", render.Options{})), c)
	fixture.CheckMarkdown(t, doc)
	if strings.Contains(strings.ReplaceAll(doc, `\<script>`, ""), "<script>") || !strings.Contains(doc, "`x\\|y`") {
		t.Errorf("markdown holds a raw <script> tag or an unescaped file name:\n%s", doc)
	}
}

func TestCompareTextColor(t *testing.T) {
	c := cmpfix.GoldenComparison(t)
	var plain, color bytes.Buffer
	if err := render.Must(render.CompareForFormat("text", render.Options{}))(&plain, c); err != nil {
		t.Fatal(err)
	}
	if err := render.Must(render.CompareForFormat("text", render.Options{Color: true}))(&color, c); err != nil {
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
	c := cmpfix.GoldenComparison(t)
	for _, format := range []string{"text", "json", "markdown", "html"} {
		render := render.Must(render.CompareForFormat(format, render.Options{}))
		for _, n := range []int{0, 100, 1000} {
			if err := render(&fixture.FailingWriter{N: n}, c); !errors.Is(err, fixture.ErrDiskFull) {
				t.Errorf("%s, writer failing after %d bytes: err = %v; want %v", format, n, err, fixture.ErrDiskFull)
			}
		}
	}
	if _, err := render.CompareForFormat("yaml", render.Options{}); err == nil {
		t.Errorf("CompareForFormat(yaml) = nil error; want one")
	}
}

// TestCompareLatencyCannotTell: a p99 moved by a slowdown on too few
// requests for any p to pass the level (29 ms on 150 a side) says that it
// cannot tell, not "not significant": the least p it could give and about
// how many requests would let it; the conclusion names the total's; with
// that many requests a side the slowdown is found. A median on 3 requests
// a side alike.
func TestCompareLatencyCannotTell(t *testing.T) {
	c := cmpfix.SlowerComparison(t, 150, 0)
	l := &c.Totals.Latency
	q := &l.P99
	if q.Change != compare.LatencySame || !l.CannotTell(q, c.AlphaEach) || q.MinP < c.AlphaEach || q.RequestsToTell <= 150 {
		t.Fatalf("total p99: %s, min_p %g (alpha_each %g), requests_to_tell %d; want same, cannot tell, more than 150 requests to tell",
			q.Change, q.MinP, c.AlphaEach, q.RequestsToTell)
	}
	if p := &l.P50; l.CannotTell(p, c.AlphaEach) || p.MinP >= c.AlphaEach || p.RequestsToTell != 0 || p.Change != compare.LatencySlower {
		t.Errorf("total p50: %s, min_p %g, requests_to_tell %d; want slower, told", p.Change, p.MinP, p.RequestsToTell)
	}
	want := "; total p99 3.33 → 32.3ms: too few requests to tell (about " + strconv.FormatInt(q.RequestsToTell, 10) + " requests a side would)"
	if !strings.HasSuffix(c.Conclusion, want) {
		t.Errorf("conclusion %q; want it to end %q", c.Conclusion, want)
	}
	buf := render.Written(t, render.Must(render.CompareForFormat("text", render.Options{Width: 200})), c)
	for _, scope := range []string{"127.0.0.1", "total"} {
		n := "150 and 150"
		if scope == "total" {
			n = "300 and 300"
		}
		l := lineWith(strings.ReplaceAll(buf, "\n    ", " "), scope+": p99")
		if !strings.Contains(l, "cannot tell with "+n+" requests: no p below ") || strings.Contains(l, "not significant") ||
			!strings.Contains(l, "about "+strconv.FormatInt(q.RequestsToTell, 10)+" requests a side would do") {
			t.Errorf("%s's p99: %q; want it to say it cannot tell with %s requests, and how many would", scope, l, n)
		}
	}
	// As many as it said: the slowdown of the p99 is found.
	c = cmpfix.SlowerComparison(t, int(q.RequestsToTell), 0)
	for _, sc := range c.Endpoints {
		if p := &sc.Latency.P99; p.Change != compare.LatencySlower || sc.Latency.CannotTell(p, c.AlphaEach) {
			t.Errorf("%s with %d requests a side: p99 %s (p %g, min_p %g, alpha_each %g); want slower", sc.Address, q.RequestsToTell, p.Change, p.PSlower, p.MinP, c.AlphaEach)
		}
	}
	// Medians of 3 requests a side (an address) and 6 (the total):
	// Mann-Whitney's least p is 1/C(6,3) and 1/C(12,6).
	c = cmpfix.SlowerComparison(t, 3, 0)
	for _, x := range []struct {
		sc   *compare.ScopeChange
		minP float64
	}{{&c.Endpoints[0], 1.0 / 20}, {&c.Totals, 1.0 / 924}} {
		if p := &x.sc.Latency.P50; !x.sc.Latency.CannotTell(p, c.AlphaEach) || math.Abs(p.MinP-x.minP) > 1e-9 {
			t.Errorf("%s's p50 of %d a side: min_p %g, alpha_each %g; want %g, unable to tell", x.sc.Scope, x.sc.Before.Requests, p.MinP, c.AlphaEach, x.minP)
		}
	}
	if !strings.Contains(c.Conclusion, "; total p50 2.01 → 31.0ms: too few requests to tell") || !strings.HasPrefix(c.Conclusion, "no significant change (total 0% → 0%, p=1): ") {
		t.Errorf("conclusion %q; want no significant change, and the total's p50 too few requests to tell", c.Conclusion)
	}
}

// renderCmp renders c with r, failing the test on an error.
func renderCmp(t *testing.T, c *compare.Comparison, r render.CompareRenderer) string {
	t.Helper()
	return render.Written(t, r, c)
}

// TestCompareHeadlineSaysRegressionOnce: the text headline says
// "regression" once, not "REGRESSED regression: …", in the full and the
// brief comparison and in the gate's line (Headline), while the JSON's
// conclusion starts "regression: ".
func TestCompareHeadlineSaysRegressionOnce(t *testing.T) {
	for name, c := range map[string]*compare.Comparison{
		"failures": cmpfix.GoldenComparison(t), "latency": cmpfix.SlowerComparison(t, 150, 11),
	} {
		if !strings.HasPrefix(c.Conclusion, "regression: ") || c.Headline() != strings.TrimPrefix(c.Conclusion, "regression: ") {
			t.Errorf("%s: conclusion %q, headline %q; want the conclusion to start with regression:, the headline without it", name, c.Conclusion, c.Headline())
		}
		for _, r := range []render.CompareRenderer{render.Must(render.CompareForFormat("text", render.Options{Width: 80})), render.Must(render.CompareForFormat("text", render.Options{Width: 80, Brief: true}))} {
			first, _, _ := strings.Cut(renderCmp(t, c, r), "\n")
			if want := "REGRESSED " + strings.Fields(c.Headline())[0]; !strings.HasPrefix(first, want) || strings.Contains(first, "regression") {
				t.Errorf("%s: first line %q; want it to start %q and say regression once, as REGRESSED", name, first, want)
			}
		}
	}
}

// TestCompareNewFailuresBesideSlower: a deploy made every request 29 ms
// slower and 127.0.0.2 answer 11 502s of 150 where it answered none (not
// significant once the tests are split): the rows of the IPv4 family and
// 127.0.0.2, and the conclusion, say the new failures beside "slower".
func TestCompareNewFailuresBesideSlower(t *testing.T) {
	c := cmpfix.SlowerComparison(t, 150, 11)
	sc := scopeOf(t, c, "family ipv4")
	if n, kinds := sc.NewFailures(); sc.Change != compare.ChangeSame || sc.Latency.Change != compare.LatencySlower || n != 11 || len(kinds) != 1 || kinds[0] != "502" {
		t.Fatalf("IPv4: %s, latency %s, new failures %d %v; want the failures not significant, slower, 11 new 502s", sc.Change, sc.Latency.Change, n, kinds)
	}
	want := "regression: every endpoint slower, in total p50 2.67 → 31.7ms, p<1e-9; new failures too, not significant: 127.0.0.2 0% → 7.3% (502), p=4.0e-4"
	if !strings.HasPrefix(c.Conclusion, want) {
		t.Errorf("conclusion %q; want it to start %q", c.Conclusion, want)
	}
	if c.Status != compare.Regressed {
		t.Errorf("status %s; want regressed", c.Status)
	}
	for _, f := range []struct {
		name string
		r    render.CompareRenderer
	}{
		{"text", render.Must(render.CompareForFormat("text", render.Options{Width: 120}))}, {"brief", render.Must(render.CompareForFormat("text", render.Options{Width: 120, Brief: true}))},
		{"markdown", render.Must(render.CompareForFormat("markdown", render.Options{}))},
	} {
		out := renderCmp(t, c, f.r)
		for _, row := range []struct{ label, change string }{{"IPv4", "slower, new 502"}, {"127.0.0.2", "slower, new 502"}} {
			label := row.label
			if lineWith(out, label+" ", row.change) == "" && lineWith(out, label+"**", row.change) == "" {
				t.Errorf("%s: no row of %s says %q:\n%s", f.name, row.label, row.change, out)
			}
		}
		if l := lineWith(out, "127.0.0.1 ", "0/150"); strings.Contains(l, "new") {
			t.Errorf("%s: 127.0.0.1, which failed no request, says new failures: %q", f.name, l)
		}
	}
}

// TestCompareMarksOnlyWhatATestFound: ✗ marks only a change a test found,
// in the full and the brief comparison: a single 502 on one of 150
// requests (p=1) is listed unmarked; one that a test found (36 of 300,
// p<1e-9) keeps its ✗.
func TestCompareMarksOnlyWhatATestFound(t *testing.T) {
	one := cmpfix.SlowerComparison(t, 150, 1)
	for _, f := range []struct {
		name string
		r    render.CompareRenderer
	}{
		{"text", render.Must(render.CompareForFormat("text", render.Options{Width: 120}))}, {"brief", render.Must(render.CompareForFormat("text", render.Options{Width: 120, Brief: true}))},
		{"markdown", render.Must(render.CompareForFormat("markdown", render.Options{}))}, {"brief markdown", render.Must(render.CompareForFormat("markdown", render.Options{Brief: true}))},
	} {
		out := renderCmp(t, one, f.r)
		l := lineWith(out, "127.0.0.2", "502", "appeared")
		if l == "" || strings.Contains(l, "✗") || !strings.Contains(l, "p=1") {
			t.Errorf("%s: the 502 that appeared at p=1: %q; want it listed, with its p and without ✗:\n%s", f.name, l, out)
		}
		if l := lineWith(renderCmp(t, cmpfix.GoldenComparison(t), f.r), "127.0.0.2", "502", "appeared"); !strings.Contains(l, "✗") {
			t.Errorf("%s: the 502s that appeared at p<1e-9: %q; want ✗", f.name, l)
		}
	}
}

// lineWith is the first line of out that holds every one of words, "" when
// none does.
func lineWith(out string, words ...string) string {
	for _, l := range strings.Split(out, "\n") {
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(l, w)
		}
		if ok {
			return l
		}
	}
	return ""
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
