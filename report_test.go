package main

// The report as pinprobe writes it: the JSON contract, arrays that are never
// null, the redacted command, -o FILE, rates over the sending window, and
// the Markdown report.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/demo"
	"github.com/pinprobe/pinprobe/internal/judge"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestJSONReportThreeAddresses: the JSON contract against three real
// servers, one of which answers 502, with secret headers redacted from the
// command.
func TestJSONReportThreeAddresses(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{
		Policies: map[netip.Addr]testserver.Policy{testserver.Lo6: testserver.Status(http.StatusBadGateway)},
	}, testserver.Loopbacks()...)
	resolve := fmt.Sprintf("app.test:%d:127.0.0.1,127.0.0.2,::1", f.Port())
	args := []string{"--resolve", resolve, "--format", "json", "-q", "--rate", "300", "--requests", "90",
		"-H", "Authorization: Bearer x", "-H", "X-Api-Key: y", "--header=Cookie: session=abc",
		"-H", "X-Trace: visible", f.URL()}
	code, stdout, stderr := pinprobe(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d; want 0; stderr:\n%s", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)

	wantCmd := []string{"pinprobe", "--resolve", resolve, "--format", "json", "-q", "--rate", "300", "--requests", "90",
		"-H", "Authorization: REDACTED", "-H", "X-Api-Key: REDACTED", "--header=Cookie: REDACTED",
		"-H", "X-Trace: visible", f.URL()}
	if !slices.Equal(rep.Command, wantCmd) {
		t.Errorf("command = %q;\nwant      %q", rep.Command, wantCmd)
	}
	for _, secret := range []string{"Bearer x", "session=abc", ": y"} {
		if strings.Contains(stdout, secret) {
			t.Errorf("the report contains the secret %q", secret)
		}
	}
	if rep.Interrupted {
		t.Errorf("interrupted = true; want false")
	}

	wantDNS := []report.DNS{{Host: "app.test", Port: f.Port(), Source: "resolve", Addresses: []string{"127.0.0.1", "127.0.0.2", "::1"}}}
	if len(rep.DNS) != 1 || rep.DNS[0].Host != wantDNS[0].Host || rep.DNS[0].Port != wantDNS[0].Port ||
		rep.DNS[0].Source != wantDNS[0].Source || !slices.Equal(rep.DNS[0].Addresses, wantDNS[0].Addresses) || rep.DNS[0].Error != "" {
		t.Errorf("dns = %+v; want %+v", rep.DNS, wantDNS)
	}

	if rep.Totals.Requests != 90 {
		t.Errorf("totals.requests = %d; want 90 (--requests 90)", rep.Totals.Requests)
	}
	if len(rep.Totals.Errors) != 0 {
		t.Errorf("transport errors %v; want none", rep.Totals.Errors)
	}
	wantEps := []struct{ addr, family string }{{"127.0.0.1", "ipv4"}, {"127.0.0.2", "ipv4"}, {"::1", "ipv6"}}
	if len(rep.Endpoints) != len(wantEps) {
		t.Fatalf("endpoints %v; want %v", endpointAddrs(rep), wantEps)
	}
	for i, w := range wantEps {
		e := rep.Endpoints[i]
		if e.Address != w.addr || e.Family != w.family || e.Port != f.Port() || e.Host != "app.test" || e.Target != f.URL() {
			t.Errorf("endpoint %d = %s/%s port %d host %q target %q; want %s/%s port %d host app.test target %s",
				i, e.Address, e.Family, e.Port, e.Host, e.Target, w.addr, w.family, f.Port(), f.URL())
		}
		if e.Requests == 0 {
			t.Errorf("endpoint %s: no request", e.Address)
		}
		wantStatus := "200"
		if w.family == "ipv6" {
			wantStatus = "502"
		}
		if !equalCounts(e.Status, map[string]int64{wantStatus: e.Requests}) {
			t.Errorf("endpoint %s: status %v; want all %d %s", e.Address, e.Status, e.Requests, wantStatus)
		}
	}
	v4, v6 := rep.Families["ipv4"], rep.Families["ipv6"]
	if v6.FailureRate != 1.0 || v6.Failed != v6.Requests || v6.Requests == 0 {
		t.Errorf("families.ipv6: %d of %d failed, failure_rate %v; want all, 1.0", v6.Failed, v6.Requests, v6.FailureRate)
	}
	if v4.FailureRate != 0 || v4.Failed != 0 || v4.Requests == 0 {
		t.Errorf("families.ipv4: %d of %d failed, failure_rate %v; want none, 0.0", v4.Failed, v4.Requests, v4.FailureRate)
	}
	if want := float64(v6.Requests) / 90; abs(rep.Totals.FailureRate-want) > 1e-6 {
		t.Errorf("totals.failure_rate = %v; want %v", rep.Totals.FailureRate, want)
	}
	checkFleet(t, f, rep)
}

