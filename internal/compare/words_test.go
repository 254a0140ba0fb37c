package compare_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/render"
)

// renderCmp renders c with r, failing the test on an error.
func renderCmp(t *testing.T, c *compare.Comparison, r render.CompareRenderer) string {
	t.Helper()
	var buf bytes.Buffer
	if err := r(&buf, c); err != nil {
		t.Fatal(err)
	}
	return buf.String()
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

// TestCompareHeadlineSaysRegressionOnce: the text headline read
// "REGRESSED regression: 127.0.0.2 0% → 12%, …"; the status says it once
// now, in the full and the brief comparison, and in the gate's line
// (Headline), while the JSON's conclusion still starts "regression: ".
func TestCompareHeadlineSaysRegressionOnce(t *testing.T) {
	for name, c := range map[string]*compare.Comparison{
		"failures": fixture.GoldenComparison(t), "latency": fixture.SlowerComparison(t, 150, 11),
	} {
		if !strings.HasPrefix(c.Conclusion, "regression: ") || c.Headline() != strings.TrimPrefix(c.Conclusion, "regression: ") {
			t.Errorf("%s: conclusion %q, headline %q; want the conclusion to start with regression:, the headline without it", name, c.Conclusion, c.Headline())
		}
		for _, r := range []render.CompareRenderer{render.CompareText(render.Options{Width: 80}), render.CompareBriefText(render.Options{Width: 80})} {
			first, _, _ := strings.Cut(renderCmp(t, c, r), "\n")
			if want := "REGRESSED " + strings.Fields(c.Headline())[0]; !strings.HasPrefix(first, want) || strings.Contains(first, "regression") {
				t.Errorf("%s: first line %q; want it to start %q and say regression once, as REGRESSED", name, first, want)
			}
		}
	}
}

// TestCompareNewFailuresBesideSlower: a deploy made every request 29 ms
// slower and 127.0.0.2 answer 11 502s of 150 where it answered none (not
// significant once the tests are split). The IPv4 family and 127.0.0.2
// read only "slower", and the conclusion said only the slowdown; now the
// new failures are said beside it, in the rows and the conclusion.
func TestCompareNewFailuresBesideSlower(t *testing.T) {
	c := fixture.SlowerComparison(t, 150, 11)
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
		{"text", render.CompareText(render.Options{Width: 120})}, {"brief", render.CompareBriefText(render.Options{Width: 120})},
		{"markdown", render.CompareMarkdown},
	} {
		out := renderCmp(t, c, f.r)
		for _, row := range []struct{ label, change string }{{"ipv4", "slower, new 502"}, {"127.0.0.2", "slower, new 502"}} {
			label := row.label
			if f.name == "markdown" && label == "ipv4" {
				label = "IPv4"
			}
			if lineWith(out, label+" ", row.change) == "" && lineWith(out, label+"**", row.change) == "" {
				t.Errorf("%s: no row of %s says %q:\n%s", f.name, row.label, row.change, out)
			}
		}
		if l := lineWith(out, "127.0.0.1 ", "0/150"); strings.Contains(l, "new") {
			t.Errorf("%s: 127.0.0.1, which failed no request, says new failures: %q", f.name, l)
		}
	}
}

// TestCompareMarksOnlyWhatATestFound: a single 502 that appeared on one of
// 150 requests (p=1) was marked ✗ like a regression, in the full and the
// brief comparison; ✗ marks only a change a test found now, and the 502 is
// still listed. One that a test found (36 of 300, p<1e-9) keeps its ✗.
func TestCompareMarksOnlyWhatATestFound(t *testing.T) {
	one := fixture.SlowerComparison(t, 150, 1)
	for _, f := range []struct {
		name string
		r    render.CompareRenderer
	}{
		{"text", render.CompareText(render.Options{Width: 120})}, {"brief", render.CompareBriefText(render.Options{Width: 120})},
		{"markdown", render.CompareMarkdown}, {"brief markdown", render.CompareBriefMarkdown},
	} {
		out := renderCmp(t, one, f.r)
		l := lineWith(out, "127.0.0.2", "502", "appeared")
		if l == "" || strings.Contains(l, "✗") || !strings.Contains(l, "p=1") {
			t.Errorf("%s: the 502 that appeared at p=1: %q; want it listed, with its p and without ✗:\n%s", f.name, l, out)
		}
		if l := lineWith(renderCmp(t, fixture.GoldenComparison(t), f.r), "127.0.0.2", "502", "appeared"); !strings.Contains(l, "✗") {
			t.Errorf("%s: the 502s that appeared at p<1e-9: %q; want ✗", f.name, l)
		}
	}
}
