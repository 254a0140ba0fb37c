package main

// Helpers shared by the tests of package main: running pinprobe through
// run(), what these tests add to the servers of internal/testserver (answers
// with test secrets, comparisons of the report with what the servers saw),
// and the JSON report as a script decodes it, with the invariants every
// report must keep.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// ---------------------------------------------------------------------------
// Running pinprobe

// runTimeout bounds every run() of these tests: a hung run is cancelled and
// then fails on its exit code instead of hanging the test binary.
const runTimeout = 30 * time.Second

// runOutcome is what one run() returned and wrote.
type runOutcome struct {
	args           []string
	code           int
	stdout, stderr string
	panicked       any // the value of a panic in run, recovered; nil if none
}

// runCaptured calls run with ctx and args, capturing its outputs and a panic.
// It does not touch a testing.T, so it may run on any goroutine.
func runCaptured(ctx context.Context, args []string) (o runOutcome) {
	var out, errOut bytes.Buffer
	o.args = args
	defer func() {
		o.panicked = recover()
		o.stdout, o.stderr = out.String(), errOut.String()
	}()
	o.code = run(ctx, args, &out, &errOut)
	exitsSeen.add(args, o.code)
	return o
}

// exitsSeen is every exit code the runs of these tests returned, by
// command: TestMain holds each command to the codes its --help lists
// (commandExits), so that no test of the suite makes one return another.
var exitsSeen = seenExits{m: map[string]map[int][]string{}}

type seenExits struct {
	mu sync.Mutex
	m  map[string]map[int][]string // command → code → the arguments of a run that returned it
}

func (s *seenExits) add(args []string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd := commandOf(args)
	if s.m[cmd] == nil {
		s.m[cmd] = map[int][]string{}
	}
	if _, ok := s.m[cmd][code]; !ok {
		s.m[cmd][code] = args
	}
}

// undeclared lists the runs that returned an exit code their command does
// not list.
func (s *seenExits) undeclared() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for cmd, codes := range s.m {
		for code, args := range codes {
			if !slices.ContainsFunc(commandExits[cmd].codes, func(e exitDoc) bool { return e.code == code }) {
				out = append(out, fmt.Sprintf("pinprobe %q (%s) exited %d, which its --help does not list", args, cmd, code))
			}
		}
	}
	slices.Sort(out)
	return out
}

// noPanic fails the test with the arguments that made run panic.
func (o runOutcome) noPanic(t *testing.T) {
	t.Helper()
	if o.panicked != nil {
		t.Fatalf("pinprobe %s: panic: %v", strings.Join(o.args, " "), o.panicked)
	}
}

// pinprobe runs the command through run() and returns its exit code, stdout
// and stderr. A panic fails the test with the arguments that caused it.
func pinprobe(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	o := runCaptured(ctx, args)
	o.noPanic(t)
	return o.code, o.stdout, o.stderr
}

// pinprobeProcess runs the built command (buildPinprobe) as a process of
// its own process group, stopped whole when the test ends or runTimeout
// passes, and returns its exit code, stdout and stderr. It is for the
// tests whose claim is what a whole run finds rather than the wiring's
// concurrency: the command is built without the race detector, so a run
// at its real rate costs a fraction of an in-process one under it.
func pinprobeProcess(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	bin := buildPinprobe(t)
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		code = exit.ExitCode()
	default:
		t.Fatalf("pinprobe %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return code, out.String(), errOut.String()
}

// within returns what ch delivers, or fails the test saying what did not
// happen within d.
func within[T any](t *testing.T, d time.Duration, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s within %v", what, d)
		panic("unreachable")
	}
}

// refused fails the test unless pinprobe refuses args as a usage error:
// exit 2, nothing on stdout, and one line on stderr that holds want.
func refused(t *testing.T, want string, args ...string) {
	t.Helper()
	code, stdout, stderr := pinprobe(t, args...)
	if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") || !strings.Contains(stderr, want) {
		t.Errorf("pinprobe %q: exit %d, stdout %q, stderr %q; want %d, nothing, and one line with %q", args, code, stdout, stderr, exitUsage, want)
	}
}

// goPinprobe runs the command through run() on its own goroutine, with ctx
// (for tests that interrupt it), and delivers the outcome when run returns.
// The receiver checks it with noPanic.
func goPinprobe(ctx context.Context, args ...string) <-chan runOutcome {
	done := make(chan runOutcome, 1)
	go func() { done <- runCaptured(ctx, args) }()
	return done
}

// ---------------------------------------------------------------------------
// What these tests add to the servers of internal/testserver

