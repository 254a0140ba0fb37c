package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// get fetches url and returns its status, content type and body.
func get(t *testing.T, url string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, req)
}

// do sends req and returns its status, content type and body.
func do(t *testing.T, req *http.Request) (int, string, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestWatchLivePage: GET / on a watch's listener is the report of the
// window in progress, in HTML (reloading itself), Markdown, text and JSON,
// with the suspects since the watch began; ?window=last is the last
// window that ended. A watch over 127.0.0.1 and ::1, where ::1 answers 502,
// names ::1 in the window's verdict and in the suspects; a bad query is a
// 400 in one line.
func TestWatchLivePage(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{Policies: map[netip.Addr]testserver.Policy{testserver.Lo6: testserver.Status(502)}},
		testserver.Lo4a, testserver.Lo6)
	w := startWatch(t, "--listen", "127.0.0.1:0", "-r", "40", "--window", "1s", "--vantage", "zone-a", "--resolve", f.Resolve(), f.URL())
	page := strings.TrimSuffix(w.metrics, "metrics")
	if code, _, body := get(t, page+"?window=last"); code != http.StatusNotFound || !strings.Contains(body, "no window has ended yet") {
		t.Errorf("?window=last before a window ended: %d %q; want 404 saying why", code, body)
	}
	waitFor(t, 10*time.Second, "the suspect ::1 on the page", func() bool {
		_, _, md := get(t, page+"?format=markdown")
		return strings.Contains(md, "address ::1 (ipv6) of app.test") && strings.Contains(md, "still failing")
	})
	code, ctype, html := get(t, page)
	for _, want := range []string{`<meta http-equiv="refresh" content="1">`, "<h2>Suspects since the watch began</h2>", "address ::1 (ipv6) of app.test",
		`<a href="/?window=last">`, "from vantage <span class=\"nw\">zone-a</span>", "in progress", "pinprobe watch --listen"} {
		if !strings.Contains(html, want) {
			t.Errorf("the HTML page has no %q", want)
		}
	}
	if code != http.StatusOK || ctype != "text/html; charset=utf-8" {
		t.Errorf("GET /: %d %s; want 200 text/html", code, ctype)
	}
	if _, _, text := get(t, page+"?format=text"); !strings.HasPrefix(text, "VERDICT ") || !strings.Contains(text, "SUSPECTS SINCE THE WATCH BEGAN") {
		t.Errorf("the text page:\n%s", text)
	}
	waitFor(t, 5*time.Second, "a window ended", func() bool { c, _, _ := get(t, page+"?window=last"); return c == http.StatusOK })
	for _, q := range []string{"?format=json", "?window=last&format=json"} {
		_, ctype, doc := get(t, page+q)
		rep, err := report.Parse([]byte(doc), q)
		if err != nil || ctype != "application/json" {
			t.Fatalf("%s: %s, %v", q, ctype, err)
		}
		if named := strings.Contains(rep.Verdict.Headline, "::1"); !named && strings.Contains(q, "last") || rep.Vantage != "zone-a" || rep.Plan.DurationS != 1 {
			t.Errorf("%s: verdict %q, vantage %q, window %g s; want ::1 named from zone-a, in a window of 1 s", q, rep.Verdict.Headline, rep.Vantage, rep.Plan.DurationS)
		}
		if d := rep.EndedAt.Sub(rep.StartedAt.Time); d > 1500*time.Millisecond {
			t.Errorf("%s lasts %v; want at most the window", q, d)
		}
	}
	_, ctype, js := get(t, page+"suspects")
	var suspects []suspectRow
	if err := json.Unmarshal([]byte(js), &suspects); err != nil || ctype != "application/json" {
		t.Fatalf("/suspects: %s %v: %s", ctype, err, js)
	}
	if !slices.ContainsFunc(suspects, func(s suspectRow) bool {
		return s.Scope == "address" && s.Address == "::1" && s.EndedAt == nil && len(s.RequestIDs) > 0 && s.Since != ""
	}) {
		t.Errorf("/suspects: %s; want ::1's, lasting, with request IDs", js)
	}
	for _, q := range []string{"?format=xml", "?window=first"} {
		if code, _, body := get(t, page+q); code != http.StatusBadRequest || strings.Count(body, "\n") != 1 {
			t.Errorf("%s: %d %q; want 400 in a line", q, code, body)
		}
	}
	if code := w.stop(); code != exitOK {
		t.Errorf("stopped watch: exit %d; want 0", code)
	}
}

