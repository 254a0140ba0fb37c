package main

// Scenario tests of the forensics features (issue 3): request IDs, samples,
// fingerprints, phases, timeline, client ports, DNS re-resolution and the
// verdict, end to end through run() against real servers on 127.0.0.1,
// 127.0.0.2 and [::1] (one port), decoding the JSON report as a script would.

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"pinprobe/internal/testserver"
	"pinprobe/report"
)

// ---------------------------------------------------------------------------
// 1. The seed incident: IPv6 answers nginx 502 pages, IPv4 is healthy

func TestForensicsAllIPv6Fail(t *testing.T) {
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
			if s.Headers[h] != report.Redacted {
				t.Errorf("::1 sample %d: header %s = %q; want %s", i, h, s.Headers[h], report.Redacted)
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

// ---------------------------------------------------------------------------
// 2. One IPv4 address of three fails 20% of the time

func TestForensicsOneAddressFailsOneInFive(t *testing.T) {
	f := testserver.StartFleet(t, testserver.FleetOptions{
		Policies: map[netip.Addr]testserver.Policy{testserver.Lo4b: testserver.Every(5, fx503)},
	}, testserver.Loopbacks()...)
	rep, _ := runReport(t, reportOpts{samples: 5}, "--resolve", f.Resolve(), "--rate", "1200", "-n", "600", f.URL())
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

// ---------------------------------------------------------------------------
// 3. Every address fails 5%: spread, nobody to blame

func TestForensicsEveryAddressFailsFivePercent(t *testing.T) {
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

// ---------------------------------------------------------------------------
// 4. Healthy: ok, and how sure

var upperBoundRE = regexp.MustCompile(`^0 failures in (\d+) requests: below ([0-9.]+)% with 95% confidence\.$`)

func TestForensicsHealthy(t *testing.T) {
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
	bound := report.UpperBoundZero(n) * 100
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

// ---------------------------------------------------------------------------
// 5. A slow address: no failure, no suspect, but its latency and TTFB show

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

// ---------------------------------------------------------------------------
// 6. Nothing listens on one address: connection refused

func TestForensicsConnectionRefused(t *testing.T) {
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

// ---------------------------------------------------------------------------
// 7. DNS changes during the run (--re-resolve)

// timelineIndex is the bucket of at in the report's timeline.
func timelineIndex(t *testing.T, rep *jsonReport, at time.Time) int {
	start := reportTime(t, "timeline.start", rep.Timeline.Start)
	return int(at.Sub(start).Seconds() / rep.Timeline.IntervalS)
}

func TestForensicsDNSChangeAddsFailingAddress(t *testing.T) {
	t.Parallel()
	lo4, lo6 := testserver.Lo4a, testserver.Lo6
	f, _, rep := runDNSChange(t, dnsChange{
		served:   []netip.Addr{lo4, lo6},
		policies: map[netip.Addr]testserver.Policy{lo6: nginx502WithSecrets},
		first:    []netip.Addr{lo4},
		trigger:  lo4,
		change:   func(d *testserver.DNS) { d.Set("dyn.test", lo4, lo6) },
		duration: "4s",
	})

	ch := dnsChanges(t, rep, 1)[0]
	if !slices.Equal(ch.Added, []string{"::1"}) || len(ch.Removed) != 0 {
		t.Errorf("dns change %+v; want added [::1], removed []", ch)
	}
	start := reportTime(t, "started_at", rep.StartedAt)
	at := reportTime(t, "dns change at", ch.At)
	if at.Before(start) || at.After(start.Add(2500*time.Millisecond)) {
		t.Errorf("dns change at %s; want within 2.5s of the start %s (--re-resolve 1s)", ch.At, rep.StartedAt)
	}
	if got := endpointAddrs(rep); !slices.Equal(got, []string{"127.0.0.1", "::1"}) {
		t.Fatalf("endpoints %v; want 127.0.0.1, then the added ::1", got)
	}
	v6 := endpointByAddr(t, rep, "::1")
	if v6.AddedAt == nil || *v6.AddedAt != ch.At {
		t.Errorf("::1 added_at %v; want the change's time %s", v6.AddedAt, ch.At)
	}
	if v6.RemovedAt != nil || endpointByAddr(t, rep, "127.0.0.1").AddedAt != nil {
		t.Errorf("unexpected added_at/removed_at marks: %+v", rep.Endpoints)
	}
	if v6.Requests < 20 || v6.Failed != v6.Requests {
		t.Errorf("::1: %d requests, %d failed; want it probed (all 502) after it appeared", v6.Requests, v6.Failed)
	}
	// Not one request to ::1 before DNS named it.
	if arr := f.Backend(t, testserver.Lo6).Arrivals(); len(arr) > 0 && arr[0].Before(at.Add(-time.Millisecond)) {
		t.Errorf("::1 received a request at %s, before the DNS change at %s", arr[0].UTC().Format(time.RFC3339Nano), ch.At)
	}
	if i := timelineIndex(t, rep, at.Add(-2*time.Millisecond)); i > 0 {
		for j := 0; j < i && j < len(rep.Timeline.Series[1].Requests); j++ {
			if n := rep.Timeline.Series[1].Requests[j]; n != 0 {
				t.Errorf("::1 timeline bucket %d (before the change) holds %d requests", j, n)
			}
		}
	}
	// The rate is split again, not added: about 200/s in total over 4s.
	if n := rep.Totals.Requests; n < 480 || n > 960 {
		t.Errorf("%d requests in total; want about 800 (200/s for 4s, re-split over the new endpoint)", n)
	}
	checkVerdict(t, rep, "concentrated", "::1")
	if !strings.Contains(rep.Verdict.Summary, "IPv6") {
		t.Errorf("verdict summary does not name IPv6: %q", rep.Verdict.Summary)
	}
}

func TestForensicsDNSChangeRemovesAddress(t *testing.T) {
	t.Parallel()
	lo4a, lo4b := testserver.Lo4a, testserver.Lo4b
	f, _, rep := runDNSChange(t, dnsChange{
		served:   []netip.Addr{lo4a, lo4b},
		first:    []netip.Addr{lo4a, lo4b},
		trigger:  lo4b,
		change:   func(d *testserver.DNS) { d.Set("dyn.test", lo4a) },
		duration: "3s",
	})

	ch := dnsChanges(t, rep, 1)[0]
	if !slices.Equal(ch.Removed, []string{"127.0.0.2"}) || len(ch.Added) != 0 {
		t.Errorf("dns change %+v; want added [], removed [127.0.0.2]", ch)
	}
	gone := endpointByAddr(t, rep, "127.0.0.2")
	if gone.RemovedAt == nil || *gone.RemovedAt != ch.At || gone.AddedAt != nil {
		t.Fatalf("127.0.0.2 removed_at %v, added_at %v; want removed at the change's time %s", gone.RemovedAt, gone.AddedAt, ch.At)
	}
	removed := reportTime(t, "removed_at", *gone.RemovedAt)
	if gone.Requests < 20 {
		t.Errorf("127.0.0.2: %d requests; want it probed until it vanished", gone.Requests)
	}
	// Server side: nothing new after the removal; only requests already in
	// flight (at most --concurrency 10) may arrive a moment later.
	checkOutOfDNS(t, f.Backend(t, lo4b), removed, time.Time{})
	series := rep.Timeline.Series[1]
	for j := timelineIndex(t, rep, removed.Add(2*time.Millisecond)) + 1; j < len(series.Requests); j++ {
		if series.Requests[j] != 0 {
			t.Errorf("127.0.0.2 timeline bucket %d (after the removal) holds %d requests", j, series.Requests[j])
		}
	}
	// The survivor takes the whole rate: about 100/s before, 200/s after.
	kept := rep.Timeline.Series[0].Requests
	if len(kept) >= 3 && !(float64(kept[2]) >= 1.4*float64(kept[0])) {
		t.Errorf("127.0.0.1 timeline %v; want the last second at about twice the first (the rate re-split)", kept)
	}
	checkVerdict(t, rep, "ok")
}

// ---------------------------------------------------------------------------
// 8. X-Request-Id

func TestForensicsRequestIDs(t *testing.T) {
	t.Run("unique", func(t *testing.T) {
		f := testserver.StartFleet(t, testserver.FleetOptions{
			Policies: map[netip.Addr]testserver.Policy{testserver.Lo6: nginx502WithSecrets},
		}, testserver.Loopbacks()...)
		rep, _ := runReport(t, reportOpts{samples: 5}, "--resolve", f.Resolve(), "--rate", "900", "-n", "450", f.URL())
		checkFleet(t, f, rep)
		first, noID, multi := f.IDs()
		if noID != 0 || multi != 0 {
			t.Errorf("%d requests without X-Request-Id, %d with several", noID, multi)
		}
		if len(first) != 450 {
			t.Errorf("%d distinct X-Request-Id for 450 requests", len(first))
		}
		for id, n := range first {
			if n != 1 {
				t.Errorf("X-Request-Id %q sent %d times", id, n)
			}
		}
		for _, e := range rep.Endpoints {
			for _, s := range e.Samples {
				if !f.Backend(t, netip.MustParseAddr(e.Address)).SawID(s.RequestID) {
					t.Errorf("%s: sample request_id %q not seen by its server", e.Address, s.RequestID)
				}
			}
		}
		// A second run sends fresh ones.
		runReport(t, reportOpts{samples: 5}, "--resolve", f.Resolve(), "--rate", "900", "-n", "90", f.URL())
		if ids, _, _ := f.IDs(); len(ids) != 540 {
			t.Errorf("two runs of 450 and 90 requests sent %d distinct X-Request-Id; want 540", len(ids))
		}
	})

	t.Run("--no-request-id", func(t *testing.T) {
		f := testserver.StartFleet(t, testserver.FleetOptions{
			Policies: map[netip.Addr]testserver.Policy{testserver.Lo4b: testserver.Every(2, fx503)},
		}, testserver.Lo4a, testserver.Lo4b)
		rep, _ := runReport(t, reportOpts{samples: 5, noReqID: true}, "--no-request-id", "--resolve", f.Resolve(), "--rate", "600", "-n", "60", f.URL())
		checkFleet(t, f, rep)
		if ids, noID, _ := f.IDs(); noID != 60 || len(ids) != 0 {
			t.Errorf("servers saw %d requests without X-Request-Id and ids %v; want 60 and none", noID, ids)
		}
		for _, e := range rep.Endpoints {
			for _, s := range e.Samples {
				if s.RequestID != "" {
					t.Errorf("%s: sample request_id %q with --no-request-id", e.Address, s.RequestID)
				}
			}
		}
	})

	for _, args := range [][]string{
		{"-H", "X-Request-Id: mine"},
		{"-H", "x-request-id: mine"},
		{"--no-request-id", "-H", "X-Request-Id: mine"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			f := testserver.StartFleet(t, testserver.FleetOptions{
				Policies: map[netip.Addr]testserver.Policy{testserver.Lo4b: testserver.Every(2, fx503)},
			}, testserver.Lo4a, testserver.Lo4b)
			rep, _ := runReport(t, reportOpts{samples: 5, noReqID: true},
				append(args, "--resolve", f.Resolve(), "--rate", "600", "-n", "60", f.URL())...)
			checkFleet(t, f, rep)
			ids, noID, multi := f.IDs()
			if !maps.Equal(ids, map[string]int{"mine": 60}) || noID != 0 || multi != 0 {
				t.Errorf("servers saw X-Request-Id %v (%d without, %d with several); want \"mine\" on all 60", ids, noID, multi)
			}
		})
	}

	// A sample names the request ID that was sent, whoever chose it: the
	// provider's logs hold "mine", so must the report.
	t.Run("samples record a user X-Request-Id", func(t *testing.T) {
		f := testserver.StartFleet(t, testserver.FleetOptions{
			Policies: map[netip.Addr]testserver.Policy{testserver.Lo4b: testserver.Every(2, fx503)},
		}, testserver.Lo4a, testserver.Lo4b)
		rep, _ := runReport(t, reportOpts{samples: 5, noReqID: true}, "-H", "X-Request-Id: mine", "--resolve", f.Resolve(),
			"--rate", "600", "-n", "60", f.URL())
		for _, e := range rep.Endpoints {
			for i, s := range e.Samples {
				if s.RequestID != "mine" {
					t.Errorf("%s sample %d: request_id %q; the request was sent with X-Request-Id: mine", e.Address, i, s.RequestID)
				}
			}
		}
	})
}

// ---------------------------------------------------------------------------
// 9. --samples

func TestForensicsSamples(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 4096) // 64 KiB
	policies := map[netip.Addr]testserver.Policy{
		testserver.Lo4b: testserver.Every(3, fx503),
		testserver.Lo6: func(n int64, r *http.Request) testserver.Answer {
			return testserver.Answer{Status: http.StatusBadGateway, Body: big}
		},
	}
	f := testserver.StartFleet(t, testserver.FleetOptions{Policies: policies}, testserver.Loopbacks()...)

	t.Run("2", func(t *testing.T) {
		rep, _ := runReport(t, reportOpts{samples: 2}, "--samples", "2", "--resolve", f.Resolve(), "--rate", "900", "-n", "180", f.URL())
		want := map[string][2]int{"127.0.0.1": {0, 1}, "127.0.0.2": {2, 1}, "::1": {2, 0}} // failed, ok
		for _, e := range rep.Endpoints {
			var got [2]int
			for _, s := range e.Samples {
				if sampleFailed(s) {
					got[0]++
				} else {
					got[1]++
				}
			}
			if got != want[e.Address] {
				t.Errorf("%s: %d failed + %d ok samples; want %d + %d", e.Address, got[0], got[1], want[e.Address][0], want[e.Address][1])
			}
		}
		// The body is kept to its first 512 bytes; it is still read whole.
		v6 := endpointByAddr(t, rep, "::1")
		for i, s := range v6.Samples {
			if s.Body != big[:512] {
				t.Errorf("::1 sample %d: body of %d bytes; want the first 512 of the 64 KiB page", i, len(s.Body))
			}
		}
		if v6.Bytes != v6.Requests*int64(len(big)) {
			t.Errorf("::1: %d bytes for %d requests; want %d each", v6.Bytes, v6.Requests, len(big))
		}
	})

	t.Run("0", func(t *testing.T) {
		rep, _ := runReport(t, reportOpts{samples: 0}, "--samples", "0", "--resolve", f.Resolve(), "--rate", "900", "-n", "90", f.URL())
		for _, e := range rep.Endpoints {
			if len(e.Samples) != 0 {
				t.Errorf("%s: %d samples with --samples 0", e.Address, len(e.Samples))
			}
		}
		if len(rep.Fingerprints) != 2 {
			t.Errorf("fingerprints %+v; want the 503 and the 502 grouped even without samples", rep.Fingerprints)
		}
	})
}

// ---------------------------------------------------------------------------
// 10. Timeline

func TestForensicsTimeline(t *testing.T) {
	f := testserver.StartFleet(t, testserver.FleetOptions{
		Policies: map[netip.Addr]testserver.Policy{testserver.Lo6: testserver.Every(4, fx503)},
	}, testserver.Lo4a, testserver.Lo6)
	common := []string{"--resolve", f.Resolve(), "--rate", "300", f.URL()}

	def, _ := runReport(t, reportOpts{samples: 5}, append([]string{"-d", "700ms"}, common...)...)
	if def.Timeline.IntervalS != 1 {
		t.Errorf("interval_s = %v by default; want 1", def.Timeline.IntervalS)
	}
	fine, _ := runReport(t, reportOpts{samples: 5}, append([]string{"-d", "700ms", "--interval", "100ms"}, common...)...)
	if fine.Timeline.IntervalS != 0.1 {
		t.Errorf("interval_s = %v with --interval 100ms; want 0.1", fine.Timeline.IntervalS)
	}
	nDef, nFine := len(def.Timeline.Series[0].Requests), len(fine.Timeline.Series[0].Requests)
	if nFine < 6 || nFine <= nDef {
		t.Errorf("--interval 100ms gave %d buckets for 700ms (default: %d); want at least 6", nFine, nDef)
	}
	for i, s := range fine.Timeline.Series {
		for j := 0; j < 6 && j < len(s.Requests); j++ {
			if s.Requests[j] == 0 {
				t.Errorf("series %d (%s): bucket %d is empty in a steady 150/s stream: %v", i, s.Address, j, s.Requests)
			}
		}
	}
	// A long planned run gets wider buckets (at most ~300 of them): 10m -> 2s.
	long, _ := runReport(t, reportOpts{samples: 5}, append([]string{"-d", "10m", "-n", "30"}, common...)...)
	if long.Timeline.IntervalS != 2 {
		t.Errorf("interval_s = %v for a planned 10m run; want 2 (at most 300 buckets)", long.Timeline.IntervalS)
	}
}

// ---------------------------------------------------------------------------
// Arrays are arrays: a script iterates them without a null check

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

// An address that vanishes and comes back gets a new endpoint, so the
// report keeps each appearance apart; nothing is sent to it in between.
func TestForensicsDNSAddressComesBack(t *testing.T) {
	t.Parallel()
	lo4a, lo4b := testserver.Lo4a, testserver.Lo4b
	f, _, rep := runDNSChange(t, dnsChange{
		served:  []netip.Addr{lo4a, lo4b},
		first:   []netip.Addr{lo4a, lo4b},
		trigger: lo4b,
		change: func(d *testserver.DNS) { // one re-resolution without 127.0.0.2, then with it again
			d.Play("dyn.test", []netip.Addr{lo4a}, []netip.Addr{lo4a, lo4b})
		},
		duration: "3s",
	})

	changes := dnsChanges(t, rep, 2)
	gone, back := changes[0], changes[1]
	if !slices.Equal(gone.Removed, []string{"127.0.0.2"}) || len(gone.Added) != 0 ||
		!slices.Equal(back.Added, []string{"127.0.0.2"}) || len(back.Removed) != 0 {
		t.Fatalf("dns changes %+v; want 127.0.0.2 removed, then added", rep.DNS[0].Changes)
	}
	// The address that comes back gets its old endpoint back (memory stays
	// flat however DNS rotates): it is in DNS again, so it has no removed_at.
	if got := endpointAddrs(rep); !slices.Equal(got, []string{"127.0.0.1", "127.0.0.2"}) {
		t.Fatalf("endpoints %v; want 127.0.0.1 and 127.0.0.2, once each", got)
	}
	ep := rep.Endpoints[1]
	if ep.AddedAt == nil || *ep.AddedAt != back.At || ep.RemovedAt != nil {
		t.Errorf("127.0.0.2: added_at %v, removed_at %v; want added at %s and not removed", ep.AddedAt, ep.RemovedAt, back.At)
	}
	before, after := 0, 0
	for _, a := range f.Backend(t, testserver.Lo4b).Arrivals() {
		switch {
		case a.Before(reportTime(t, "removed", gone.At)):
			before++
		case a.After(reportTime(t, "added", back.At)):
			after++
		}
	}
	if before == 0 || after == 0 {
		t.Errorf("127.0.0.2: %d requests before it vanished, %d after it came back; want both > 0", before, after)
	}
	checkOutOfDNS(t, f.Backend(t, lo4b), reportTime(t, "removed", gone.At), reportTime(t, "added", back.At))
	checkVerdict(t, rep, "ok")
}

// A failed re-resolution (here: no address at all) changes nothing: a DNS
// hiccup must not stop the probing of addresses that still answer.
func TestForensicsDNSFailureChangesNothing(t *testing.T) {
	t.Parallel()
	lo4a, lo4b := testserver.Lo4a, testserver.Lo4b
	var queriesAtSwitch atomic.Int64
	queriesAtSwitch.Store(math.MaxInt64)
	_, d, rep := runDNSChange(t, dnsChange{
		served:  []netip.Addr{lo4a, lo4b},
		first:   []netip.Addr{lo4a, lo4b},
		trigger: lo4a,
		change: func(d *testserver.DNS) {
			d.Set("dyn.test")
			queriesAtSwitch.Store(int64(d.Queries("dyn.test", dns.TypeA)))
		},
		duration: "2500ms",
	})
	if n := d.Queries("dyn.test", dns.TypeA); int64(n) <= queriesAtSwitch.Load() {
		t.Fatalf("no re-resolution after the DNS answer emptied (%d A queries)", n)
	}
	if len(rep.DNS) != 1 || len(rep.DNS[0].Changes) != 0 || !slices.Equal(rep.DNS[0].Addresses, []string{"127.0.0.1", "127.0.0.2"}) {
		t.Errorf("dns %+v; want no change, both addresses", rep.DNS)
	}
	for i, e := range rep.Endpoints {
		if e.RemovedAt != nil || e.AddedAt != nil {
			t.Errorf("%s: added_at %v, removed_at %v; want neither", e.Address, e.AddedAt, e.RemovedAt)
		}
		if s := rep.Timeline.Series[i].Requests; len(s) < 3 || s[2] == 0 {
			t.Errorf("%s: timeline %v; want requests until the end", e.Address, s)
		}
	}
	checkVerdict(t, rep, "ok")
}

// Fresh and reused connections are told apart, per endpoint and per
// fingerprint; --new-conn makes every request fresh.
func TestForensicsConnectionReuse(t *testing.T) {
	f := testserver.StartFleet(t, testserver.FleetOptions{
		Policies: map[netip.Addr]testserver.Policy{testserver.Lo6: nginx502WithSecrets},
	}, testserver.Lo4a, testserver.Lo6)
	for _, newConn := range []bool{false, true} {
		args := []string{"--resolve", f.Resolve(), "--rate", "400", "-n", "120", f.URL()}
		if newConn {
			args = append([]string{"--new-conn"}, args...)
		}
		rep, _ := runReport(t, reportOpts{samples: 5}, args...)
		for _, e := range rep.Endpoints {
			fresh, reused := e.Connections["fresh"], e.Connections["reused"]
			switch {
			case newConn && (reused.Requests != 0 || fresh.Requests != e.Requests || e.Phases.Connect.Count != e.Requests):
				t.Errorf("--new-conn: %s: connections %+v, %d connect phases; want all %d fresh, each with its connect",
					e.Address, e.Connections, e.Phases.Connect.Count, e.Requests)
			case !newConn && (reused.Requests == 0 || fresh.Requests == 0 || fresh.Requests > 10):
				t.Errorf("keep-alive: %s: connections %+v; want a few fresh (at most -c 10), the rest reused", e.Address, e.Connections)
			}
			for _, s := range e.Samples {
				if newConn && s.Reused {
					t.Errorf("--new-conn: %s: a sample on a reused connection", e.Address)
				}
			}
		}
		if len(rep.Fingerprints) != 1 {
			t.Fatalf("fingerprints %+v; want the 502 only", rep.Fingerprints)
		}
		fp := rep.Fingerprints[0]
		if newConn && fp.Reused != 0 || !newConn && fp.Reused == 0 {
			t.Errorf("new-conn %v: fingerprint fresh %d, reused %d", newConn, fp.Fresh, fp.Reused)
		}
		checkVerdict(t, rep, "concentrated", "::1")
	}
}
