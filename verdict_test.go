package main

// Verdicts of whole scenarios, end to end through run() against real
// servers on 127.0.0.1, 127.0.0.2 and [::1] (one port): failures on one
// family, on one address, spread over all, none, a slow address, and an
// address that refuses connections.

import (
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/collect"
	"github.com/pinprobe/pinprobe/internal/stat"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestForensicsAllIPv6Fail is the seed incident: IPv6 answers nginx's 502
// pages, IPv4 is healthy. The verdict blames IPv6, one fingerprint names
// nginx, and the samples carry the request IDs the server saw, with the
// secrets of the response headers redacted.
func TestForensicsAllIPv6Fail(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{
		Policies: map[netip.Addr]testserver.Policy{testserver.Lo6: nginx502WithSecrets},
	}, testserver.Loopbacks()...)
	rep, stdout := runReport(t, reportOpts{samples: 5}, "--resolve", f.Resolve(), "--rate", "600", "-n", "240", f.URL())
	checkFleet(t, f, rep)
	checkClient(t, f, rep)

	checkVerdict(t, rep, "concentrated", "::1")
	if !strings.Contains(rep.Verdict.Summary, "IPv6") {
		t.Errorf("verdict summary does not name IPv6: %q", rep.Verdict.Summary)
	}
	if s := rep.Verdict.Suspects; len(s) == 1 && (s[0].Family != "ipv6" || s[0].FailureRate != 1 || s[0].P >= 1e-9) {
		t.Errorf("suspect %+v; want family ipv6, failure_rate 1, p < 1e-9", s[0])
	}

	v6 := endpointByAddr(t, rep, "::1")
	if v6.Requests < 40 || v6.Failed != v6.Requests || v6.Status["502"] != v6.Requests {
		t.Fatalf("::1: %d requests, %d failed, status %v; want at least 40, all 502", v6.Requests, v6.Failed, v6.Status)
	}

	// Who answered: one fingerprint, nginx's 502, all on ::1, though every
	// body differed (it names the request and the time).
	if len(rep.Fingerprints) != 1 {
		t.Fatalf("fingerprints %+v; want exactly one", rep.Fingerprints)
	}
	fp := rep.Fingerprints[0]
	if fp.Status != 502 || fp.Server != "nginx/1.22.1" || fp.Producer != "nginx" || fp.Count != v6.Failed ||
		!equalCounts(fp.Addresses, map[string]int64{"::1": v6.Failed}) || fp.BodyHash == "" || !strings.Contains(fp.Body, "502 Bad Gateway") {
		t.Errorf("fingerprint %+v; want 502 from Server nginx/1.22.1 (producer nginx) ×%d on ::1 with its body", fp, v6.Failed)
	}

	// The evidence: request IDs the server saw, the client's and the
	// server's ip:port, the response headers with secrets redacted.
	b6 := f.Backend(t, testserver.Lo6)
	for i, s := range v6.Samples {
		if !sampleFailed(s) {
			t.Errorf("::1 sample %d: status %d; want the 502s only", i, s.Status)
			continue
		}
		if s.RequestID == "" || !b6.SawID(s.RequestID) {
			t.Errorf("::1 sample %d: request_id %q was not seen by the ::1 server", i, s.RequestID)
		}
		if s.Headers["X-Request-Id"] != s.RequestID {
			t.Errorf("::1 sample %d: the echoed X-Request-Id header %q differs from request_id %q", i, s.Headers["X-Request-Id"], s.RequestID)
		}
		if s.Status != 502 || s.Headers["Server"] != "nginx/1.22.1" || !strings.Contains(s.Body, "502 Bad Gateway") {
			t.Errorf("::1 sample %d: status %d, Server %q, body %q; want nginx's 502 page", i, s.Status, s.Headers["Server"], s.Body)
		}
		if !strings.Contains(s.Body, s.RequestID) {
			t.Errorf("::1 sample %d: body does not hold its own request ID %s: %q", i, s.RequestID, s.Body)
		}
		if lp, err := netip.ParseAddrPort(s.Local); err != nil || lp.Addr() != netip.IPv6Loopback() {
			t.Errorf("::1 sample %d: local %q; want [::1]:PORT", i, s.Local)
		}
		for _, h := range []string{"Set-Cookie", "X-Api-Key", "Authorization"} {
			if s.Headers[h] != collect.Redacted {
				t.Errorf("::1 sample %d: header %s = %q; want %s", i, h, s.Headers[h], collect.Redacted)
			}
		}
	}
	for _, secret := range []string{"fx-set-cookie-secret", "fx-api-key-secret", "fx-authorization-secret"} {
		if strings.Contains(stdout, secret) {
			t.Errorf("the report contains the secret %q", secret)
		}
	}
	// The success sample of a healthy endpoint is evidence too.
	ok4 := endpointByAddr(t, rep, "127.0.0.1")
	if len(ok4.Samples) != 1 || ok4.Samples[0].Status != 200 || !f.Backend(t, testserver.Lo4a).SawID(ok4.Samples[0].RequestID) {
		t.Errorf("127.0.0.1 samples %+v; want one 200 whose request ID the server saw", ok4.Samples)
	}
	// A 502 made at once: its time to first byte is recorded for every request.
	if v6.Phases.TTFB.Count != v6.Requests {
		t.Errorf("::1: ttfb phase counted %d of %d requests", v6.Phases.TTFB.Count, v6.Requests)
	}
}

