package render

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/report"
)

// liveOf is a watch's page data of r's window: three suspects, one that
// lasts, one ended, one retired, and a hostile one's name.
func liveOf(r *report.Report, ended bool) *Live {
	at := r.StartedAt.Time
	ids := []string{"pinprobe-0a1b2c3d-1-4", "pinprobe-0a1b2c3d-1-5", "pinprobe-0a1b2c3d-1-6", "pinprobe-0a1b2c3d-1-7"}
	old := []string{"pinprobe-0a1b2c3d-0-1", "pinprobe-0a1b2c3d-0-2"}
	return &Live{Since: at.Add(-time.Hour), Window: 5 * time.Minute, Ended: ended, Vantage: "eu-west-1a", Refresh: 30, Now: r.EndedAt.Time,
		Suspects: []LiveSuspect{
			{What: "address 2001:db8::7 (ipv6) of sign.example.com", Since: at.Add(-50 * time.Minute), Detected: at.Add(-49 * time.Minute),
				Ended: at.Add(-40 * time.Minute), Failures: 8, Requests: 8, IDs: old},
			{What: `backend "<script>alert(1)</script>" of sign.example.com`, Since: at.Add(-30 * time.Minute), Detected: at.Add(-29 * time.Minute),
				Ended: at.Add(-10 * time.Minute), Retired: true, Failures: 5, Requests: 6, IDs: old[:1]},
			{What: "ipv6 of sign.example.com", Since: at.Add(-time.Minute), Detected: at, Failures: 12, Requests: 12, IDs: ids},
		}}
}

// writeLive writes r's live page in format.
func writeLive(t *testing.T, format string, r *report.Report, l *Live, width int) string {
	t.Helper()
	write := Must(LiveForFormat(format, Options{Width: width}))
	return Written(t, func(w io.Writer, r *report.Report) error { return write(w, r, l) }, r)
}

// writeLivePage writes r's live page as HTML into a file, for a browser.
func writeLivePage(t *testing.T, r *report.Report) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "live.html")
	if err := os.WriteFile(path, []byte(writeLive(t, "html", r, liveOf(r, false), 0)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLivePage: a watch's live page is the window's report under the
// watch's sections, in every format: which window and since when, the
// links to the rest, and the suspects since the watch began, the latest
// first, those that last marked, at most three request IDs each, a
// hostile name escaped; a terminal's page fits 80 columns. JSON is not
// the page's: it is the window's report itself.
func TestLivePage(t *testing.T) {
	r := fixture.GoldenReport(t)
	text := writeLive(t, "text", r, liveOf(r, false), 80)
	flat := norm(text)
	if i, j := strings.Index(flat, "VERDICT"), strings.Index(flat, "Still failing: ipv6 of sign.example.com since 20:42:00 UTC, as"); i != 0 || j < 0 || strings.Count(text, "Still failing:") != 1 {
		t.Errorf("the text page does not say once, under the verdict, what is still failing")
	}
	for _, want := range []string{"WATCH", "so far", "from vantage eu-west-1a", "SUSPECTS SINCE THE WATCH BEGAN", "still failing", "(retired)",
		"/?window=last", "/?format=json"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text page has no %q", want)
		}
	}
	CheckWidth(t, text, 80)
	md := writeLive(t, "markdown", r, liveOf(r, true), 0)
	if strings.Contains(md, "pinprobe-0a1b2c3d-1-4") || !strings.Contains(md, "pinprobe-0a1b2c3d-1-7") {
		t.Errorf("the lasting suspect's row does not show its latest three IDs of four")
	}
	if i, j := strings.Index(md, "ipv6 of sign.example.com"), strings.Index(md, "address 2001:db8::7"); i < 0 || j < i {
		t.Errorf("the suspects are not the latest first")
	}
	if i, j := strings.Index(md, "**Verdict:"), strings.Index(md, "**Still failing:**"); i < 0 || j < i {
		t.Errorf("the Markdown page does not say under the verdict what is still failing")
	}
	for _, want := range []string{"## Watch", "## Suspects since the watch began", "the last window that ended", `/?window=last\&format=json`, "**The window in progress:** /"} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown page of the last window has no %q", want)
		}
	}
	html := writeLive(t, "html", r, liveOf(r, false), 0)
	for _, want := range []string{`<meta http-equiv="refresh" content="30">`, `<p class="banner" role="alert"><strong>Still failing:</strong>`, "&lt;script&gt;", `<a href="/?format=markdown">`, "This page reloads itself every 30 s."} {
		if !strings.Contains(html, want) {
			t.Errorf("the HTML page has no %q", want)
		}
	}
	if strings.Contains(html, "<script>") {
		t.Errorf("a suspect's name made an element")
	}
	quiet := writeLive(t, "markdown", r, &Live{Since: r.StartedAt.Time, Window: time.Minute, Now: r.EndedAt.Time}, 0)
	if !strings.Contains(quiet, "None: no address, family or instance has failed more than the rest since") {
		t.Errorf("a page with no suspect does not say so:\n%s", quiet)
	}
	if _, err := LiveForFormat("json", Options{}); err == nil {
		t.Errorf("LiveForFormat(json): no error; the JSON of a window is its report")
	}
}
