package main

// The preflight: --preflight alone (text and JSON), and the preflight of
// every run, which stops a run that cannot work before it sends load.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestPreflight: --preflight connects to every endpoint, sends no HTTP
// request and lists each endpoint as ok or with its error class.
func TestPreflight(t *testing.T) {
	t.Run("one address closed", func(t *testing.T) {
		// One port on both addresses, served on 127.0.0.1 only: the
		// 127.0.0.2 listener is closed, so a connection there is refused.
		port, lns := testserver.ListenSamePort(t, testserver.Lo4a, testserver.Lo4b)
		lns[1].Close()
		requireRefused(t, netip.AddrPortFrom(testserver.Lo4b, port))
		hits := testserver.NewHits()
		testserver.Serve(t, lns[0], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(r) }), nil)
		code, stdout, stderr := pinprobe(t, "--preflight", "--resolve",
			fmt.Sprintf("app.test:%d:127.0.0.1,127.0.0.2", port), fmt.Sprintf("http://app.test:%d/", port))
		if code != exitFail {
			t.Errorf("exit %d; want %d; stderr:\n%s", code, exitFail, stderr)
		}
		// Each check in a row (the error in a line under it), every line
		// within 80 columns.
		lines := strings.Split(stdout, "\n")
		var open, shut string
		for _, l := range lines {
			switch {
			case strings.Contains(l, "127.0.0.1") && open == "":
				open = l
			case strings.Contains(l, "127.0.0.2") && shut == "":
				shut = l
			}
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Errorf("a line of %d columns:\n%s", n, l)
			}
		}
		if open == "" || !strings.Contains(open, " ok ") || strings.Contains(open, "✗") {
			t.Errorf("stdout does not list 127.0.0.1 as ok:\n%s", stdout)
		}
		if shut == "" || !strings.Contains(shut, "connect_refused") || !strings.Contains(shut, "✗") {
			t.Errorf("stdout does not list 127.0.0.2 as connect_refused:\n%s", stdout)
		}
		if !strings.Contains(stdout, "1 of 2 endpoints") {
			t.Errorf("stdout does not say 1 of 2 endpoints connect:\n%s", stdout)
		}
		// The same checks as a document for a ticket: Markdown and HTML,
		// not the terminal's text.
		args := []string{"--preflight", "--resolve", fmt.Sprintf("app.test:%d:127.0.0.1,127.0.0.2", port), fmt.Sprintf("http://app.test:%d/", port)}
		for _, f := range []struct{ format, want string }{
			{"markdown", "| ✗   | http://app.test:"},
			{"html", `<tr class="fail"><td class="mark-col"><span class="mark" aria-label="failed">✗</span></td><td>http://app.test:`},
		} {
			code, stdout, stderr := pinprobe(t, append([]string{"--format", f.format}, args...)...)
			if code != exitFail || !strings.Contains(stdout, f.want) || !strings.Contains(stdout, "connect_refused") || !strings.Contains(stdout, "1 of 2 endpoints") {
				t.Errorf("--preflight --format %s: exit %d; want %d and the checks with %q:\n%s\n%s", f.format, code, exitFail, f.want, stdout, stderr)
			}
		}
		if n := hits.Total(); n != 0 {
			t.Errorf("--preflight sent %d HTTP requests; want none", n)
		}
		// Before a run, on stderr: the failure listed (-q keeps it), each
		// line within 80 columns.
		_, _, stderr = pinprobe(t, append([]string{"-q", "-n", "4"}, args[1:]...)...)
		if !strings.Contains(stderr, " ✗ 127.0.0.2 · IPv4 · connect_refused · dial tcp 127.0.0.2:") {
			t.Errorf("stderr does not list 127.0.0.2's refusal:\n%s", stderr)
		}
		for _, l := range strings.Split(stderr, "\n") {
			if n := utf8.RuneCountInString(l); n > 80 && strings.HasPrefix(l, " ") {
				t.Errorf("a line of %d columns on stderr:\n%s", n, l)
			}
		}
	})
	t.Run("all open", func(t *testing.T) {
		f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Loopbacks()...)
		code, stdout, stderr := pinprobe(t, "--preflight", "--resolve", f.Resolve(), f.URL())
		if code != exitOK {
			t.Errorf("exit %d; want 0; stderr:\n%s", code, stderr)
		}
		for _, a := range []string{"127.0.0.1", "127.0.0.2", "::1"} {
			if !strings.Contains(stdout, "  "+a+"  ") {
				t.Errorf("stdout does not list %s:\n%s", a, stdout)
			}
		}
		if strings.Contains(stdout, "✗") || !strings.Contains(stdout, "3 of 3 endpoints") {
			t.Errorf("stdout does not show 3 of 3 endpoints connecting:\n%s", stdout)
		}
		if n := f.Total(); n != 0 {
			t.Errorf("--preflight sent %d HTTP requests; want none", n)
		}
	})
}