// TestForensicsJSONArraysNeverNull: arrays are arrays ([] when empty), so a
// script iterates them without a null check.
func TestForensicsJSONArraysNeverNull(t *testing.T) {
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	_, stdout := runReport(t, reportOpts{samples: 0}, "--samples", "0", "--resolve", f.Resolve(), "--rate", "300", "-n", "10", f.URL())
	var m map[string]any
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatal(err)
	}
	isArray := func(scope string, v any, ok bool) {
		t.Helper()
		if _, isA := v.([]any); !ok || !isA {
			t.Errorf("%s = %v; want an array ([] when empty)", scope, v)
		}
	}
	get := func(m any, k string) (any, bool) {
		mm, _ := m.(map[string]any)
		v, ok := mm[k]
		return v, ok
	}
	for _, k := range []string{"fingerprints", "endpoints", "dns"} {
		v, ok := get(m, k)
		isArray(k, v, ok)
	}
	tl, _ := get(m, "timeline")
	v, ok := get(tl, "series")
	isArray("timeline.series", v, ok)
	vd, _ := get(m, "verdict")
	v, ok = get(vd, "suspects")
	isArray("verdict.suspects", v, ok)
	cl, _ := get(m, "client")
	for _, k := range []string{"ports", "local_addresses"} {
		v, ok := get(cl, k)
		isArray("client."+k, v, ok)
	}
	ds, _ := get(m, "dns")
	for i, d := range ds.([]any) {
		for _, k := range []string{"addresses", "changes"} {
			v, ok := get(d, k)
			isArray(fmt.Sprintf("dns[%d].%s", i, k), v, ok)
		}
	}
	es, _ := get(m, "endpoints")
	for i, e := range es.([]any) {
		v, ok := get(e, "samples")
		isArray(fmt.Sprintf("endpoints[%d].samples", i), v, ok)
	}
}

// TestRedactArgs: every form pflag accepts for -H/--header is redacted in
// the report's command when the header is secret, and left alone otherwise.
func TestRedactArgs(t *testing.T) {
	const u = "http://app.test/"
	tests := []struct {
		args, want []string
	}{
		{[]string{"-H", "Authorization: Bearer s3cret", u}, []string{"-H", "Authorization: REDACTED", u}},
		{[]string{"--header", "Cookie: s3cret", u}, []string{"--header", "Cookie: REDACTED", u}},
		{[]string{"--header=Set-Cookie: s3cret", u}, []string{"--header=Set-Cookie: REDACTED", u}},
		{[]string{"-HProxy-Authorization: s3cret", u}, []string{"-HProxy-Authorization: REDACTED", u}},
		{[]string{"-H=X-Auth-Token: s3cret", u}, []string{"-H=X-Auth-Token: REDACTED", u}},
		{[]string{"-qH", "X-Api-Key: s3cret", u}, []string{"-qH", "X-Api-Key: REDACTED", u}},
		{[]string{"-q4HX-Client-Secret:s3cret", u}, []string{"-q4HX-Client-Secret: REDACTED", u}},
		{[]string{"-H", "authorization:s3cret", u}, []string{"-H", "authorization: REDACTED", u}},
		{[]string{"-H", "X-Trace: visible", "-XPOST", u}, []string{"-H", "X-Trace: visible", "-XPOST", u}},
		{[]string{"-X", "HEAD", "-H", "Accept: */*", u}, []string{"-X", "HEAD", "-H", "Accept: */*", u}},
		{[]string{"-XH", "-H", "Cookie: s3cret", u}, []string{"-XH", "-H", "Cookie: REDACTED", u}}, // -X's value is "H"
		{[]string{"http://user:s3cret@app.test/"}, []string{"http://user:REDACTED@app.test/"}},
	}
	for _, tt := range tests {
		c, _, err := parseArgs(tt.args)
		if err != nil {
			t.Errorf("parseArgs(%q): %v", tt.args, err)
			continue
		}
		if len(c.headers.lines) == 0 && strings.Contains(strings.Join(tt.args, " "), ":") && !strings.Contains(tt.args[0], "://") {
			t.Errorf("parseArgs(%q) found no header: the case does not test a real -H form", tt.args)
		}
		got := redactArgs(tt.args)
		if !slices.Equal(got, tt.want) {
			t.Errorf("redactArgs(%q) = %q; want %q", tt.args, got, tt.want)
		}
		if strings.Contains(strings.Join(got, " "), "s3cret") {
			t.Errorf("redactArgs(%q) = %q: the secret is still there", tt.args, got)
		}
	}
}