// fx503 is the answer of a backend that fails now and then (see
// testserver.Every): a 503 with the backend's own Server header, so a
// fingerprint can name who answered.
var fx503 = testserver.Answer{Status: http.StatusServiceUnavailable, Header: map[string]string{"Server": "fx-backend/1.0"}}

// nginx502WithSecrets is nginx's own 502 page (testserver.Nginx502), sent
// with a session cookie, an API key and an Authorization header whose
// values the report must redact. These test secrets stay out of the
// testserver package.
func nginx502WithSecrets(n int64, r *http.Request) testserver.Answer {
	a := testserver.Nginx502(n, r)
	a.Header = maps.Clone(a.Header)
	a.Header["Set-Cookie"] = "gwsession=fx-set-cookie-secret; Path=/"
	a.Header["X-Api-Key"] = "fx-api-key-secret"
	a.Header["Authorization"] = "Bearer fx-authorization-secret"
	return a
}

// compareHits fails unless the server-side count of every address of f
// equals the report's requests for it (summed over the endpoints of the
// address: one that comes back gets a new endpoint), and unless the
// report's other requests all went to unserved addresses, where no server
// listens.
func compareHits(t *testing.T, f *testserver.Fleet, rep *report.Report, unserved ...string) {
	t.Helper()
	got := map[string]int64{}
	for _, e := range rep.Endpoints {
		got[e.Address] += e.Requests
	}
	for _, a := range unserved {
		delete(got, a)
	}
	if want := f.Hits(); !equalCounts(got, want) {
		t.Errorf("requests per address: report %v; servers counted %v", got, want)
	}
}

// checkFleet is f.CheckPlacement and compareHits: every request reached the
// server of its address with the fleet's Host, and the report counts what
// the servers counted.
func checkFleet(t *testing.T, f *testserver.Fleet, rep *report.Report, unserved ...string) {
	t.Helper()
	f.CheckPlacement(t)
	compareHits(t, f, rep, unserved...)
}

// checkClient compares the report's client section with what the servers
// of f saw: the same local addresses and the same set of ports. Only valid
// when every request reached a server.
func checkClient(t *testing.T, f *testserver.Fleet, rep *report.Report) {
	t.Helper()
	addrs, ports := f.Clients()
	want := make([]string, len(addrs))
	for i, a := range addrs {
		want[i] = a.String()
	}
	if !slices.Equal(rep.Client.LocalAddresses, want) {
		t.Errorf("client.local_addresses = %v; the servers saw clients at %v", rep.Client.LocalAddresses, want)
	}
	if rep.Client.PortsCount != len(ports) {
		t.Errorf("client.ports_count = %d; the servers saw %d client ports", rep.Client.PortsCount, len(ports))
	}
	if len(ports) <= 1000 && !slices.Equal(rep.Client.Ports, ports) {
		t.Errorf("client.ports = %v; the servers saw %v", rep.Client.Ports, ports)
	}
}

// writeIn writes data as name in dir and returns its path.
func writeIn(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// requireRefused fails the test unless a connection to ap is refused: the
// precondition of a test that probes an address where nothing listens.
func requireRefused(t *testing.T, ap netip.AddrPort) {
	t.Helper()
	c, err := net.DialTimeout("tcp", ap.String(), 5*time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("something listens on %s; the test needs it refused", ap)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v; the test needs the connection refused", ap, err)
	}
}

// ---------------------------------------------------------------------------
// The JSON report, read as report.Report: the schema check and the keys
// required at every level (decodeReport) hold the contract a user's script
// reads.

// decodeReport decodes a JSON report and checks it against
// schema/pinprobe.report.v1.json, and that every key of the contract this
// issue covers is present, at every level.
func decodeReport(t *testing.T, b []byte) *report.Report {
	t.Helper()
	checkSchema(t, kindReport, b)
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("decode report: %v\n%s", err, b)
	}
	if err := report.Validate(&rep); err != nil {
		t.Errorf("the report breaks its invariants: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("decode report: %v", err)
	}
	checkTimes(t, "report", raw)
	requireKeys(t, "report", raw, "schema", "version", "command", "started_at", "ended_at", "duration_s",
		"interrupted", "dns", "totals", "families", "endpoints")
	requireStatsKeys(t, "totals", raw["totals"])
	fams, _ := raw["families"].(map[string]any)
	for name, s := range fams {
		requireStatsKeys(t, "families."+name, s)
	}
	eps, _ := raw["endpoints"].([]any)
	for i, e := range eps {
		scope := fmt.Sprintf("endpoints[%d]", i)
		requireStatsKeys(t, scope, e)
		m, _ := e.(map[string]any)
		requireKeys(t, scope, m, "target", "host", "address", "port", "family")
	}
	ds, _ := raw["dns"].([]any)
	for i, d := range ds {
		m, _ := d.(map[string]any)
		requireKeys(t, fmt.Sprintf("dns[%d]", i), m, "host", "source", "addresses")
	}
	return &rep
}

func requireStatsKeys(t *testing.T, scope string, v any) {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Errorf("%s: not an object: %v", scope, v)
		return
	}
	requireKeys(t, scope, m, "requests", "ok", "failed", "failure_rate", "dropped", "status", "errors", "latency_ms", "hdr")
	lat, _ := m["latency_ms"].(map[string]any)
	requireKeys(t, scope+".latency_ms", lat, "min", "mean", "p50", "p90", "p99", "p999", "max")
}

