package render

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/cmpfix"
	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/fixture"
)

// TestCompareTextKeepsLatencies renders comparisons at 80 and 120 columns
// and finds every row's p50 and p99 in its table: a narrow terminal (or
// any piped output, laid out at 80) stacks them under the row, and never
// drops the figure that regressed: p50 0.44 → 31.1ms, p99 4.38 → 34.8ms.
func TestCompareTextKeepsLatencies(t *testing.T) {
	lat := func(base time.Duration) func(int) time.Duration {
		return func(k int) time.Duration {
			if k%100 == 0 {
				return base + 4*time.Millisecond
			}
			return base + time.Duration(k%10)*10*time.Microsecond
		}
	}
	ep := func(addr string, base time.Duration) fixture.CmpEndpoint {
		return fixture.CmpEndpoint{Target: "http://127.0.0.1:40080/", Address: addr, N: 2000, LatencyOf: lat(base)}
	}
	slow := compare.Reports(fixture.CmpRun(t, fixture.CmpStart, ep("127.0.0.1", 400*time.Microsecond)),
		fixture.CmpRun(t, fixture.CmpStart.Add(time.Hour), ep("127.0.0.1", 31*time.Millisecond)))
	// A long IPv6 address behind instances of long names, new and worse
	// and slower: even with the latencies stacked, the row is too wide, so
	// its label goes on a line above it, whole; no figure is cut.
	const v6 = "2001:db8:85a3:1234:5678:8a2e:370:7334"
	pods := []string{"sign-gateway-7d9f8b6c5d-x2k4p-europe-west1", "sign-gateway-7d9f8b6c5d-q8m2z-europe-west1"}
	wide := compare.Reports(
		fixture.CmpRun(t, fixture.CmpStart, fixture.CmpEndpoint{Target: "https://sign.example.com/", Address: "127.0.0.1", N: 20000, LatencyOf: lat(time.Millisecond), Served: pods}),
		fixture.CmpRun(t, fixture.CmpStart.Add(time.Hour),
			fixture.CmpEndpoint{Target: "https://sign.example.com/", Address: "127.0.0.1", N: 20000, LatencyOf: lat(time.Millisecond), Served: pods},
			fixture.CmpEndpoint{Target: "https://sign.example.com/", Address: v6, N: 20000, Failed: 19999, FailStatus: 502, LatencyOf: lat(40 * time.Millisecond), Served: pods}))
	for name, c := range map[string]*compare.Comparison{
		"slowdown": slow, "gateway": cmpfix.GoldenComparison(t), "latency": cmpfix.LatencyComparison(t), "wide": wide,
	} {
		for _, width := range []int{80, 120} {
			t.Run(name+"-"+strconv.Itoa(width), func(t *testing.T) {
				out := Written(t, Must(CompareForFormat("text", Options{Width: width})), c)
				if name == "wide" {
					// The instances by name, as the report lists them, not in
					// the saved order (x2k4p first).
					if inst := out[strings.Index(out, "BY INSTANCE"):]; strings.Index(inst, "q8m2z") > strings.Index(inst, "x2k4p") {
						t.Errorf("x2k4p listed before q8m2z:\n%s", inst)
					}
				}
				all := familyRows(c)
				for i := range c.Endpoints {
					all = append(all, cmpRowOf(&c.Endpoints[i], c.Endpoints[i].Address))
				}
				for _, b := range scopeTables(c.Groups, "Value") { // each header's values by name
					all = append(all, b.(Table).Rows...)
				}
				tables := [][]Row{all}
				rest := out
				for _, rows := range tables {
					for _, row := range rows {
						label, p50, p99 := row.Cells[0], row.Cells[9], row.Cells[10]
						// Each row's line, then its figures on it or the next.
						// On the row's line, or (too long) on a line of its own
						// above it.
						at := strings.Index(rest, " "+label+" ")
						if own := strings.Index(rest, " "+label+"\n"); own >= 0 && (at < 0 || own < at) {
							at = own + len(label) + 2
						}
						if at < 0 {
							t.Fatalf("no row %q in order in:\n%s", label, out)
						}
						rest = rest[at:]
						lines := strings.SplitN(rest, "\n", 3)
						near := strings.Join(lines[:min(2, len(lines))], "\n")
						for _, fig := range []string{p50, p99} {
							if !strings.Contains(near, fig) {
								t.Errorf("row %q lacks %s at %d columns:\n%s\nin:\n%s", label, fig, width, near, out)
							}
						}
						rest = rest[len(lines[0]):]
					}
				}
				CheckWidth(t, out, width)
			})
		}
	}
}

func compareHTML(t *testing.T, c *compare.Comparison) string {
	t.Helper()
	r := Must(CompareForFormat("html", Options{}))
	return Written(t, r, c)
}

// TestCompareHTML: compare --format html is one self-contained page (no
// script, no fetch, its style allowed by hash) with the sections of the
// other formats, a regression marked, and a hostile file name and note
// shown as text; TestHTMLInChromium/compare loads it.
func TestCompareHTML(t *testing.T) {
	c := cmpfix.GoldenComparison(t)
	c.Before.File = "<b>x</b>.json"
	c.Notes = append(c.Notes, "<script>alert(1)</script>")
	doc := parseHTML(t, compareHTML(t, c))
	checkSelfContained(t, doc)
	if n := len(find(doc, tagged("b"))) + len(find(doc, tagged("script"))); n != 0 {
		t.Errorf("the hostile strings made %d elements", n)
	}
	text := textOf(doc)
	for _, want := range []string{"REGRESSED", "The runs", "By address family", "By endpoint", "Statuses and errors that changed",
		"How this was decided", "<b>x</b>.json", "<script>alert(1)</script>"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	var failing []string
	for _, tr := range find(doc, tagged("tr")) {
		for _, a := range tr.Attr {
			if a.Key == "class" && a.Val == "fail" {
				var cells []string
				for _, td := range find(tr, tagged("td")) {
					cells = append(cells, textOf(td))
				}
				failing = append(failing, strings.Join(cells, " "))
			}
		}
	}
	if !slices.ContainsFunc(failing, func(s string) bool { return strings.HasPrefix(s, "✗ 127.0.0.2 ") }) {
		t.Errorf("no failing row of 127.0.0.2 marked ✗: %q", failing)
	}
}
