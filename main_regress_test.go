package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"pinprobe/internal/testserver"
)

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
	if code != exitFail || doc.Schema != "pinprobe.preflight/v1" || len(doc.Checks) != 1 ||
		doc.Checks[0].OK || doc.Checks[0].Class != "connect_refused" || doc.Checks[0].Address != "127.0.0.1" {
		t.Errorf("exit %d, %+v; want exit 1 and one refused check of 127.0.0.1", code, doc)
	}
}

// Rates are over the sending window: requests sent in 0.3 s to a backend
// that answers after 0.6 s are not divided by the wait for them.
func TestRateExcludesTheWaitForRequestsInFlight(t *testing.T) {
	// A slow backend, not synchronisation; its Host is the IP-literal URL's.
	f := testserver.StartFleet(t, testserver.FleetOptions{Host: "127.0.0.1", Each: testserver.Delayed(600 * time.Millisecond)}, testserver.Lo4a)
	code, stdout, stderr := pinprobe(t, "-q", "--no-preflight", "-d", "300ms", "-r", "20", "-c", "50", "--format", "json", f.URL())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	checkFleet(t, f, rep)
	if rep.SendS < 0.29 || rep.SendS > 0.4 || rep.DurationS < 0.8 {
		t.Errorf("send_s %.3f, duration_s %.3f; want sending ~0.3 s and the run ~0.9 s", rep.SendS, rep.DurationS)
	}
	if want := float64(rep.Totals.Requests) / rep.SendS; rep.Totals.RPS < want*0.95 || rep.Totals.RPS > want*1.05 {
		t.Errorf("rps %.1f; want requests/send_s = %.1f", rep.Totals.RPS, want)
	}
}

// Header names, values and methods net/http would refuse are usage errors,
// not failed requests blamed on the backend.
func TestInvalidRequestPartsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-H", "Bad(Name): v"},
		{"-H", "X-A: v\x01"},
		{"-X", "GET /x"},
		{"-c", "10001"},
		{"--samples", "1001"},
	} {
		code, stdout, stderr := pinprobe(t, append(args, "http://127.0.0.1:1/")...)
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, args[0]) && !strings.Contains(stderr, "--") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line naming the flag", args, code, stdout, stderr)
		}
	}
}
