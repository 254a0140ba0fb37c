//go:build unix

package render

import (
	"fmt"
	"image"
	"os"
	"path/filepath"
	"testing"

	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/report"
)

// pageMeasure is what the test's script measures of a page at one width.
type pageMeasure struct {
	Width       int      `json:"width"`
	ScrollWidth int      `json:"scrollWidth"`
	Scrolling   []string `json:"scrolling"`  // tables (but the samples) that scroll inside their box
	Small       []string `json:"small"`      // chart text drawn under 10 px
	Clipped     []string `json:"clipped"`    // chart text cut by its chart's edge
	Broken      []string `json:"broken"`     // names and request IDs that must not break, broken over lines
	KeptHeader  bool     `json:"keptHeader"` // the heading's X-Served-By is one of them
	Charts      []struct {
		ID                   string
		X, Y, W, H           float64 // the chart's box in the page, px
		P50, P99, Cols, Fail float64 // drawn widths of its lines, its columns (failed or not) and its failed ones, px
	} `json:"charts"`
}

// measureScript measures the page in the browser (see pageMeasure): the
// page itself runs no script, so DevTools runs this one.
const measureScript = `(() => {
  const out = {width: innerWidth, scrollWidth: document.documentElement.scrollWidth, scrolling: [], small: [], clipped: [], broken: [], charts: []};
  for (const w of document.querySelectorAll('.table')) {
    if (!w.querySelector('table.samples, table.scroll') && w.scrollWidth > w.clientWidth + 1)
      out.scrolling.push((w.closest('section') || {}).id + ': ' + w.scrollWidth + 'px in ' + w.clientWidth + 'px');
  }
  for (const t of document.querySelectorAll('svg.chart text')) {
    const px = parseFloat(getComputedStyle(t).fontSize) * t.ownerSVGElement.getScreenCTM().a;
    if (px < 10 && t.textContent.trim() !== '') out.small.push(t.textContent + ' (' + px.toFixed(1) + 'px)');
    const r = t.getBoundingClientRect(), box = t.ownerSVGElement.getBoundingClientRect();
    if (r.right > box.right + 0.5 || r.left < box.left - 0.5) out.clipped.push(t.textContent);
  }
  for (const s of document.querySelectorAll('.nw, table.samples code:not(li code)')) {
    if (s.getClientRects().length > 1) out.broken.push(s.textContent);
    if (s.closest('h1') && s.textContent.startsWith('X-Served-By')) out.keptHeader = true;
  }
  for (const fig of document.querySelectorAll('figure.ts')) {
    const r = fig.querySelector('svg').getBoundingClientRect();
    const box = sel => { const e = fig.querySelector(sel); return e ? e.getBoundingClientRect() : null; };
    const width = sel => { const b = box(sel); return b ? b.width : 0; };
    const cols = [box('path.ts-sent'), box('path.ts-fail')].filter(b => b);
    out.charts.push({ID: fig.id, X: r.left + scrollX, Y: r.top + scrollY, W: r.width, H: r.height,
      P50: width('path.ts-p50'), P99: width('path.ts-p99'), Fail: width('path.ts-fail'),
      Cols: cols.length ? Math.max(...cols.map(b => b.right)) - Math.min(...cols.map(b => b.left)) : 0});
  }
  return out;
})()`