// TestOutputFile: -o FILE writes the JSON report whatever --format says;
// with --format json it is the same as stdout.
func TestOutputFile(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	dir := t.TempDir()
	common := []string{"-q", "--rate", "200", "--requests", "20", "--resolve", f.Resolve(), f.URL()}

	jsonFile := filepath.Join(dir, "report.json")
	code, stdout, stderr := pinprobe(t, append([]string{"--format", "json", "-o", jsonFile}, common...)...)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	saved, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatalf("-o wrote nothing: %v", err)
	}
	if string(saved) != stdout {
		t.Errorf("-o FILE differs from --format json on stdout:\nfile:\n%s\nstdout:\n%s", saved, stdout)
	}
	rep := decodeReport(t, saved)
	checkReport(t, rep)
	checkFleet(t, f, rep)

	f = testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	common = []string{"-q", "--rate", "200", "--requests", "20", "--resolve", f.Resolve(), f.URL()}
	textFile := filepath.Join(dir, "sub-report.json")
	code, stdout, stderr = pinprobe(t, append([]string{"-o", textFile}, common...)...)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "VERDICT OK 0 of 20 requests failed\npinprobe "+version) || !strings.Contains(stdout, "BY ENDPOINT") || !strings.Contains(stdout, "· 20 requests, 0 dropped") {
		t.Errorf("stdout is not the text report of 20 requests:\n%s", stdout)
	}
	if strings.Contains(stdout, `"schema"`) {
		t.Errorf("the JSON report leaked to stdout with --format text:\n%s", stdout)
	}
	saved, err = os.ReadFile(textFile)
	if err != nil {
		t.Fatalf("-o with --format text wrote nothing: %v", err)
	}
	rep = decodeReport(t, saved)
	checkReport(t, rep)
	if rep.Totals.Requests != 20 {
		t.Errorf("-o file: totals.requests = %d; want 20", rep.Totals.Requests)
	}
	checkFleet(t, f, rep)
}

// Rates are over the sending window: requests sent in 0.3 s to a backend
// that answers after 0.6 s are not divided by the wait for them.
func TestRateExcludesTheWaitForRequestsInFlight(t *testing.T) {
	// A slow backend, not synchronisation; its Host is the IP-literal URL's.
	f := testserver.StartFleet(t, testserver.FleetOptions{Host: "127.0.0.1", Each: testserver.Delayed(600 * time.Millisecond)}, testserver.Lo4a)
	rep, _, _ := probeReport(t, "--no-preflight", "-d", "300ms", "-r", "20", "-c", "50", f.URL())
	checkFleet(t, f, rep)
	if rep.SendS < 0.29 || rep.SendS > 0.4 || rep.DurationS < 0.8 {
		t.Errorf("send_s %.3f, duration_s %.3f; want sending ~0.3 s and the run ~0.9 s", rep.SendS, rep.DurationS)
	}
	if want := float64(rep.Totals.Requests) / rep.SendS; rep.Totals.RPS < want*0.95 || rep.Totals.RPS > want*1.05 {
		t.Errorf("rps %.1f; want requests/send_s = %.1f", rep.Totals.RPS, want)
	}
}

