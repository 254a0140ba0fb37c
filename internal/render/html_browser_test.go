//go:build unix

package render

import (
	"bytes"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/cmpfix"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/report"
)

// chromiumPath finds headless Chromium: Debian's chromium package. Without
// it the browser tests skip, except under CI, which installs it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	check.Long(t, "the browser tests")
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed: CI installs it (apt-get install chromium)")
	}
	t.Skip("chromium is not installed (apt-get install chromium)")
	return ""
}

// writePage renders r to an HTML file in a temp dir.
func writePage(t *testing.T, r *report.Report) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, []byte(renderHTML(t, r)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHTMLInChromium opens the pages in one headless Chromium, driven over
// DevTools (see browser): one start costs about as much as a page's
// checks, so every browser test is a subtest of this one. Each checks,
// besides its own claims, that its page logged nothing: the pages run no
// script, so a line is a blocked fetch, a refused style sheet or a parse
// error.
func TestHTMLInChromium(t *testing.T) {
	t.Parallel() // mostly waiting for the browser
	b := startBrowser(t)
	t.Run("dom", func(t *testing.T) { testDOM(t, b) })
	t.Run("join", func(t *testing.T) { testJoinDOM(t, b) })
	t.Run("compare", func(t *testing.T) { testCompareDOM(t, b) })
	t.Run("screenshot", func(t *testing.T) { testScreenshot(t, b) })
	t.Run("instances", func(t *testing.T) { testInstancesScreenshot(t, b) })
	t.Run("widths", func(t *testing.T) { testWidths(t, b) })
}

// checkLogs fails t for each line the pages logged since the last check.
func checkLogs(t *testing.T, b *browser) {
	t.Helper()
	for _, l := range b.pageLogs() {
		t.Errorf("the page logged: %s", logLine(l))
	}
}

// dom loads page and returns the DOM the browser built, as HTML.
func dom(t *testing.T, b *browser, page string) string {
	t.Helper()
	b.load(t, page, 1280, 900)
	var s string
	b.eval(t, "document.documentElement.outerHTML", &s)
	checkLogs(t, b)
	return s
}

// testDOM loads the golden, the hostile and the inside pages and checks
// the DOM the browser built: the charts hold a series per endpoint (and
// per instance) and the bars and segments the report implies, and hostile
// text made no element.
func testDOM(t *testing.T, b *browser) {
	cases := []struct {
		name  string
		rep   *report.Report
		title string
	}{
		{"golden", fixture.GoldenReport(t), "pinprobe: 2001:db8::7 (sign.example.com/) answers 502"},
		{"hostile", fixture.HostileReport(t), "pinprobe: 2001:db8::7 (sign.example.com/) answers 502"},
		{"inside", insideReport(t), "pinprobe: IPv6 (2001:db8::1) answers 502; X-Served-By: gw-3 behind 192.0.2.2 answers 502"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			page := dom(t, b, writePage(t, tc.rep))
			doc := parseHTML(t, page)
			titles := find(doc, tagged("title"))
			if len(titles) == 0 || !strings.HasPrefix(textOf(titles[0]), tc.title) {
				t.Fatalf("the browser did not load the page; DOM:\n%.500s", page)
			}
			checkSelfContained(t, doc)
			switch tc.name {
			case "inside":
				chart := byID(doc, "instances-chart-1")
				if chart == nil || len(find(chart, classed("series"))) != 4 {
					t.Errorf("the browser shows no instance chart of four series")
				}
				if n := len(connPorts(byID(doc, "connections"))); n != 3 {
					t.Errorf("the browser shows %d failing connections; want 3", n)
				}
			default:
				checkGoldenCharts(t, doc)
			}
			if tc.name == "hostile" {
				for _, el := range []string{"b", "i"} {
					if n := len(find(doc, tagged(el))); n > 0 {
						t.Errorf("hostile text became %d <%s> elements in the browser", n, el)
					}
				}
				if !strings.Contains(textOf(doc), "Failures <script>alert(6)</script> here") {
					t.Errorf("the browser does not show the hostile summary as text")
				}
			}
		})
	}
}