func requireKeys(t *testing.T, scope string, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: no %q key", scope, k)
		}
	}
}

var jsonTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// checkReport asserts the invariants every report must keep: timestamps,
// requests == ok + failed at every level, consistent failure rates,
// percentiles in order, histograms that decode to the request count, and
// endpoint sums equal to family sums equal to totals.
func checkReport(t *testing.T, rep *report.Report) {
	t.Helper()
	if rep.Schema != "pinprobe.report/v1" {
		t.Errorf("schema = %q; want pinprobe.report/v1", rep.Schema)
	}
	if rep.Version != version && rep.Version != release { // a run of this build, or the examples' of this release
		t.Errorf("version = %q; want %q or %q", rep.Version, version, release)
	}
	if len(rep.Command) == 0 || rep.Command[0] != "pinprobe" {
		t.Errorf("command = %q; want it to start with pinprobe", rep.Command)
	}
	start, end := reportTime(t, "started_at", rep.StartedAt), reportTime(t, "ended_at", rep.EndedAt)
	if end.Before(start) {
		t.Errorf("ended_at %s before started_at %s", end, start)
	}
	if d := end.Sub(start).Seconds(); abs(d-rep.DurationS) > 0.0015 {
		t.Errorf("duration_s = %v; want ended_at - started_at = %v", rep.DurationS, d)
	}

	checkStats(t, "totals", &rep.Totals)
	for name, s := range rep.Families {
		checkStats(t, "families."+name, s)
		if name != "ipv4" && name != "ipv6" {
			t.Errorf("families has %q; want only ipv4 and ipv6", name)
		}
	}
	famSum := map[string]*report.Stats{}
	for i := range rep.Endpoints {
		e := &rep.Endpoints[i]
		scope := "endpoint " + e.Address
		checkStats(t, scope, &e.Stats)
		a, err := netip.ParseAddr(e.Address)
		switch {
		case err != nil:
			t.Errorf("%s: address does not parse: %v", scope, err)
		case a.Is4() && e.Family != "ipv4", !a.Is4() && e.Family != "ipv6":
			t.Errorf("%s: family = %q; wrong for the address", scope, e.Family)
		}
		if famSum[e.Family] == nil {
			famSum[e.Family] = &report.Stats{Status: map[string]int64{}, Errors: map[string]int64{}}
		}
		addStats(famSum[e.Family], &e.Stats)
	}
	for fam, sum := range famSum {
		got, ok := rep.Families[fam]
		if !ok {
			t.Errorf("families has no %s, but endpoints of that family exist", fam)
			continue
		}
		compareSums(t, "families."+fam+" vs its endpoints", got, sum)
	}
	if len(famSum) != len(rep.Families) {
		t.Errorf("families has %d entries; endpoints span %d families", len(rep.Families), len(famSum))
	}
	total := &report.Stats{Status: map[string]int64{}, Errors: map[string]int64{}}
	for _, s := range rep.Families {
		addStats(total, s)
	}
	compareSums(t, "totals vs families", &rep.Totals, total)
}