// TestDemoMarkdown runs the demo with --format markdown: the ticket-ready
// report names the failing family in its title, carries the Azure log query,
// and shows the failing address.
func TestDemoMarkdown(t *testing.T) {
	t.Parallel()
	code, doc, stderr := pinprobe(t, "--demo", "-q", "--duration", "1s", "--rate", "60", "--format", "markdown")
	if code != exitOK {
		t.Fatalf("exit %d; want 0; stderr:\n%s", code, stderr)
	}
	title, _, _ := strings.Cut(doc, "\n")
	lead := "# pinprobe: "
	if testserver.HasIPv6Loopback() {
		lead += "IPv6 (::1) answers 502"
	}
	if !strings.HasPrefix(title, lead) || !strings.HasSuffix(title, " — "+demo.Host) {
		t.Errorf("title = %q; want \"%s… — %s\"", title, lead, demo.Host)
	}
	for _, want := range []string{"AGWAccessLogs", "| where isnull(Port) or Port in (", "> **Verdict: concentrated.**", "## Sample requests"} {
		if !strings.Contains(doc, want) {
			t.Errorf("markdown report lacks %q:\n%s", want, doc)
		}
	}
	if testserver.HasIPv6Loopback() {
		if !strings.Contains(title, "IPv6") {
			t.Errorf("title = %q; want it to name IPv6", title)
		}
		if !strings.Contains(doc, "| ✗   | **::1** ") {
			t.Errorf("markdown report does not mark ::1 as failing:\n%s", doc)
		}
	}
	if strings.Contains(doc, "\x1b[") {
		t.Errorf("markdown report contains ANSI escapes")
	}
}

// TestReportBrief: pinprobe report --brief makes one screen of a saved run
// in every format but JSON (which stays whole), as the probe's own --brief
// does of the run it makes: the verdict first, the suspects, one failed
// request of each, the log query.
func TestReportBrief(t *testing.T) {
	t.Parallel()
	// The first failed request of ::1, the first suspect, is the sample the
	// brief shows of it (read from the saved run, so a regenerated example
	// keeps the test true).
	saved := savedDemo(t)
	sample := ""
	for _, e := range saved.Endpoints {
		if e.Address == "::1" {
			for _, s := range e.Samples {
				if s.Failed && sample == "" {
					sample = s.RequestID
				}
			}
		}
	}
	if sample == "" {
		t.Fatalf("%s holds no failed request of ::1", demoReport)
	}
	// gw-3 and the failing connections of 127.0.0.2 are one fault: the
	// brief names the instance on its connections, not a third suspect.
	conns := ""
	for _, s := range judge.Judge(saved, judge.LevelOf(saved)).Suspects {
		if s.Group == "X-Served-By: gw-3" && s.Connections > 0 {
			conns = fmt.Sprintf("on %d of %d connections", s.FailingConnections, s.Connections)
		}
	}
	if conns == "" {
		t.Fatalf("%s: gw-3 is not named with the failing connections of 127.0.0.2 as its evidence", demoReport)
	}
	for _, format := range []string{"text", "markdown", "html"} {
		code, brief, stderr := pinprobe(t, "report", "--brief", "--format", format, demoReport)
		_, full, _ := pinprobe(t, "report", "--format", format, demoReport)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		lines := strings.Count(brief, "\n")
		if format == "html" { // the page's text: its rows, paragraphs, headings and query lines
			pre := brief[strings.Index(brief, "<pre"):strings.Index(brief, "</pre>")]
			lines = len(htmlBlock.FindAllString(brief, -1)) + strings.Count(pre, "\n")
		}
		t.Logf("%s: %d lines brief, %d in full", format, lines, strings.Count(full, "\n"))
		if lines > 52 { // as render's briefLines
			t.Errorf("%s: the brief report has %d lines; want at most 52:\n%s", format, lines, brief)
		}
		for _, want := range []string{"X-Served-By: gw-3 behind 127.0.0.2", conns, sample, "AGWAccessLogs"} {
			if !strings.Contains(strings.Join(strings.Fields(brief), " "), want) {
				t.Errorf("%s: the brief report lacks %q", format, want)
			}
		}
	}
	_, brief, _ := pinprobe(t, "report", "--brief", "--format", "json", demoReport)
	_, full, _ := pinprobe(t, "report", "--format", "json", demoReport)
	if brief != full {
		t.Errorf("--brief changed the JSON report")
	}
}

