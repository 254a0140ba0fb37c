//go:build unix

package render

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/report"

	"golang.org/x/net/html"
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

// runChromium opens page in headless Chromium with flags and returns what it
// wrote on stdout. It runs in its own process group, which is killed when it
// is done or after a minute and a half; its profile, cache and home are
// temp dirs. The page must log nothing to the console: it has no script,
// so a console line is a blocked fetch, a refused style sheet or a parse
// error.
// browserMu lets one Chromium run at a time: the browser tests run beside
// the others (they mostly wait for it), but two browsers started at once
// on a loaded machine had one close its pipe at start (CI, once).
var browserMu sync.Mutex

func runChromium(t *testing.T, page string, flags ...string) []byte {
	t.Helper()
	bin := chromiumPath(t)
	browserMu.Lock()
	defer browserMu.Unlock()
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(home, "profile"), "--enable-logging=stderr", "--v=0",
	}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+page)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"), "XDG_DATA_HOME="+filepath.Join(home, "data"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	err := cmd.Wait()
	// The browser's helpers (zygote, GPU, renderer) share its group: end
	// any that outlive it.
	if kerr := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
		t.Errorf("kill chromium's process group: %v", kerr)
	}
	if ctx.Err() != nil {
		t.Fatalf("chromium %s: timed out after 90s; stderr:\n%s", strings.Join(flags, " "), stderr.String())
	}
	if err != nil {
		t.Fatalf("chromium %s: %v; stderr:\n%s", strings.Join(flags, " "), err, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "CONSOLE") {
			t.Errorf("the page logged to the console: %s", line)
		}
	}
	return stdout.Bytes()
}

// TestHTMLInChromium loads the golden, the hostile and the inside pages in
// Chromium and checks the DOM it built: the charts hold a series per
// endpoint (and per instance) and the bars and segments the report
// implies, hostile text made no element, and nothing was logged (no
// blocked fetch, no refused style sheet).
func TestHTMLInChromium(t *testing.T) {
	t.Parallel() // mostly waiting for the browser
	cases := map[string]struct {
		rep   *report.Report
		title string
	}{
		"golden":  {fixture.GoldenReport(t), "pinprobe: 2001:db8::7 (sign.example.com/) answers 502"},
		"hostile": {fixture.HostileReport(t), "pinprobe: 2001:db8::7 (sign.example.com/) answers 502"},
		"inside":  {insideReport(t), "pinprobe: IPv6 (2001:db8::1) answers 502; X-Served-By: gw-3 behind 192.0.2.2 answers 502"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dom := runChromium(t, writePage(t, tc.rep), "--dump-dom")
			doc, err := html.Parse(bytes.NewReader(dom))
			if err != nil {
				t.Fatalf("parse the dumped DOM: %v", err)
			}
			titles := find(doc, tagged("title"))
			if len(titles) == 0 || !strings.HasPrefix(textOf(titles[0]), tc.title) {
				t.Fatalf("the browser did not load the page; DOM:\n%.500s", dom)
			}
			checkSelfContained(t, doc)
			switch name {
			case "inside":
				chart := byID(doc, "instances-chart-1")
				if chart == nil || len(find(chart, classed("series"))) != 4 {
					t.Errorf("the browser shows no instance chart of four series")
				}
				if n := len(find(byID(doc, "connections"), classed("port"))); n != 3 {
					t.Errorf("the browser shows %d failing connections; want 3", n)
				}
			default:
				checkGoldenCharts(t, doc)
			}
			if name == "hostile" {
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

// TestHTMLInstancesScreenshot screenshots the inside page and checks the
// instance chart was drawn with its style: four grey tracks (the style
// sheet's colour, not SVG's default black) and one failure bar.
func TestHTMLInstancesScreenshot(t *testing.T) {
	t.Parallel() // mostly waiting for the browser
	shot := filepath.Join(t.TempDir(), "shot.png")
	runChromium(t, writePage(t, insideReport(t)), "--hide-scrollbars", "--screenshot="+shot, "--window-size=1280,4000")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
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

// TestHTMLScreenshot screenshots the golden page in Chromium and checks the
// charts were drawn: the failure colour fills the failing columns inside
// the timeline's strips, the answer bars and the latency markers are
// there, and the page is not blank.
func TestHTMLScreenshot(t *testing.T) {
	t.Parallel() // mostly waiting for the browser
	shot := filepath.Join(t.TempDir(), "shot.png")
	runChromium(t, writePage(t, fixture.GoldenReport(t)), "--hide-scrollbars", "--screenshot="+shot, "--window-size=1280,5200")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 5200 {
		t.Fatalf("screenshot is %dx%d; want 1280x5200", b.Dx(), b.Dy())
	}

	var ink int
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				ink++
			}
		}
	}
	if share := float64(ink) / float64(b.Dx()*b.Dy()); share < 0.05 {
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
	blue := countSolid(img, b, rgb(0x00, 0x72, 0xb2))
	errs := countNear(img, b, rgb(0xcc, 0x79, 0xa7)) + countNear(img, b, rgb(0x88, 0x22, 0x55))
	green := countNear(img, b, rgb(0x00, 0x9e, 0x73))
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

// nearColour reports whether c is within a few levels of want in each channel.
func nearColour(c color.Color, want color.RGBA) bool {
	r, g, b, _ := c.RGBA()
	d := func(v uint32, w uint8) bool { return max(int(v>>8)-int(w), int(w)-int(v>>8)) <= 6 }
	return d(r, want.R) && d(g, want.G) && d(b, want.B)
}

// countNear counts the pixels in rect of about colour c.
func countNear(img image.Image, rect image.Rectangle, c color.RGBA) int {
	n := 0
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		for x := rect.Min.X; x < rect.Max.X; x++ {
			if nearColour(img.At(x, y), c) {
				n++
			}
		}
	}
	return n
}

// solid reports whether the pixel at x, y and its eight neighbours are all
// about colour c: the inside of a filled shape, not the edge of a letter.
func solid(img image.Image, x, y int, c color.RGBA) bool {
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			if !(image.Pt(x+dx, y+dy).In(img.Bounds()) && nearColour(img.At(x+dx, y+dy), c)) {
				return false
			}
		}
	}
	return true
}

// countSolid counts the solid pixels of colour c in rect.
func countSolid(img image.Image, rect image.Rectangle, c color.RGBA) int {
	n := 0
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		for x := rect.Min.X; x < rect.Max.X; x++ {
			if solid(img, x, y, c) {
				n++
			}
		}
	}
	return n
}

// solidBounds is the bounding box of the solid pixels of colour c.
func solidBounds(img image.Image, c color.RGBA) (image.Rectangle, bool) {
	var box image.Rectangle
	found := false
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if solid(img, x, y, c) {
				p := image.Rect(x, y, x+1, y+1)
				if !found {
					box, found = p, true
				} else {
					box = box.Union(p)
				}
			}
		}
	}
	return box, found
}