// testWidths loads the over-time, golden, hostile and inside pages, and
// the brief pages of the last three, at 800, 1280 and 1920 px and checks
// each at each width: nothing logged to the console, no horizontal
// overflow of the page, no table of counts scrolling inside its box (the
// p99 column cut off), no chart text under 10 px, no name broken at its
// hyphens, and every chart over time drawn: its lines and columns span its
// plot in the DOM, and its colours are in a screenshot of the chart.
// PINPROBE_SCREENSHOTS=DIR keeps screenshots of the whole pages there, to
// look at.
func testWidths(t *testing.T, b *browser) {
	shots := os.Getenv("PINPROBE_SCREENSHOTS")
	pages := []struct {
		name   string
		page   string
		charts int
	}{
		{"over-time", writePage(t, overTimeReport(t)), 4},
		{"golden", writePage(t, fixture.GoldenReport(t)), len(NewView(fixture.GoldenReport(t)).OverTime.Scopes)},
		{"hostile", writePage(t, fixture.HostileReport(t)), len(NewView(fixture.HostileReport(t)).OverTime.Scopes)},
		{"inside", writePage(t, insideReport(t)), len(NewView(insideReport(t)).OverTime.Scopes)},
		// The brief pages (--brief) draw no chart.
		{"golden-brief", writeBriefPage(t, fixture.GoldenReport(t)), 0},
		{"hostile-brief", writeBriefPage(t, fixture.HostileReport(t)), 0},
		{"inside-brief", writeBriefPage(t, insideReport(t)), 0},
		// A watch's live page: the window's report under the watch's sections.
		{"live", writeLivePage(t, insideReport(t)), len(NewView(insideReport(t)).OverTime.Scopes)},
	}
	for _, p := range pages {
		for i, width := range []int{800, 1280, 1920} {
			t.Run(fmt.Sprintf("%s/%d", p.name, width), func(t *testing.T) {
				if i == 0 {
					b.load(t, p.page, width, 900)
				} else {
					b.resize(t, width, 900)
				}
				var m pageMeasure
				b.eval(t, measureScript, &m)
				checkLogs(t, b)
				// The page is as wide as the window, no wider: a
				// screenshot of the whole page would be too.
				if m.Width != width {
					t.Fatalf("the window is %d px wide; want %d", m.Width, width)
				}
				if m.ScrollWidth > m.Width {
					t.Errorf("the page is %d px wide in a window of %d: it overflows sideways", m.ScrollWidth, m.Width)
				}
				for _, s := range m.Scrolling {
					t.Errorf("a table scrolls inside its box, its last columns cut off: %s", s)
				}
				if len(m.Small) > 0 {
					t.Errorf("%d chart labels under 10 px, e.g. %q", len(m.Small), m.Small[:min(len(m.Small), 5)])
				}
				if len(m.Clipped) > 0 {
					t.Errorf("%d chart labels cut by their chart's edge, e.g. %q", len(m.Clipped), m.Clipped[:min(len(m.Clipped), 5)])
				}
				for _, s := range m.Broken {
					t.Errorf("%q breaks over lines", s)
				}
				if p.name == "over-time" && !m.KeptHeader {
					t.Errorf("the heading's X-Served-By is not kept from breaking at its hyphens")
				}
				if len(m.Charts) != p.charts {
					t.Fatalf("%d charts over time; want %d", len(m.Charts), p.charts)
				}
				if shots != "" {
					if err := os.WriteFile(filepath.Join(shots, fmt.Sprintf("%s-%d.png", p.name, width)), b.screenshot(t), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				for _, c := range m.Charts {
					if c.W < 400 || c.W > 720 {
						t.Errorf("%s is %.0f px wide; want 400 to 720 (its labels at 10 to 14 px)", c.ID, c.W)
					}
					plot := c.W * tsPlotW / tsW
					if c.Cols < 0.95*plot || c.P50 < 0.95*plot || c.P99 < 0.95*plot {
						t.Errorf("%s: columns %.0f px, p50 %.0f px, p99 %.0f px wide; want each across the plot's %.0f px", c.ID, c.Cols, c.P50, c.P99, plot)
					}
					// In a screenshot of the chart (and a pixel around it,
					// which the solid pixels at its edge look at): both
					// lines across the plot (the p99 edges the p50 where
					// they meet), and the columns, at least 20 px high on
					// average, grey or failed.
					rect := image.Rect(int(c.X), int(c.Y), int(c.X+c.W), int(c.Y+c.H))
					img := b.capture(t, rect.Inset(-1))
					blue, orange := countNear(img, rect, rgb(0x00, 0x72, 0xb2)), countNear(img, rect, rgb(0xe6, 0x9f, 0x00))
					sent, failed := countSolid(img, rect, rgb(0xa9, 0xbc, 0xcf)), countSolid(img, rect, rgb(0xd5, 0x5e, 0x00))
					if blue < int(0.9*plot) || orange < int(0.9*plot) || sent+failed < int(plot)*20 {
						t.Errorf("%s at %v: %d px of the p50 blue, %d of the p99 orange, %d of the columns' grey and failure colour; want the lines (%d px each) and the columns drawn",
							c.ID, rect, blue, orange, sent+failed, int(plot))
					}
					if c.Fail > 0 && failed < int(c.Fail) {
						t.Errorf("%s: failures across %.0f px in the DOM, %d px of the failure colour in the screenshot", c.ID, c.Fail, failed)
					}
				}
			})
		}
	}
}

// writeBriefPage writes the brief HTML page (--brief) of r to a temp file
// and returns its path.
func writeBriefPage(t *testing.T, r *report.Report) string {
	t.Helper()
	buf := Written(t, writePageHTML, pageOf(r, true, false))
	path := filepath.Join(t.TempDir(), "brief.html")
	if err := os.WriteFile(path, []byte(buf), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