// suspectRow is what a test reads of a suspect of GET /suspects.
type suspectRow struct {
	Scope, Address, Since string
	EndedAt               *string  `json:"ended_at"`
	RequestIDs            []string `json:"request_ids"`
}

// TestWatchKeepsWindows: -o DIR keeps each window's report as a saved
// report, the last one (cut short by -d) too; together they hold every
// request the servers received.
func TestWatchKeepsWindows(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a, testserver.Lo4b)
	dir := filepath.Join(t.TempDir(), "windows")
	code, _, stderr := pinprobe(t, "watch", "--listen", "127.0.0.1:0", "-r", "40", "--window", "1s", "-d", "2s",
		"-o", dir, "--resolve", f.Resolve(), f.URL())
	if code != exitOK {
		t.Fatalf("watch: exit %d: %s", code, stderr)
	}
	names := windowFiles(t, dir)
	var kept int64
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := report.Parse(b, n)
		if err != nil {
			t.Fatal(err)
		}
		kept += rep.Totals.Requests
	}
	var hits int64
	for _, b := range f.Backends() {
		hits += b.Hits()
	}
	// 2 s in windows of 1 s is two, and a third of the requests still in
	// flight at the end when the watch stops after its second tick.
	if len(names) < 2 || len(names) > 3 || kept != hits {
		t.Errorf("%d reports holding %d requests (%q); want 2 or 3 (2 s in windows of 1 s) holding the %d the servers received", len(names), kept, names, hits)
	}
}

// TestKeptWindowsPrune: --keep N keeps the newest N windows' reports and
// removes no other file; a directory it cannot write to is said once,
// and again when it writes again.
func TestKeptWindowsPrune(t *testing.T) {
	dir := t.TempDir()
	var said []string
	k := &keptWindows{dir: dir, keep: 2, say: func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }}
	start := time.Date(2026, 12, 5, 19, 0, 0, 0, time.UTC)
	for _, other := range []string{"notes.txt", "pinprobe-watch-mine.txt"} {
		if err := os.WriteFile(filepath.Join(dir, other), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	window := func(i int) *report.Report {
		r := docfix.SavedGolden(t)
		r.StartedAt = report.Time{Time: start.Add(time.Duration(i) * time.Minute)}
		return r
	}
	for i := range 5 {
		k.save(window(i))
	}
	got := windowFiles(t, dir)
	want := []string{windowPrefix + "20261205T190300Z-" + window(3).RunID + ".json", windowPrefix + "20261205T190400Z-" + window(4).RunID + ".json"}
	if !slices.Equal(got, want) || len(said) != 0 {
		t.Errorf("kept %q, said %q; want the newest two %q, nothing said", got, said, want)
	}
	for _, other := range []string{"notes.txt", "pinprobe-watch-mine.txt"} {
		if _, err := os.Stat(filepath.Join(dir, other)); err != nil {
			t.Errorf("%s: %v; pruning must remove only the windows' reports", other, err)
		}
	}
	k.dir = filepath.Join(dir, "notes.txt") // not a directory: every write fails
	k.save(window(5))
	k.save(window(6))
	k.dir = dir
	k.save(window(7))
	if len(said) != 2 || !strings.Contains(said[0], ": not a directory; the watch goes on") || !strings.Contains(said[1], "writing the windows' reports again") {
		t.Errorf("said %q; want the failure once, then that it writes again", said)
	}
}

// windowFiles are the windows' reports in dir, sorted.
func windowFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), windowPrefix) && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	return names
}