func checkStats(t *testing.T, scope string, s *report.Stats) {
	t.Helper()
	if s.Requests != s.OK+s.Failed {
		t.Errorf("%s: requests %d != ok %d + failed %d", scope, s.Requests, s.OK, s.Failed)
	}
	var answered, errs int64
	for code, n := range s.Status {
		if c, err := strconv.Atoi(code); err != nil || c < 100 || c > 999 {
			t.Errorf("%s: status key %q is not a status code", scope, code)
		}
		answered += n
	}
	for _, n := range s.Errors {
		errs += n
	}
	if answered+errs != s.Requests {
		t.Errorf("%s: status counts %d + error counts %d != requests %d", scope, answered, errs, s.Requests)
	}
	if s.Requests > 0 {
		if want := float64(s.Failed) / float64(s.Requests); abs(s.FailureRate-want) > 1e-6 {
			t.Errorf("%s: failure_rate = %v; want failed/requests = %v", scope, s.FailureRate, want)
		}
		l := s.LatencyMS
		seq := []float64{l.Min, l.P50, l.P90, l.P99, l.P999, l.Max}
		if !slices.IsSorted(seq) || l.Min <= 0 {
			t.Errorf("%s: latency_ms min %v p50 %v p90 %v p99 %v p999 %v max %v; want 0 < min <= p50 <= p90 <= p99 <= p999 <= max",
				scope, l.Min, l.P50, l.P90, l.P99, l.P999, l.Max)
		}
		if l.Mean < l.Min || l.Mean > l.Max {
			t.Errorf("%s: latency_ms mean %v outside [min %v, max %v]", scope, l.Mean, l.Min, l.Max)
		}
	} else if s.FailureRate != 0 {
		t.Errorf("%s: failure_rate = %v with no request", scope, s.FailureRate)
	}
	h, err := report.DecodeHDR(s.HDR)
	if err != nil {
		t.Errorf("%s: hdr does not decode: %v", scope, err)
		return
	}
	if h.TotalCount() != s.Requests {
		t.Errorf("%s: hdr holds %d values; want requests = %d", scope, h.TotalCount(), s.Requests)
	}
}

func addStats(dst, src *report.Stats) {
	dst.Requests += src.Requests
	dst.OK += src.OK
	dst.Failed += src.Failed
	dst.Dropped += src.Dropped
	for k, v := range src.Status {
		dst.Status[k] += v
	}
	for k, v := range src.Errors {
		dst.Errors[k] += v
	}
}

func compareSums(t *testing.T, scope string, got, sum *report.Stats) {
	t.Helper()
	if got.Requests != sum.Requests || got.OK != sum.OK || got.Failed != sum.Failed || got.Dropped != sum.Dropped {
		t.Errorf("%s: requests/ok/failed/dropped = %d/%d/%d/%d; the parts add up to %d/%d/%d/%d", scope,
			got.Requests, got.OK, got.Failed, got.Dropped, sum.Requests, sum.OK, sum.Failed, sum.Dropped)
	}
	if !equalCounts(got.Status, sum.Status) {
		t.Errorf("%s: status = %v; the parts add up to %v", scope, got.Status, sum.Status)
	}
	if !equalCounts(got.Errors, sum.Errors) {
		t.Errorf("%s: errors = %v; the parts add up to %v", scope, got.Errors, sum.Errors)
	}
}

// equalCounts compares count maps, a missing key being 0.
func equalCounts(a, b map[string]int64) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func endpointByAddr(t *testing.T, rep *report.Report, addr string) *report.Endpoint {
	t.Helper()
	for i := range rep.Endpoints {
		if rep.Endpoints[i].Address == addr {
			return &rep.Endpoints[i]
		}
	}
	t.Fatalf("report has no endpoint %s; endpoints: %v", addr, endpointAddrs(rep))
	return nil
}

// endpointAddrs lists the endpoints' addresses in order ([] when none).
func endpointAddrs(rep *report.Report) []string {
	s := []string{}
	for _, e := range rep.Endpoints {
		s = append(s, e.Address)
	}
	return s
}

// ---------------------------------------------------------------------------
// Running pinprobe for a JSON report and checking the forensic invariants

// reportOpts says what a run asked for, so the invariants can be checked.
type reportOpts struct {
	samples int  // --samples (5 by default)
	noReqID bool // pinprobe added no X-Request-Id (--no-request-id or a -H one)
}

// probeReport runs pinprobe with --format json -q and args, expects exit
// 0, decodes the report and checks the core invariants (checkReport); it
// returns the report, and stdout and stderr as they were written.
func probeReport(t *testing.T, args ...string) (rep *report.Report, stdout, stderr string) {
	t.Helper()
	args = append([]string{"--format", "json", "-q"}, args...)
	code, stdout, stderr := pinprobe(t, args...)
	if code != exitOK {
		t.Fatalf("pinprobe %s: exit %d; want 0; stderr:\n%s", strings.Join(args, " "), code, stderr)
	}
	rep = decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	return rep, stdout, stderr
}

// runReport is probeReport, and checks the forensic invariants too.
func runReport(t *testing.T, o reportOpts, args ...string) (*report.Report, string) {
	t.Helper()
	rep, stdout, stderr := probeReport(t, args...)
	checkForensics(t, rep, stdout, o)
	if t.Failed() {
		t.Logf("stderr:\n%s", stderr)
	}
	return rep, stdout
}

