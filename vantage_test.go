package main

import (
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pinprobe/pinprobe/internal/testserver"
	"github.com/pinprobe/pinprobe/report"
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
	r, err := report.ParseReport(b, path)
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
		code, stdout, stderr := pinprobe(t, "-q", "-n", "1", "--resolve", f.Resolve(), "--vantage", tt.value, f.URL())
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("--vantage %q: exit %d, stderr %q; want exit %d and one line with %q", tt.value, code, stderr, exitUsage, tt.want)
		}
	}
	if f.Total() != 3*200 {
		t.Errorf("the server saw %d requests; the bad --vantage values must send none (want %d)", f.Total(), 3*200)
	}
}

// TestVantageVerdict merges runs from several vantage points of one
// loopback fleet, each recorded with --vantage: a healthy merge and one
// whose failures are spread alike over the vantages name no vantage; one
// in which ::1 fails only in the runs of eu-west names eu-west and ::1,
// and the breakdown by vantage adds up exactly, through a merge of merges.
func TestVantageVerdict(t *testing.T) {
	var failing6 atomic.Bool
	var spread atomic.Bool
	rnd4 := testserver.Random(0.1, 4, testserver.Answer{Status: http.StatusBadGateway})
	rnd6 := testserver.Random(0.1, 6, testserver.Answer{Status: http.StatusBadGateway})
	policy := func(rnd testserver.Policy, six bool) testserver.Policy {
		return func(n int64, r *http.Request) testserver.Answer {
			switch {
			case spread.Load():
				return rnd(n, r)
			case six && failing6.Load() && n%2 == 0:
				return testserver.Answer{Status: http.StatusBadGateway}
			}
			return testserver.Answer{Status: http.StatusOK}
		}
	}
	f := testserver.StartFleet(t, testserver.FleetOptions{Policies: map[netip.Addr]testserver.Policy{
		testserver.Lo4a: policy(rnd4, false), testserver.Lo6: policy(rnd6, true),
	}}, testserver.Lo4a, testserver.Lo6)
	dir := t.TempDir()

	noVantageClaim := func(name string, m *report.Report) {
		t.Helper()
		if len(m.Vantages) != 2 {
			t.Fatalf("%s: %d vantages in the breakdown; want 2", name, len(m.Vantages))
		}
		if len(m.Verdict.Vantages) != 0 || strings.Contains(m.Verdict.Summary, "vantage") {
			t.Errorf("%s: the verdict names a vantage: %+v\n%s", name, m.Verdict.Vantages, m.Verdict.Summary)
		}
		tests := 0
		for _, tt := range m.Verdict.Tests {
			if tt.Kind == report.TestVantage {
				tests++
			}
		}
		if tests != 4 { // 2 endpoints, each from 2 vantages
			t.Errorf("%s: %d vantage tests; want 4", name, tests)
		}
	}

	// Healthy: no failure anywhere.
	a, _ := vantageRun(t, f, dir, "ok-eu.json", "--vantage", "eu-west")
	b, _ := vantageRun(t, f, dir, "ok-us.json", "--vantage", "us-east")
	noVantageClaim("healthy", mergeJSON(t, filepath.Join(dir, "ok.json"), a, b))

	// Spread: 10% failures on every address, from both vantages.
	spread.Store(true)
	a, _ = vantageRun(t, f, dir, "spread-eu.json", "--vantage", "eu-west")
	b, _ = vantageRun(t, f, dir, "spread-us.json", "--vantage", "us-east")
	spread.Store(false)
	m := mergeJSON(t, filepath.Join(dir, "spread.json"), a, b)
	if m.Totals.Failed == 0 {
		t.Fatal("spread: no failure; the test proves nothing")
	}
	noVantageClaim("spread", m)

	// Concentrated: ::1 fails every other request in eu-west's run only.
	failing6.Store(true)
	eu, euRep := vantageRun(t, f, dir, "eu.json", "--vantage", "eu-west")
	failing6.Store(false)
	us1, _ := vantageRun(t, f, dir, "us1.json", "--vantage", "us-east")
	us2, _ := vantageRun(t, f, dir, "us2.json", "--vantage", "us-east")
	inner := mergeJSON(t, filepath.Join(dir, "inner.json"), eu, us1)
	m = mergeJSON(t, filepath.Join(dir, "concentrated.json"), filepath.Join(dir, "inner.json"), us2)
	_ = inner

	var fails6 int64
	for _, e := range euRep.Endpoints {
		if e.Address == "::1" {
			fails6 = e.Failed
		}
	}
	if fails6 < 50 {
		t.Fatalf("eu-west's run: %d failures of ::1; want about 50", fails6)
	}
	if len(m.Vantages) != 2 || m.Vantages[0].Name != "eu-west" || m.Vantages[1].Name != "us-east" ||
		m.Vantages[0].Runs != 1 || m.Vantages[1].Runs != 2 {
		t.Fatalf("vantages %+v; want eu-west (1 run) and us-east (2 runs)", m.Vantages)
	}
	eu6, us6 := m.Vantages[0].Families["ipv6"], m.Vantages[1].Families["ipv6"]
	if eu6.Failed != fails6 || us6.Failed != 0 || us6.Requests < 180 || m.Vantages[0].Failed != fails6 {
		t.Errorf("breakdown: eu-west ipv6 %+v (run: %d failed), us-east ipv6 %+v", eu6, fails6, us6)
	}
	if got := m.Vantages[0].Requests + m.Vantages[1].Requests; got != m.Totals.Requests || got != 3*200 {
		t.Errorf("vantages add up to %d requests; the merge has %d, the runs sent %d", got, m.Totals.Requests, 3*200)
	}
	if len(m.Verdict.Vantages) != 1 {
		t.Fatalf("verdict vantages %+v; want one finding\n%s", m.Verdict.Vantages, m.Verdict.Summary)
	}
	v := m.Verdict.Vantages[0]
	if v.Vantage != "eu-west" || v.Address != "::1" || !v.Significant || v.P >= m.Verdict.Level.Each || v.RestFailed != 0 {
		t.Errorf("vantage finding %+v; want eu-west's ::1, significant at %g", v, m.Verdict.Level.Each)
	}
	if want := "Only the runs from eu-west see ::1 fail"; !strings.Contains(m.Verdict.Summary, want) {
		t.Errorf("summary %q; want %q", m.Verdict.Summary, want)
	}
	// The text, Markdown and HTML reports show the breakdown and the claim.
	for _, format := range []string{"text", "markdown", "html"} {
		code, stdout, stderr := pinprobe(t, "report", "--format", format, filepath.Join(dir, "concentrated.json"))
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