// testJoinDOM loads the join's page (see TestJoinHTML): the browser shows
// it, and it logged nothing.
func testJoinDOM(t *testing.T, b *browser) {
	var buf bytes.Buffer
	if err := writePageHTML(&buf, joinPage(sampleJoin())); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "join.html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if page := dom(t, b, path); !strings.Contains(page, "All 50 502s were routed to") {
		t.Errorf("Chromium did not load the join's page:\n%.500s", page)
	}
}

// testCompareDOM loads the comparison's page (see TestCompareHTML): the
// browser shows it, and it logged nothing.
func testCompareDOM(t *testing.T, b *browser) {
	path := filepath.Join(t.TempDir(), "compare.html")
	if err := os.WriteFile(path, []byte(compareHTML(t, cmpfix.GoldenComparison(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	if page := dom(t, b, path); !strings.Contains(page, "127.0.0.2 0% → 12%") || !strings.Contains(page, "By address family") {
		t.Errorf("Chromium did not load the comparison's page:\n%.500s", page)
	}
	checkLogs(t, b)
}

// testInstancesScreenshot screenshots the inside page and checks the
// instance chart was drawn with its style: four grey tracks (the style
// sheet's colour, not SVG's default black) and one failure bar.
func testInstancesScreenshot(t *testing.T, b *browser) {
	b.load(t, writePage(t, insideReport(t)), 1280, 4000)
	img := b.capture(t, image.Rect(0, 0, 1280, 4000))
	checkLogs(t, b)
	// The tracks are the only place of this grey: 586 × 12 units each,
	// about 670 × 14 pixels at this width; three of four are bare.
	tracks, ok := solidBounds(img, rgb(0xee, 0xf1, 0xf4))
	if !ok {
		t.Fatalf("no instance track (its grey) in the screenshot")
	}
	bare := countSolid(img, tracks, rgb(0xee, 0xf1, 0xf4))
	fail := countSolid(img, tracks, rgb(0xd5, 0x5e, 0x00))
	black := countSolid(img, tracks, rgb(0, 0, 0))
	t.Logf("tracks %v: grey %d px, failure colour %d px, black %d px", tracks, bare, fail, black)
	if bare < 3*500*8 {
		t.Errorf("%d pixels of bare track; want three tracks of at least 500×8", bare)
	}
	if fail < 500*8 {
		t.Errorf("%d pixels of the failure colour among the tracks; want gw-3's full bar, at least 500×8", fail)
	}
	if black > 200 {
		t.Errorf("%d black pixels among the tracks: a shape drawn without its style", black)
	}
}

// testScreenshot screenshots the golden page in a window of 1280×5200 and
// checks the charts were drawn: the failure colour fills the failing
// columns inside the timeline's strips, the answer bars and the latency
// markers are there, and the page is not blank.
func testScreenshot(t *testing.T, b *browser) {
	b.load(t, writePage(t, fixture.GoldenReport(t)), 1280, 5200)
	img := b.capture(t, image.Rect(0, 0, 1280, 5200))
	checkLogs(t, b)

	ink := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		row := img.Pix[img.PixOffset(bounds.Min.X, y):img.PixOffset(bounds.Max.X, y)]
		for i := 0; i < len(row); i += 4 {
			if row[i] < 0xf0 || row[i+1] < 0xf0 || row[i+2] < 0xf0 {
				ink++
			}
		}
	}
	if share := float64(ink) / float64(bounds.Dx()*bounds.Dy()); share < 0.05 {
		t.Errorf("%.1f%% of the screenshot is not white; want a drawn page", share*100)
	}

	// The timeline's strips are the only place of the "sent" grey; inside
	// their bounding box the failure colour is the failing columns only:
	// 2001:db8::7's ten columns three-quarters full, 198.51.100.20's six a
	// quarter full. At the screenshot's scale that is thousands of pixels.
	strips, ok := solidBounds(img, rgb(0xd3, 0xdc, 0xe5))
	if !ok {
		t.Fatalf("no timeline strip (the grey of columns with requests) in the screenshot")
	}
	if strips.Dx() < 500 || strips.Dy() < 100 {
		t.Errorf("the timeline strips span %v; want a chart at least 500×100 pixels", strips)
	}
	fails := countSolid(img, strips, rgb(0xd5, 0x5e, 0x00))
	blue := countSolid(img, bounds, rgb(0x00, 0x72, 0xb2))
	errs := countNear(img, bounds, rgb(0xcc, 0x79, 0xa7)) + countNear(img, bounds, rgb(0x88, 0x22, 0x55))
	green := countNear(img, bounds, rgb(0x00, 0x9e, 0x73))
	t.Logf("strips %v; failure colour in them %d px; 200 blue %d px; error colours %d px; p90 green %d px; ink %d px",
		strips, fails, blue, errs, green, ink)
	if n := fails; n < 5000 {
		t.Errorf("%d pixels of the failure colour inside the timeline strips %v; want at least 5000", n, strips)
	}
	// The answers per family: 200 is the blue of the bars (94 requests).
	if n := blue; n < 8000 {
		t.Errorf("%d pixels of the 200 blue; want the answer bars, at least 8000", n)
	}
	// The answers per family: the two error classes, pink and wine (hatched).
	if n := errs; n < 300 {
		t.Errorf("%d pixels of the error colours; want the error segments, at least 300", n)
	}
	// The latency chart: the green p90 diamonds of four endpoints and the
	// legend.
	if n := green; n < 150 {
		t.Errorf("%d pixels of the p90 green; want the diamonds, at least 150", n)
	}
}

func rgb(r, g, b uint8) color.RGBA { return color.RGBA{r, g, b, 0xff} }

// near reports whether the pixel at x, y is within a few levels of c in
// each channel. The checks read the screenshot's bytes: img.At boxes a
// colour per call, which cost seconds a page under the race detector.
func near(img *image.RGBA, x, y int, c color.RGBA) bool {
	p := img.Pix[img.PixOffset(x, y):]
	d := func(v, w uint8) bool { return max(int(v)-int(w), int(w)-int(v)) <= 6 }
	return d(p[0], c.R) && d(p[1], c.G) && d(p[2], c.B)
}

// countNear counts the pixels in rect of about colour c.
func countNear(img *image.RGBA, rect image.Rectangle, c color.RGBA) int {
	rect = rect.Intersect(img.Bounds())
	n := 0
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		for x := rect.Min.X; x < rect.Max.X; x++ {
			if near(img, x, y, c) {
				n++
			}
		}
	}
	return n
}

// eachSolid calls f for each solid pixel of colour c in rect: one whose
// eight neighbours, all in the image, are about c too — the inside of a
// filled shape, not the edge of a letter. Each pixel is compared with c
// once: a row's flags mark where it and its two neighbours in the row are
// near c, and a pixel is solid where its row and the rows above and below
// are flagged.
func eachSolid(img *image.RGBA, rect image.Rectangle, c color.RGBA, f func(x, y int)) {
	rect = rect.Intersect(img.Bounds().Inset(1))
	if rect.Empty() {
		return
	}
	flag := func(row []bool, y int) {
		left, here := near(img, rect.Min.X-1, y, c), near(img, rect.Min.X, y, c)
		for i := range row {
			right := near(img, rect.Min.X+i+1, y, c)
			row[i] = left && here && right
			left, here = here, right
		}
	}
	above, row, below := make([]bool, rect.Dx()), make([]bool, rect.Dx()), make([]bool, rect.Dx())
	flag(above, rect.Min.Y-1)
	flag(row, rect.Min.Y)
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		flag(below, y+1)
		for i := range row {
			if above[i] && row[i] && below[i] {
				f(rect.Min.X+i, y)
			}
		}
		above, row, below = row, below, above
	}
}

// countSolid counts the solid pixels of colour c in rect (see eachSolid).
func countSolid(img *image.RGBA, rect image.Rectangle, c color.RGBA) int {
	n := 0
	eachSolid(img, rect, c, func(int, int) { n++ })
	return n
}

// solidBounds is the bounding box of the solid pixels of colour c.
func solidBounds(img *image.RGBA, c color.RGBA) (image.Rectangle, bool) {
	var box image.Rectangle
	found := false
	eachSolid(img, img.Bounds(), c, func(x, y int) {
		box = box.Union(image.Rect(x, y, x+1, y+1))
		found = true
	})
	return box, found
}