// checkTimes checks that every timestamp of a decoded document (a key
// "at", "start" or ending in "_at") is written as jsonTime says: what a
// script parses, whatever report.Time would accept.
func checkTimes(t *testing.T, scope string, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && (k == "at" || k == "start" || strings.HasSuffix(k, "_at")) && !jsonTime.MatchString(s) {
				t.Errorf("%s.%s = %q; want YYYY-MM-DDTHH:MM:SS.mmmZ", scope, k, s)
			}
			checkTimes(t, scope+"."+k, e)
		}
	case []any:
		for i, e := range v {
			checkTimes(t, fmt.Sprintf("%s[%d]", scope, i), e)
		}
	}
}

// reportTime is a timestamp of the report, which must be set (its format
// is checkTimes').
func reportTime(t *testing.T, scope string, tm report.Time) time.Time {
	t.Helper()
	if tm.IsZero() {
		t.Errorf("%s is not set", scope)
	}
	return tm.Time
}

// sampleFailed reports whether a sample is a failed request (5xx or no response).
func sampleFailed(s report.Sample) bool { return s.Error != "" || s.Status >= 500 }

// checkForensics asserts what must hold in every report: the keys of the
// contract, timeline sums, fingerprint sums, connection splits, the sample
// quota, well-formed samples, client ports and a consistent verdict.
func checkForensics(t *testing.T, rep *report.Report, raw string, o reportOpts) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	requireKeys(t, "report", m, "fingerprints", "timeline", "client", "verdict")
	tl, _ := m["timeline"].(map[string]any)
	requireKeys(t, "timeline", tl, "interval_s", "series")
	v, _ := m["verdict"].(map[string]any)
	requireKeys(t, "verdict", v, "status", "summary", "suspects")
	eps, _ := m["endpoints"].([]any)
	for i, e := range eps {
		em, _ := e.(map[string]any)
		requireKeys(t, fmt.Sprintf("endpoints[%d]", i), em, "samples", "phases_ms", "connections")
		ss, _ := em["samples"].([]any)
		for j, s := range ss {
			sm, _ := s.(map[string]any)
			requireKeys(t, fmt.Sprintf("endpoints[%d].samples[%d]", i, j), sm, "at", "status", "error", "latency_ms", "headers", "body")
		}
	}

	start := reportTime(t, "started_at", rep.StartedAt)
	end := reportTime(t, "ended_at", rep.EndedAt)

	// Timeline: one series per endpoint, in order, summing to its counts.
	if rep.Timeline.IntervalS <= 0 {
		t.Errorf("timeline.interval_s = %v; want > 0", rep.Timeline.IntervalS)
	}
	if rep.Timeline.Start != rep.StartedAt {
		t.Errorf("timeline.start = %q; want started_at %q", rep.Timeline.Start, rep.StartedAt)
	}
	if len(rep.Timeline.Series) != len(rep.Endpoints) {
		t.Errorf("timeline has %d series for %d endpoints", len(rep.Timeline.Series), len(rep.Endpoints))
	}
	maxBuckets := int(math.Ceil(rep.DurationS/rep.Timeline.IntervalS)) + 1
	for i := range min(len(rep.Timeline.Series), len(rep.Endpoints)) {
		s, e := rep.Timeline.Series[i], rep.Endpoints[i]
		if s.Address != e.Address || s.Target != e.Target {
			t.Errorf("timeline.series[%d] is %s %s; endpoint %d is %s %s", i, s.Address, s.Target, i, e.Address, e.Target)
		}
		if len(s.Requests) != len(s.Failed) || len(s.Requests) != len(rep.Timeline.Series[0].Requests) {
			t.Errorf("timeline.series[%d]: %d request buckets, %d failed buckets, series[0] has %d",
				i, len(s.Requests), len(s.Failed), len(rep.Timeline.Series[0].Requests))
		}
		if len(s.Requests) > maxBuckets {
			t.Errorf("timeline.series[%d]: %d buckets of %vs for a %vs run", i, len(s.Requests), rep.Timeline.IntervalS, rep.DurationS)
		}
		var req, fail int64
		for j := range s.Requests {
			req += s.Requests[j]
			if j < len(s.Failed) {
				fail += s.Failed[j]
				if s.Failed[j] > s.Requests[j] || s.Failed[j] < 0 {
					t.Errorf("timeline.series[%d] bucket %d: %d failed of %d requests", i, j, s.Failed[j], s.Requests[j])
				}
			}
		}
		if req != e.Requests || fail != e.Failed {
			t.Errorf("timeline of %s sums to %d requests, %d failed; the endpoint has %d, %d", e.Address, req, fail, e.Requests, e.Failed)
		}
	}

	// Fingerprints: every failure in exactly one, per address too.
	var fpTotal int64
	fpByAddr := map[string]int64{}
	for i, fp := range rep.Fingerprints {
		fpTotal += fp.Count
		if fp.Fresh+fp.Reused != fp.Count {
			t.Errorf("fingerprints[%d]: fresh %d + reused %d != count %d", i, fp.Fresh, fp.Reused, fp.Count)
		}
		if (fp.Status == 0) == (fp.Error == "") {
			t.Errorf("fingerprints[%d]: status %d, error %q; want exactly one of them", i, fp.Status, fp.Error)
		}
		if len(fp.Body) > 512 {
			t.Errorf("fingerprints[%d]: body of %d bytes; want at most 512", i, len(fp.Body))
		}
		var n int64
		for a, c := range fp.Addresses {
			n += c
			fpByAddr[a] += c
		}
		if n != fp.Count {
			t.Errorf("fingerprints[%d]: addresses %v sum to %d; count is %d", i, fp.Addresses, n, fp.Count)
		}
		if i > 0 && fp.Count > rep.Fingerprints[i-1].Count {
			t.Errorf("fingerprints not sorted by count: [%d] %d after [%d] %d", i, fp.Count, i-1, rep.Fingerprints[i-1].Count)
		}
	}
	if fpTotal != rep.Totals.Failed {
		t.Errorf("fingerprints count %d failures; totals.failed = %d", fpTotal, rep.Totals.Failed)
	}
	failedByAddr := map[string]int64{}
	for _, e := range rep.Endpoints {
		if e.Failed > 0 {
			failedByAddr[e.Address] += e.Failed
		}
	}
	if !equalCounts(fpByAddr, failedByAddr) {
		t.Errorf("fingerprints by address %v; endpoints failed %v", fpByAddr, failedByAddr)
	}

	addrs := map[string]bool{}
	for _, e := range rep.Endpoints {
		addrs[e.Address] = true
		scope := "endpoint " + e.Address
		fresh, reused := e.Connections["fresh"], e.Connections["reused"]
		if fresh.Requests+reused.Requests != e.Requests || fresh.Failed+reused.Failed != e.Failed {
			t.Errorf("%s: connections %+v; want fresh+reused = %d requests, %d failed", scope, e.Connections, e.Requests, e.Failed)
		}
		for name, p := range map[string]report.Phase{"connect": e.Phases.Connect, "tls": e.Phases.TLS, "ttfb": e.Phases.TTFB} {
			if p.Count > e.Requests || p.Count < 0 || (p.Count > 0 && !(p.P50 <= p.P99 && p.P99 <= p.Max)) {
				t.Errorf("%s: phase %s %+v; want count <= %d requests and p50 <= p99 <= max", scope, name, p, e.Requests)
			}
		}
		if e.Phases.Connect.Count > fresh.Requests {
			t.Errorf("%s: %d connect phases for %d requests on fresh connections", scope, e.Phases.Connect.Count, fresh.Requests)
		}

		// The sample quota: the first N failures and one success, exactly.
		var nFailed, nOK int64
		for j, s := range e.Samples {
			ss := fmt.Sprintf("%s sample %d", scope, j)
			if sampleFailed(s) {
				nFailed++
			} else {
				nOK++
			}
			at := reportTime(t, ss+" at", s.At)
			if at.Before(start.Add(-time.Millisecond)) || at.After(end) {
				t.Errorf("%s: at %s outside the run %s .. %s", ss, s.At, rep.StartedAt, rep.EndedAt)
			}
			if s.LatencyMS <= 0 {
				t.Errorf("%s: latency_ms %v; want > 0", ss, s.LatencyMS)
			}
			if s.Headers == nil {
				t.Errorf("%s: headers null; want an object", ss)
			}
			if len(s.Body) > 512 {
				t.Errorf("%s: body of %d bytes; want at most 512", ss, len(s.Body))
			}
			if !o.noReqID && s.RequestID == "" {
				t.Errorf("%s: request_id %q; want pinprobe's X-Request-Id", ss, s.RequestID)
			}
			if s.Status != 0 {
				want := netip.AddrPortFrom(netip.MustParseAddr(e.Address), uint16(e.Port)).String()
				if s.Remote != want {
					t.Errorf("%s: remote %q; want %q", ss, s.Remote, want)
				}
				if lp, err := netip.ParseAddrPort(s.Local); err != nil || lp.Port() == 0 {
					t.Errorf("%s: local %q; want the client's ip:port", ss, s.Local)
				} else if !slices.Contains(rep.Client.LocalAddresses, lp.Addr().String()) {
					t.Errorf("%s: local %s not among client.local_addresses %v", ss, s.Local, rep.Client.LocalAddresses)
				} else if len(rep.Client.Ports) < 1000 && !slices.Contains(rep.Client.Ports, int(lp.Port())) {
					t.Errorf("%s: local port %d not among client.ports", ss, lp.Port())
				}
			} else if s.Error == "" || s.Class == "" {
				t.Errorf("%s: no status, error %q, class %q; want the error and its class", ss, s.Error, s.Class)
			}
		}
		samples := int64(o.samples)
		if samples < 0 {
			samples = 0
		}
		wantFailed, wantOK := min(samples, e.Failed), min(1, e.OK)
		if samples == 0 {
			wantOK = 0
		}
		if nFailed != wantFailed || nOK != wantOK {
			t.Errorf("%s (%d ok, %d failed): %d failed + %d ok samples; want %d + %d (--samples %d)",
				scope, e.OK, e.Failed, nFailed, nOK, wantFailed, wantOK, o.samples)
		}
	}

	// Client: sorted unique ports within [port_min, port_max].
	c := rep.Client
	if !slices.IsSorted(c.Ports) || len(slices.Compact(slices.Clone(c.Ports))) != len(c.Ports) {
		t.Errorf("client.ports not sorted and unique: %v", c.Ports)
	}
	if len(c.Ports) != min(c.PortsCount, 1000) {
		t.Errorf("client.ports lists %d ports; ports_count = %d", len(c.Ports), c.PortsCount)
	}
	if len(c.Ports) > 0 && (c.Ports[0] != c.PortMin || c.Ports[len(c.Ports)-1] > c.PortMax) {
		t.Errorf("client.ports %d..%d; port_min %d, port_max %d", c.Ports[0], c.Ports[len(c.Ports)-1], c.PortMin, c.PortMax)
	}
	for _, a := range c.LocalAddresses {
		if _, err := netip.ParseAddr(a); err != nil {
			t.Errorf("client.local_addresses has %q: %v", a, err)
		}
	}

	// Verdict: a known status, and suspects that exist.
	switch rep.Verdict.Status {
	case "ok":
		if rep.Totals.Failed != 0 {
			t.Errorf("verdict ok with %d failures", rep.Totals.Failed)
		}
	case "concentrated":
		if len(rep.Verdict.Suspects) == 0 {
			t.Errorf("verdict concentrated without a suspect: %q", rep.Verdict.Summary)
		}
	case "spread", "no-data":
	default:
		t.Errorf("verdict.status = %q; want ok, concentrated, spread or no-data", rep.Verdict.Status)
	}
	if rep.Verdict.Summary == "" {
		t.Errorf("verdict.summary is empty")
	}
	groups := map[string]bool{}
	for _, g := range rep.Groups {
		groups[g.Header+": "+g.Value] = true
	}
	for _, s := range rep.Verdict.Suspects {
		switch s.Kind {
		case "group":
			if !groups[s.Group] {
				t.Errorf("suspect group %q is not in the report's groups", s.Group)
			}
		case "endpoint", "connections":
			if !addrs[s.Address] {
				t.Errorf("suspect %s is no endpoint", s.Address)
			}
		default:
			t.Errorf("suspect %+v: kind %q; want endpoint, group or connections", s, s.Kind)
		}
		if s.CI95[0] > s.FailureRate || s.CI95[1] < s.FailureRate || s.P < 0 || s.P > 1 {
			t.Errorf("suspect %s: failure_rate %v, ci95 %v, p %v; inconsistent", s.Address, s.FailureRate, s.CI95, s.P)
		}
	}
}