// TestForensicsOneAddressFailsOneInFive: one IPv4 address of three fails
// 20% of the time; the verdict names it.
func TestForensicsOneAddressFailsOneInFive(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{
		Policies: map[netip.Addr]testserver.Policy{testserver.Lo4b: testserver.Every(5, fx503)},
	}, testserver.Loopbacks()...)
	rep, _ := runReport(t, reportOpts{samples: 5}, "--resolve", f.Resolve(), "--rate", "1200", "-n", "300", f.URL())
	checkFleet(t, f, rep)
	checkClient(t, f, rep)

	bad := endpointByAddr(t, rep, "127.0.0.2")
	if want := bad.Requests / 5; bad.Failed != want || bad.Status["503"] != want {
		t.Errorf("127.0.0.2: %d of %d failed (status %v); the server answered 503 to every 5th: want %d", bad.Failed, bad.Requests, bad.Status, want)
	}
	checkVerdict(t, rep, "concentrated", "127.0.0.2")
	if !strings.Contains(rep.Verdict.Summary, "127.0.0.2") {
		t.Errorf("verdict summary does not name 127.0.0.2: %q", rep.Verdict.Summary)
	}
	if len(rep.Fingerprints) != 1 || rep.Fingerprints[0].Status != 503 || rep.Fingerprints[0].Server != "fx-backend/1.0" {
		t.Errorf("fingerprints %+v; want one: 503 from fx-backend/1.0", rep.Fingerprints)
	}
}

// TestForensicsEveryAddressFailsFivePercent: every address fails 5%: the
// failures are spread, nobody is to blame.
func TestForensicsEveryAddressFailsFivePercent(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{Each: testserver.Every(20, fx503)}, testserver.Loopbacks()...)
	rep, stdout := runReport(t, reportOpts{samples: 5}, "--resolve", f.Resolve(), "--rate", "1200", "-n", "600", f.URL())
	checkFleet(t, f, rep)

	for _, e := range rep.Endpoints {
		if want := e.Requests / 20; e.Failed != want {
			t.Errorf("%s: %d of %d failed; want every 20th = %d", e.Address, e.Failed, e.Requests, want)
		}
	}
	checkVerdict(t, rep, "spread")
	if !strings.Contains(rep.Verdict.Summary, "spread") {
		t.Errorf("verdict summary does not say the failures are spread: %q", rep.Verdict.Summary)
	}
	if !strings.Contains(stdout, `"suspects": []`) {
		t.Errorf("verdict.suspects is not an empty array in the JSON")
	}
}

// upperBoundRE matches the summary of a healthy verdict.
var upperBoundRE = regexp.MustCompile(`^0 failures in (\d+) requests: below ([0-9.]+)% with 95% confidence\.$`)

