package main

// The forensic evidence of a report: request IDs, samples, the timeline,
// and fresh versus reused connections.

import (
	"maps"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestForensicsRequestIDs: pinprobe sends a unique X-Request-Id with every
// request unless told not to, or given one with -H, and samples name the ID
// that was sent.
func TestForensicsRequestIDs(t *testing.T) {
	t.Parallel()
	t.Run("unique", func(t *testing.T) {
		f := testserver.StartFleet(t, testserver.FleetOptions{
			Policies: map[netip.Addr]testserver.Policy{testserver.Lo6: nginx502WithSecrets},
		}, testserver.Loopbacks()...)
		rep, _ := runReport(t, reportOpts{samples: 5}, "--resolve", f.Resolve(), "--rate", "900", "-n", "150", f.URL())
		checkFleet(t, f, rep)
		first, noID, multi := f.IDs()
		if noID != 0 || multi != 0 {
			t.Errorf("%d requests without X-Request-Id, %d with several", noID, multi)
		}
		if len(first) != 150 {
			t.Errorf("%d distinct X-Request-Id for 150 requests", len(first))
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
		runReport(t, reportOpts{samples: 5}, "--resolve", f.Resolve(), "--rate", "900", "-n", "30", f.URL())
		if ids, _, _ := f.IDs(); len(ids) != 180 {
			t.Errorf("two runs of 150 and 30 requests sent %d distinct X-Request-Id; want 180", len(ids))
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

// TestForensicsSamples: --samples N keeps the first N failures and one
// success per endpoint, bodies cut to 512 bytes.
func TestForensicsSamples(t *testing.T) {
	t.Parallel()
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

// TestForensicsTimeline: the timeline has 1s buckets by default, the
// --interval given, and wider ones for a long planned run.
func TestForensicsTimeline(t *testing.T) {
	t.Parallel()
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

// Fresh and reused connections are told apart, per endpoint and per
// fingerprint; --new-conn makes every request fresh.
func TestForensicsConnectionReuse(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{
		Policies: map[netip.Addr]testserver.Policy{testserver.Lo6: nginx502WithSecrets},
	}, testserver.Lo4a, testserver.Lo6)
	for _, newConn := range []bool{false, true} {
		// Unlimited reuse, to see keep-alive at work (connection sampling is
		// TestConnectionSampling's).
		args := []string{"--resolve", f.Resolve(), "--rate", "400", "-n", "120", "-c", "10", "--conn-requests", "0", f.URL()}
		if newConn {
			args = []string{"--new-conn", "--resolve", f.Resolve(), "--rate", "400", "-n", "120", f.URL()}
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