// suspects returns the addresses the verdict names as endpoints.
func suspects(rep *report.Report) []string {
	out := []string{}
	for _, s := range rep.Verdict.Suspects {
		if s.Kind != "endpoint" {
			continue
		}
		out = append(out, s.Address)
	}
	return out
}

func checkVerdict(t *testing.T, rep *report.Report, status string, want ...string) {
	t.Helper()
	t.Logf("verdict: %s", rep.Verdict.Summary)
	if want == nil {
		want = []string{}
	}
	if rep.Verdict.Status != status || !slices.Equal(suspects(rep), want) {
		t.Errorf("verdict %s, suspects %v; want %s, suspects %v\nsummary: %s", rep.Verdict.Status, suspects(rep), status, want, rep.Verdict.Summary)
	}
}

// The pinprobe binary, built once for the tests that run it as a process.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// buildPinprobe builds the command once per test binary and returns its
// path; TestMain removes it.
func buildPinprobe(t *testing.T) string {
	t.Helper()
	check.Long(t, "the tests that run pinprobe as a process")
	binOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			binErr = fmt.Errorf("no go tool in PATH: %w", err)
			return
		}
		if binDir, binErr = os.MkdirTemp("", "pinprobe-test-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "pinprobe")
		if out, err := exec.Command(goTool, "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	check.WideParallel(4)
	// Every temporary file of the tests, those of the runs they start
	// included (--demo keeps its gateway's access log under the user's
	// cache directory), goes into one directory, removed at the end.
	tmp, err := os.MkdirTemp("", "pinprobe-test-")
	if err == nil {
		os.Setenv("TMPDIR", tmp)
		// The go command's own cache stays where it was: the tests' builds
		// of pinprobe would otherwise start cold.
		if os.Getenv("GOCACHE") == "" {
			if cache, err := os.UserCacheDir(); err == nil {
				os.Setenv("GOCACHE", filepath.Join(cache, "go-build"))
			}
		}
		os.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "cache"))
	}
	code := m.Run()
	for _, bad := range exitsSeen.undeclared() {
		fmt.Fprintln(os.Stderr, "FAIL:", bad)
		code = 1
	}
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if tmp != "" {
		os.RemoveAll(tmp)
	}
	os.Exit(code)
}

