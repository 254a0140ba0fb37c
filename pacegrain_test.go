package main

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestPaceGrainInReport: a run with --pace-grain sends what it planned,
// finds the failing address as a run without it does, and says in the
// report how it was paced (the JSON plan and the words of every format).
func TestPaceGrainInReport(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{Policies: map[netip.Addr]testserver.Policy{
		testserver.Lo4b: testserver.Every(10, fx503),
	}}, testserver.Loopbacks()...)
	args := []string{"--resolve", f.Resolve(), "--rate", "1500", "-n", "600", "-c", "50", "--pace-grain", "10ms", f.URL()}
	rep, stdout := runReport(t, reportOpts{samples: 5}, args...)
	f.CheckPlacement(t)
	if rep.Totals.Requests != 600 {
		t.Errorf("%d requests; want the 600 of -n", rep.Totals.Requests)
	}
	if !strings.Contains(rep.Verdict.Headline, "127.0.0.2") {
		t.Errorf("verdict %q; want it to name 127.0.0.2", rep.Verdict.Headline)
	}
	var raw struct {
		Plan map[string]any `json:"plan"`
	}
	if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
		t.Fatal(err)
	}
	if g, _ := raw.Plan["pace_grain_s"].(float64); g != 0.01 {
		t.Errorf("plan.pace_grain_s = %v; want 0.01", raw.Plan["pace_grain_s"])
	}
	code, md, stderr := pinprobe(t, append([]string{"-q", "--format", "markdown"}, args...)...)
	if code == exitUsage || !strings.Contains(md, "within each 10 ms sent together") {
		t.Errorf("markdown report (exit %d) does not say how it was paced; stderr %s", code, stderr)
	}
}