// TestForensicsHealthy: no failure: the verdict is ok and says how sure,
// with the 95% upper bound of the failure rate.
func TestForensicsHealthy(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Loopbacks()...)
	rep, _ := runReport(t, reportOpts{samples: 5}, "--resolve", f.Resolve(), "--rate", "900", "-n", "300", f.URL())
	checkFleet(t, f, rep)
	checkClient(t, f, rep)

	checkVerdict(t, rep, "ok")
	m := upperBoundRE.FindStringSubmatch(rep.Verdict.Summary)
	if m == nil {
		t.Fatalf("verdict summary %q; want \"0 failures in N requests: below X%% with 95%% confidence.\"", rep.Verdict.Summary)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	pct, _ := strconv.ParseFloat(m[2], 64)
	bound := stat.UpperBoundZero(n) * 100
	if n != 300 || pct < bound || pct > bound*1.1 {
		t.Errorf("summary says %d requests, below %v%%; want 300, the 95%% bound %.4f%% rounded up", n, pct, bound)
	}
	if len(rep.Fingerprints) != 0 {
		t.Errorf("fingerprints %+v; want none", rep.Fingerprints)
	}
	for _, e := range rep.Endpoints {
		if e.Phases.TTFB.Count != e.Requests || e.Phases.Connect.Count == 0 || e.Phases.TLS.Count != 0 {
			t.Errorf("%s: phases %+v; want ttfb for all %d requests, some connects, no TLS (plain HTTP)", e.Address, e.Phases, e.Requests)
		}
	}
}

// TestForensicsSlowAddress: a slow address has no failure and is no
// suspect, but its latency and time to first byte show.
func TestForensicsSlowAddress(t *testing.T) {
	f := testserver.StartFleet(t, testserver.FleetOptions{
		Policies: map[netip.Addr]testserver.Policy{testserver.Lo4b: testserver.Delayed(30 * time.Millisecond)},
	}, testserver.Loopbacks()...)
	rep, _ := runReport(t, reportOpts{samples: 5}, "--resolve", f.Resolve(), "--rate", "300", "-n", "150", f.URL())
	checkFleet(t, f, rep)

	checkVerdict(t, rep, "ok")
	s := endpointByAddr(t, rep, "127.0.0.2")
	if s.LatencyMS.P50 < 30 || s.Phases.TTFB.P50 < 30 {
		t.Errorf("127.0.0.2: latency p50 %vms, ttfb p50 %vms; the server waits 30ms", s.LatencyMS.P50, s.Phases.TTFB.P50)
	}
	for _, a := range []string{"127.0.0.1", "::1"} {
		e := endpointByAddr(t, rep, a)
		if !(e.LatencyMS.P50*2 < s.LatencyMS.P50) || !(e.Phases.TTFB.P50*2 < s.Phases.TTFB.P50) {
			t.Errorf("%s: latency p50 %vms, ttfb p50 %vms; want well below the slow address's %vms, %vms",
				a, e.LatencyMS.P50, e.Phases.TTFB.P50, s.LatencyMS.P50, s.Phases.TTFB.P50)
		}
	}
}

// TestForensicsConnectionRefused: nothing listens on one address: its
// requests fail with connect_refused and the verdict names it.
func TestForensicsConnectionRefused(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a, testserver.Lo4b)
	requireRefused(t, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.3"), f.Port()))
	rep, _ := runReport(t, reportOpts{samples: 5}, "--resolve", f.Resolve("127.0.0.3"), "--rate", "600", "-n", "150", f.URL())
	checkFleet(t, f, rep, "127.0.0.3")

	e := endpointByAddr(t, rep, "127.0.0.3")
	if e.Requests == 0 || e.Failed != e.Requests || !equalCounts(e.Errors, map[string]int64{"connect_refused": e.Requests}) {
		t.Fatalf("127.0.0.3: %d requests, %d failed, errors %v; want all connect_refused", e.Requests, e.Failed, e.Errors)
	}
	checkVerdict(t, rep, "concentrated", "127.0.0.3")
	if len(rep.Fingerprints) != 1 || rep.Fingerprints[0].Error != "connect_refused" || rep.Fingerprints[0].Status != 0 ||
		!equalCounts(rep.Fingerprints[0].Addresses, map[string]int64{"127.0.0.3": e.Requests}) {
		t.Errorf("fingerprints %+v; want one, error connect_refused ×%d on 127.0.0.3", rep.Fingerprints, e.Requests)
	}
	for i, s := range e.Samples {
		if s.Class != "connect_refused" || s.Status != 0 || s.Error == "" || s.Remote != "" {
			t.Errorf("127.0.0.3 sample %d: %+v; want class connect_refused, no status, no remote", i, s)
		}
	}
	if e.Phases.TTFB.Count != 0 {
		t.Errorf("127.0.0.3: %d ttfb phases; no response ever came", e.Phases.TTFB.Count)
	}
}