// TestFitMessageWidth: a message wrapped for a terminal of n columns has
// no line as wide as n, its continuation indent included, and keeps
// every word whole.
func TestFitMessageWidth(t *testing.T) {
	msg := "pinprobe: demo: 127.0.0.2 fronts 4 gateway instances, each connection kept on one; instance gw-3 has the unreachable backend too"
	for _, cols := range []int{40, 80, 120} {
		out := fitMessage(msg, cols)
		for _, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n >= cols {
				t.Errorf("cols %d: line %q is %d wide", cols, line, n)
			}
		}
		if got := strings.Join(strings.Fields(out), " "); got != msg {
			t.Errorf("cols %d: words changed:\n%s", cols, got)
		}
	}
}

// splitUpstreams are a gateway test's two upstreams: a healthy server on
// 127.0.0.1 (answering 200 "signed") and a closed port on [::1], which a
// gateway fails to reach. It skips the test where loopback has no IPv6.
func splitUpstreams(t *testing.T) (ok, dead netip.AddrPort) {
	t.Helper()
	if !testserver.HasIPv6Loopback() {
		t.Skip("no IPv6 loopback here")
	}
	backend := testserver.StartFleet(t, testserver.FleetOptions{Host: "127.0.0.1",
		Each: func(int64, *http.Request) testserver.Answer {
			return testserver.Answer{Status: http.StatusOK, Body: "signed\n"}
		}}, testserver.Lo4a)
	return netip.AddrPortFrom(testserver.Lo4a, backend.Port()), testserver.ClosedAddrPort(t, testserver.Lo6)
}

