package judge

import (
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/report"
)

// unsettled is the note of v that says why --until-verdict did not stop.
func unsettled(v report.Verdict) string {
	return noteWith(v, "The verdict did not settle", "The verdict settled only")
}

// A run of --until-verdict that went to the end says what stayed open:
// the faults it proved, the scopes that fail but are neither proven nor
// cleared, those not yet shown under 5%, the addresses on too few
// connections; or that there was no fault to stop on.
func TestUnsettledSaysWhatStayedOpen(t *testing.T) {
	r := VtReport(VtEndpoint{Addr: "192.0.2.1", N: 400}, VtEndpoint{Addr: "192.0.2.2", Failed: 400, N: 400},
		VtEndpoint{Addr: "192.0.2.3", N: 40}, VtEndpoint{Addr: "192.0.2.4", Failed: 3, N: 100})
	rvStatus(r)
	rvConns(r, 200)
	r.Endpoints[2].Conns.Connections = 9
	r.Plan.DurationS = 30
	v := Judge(r, AtLook(30, true))
	want := "The verdict did not settle before -d 30s ended the run (--until-verdict): its 1 fault is proven, but " +
		"192.0.2.4 (3 of 100 failed, possibly up to 15%) fails, neither proven a fault nor shown to fail less than 5%; " +
		"192.0.2.3 (0 of 40 failed, possibly up to 20%) is not yet shown to fail less than 5%; " +
		"192.0.2.3 carried 9 connections, fewer than the 17 that reach an instance taking one connection in four with probability 99% " +
		"(bounds at this look's confidence). A longer -d, or a higher --rate, gives them the requests and connections to settle."
	if n := unsettled(v); n != want {
		t.Errorf("note\n%s\nwant\n%s", n, want)
	}
	// Judged once (not --until-verdict), or at an interim look: no note.
	for _, l := range []report.Level{Once(), AtLook(30, false)} {
		if n := unsettled(Judge(r, l)); n != "" {
			t.Errorf("level %+v: note %q; want none", l, n)
		}
	}
	// Interrupted, or ended by -n.
	r.Interrupted = true
	if n := unsettled(Judge(r, AtLook(30, true))); !strings.HasPrefix(n, "The verdict did not settle before the run was interrupted (--until-verdict): ") {
		t.Errorf("interrupted: note %q", n)
	}
	r.Interrupted, r.Plan.DurationS, r.Plan.Requests = false, 0, 940
	if n := unsettled(Judge(r, AtLook(30, true))); !strings.HasPrefix(n, "The verdict did not settle before -n 940 ended the run (--until-verdict): ") {
		t.Errorf("-n: note %q", n)
	}
	// Nothing to stop on.
	ok := VtReport(VtEndpoint{Addr: "192.0.2.1", N: 400}, VtEndpoint{Addr: "192.0.2.2", N: 400})
	ok.Plan.DurationS = 30
	if n := unsettled(Judge(ok, AtLook(30, true))); n != "The verdict did not settle before -d 30s ended the run (--until-verdict): no request failed, so there was no fault to stop on." {
		t.Errorf("healthy: note %q", n)
	}
	spread := VtReport(VtEndpoint{Addr: "192.0.2.1", Failed: 10, N: 400}, VtEndpoint{Addr: "192.0.2.2", Failed: 10, N: 400})
	spread.Plan.DurationS = 30
	if n := unsettled(Judge(spread, AtLook(30, true))); !strings.Contains(n, "no fault is proven (the failures are not attributable to one address or instance), so there was nothing to stop on") {
		t.Errorf("spread: note %q", n)
	}
	// Settled at the last look alone.
	late := VtReport(VtEndpoint{Addr: "192.0.2.1", N: 4000}, VtEndpoint{Addr: "192.0.2.2", Failed: 4000, N: 4000})
	rvStatus(late)
	rvConns(late, 200)
	late.Plan.DurationS = 30
	if n := unsettled(Judge(late, AtLook(30, true))); !strings.HasPrefix(n, "The verdict settled only at the last look, when -d 30s ended the run (--until-verdict), at its level (0.0005)") {
		t.Errorf("settled at the last look: note %q", n)
	}
}