// --preflight honours --format json.
func TestPreflightJSON(t *testing.T) {
	code, stdout, stderr := pinprobe(t, "--preflight", "--format", "json", "http://127.0.0.1:1/")
	var doc struct {
		Schema string
		Checks []struct {
			Address, Class string
			OK             bool
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("exit %d, stdout is not JSON (%v):\n%s\n%s", code, err, stdout, stderr)
	}
	checkSchema(t, kindPreflight, []byte(stdout))
	if code != exitFail || doc.Schema != "pinprobe.preflight/v1" || len(doc.Checks) != 1 ||
		doc.Checks[0].OK || doc.Checks[0].Class != "connect_refused" || doc.Checks[0].Address != "127.0.0.1" {
		t.Errorf("exit %d, %+v; want exit 1 and one refused check of 127.0.0.1", code, doc)
	}
}

// TestPreflightStopsWhenNothingCanWork: when every endpoint fails its
// preflight for the same reason, pinprobe sends no load, exits 3 and names
// the cause and the flag that fixes it.
func TestPreflightStopsWhenNothingCanWork(t *testing.T) {
	t.Parallel()
	// An HTTPS server on 127.0.0.1 whose certificate, signed by a test CA,
	// is for app.test only.
	pki := testserver.NewPKI(t)
	f := testserver.StartFleet(t, testserver.FleetOptions{PKI: pki}, testserver.Lo4a)
	ca := pki.CAFile
	resolve := "--resolve=" + f.Resolve()
	url := f.URL()
	wrongName := fmt.Sprintf("https://other.test:%d/", f.Port())

	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"untrusted CA", []string{resolve, url}, exitNoAddress, []string{"fails TLS verification", "unknown authority", "--cacert FILE", "--insecure"}},
		{"certificate for another name", []string{"--cacert", ca, fmt.Sprintf("--resolve=other.test:%d:127.0.0.1", f.Port()), wrongName}, exitNoAddress,
			[]string{"certificate is for another name", "other.test", "app.test", "check the URL's host name"}},
		{"trusted", []string{"--cacert", ca, resolve, url}, exitOK, []string{"certificate verified against the host name"}},
		{"insecure says so", []string{"--insecure", resolve, url}, exitOK, []string{"certificate NOT verified: --insecure"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.Total()
			code, _, stderr := pinprobe(t, append([]string{"--rate", "200", "-n", "10"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d; want %d; stderr:\n%s", code, tt.code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			// -q says a failure and an unverified certificate, and no
			// more: neither the plan nor a passed preflight.
			_, _, quiet := pinprobe(t, append([]string{"-q", "--rate", "200", "-n", "10"}, tt.args...)...)
			switch want := ""; {
			case tt.code != exitOK:
				if !strings.Contains(quiet, tt.want[0]) || strings.Contains(quiet, " requests/s in total") {
					t.Errorf("-q: stderr is not the failure alone:\n%s", quiet)
				}
			case strings.Contains(tt.name, "insecure"):
				want = "pinprobe: preflight: the endpoint connects (TCP and TLS, certificate NOT verified: --insecure)\n"
				fallthrough
			default:
				if quiet != want {
					t.Errorf("-q: stderr is\n%s\nwant\n%s", quiet, want)
				}
			}
			sent := f.Total() - before
			f.CheckPlacement(t)
			if tt.code == exitNoAddress && sent != 0 {
				t.Errorf("the server served %d requests; a stopped run sends none", sent)
			}
			if tt.code == exitOK && sent != 20 {
				t.Errorf("the server served %d requests; want 10 a run", sent)
			}
		})
	}
}

// TestPreflightStopRefusedEverywhere: when every address refuses, nothing
// is probed (exit 3, naming the port); when only some do, the run goes on.
func TestPreflightStopRefusedEverywhere(t *testing.T) {
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	// A port bound on 127.0.0.1 (never listening) for the whole test, where
	// 127.0.0.2 has no listener either: both refuse.
	closed := testserver.ClosedPort(t, testserver.Lo4a)
	requireRefused(t, netip.AddrPortFrom(testserver.Lo4a, closed))
	requireRefused(t, netip.AddrPortFrom(testserver.Lo4b, closed))
	requireRefused(t, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.3"), f.Port()))
	code, _, stderr := pinprobe(t, "-q", "-n", "5", "--resolve", fmt.Sprintf("app.test:%d:127.0.0.1,127.0.0.2", closed), fmt.Sprintf("http://app.test:%d/", closed))
	if code != exitNoAddress || !strings.Contains(stderr, fmt.Sprintf("every address refuses connections on port %d", closed)) ||
		!strings.Contains(stderr, "(not probed)") {
		t.Errorf("exit %d, stderr:\n%s\nwant 3, naming the port, not probed", code, stderr)
	}
	// One address refusing of two: the run goes on and the report shows it.
	code, stdout, stderr := pinprobe(t, "-q", "--format", "json", "--rate", "400", "-n", "40",
		"--resolve", f.Resolve("127.0.0.3"), f.URL())
	if code != exitOK || !strings.Contains(stderr, "(probed anyway)") {
		t.Fatalf("exit %d, stderr:\n%s\nwant 0 and the run probed anyway", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	checkFleet(t, f, rep, "127.0.0.3")
	if e := endpointByAddr(t, rep, "127.0.0.3"); e.Errors["connect_refused"] != e.Requests || e.Requests == 0 {
		t.Errorf("127.0.0.3: %d requests, errors %v; want every one refused", e.Requests, e.Errors)
	}
	var typed report.Report
	if err := json.Unmarshal([]byte(stdout), &typed); err != nil {
		t.Fatal(err)
	}
	if p := typed.Preflight; len(p) != 2 || !p[0].OK || p[1].OK || p[1].Address != "127.0.0.3" || p[1].Class != "connect_refused" || typed.NotProbed != "" {
		t.Errorf("preflight %+v, not_probed %q; want 127.0.0.1 ok, 127.0.0.3 refused, and a probed run", p, typed.NotProbed)
	}
}

// TestDownHostReports: a host whose every address refuses still gets its
// report in every format, and -o keeps its JSON, as a CI job that keeps its
// reports "whatever the outcome" needs: what the preflight found per
// address, and the gate as not judged; exit 3 stays. Before, stdout was
// empty and -o was not written.
func TestDownHostReports(t *testing.T) {
	closed := testserver.ClosedPort(t, testserver.Lo4a)
	requireRefused(t, netip.AddrPortFrom(testserver.Lo4a, closed))
	requireRefused(t, netip.AddrPortFrom(testserver.Lo4b, closed))
	dir := t.TempDir()
	target := fmt.Sprintf("http://app.test:%d/", closed)
	base := []string{"-q", "--resolve", fmt.Sprintf("app.test:%d:127.0.0.1,127.0.0.2", closed), "--max-failure-rate", "0.1%", target}
	for _, format := range []string{"html", "text", "markdown", "json"} {
		out := filepath.Join(dir, format+".json")
		code, stdout, stderr := pinprobe(t, append([]string{"-o", out, "--format", format}, base...)...)
		if code != exitNoAddress {
			t.Errorf("%s: exit %d; want 3; stderr:\n%s", format, code, stderr)
		}
		if !strings.Contains(stderr, fmt.Sprintf("every address refuses connections on port %d", closed)) {
			t.Errorf("%s: stderr does not say why:\n%s", format, stderr)
		}
		flat := strings.Join(strings.Fields(stdout), " ")
		var want []string
		switch format {
		case "html":
			want = []string{`<section id="preflight">`, "connect_refused", "127.0.0.2", "not judged", "Nothing was probed: every address refuses connections on port"}
		case "text":
			want = []string{"VERDICT NO-DATA nothing was probed: every address refuses connections on port", "PREFLIGHT", "✗ 127.0.0.1 IPv4 connect_refused",
				"✗ 127.0.0.2 IPv4 connect_refused", "RELEASE GATE FAILED: 4 of 4 checks not judged"}
		case "markdown":
			want = []string{"# pinprobe: nothing probed — app.test", "## Preflight", "| ✗ | 127.0.0.2 | IPv4 | connect_refused |", "## Release gate"}
		case "json":
			rep := decodeReport(t, []byte(stdout))
			if rep.Totals.Requests != 0 || len(rep.Thresholds) != 4 {
				t.Errorf("json: %d requests, %d checks; want 0 and 4", rep.Totals.Requests, len(rep.Thresholds))
			}
		}
		for _, w := range want {
			if !strings.Contains(stdout, w) && !strings.Contains(flat, w) {
				t.Errorf("%s report lacks %q:\n%s", format, w, stdout)
			}
		}
		// The -o file is the report, and reads back.
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("%s: -o not written: %v", format, err)
		}
		rep, err := report.Parse(data, out)
		if err != nil {
			t.Fatalf("%s: -o does not read back: %v", format, err)
		}
		if !strings.HasPrefix(rep.NotProbed, fmt.Sprintf("every address refuses connections on port %d", closed)) || len(rep.Preflight) != 2 ||
			rep.Preflight[0].OK || rep.Preflight[1].Class != "connect_refused" || rep.Verdict.Status != report.VerdictNoData {
			t.Errorf("%s: -o report: not_probed %q, preflight %+v, verdict %q", format, rep.NotProbed, rep.Preflight, rep.Verdict.Status)
		}
		for _, th := range rep.Thresholds {
			if th.Status != report.ThresholdNotJudged {
				t.Errorf("%s: check %+v; want not judged", format, th)
			}
		}
	}
	// pinprobe report re-renders it, and says again why nothing was probed.
	code, stdout, stderr := pinprobe(t, "report", filepath.Join(dir, "json.json"))
	if code != exitOK || !strings.Contains(stdout, "nothing was probed: every address refuses") || !strings.Contains(stdout, "PREFLIGHT") {
		t.Errorf("report of the saved run: exit %d, stderr %s\n%s", code, stderr, stdout)
	}
}
