package main

import (
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// vantageRun runs pinprobe against f from vantage name (args name it,
// "" for the default) and returns the saved report's path and what it
// holds.
func vantageRun(t *testing.T, f *testserver.Fleet, dir, file string, args ...string) (string, *report.Report) {
	t.Helper()
	path := filepath.Join(dir, file)
	base := []string{"-q", "--rate", "400", "-n", "200", "--no-preflight", "--resolve", f.Resolve(), "--format", "json", "-o", path}
	code, _, stderr := pinprobe(t, append(append(base, args...), f.URL())...)
	if code != exitOK && code != exitFail {
		t.Fatalf("%s: exit %d; stderr:\n%s", file, code, stderr)
	}
	checkSchemaFile(t, kindReport, path)
	return path, readSaved(t, path)
}

func readSaved(t *testing.T, path string) *report.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Parse(b, path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// mergeJSON is `pinprobe report --format json FILE...`, saved to out.
func mergeJSON(t *testing.T, out string, files ...string) *report.Report {
	t.Helper()
	code, _, stderr := pinprobe(t, append([]string{"report", "--format", "json", "-o", out}, files...)...)
	if code != exitOK && code != exitFail {
		t.Fatalf("report: exit %d; stderr:\n%s", code, stderr)
	}
	checkSchemaFile(t, kindReport, out)
	return readSaved(t, out)
}

func TestVantageFlag(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	dir := t.TempDir()

	_, r := vantageRun(t, f, dir, "named.json", "--vantage", "eu-west-1a")
	if r.Vantage != "eu-west-1a" {
		t.Errorf("--vantage eu-west-1a: report vantage %q", r.Vantage)
	}
	host, _ := os.Hostname()
	_, r = vantageRun(t, f, dir, "default.json")
	if want := report.HostVantage(host); r.Vantage != want || want == "" && host != "" {
		t.Errorf("default vantage %q; want the host name %q made a vantage name, %q", r.Vantage, host, want)
	}
	zone := filepath.Join(dir, "zone")
	if err := os.WriteFile(zone, []byte("  us-central1-b \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, r = vantageRun(t, f, dir, "file.json", "--vantage", "@"+zone)
	if r.Vantage != "us-central1-b" {
		t.Errorf("--vantage @FILE: report vantage %q; want the file's trimmed first line", r.Vantage)
	}

	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("eu west\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ value, want string }{
		{"eu west", `--vantage "eu west": character ' '`},
		{"-eu", "must start with a letter or digit"},
		{strings.Repeat("a", 64), "64 characters: at most 63"},
		{"a\x1b[31m", `--vantage "a\x1b[31m"`},
		{"@" + filepath.Join(dir, "missing"), "--vantage " + filepath.Join(dir, "missing")},
		{"@" + bad, `--vantage @` + bad + `: "eu west"`},
	} {
		refused(t, tt.want, "-q", "-n", "1", "--resolve", f.Resolve(), "--vantage", tt.value, f.URL())
	}
	if f.Total() != 3*200 {
		t.Errorf("the server saw %d requests; the bad --vantage values must send none (want %d)", f.Total(), 3*200)
	}
}

// vantageRunsAtOnce runs pinprobe against f from each of vantages at the
// same time, each run's requests carrying its vantage in X-Vantage, and
// returns the saved reports' paths, in order.
func vantageRunsAtOnce(t *testing.T, f *testserver.Fleet, dir string, vantages ...[2]string) []string {
	t.Helper()
	paths := make([]string, len(vantages))
	done := make([]<-chan runOutcome, len(vantages))
	for i, v := range vantages {
		paths[i] = filepath.Join(dir, v[0])
		done[i] = goPinprobe(t.Context(), "-q", "--rate", "400", "-n", "200", "--no-preflight", "--resolve", f.Resolve(),
			"--format", "json", "-o", paths[i], "--vantage", v[1], "-H", "X-Vantage: "+v[1], f.URL())
	}
	for i, d := range done {
		o := <-d
		o.noPanic(t)
		if o.code != exitOK && o.code != exitFail {
			t.Fatalf("%s: exit %d; stderr:\n%s", vantages[i][0], o.code, o.stderr)
		}
		checkSchemaFile(t, kindReport, paths[i])
	}
	return paths
}

// TestVantageVerdict merges runs from several vantage points of one
// loopback fleet, each recorded with --vantage: a healthy merge and one
// whose failures are spread alike over the vantages name no vantage; one
// in which ::1 fails only for the runs of eu-west, at the same time as
// us-east's, names eu-west and ::1, and the breakdown by vantage adds up
// exactly, through a merge of merges; one in which ::1 failed during
// eu-west's run and recovered before us-east's names no vantage, and says
// why.
func TestVantageVerdict(t *testing.T) {
	t.Parallel()
	check.Long(t, "runs from several vantages (the judge tests the same on built reports)")
	var failing6 atomic.Bool
	var spread atomic.Bool
	var eu6 atomic.Int64 // eu-west's requests to ::1
	rnd4 := testserver.Random(0.1, 4, testserver.Answer{Status: http.StatusBadGateway})
	rnd6 := testserver.Random(0.1, 6, testserver.Answer{Status: http.StatusBadGateway})
	policy := func(rnd testserver.Policy, six bool) testserver.Policy {
		return func(n int64, r *http.Request) testserver.Answer {
			switch {
			case spread.Load():
				return rnd(n, r)
			case six && failing6.Load() && r.Header.Get("X-Vantage") == "eu-west" && eu6.Add(1)%2 == 0:
				return testserver.Answer{Status: http.StatusBadGateway}
			}
			return testserver.Answer{Status: http.StatusOK}
		}
	}
	f := testserver.StartFleet(t, testserver.FleetOptions{Policies: map[netip.Addr]testserver.Policy{
		testserver.Lo4a: policy(rnd4, false), testserver.Lo6: policy(rnd6, true),
	}}, testserver.Lo4a, testserver.Lo6)
	dir := t.TempDir()

	vantageTests := func(m *report.Report) int {
		tests := 0
		for _, tt := range m.Verdict.Tests {
			if tt.Kind == report.TestVantage {
				tests++
			}
		}
		return tests
	}
	noVantageClaim := func(name string, m *report.Report, tests int) {
		t.Helper()
		if len(m.Vantages) != 2 {
			t.Fatalf("%s: %d vantages in the breakdown; want 2", name, len(m.Vantages))
		}
		if len(m.Verdict.Vantages) != 0 || strings.Contains(m.Verdict.Summary, "vantage") || strings.Contains(m.Verdict.Headline, "sees") {
			t.Errorf("%s: the verdict names a vantage: %+v\n%s", name, m.Verdict.Vantages, m.Verdict.Summary)
		}
		if got := vantageTests(m); got != tests {
			t.Errorf("%s: %d vantage tests; want %d", name, got, tests)
		}
	}

	// Healthy: no failure anywhere.
	ok := vantageRunsAtOnce(t, f, dir, [2]string{"ok-eu.json", "eu-west"}, [2]string{"ok-us.json", "us-east"})
	noVantageClaim("healthy", mergeJSON(t, filepath.Join(dir, "ok.json"), ok...), 4) // 2 endpoints, each from 2 vantages

	// Spread: 10% failures on every address, from both vantages.
	spread.Store(true)
	sp := vantageRunsAtOnce(t, f, dir, [2]string{"spread-eu.json", "eu-west"}, [2]string{"spread-us.json", "us-east"})
	spread.Store(false)
	m := mergeJSON(t, filepath.Join(dir, "spread.json"), sp...)
	if m.Totals.Failed == 0 {
		t.Fatal("spread: no failure; the test proves nothing")
	}
	noVantageClaim("spread", m, 4)

	// At different times: ::1 fails every other request of eu-west's
	// run; it has recovered when us-east's begins. The vantages share no
	// time, so neither is blamed, and a note says why.
	failing6.Store(true)
	before, _ := vantageRun(t, f, dir, "before-eu.json", "--vantage", "eu-west", "-H", "X-Vantage: eu-west")
	failing6.Store(false)
	after, _ := vantageRun(t, f, dir, "after-us.json", "--vantage", "us-east", "-H", "X-Vantage: us-east")
	m = mergeJSON(t, filepath.Join(dir, "apart.json"), before, after)
	if m.Totals.Failed < 30 {
		t.Fatalf("at different times: %d failures; want about 50: every other of eu-west's requests to ::1", m.Totals.Failed)
	}
	noVantageClaim("at different times", m, 0)
	if want := "No vantage is blamed: the vantages probed at different times"; !strings.Contains(strings.Join(m.Verdict.Notes, "\n"), want) {
		t.Errorf("at different times: notes %q; want %q", m.Verdict.Notes, want)
	}

	// Concentrated: ::1 fails every other request of eu-west's run only,
	// while us-east's two runs probe it at the same time.
	failing6.Store(true)
	runs := vantageRunsAtOnce(t, f, dir, [2]string{"eu.json", "eu-west"}, [2]string{"us1.json", "us-east"}, [2]string{"us2.json", "us-east"})
	failing6.Store(false)
	euRep := readSaved(t, runs[0])
	inner := mergeJSON(t, filepath.Join(dir, "inner.json"), runs[0], runs[1])
	m = mergeJSON(t, filepath.Join(dir, "concentrated.json"), filepath.Join(dir, "inner.json"), runs[2])
	_ = inner

	var fails6 int64
	for _, e := range euRep.Endpoints {
		if e.Address == "::1" {
			fails6 = e.Failed
		}
	}
	if fails6 < 30 {
		t.Fatalf("eu-west's run: %d failures of ::1; want about 50: every other of its requests to ::1", fails6)
	}
	if len(m.Vantages) != 2 || m.Vantages[0].Name != "eu-west" || m.Vantages[1].Name != "us-east" ||
		m.Vantages[0].Runs != 1 || m.Vantages[1].Runs != 2 {
		t.Fatalf("vantages %+v; want eu-west (1 run) and us-east (2 runs)", m.Vantages)
	}
	// The -n budget is shared by a run's endpoints, so a stream that
	// starts late on a busy machine sends fewer than its half: us-east's
	// two runs sent ::1 about 200 requests, fewer (171 seen under -race)
	// when its stream lagged; 120 is still plenty to clear ::1 for us-east.
	eu6f, us6 := m.Vantages[0].Families["ipv6"], m.Vantages[1].Families["ipv6"]
	if eu6f.Failed != fails6 || us6.Failed != 0 || us6.Requests < 120 || m.Vantages[0].Failed != fails6 {
		t.Errorf("breakdown: eu-west ipv6 %+v (run: %d failed), us-east ipv6 %+v", eu6f, fails6, us6)
	}
	if got := m.Vantages[0].Requests + m.Vantages[1].Requests; got != m.Totals.Requests || got != 3*200 {
		t.Errorf("vantages add up to %d requests; the merge has %d, the runs sent %d", got, m.Totals.Requests, 3*200)
	}
	if len(m.Verdict.Vantages) != 1 {
		t.Fatalf("verdict vantages %+v; want one finding\n%s\n%q", m.Verdict.Vantages, m.Verdict.Summary, m.Verdict.Notes)
	}
	v := m.Verdict.Vantages[0]
	if v.Vantage != "eu-west" || v.Address != "::1" || !v.Significant || v.P >= m.Verdict.Level.Each || v.RestFailed != 0 {
		t.Errorf("vantage finding %+v; want eu-west's ::1, significant at %g", v, m.Verdict.Level.Each)
	}
	if want := "Only the runs from eu-west see ::1 fail"; !strings.Contains(m.Verdict.Summary, want) {
		t.Errorf("summary %q; want %q", m.Verdict.Summary, want)
	}
	// The text (whole: --detail), Markdown and HTML reports show the
	// breakdown and the claim.
	for _, format := range []string{"text", "markdown", "html"} {
		code, stdout, stderr := pinprobe(t, "report", "--detail", "--format", format, filepath.Join(dir, "concentrated.json"))
		if code != exitOK && code != exitFail {
			t.Fatalf("report --format %s: exit %d\n%s", format, code, stderr)
		}
		claim := "Only the runs from eu-west see ::1 fail"
		if format == "html" { // a hyphenated name is kept whole on its line
			claim = `Only the runs from <span class="nw">eu-west</span> see ::1 fail`
		}
		for _, want := range []string{"eu-west", "us-east", claim} {
			if !strings.Contains(stdout, want) {
				t.Errorf("report --format %s: no %q", format, want)
			}
		}
	}
}
