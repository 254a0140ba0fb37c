package main

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
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
	// One run: the JSON report in -o, the Markdown one on stdout.
	out := filepath.Join(t.TempDir(), "run.json")
	args := []string{"-q", "--format", "markdown", "-o", out, "--resolve", f.Resolve(), "--rate", "1500", "-n", "600", "-c", "50", "--pace-grain", "10ms", f.URL()}
	code, md, stderr := pinprobe(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d; want 0; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(md, "within each 10 ms sent together") {
		t.Errorf("the Markdown report does not say how it was paced:\n%s", md)
	}
	saved, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rep := decodeReport(t, saved)
	checkReport(t, rep)
	checkForensics(t, rep, string(saved), reportOpts{samples: 5})
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
	if err := json.Unmarshal(saved, &raw); err != nil {
		t.Fatal(err)
	}
	if g, _ := raw.Plan["pace_grain_s"].(float64); g != 0.01 {
		t.Errorf("plan.pace_grain_s = %v; want 0.01", raw.Plan["pace_grain_s"])
	}
}