// TestReportBriefFindsEverySuspect: the demo's brief report showed one log
// query, over 127.0.0.2's failing connections: it found 13 of the run's 63
// failures, none of ::1's, the headline's fault. Its queries now find the
// failed requests of every suspect, as the saved run's trail lists them
// (each request's client port): in every format that shows them.
func TestReportBriefFindsEverySuspect(t *testing.T) {
	saved := savedDemo(t)
	code, md, stderr := pinprobe(t, "report", "--brief", "--format", "markdown", demoReport)
	if code != exitOK {
		t.Fatalf("report --brief --format markdown: exit %d: %s", code, stderr)
	}
	var queries []map[int]bool // each query's client ports; nil: every port
	for _, block := range strings.Split(md, "```kusto\n")[1:] {
		text, _, _ := strings.Cut(block, "```")
		var ports map[int]bool
		if _, list, ok := strings.Cut(text, "Port in ("); ok {
			list, _, _ = strings.Cut(list, ")")
			ports = map[int]bool{}
			for _, p := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
				n, err := strconv.Atoi(p)
				if err != nil {
					t.Fatalf("a port %q in the query:\n%s", p, text)
				}
				ports[n] = true
			}
		}
		queries = append(queries, ports)
	}
	if len(queries) == 0 {
		t.Fatalf("the brief report has no log query:\n%s", md)
	}
	var found, failed int
	for _, e := range saved.Endpoints {
		if !slices.ContainsFunc(saved.Verdict.Suspects, func(s report.Suspect) bool {
			return e.Address == s.Address || slices.Contains(s.Addresses, e.Address)
		}) || e.Trail == nil {
			continue
		}
		if int64(len(e.Trail.Requests)) < e.Failed {
			t.Fatalf("%s: the trail holds fewer requests than the %d failed", e.Address, e.Failed)
		}
		for _, r := range e.Trail.Requests {
			if !r.Failed {
				continue
			}
			failed++
			if slices.ContainsFunc(queries, func(ports map[int]bool) bool { return ports == nil || ports[int(r.Port)] }) {
				found++
			}
		}
	}
	if failed == 0 || found != failed {
		t.Errorf("the brief's %d queries find %d of the suspects' %d failed requests; want all", len(queries), found, failed)
	}
	for _, format := range []string{"text", "html"} {
		_, out, _ := pinprobe(t, "report", "--brief", "--format", format, demoReport)
		if !strings.Contains(out, "AGWAccessLogs") || strings.Contains(out, "the requests of the failing connections") {
			t.Errorf("%s: the brief report's query is not the one of the run's requests:\n%s", format, out)
		}
	}
}

// htmlBlock is an element that starts a line of a page's text.
var htmlBlock = regexp.MustCompile(`<(tr|p|li|h1|h2|h3|dt|footer)[ >]`)

// TestProbeBrief: --brief without --format makes the text report of the
// run one screen: the verdict first, the suspect's row and a failed
// request of it.
func TestProbeBrief(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{Policies: map[netip.Addr]testserver.Policy{testserver.Lo6: testserver.Status(http.StatusBadGateway)}},
		testserver.Lo4a, testserver.Lo6)
	code, out, stderr := pinprobe(t, "-q", "--brief", "--resolve", f.Resolve(), "-r", "400", "-n", "80", f.URL())
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(out, "\n"); n > 50 {
		t.Errorf("the brief report has %d lines; want at most 50:\n%s", n, out)
	}
	// -n 80 over two endpoints is a budget the two streams share, not 40
	// each: a loaded machine can split it 41/39.
	if got := f.Backend(t, testserver.Lo6).Hits(); !strings.Contains(out, fmt.Sprintf("VERDICT CONCENTRATED %d of 80 requests failed (", got)) ||
		!strings.Contains(out, "): IPv6 (::1) answers 502") {
		t.Errorf("the brief report does not start with the %d failures of ::1 of 80:\n%s", got, out)
	}
	for _, want := range []string{"\nSUSPECTS\n", "\nONE FAILED REQUEST OF EACH SUSPECT\n ✗ ::1 · "} {
		if !strings.Contains(out, want) {
			t.Errorf("the brief report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\nDNS ANSWERS\n") || strings.Contains(out, "\nTIMELINE") {
		t.Errorf("the brief report has the full report's sections:\n%s", out)
	}
}

// savedDemo is the demo's saved run (examples/demo-report.json), read as
// pinprobe reads it.
func savedDemo(t *testing.T) *report.Report {
	t.Helper()
	f, err := os.Open(demoReport)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved, err := report.Read(f, demoReport)
	if err != nil {
		t.Fatal(err)
	}
	return saved
}