// tmuxPane is a tmux server of a test's own (its socket in a temporary
// directory) running one session of a set size, in which the tests watch
// what pinprobe draws on a real terminal.
type tmuxPane struct {
	t         *testing.T
	bin, sock string
	name      string
}

// startTmux runs script with sh -c in a session named name, width × height,
// NO_COLOR set; the server is killed when the test ends.
func startTmux(t *testing.T, dir, name string, width, height int, script string) *tmuxPane {
	t.Helper()
	p := &tmuxPane{t: t, bin: testserver.TmuxBinary(t), sock: filepath.Join(dir, "tmux.sock"), name: name}
	if out, err := p.tmux("new-session", "-d", "-s", name, "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), "sh", "-c", script); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = p.tmux("kill-server") })
	return p
}

func (p *tmuxPane) tmux(args ...string) (string, error) {
	cmd := exec.Command(p.bin, append([]string{"-S", p.sock, "-f", "/dev/null"}, args...)...)
	cmd.Env = append(os.Environ(), "TMUX=", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// screen returns the pane's screen (capture-pane -p, with flags such as
// -J); it fails the test if tmux cannot read it.
func (p *tmuxPane) screen(flags ...string) string {
	p.t.Helper()
	out, err := p.tmux(append(append([]string{"capture-pane", "-p"}, flags...), "-t", p.name)...)
	if err != nil {
		p.t.Fatalf("tmux capture-pane: %v\n%s", err, out)
	}
	return out
}
