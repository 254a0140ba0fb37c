package main

// The demo: --demo probes a gateway of its own that shows both faces of the
// incident: an address whose (IPv6) backend is unreachable, and an address
// that fronts several instances, one of them broken.

import (
	"slices"
	"testing"

	"github.com/pinprobe/pinprobe/internal/demo"
)

// TestDemo: the IPv6 address (or the last address without IPv6) answers
// 502 to everything; 127.0.0.2 fronts four instances, each connection kept
// on one, and gw-3 answers 502; 127.0.0.1 is healthy. The verdict names the
// address, the instance and the connections.
func TestDemo(t *testing.T) {
	code, stdout, stderr := pinprobe(t, "--demo", "-q", "--duration", "3s", "--rate", "60", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d; want 0; stderr:\n%s", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	addrs := endpointAddrs(rep)
	if len(addrs) < 2 {
		t.Fatalf("demo has endpoints %v; want at least two", addrs)
	}
	failing := rep.Endpoints[len(rep.Endpoints)-1].Address // ::1, or the last IPv4 address without IPv6
	shared := ""
	if len(addrs) >= 3 {
		shared = addrs[len(addrs)-2]
	}
	for _, e := range rep.Endpoints {
		if e.Host != demo.Host {
			t.Errorf("endpoint %s: host %q; want %s", e.Address, e.Host, demo.Host)
		}
		if e.Requests == 0 {
			t.Errorf("endpoint %s: no request", e.Address)
			continue
		}
		switch e.Address {
		case failing:
			if !equalCounts(e.Status, map[string]int64{"502": e.Requests}) || e.FailureRate != 1 {
				t.Errorf("failing endpoint %s: status %v, errors %v, failure_rate %v; want 100%% 502",
					e.Address, e.Status, e.Errors, e.FailureRate)
			}
		case shared:
			// One instance in four: a quarter of the connections, give or take one.
			if e.FailureRate < 0.1 || e.FailureRate > 0.4 || e.Status["502"] != e.Failed {
				t.Errorf("shared endpoint %s: %d of %d failed (status %v); want about a quarter, all 502", e.Address, e.Failed, e.Requests, e.Status)
			}
		default:
			if e.Failed != 0 || !equalCounts(e.Status, map[string]int64{"200": e.Requests}) {
				t.Errorf("healthy endpoint %s: %d failed, status %v, errors %v; want all 200", e.Address, e.Failed, e.Status, e.Errors)
			}
		}
	}
	if shared == "" {
		t.Logf("this machine has too few loopback addresses for the shared-address face")
		return
	}
	// Who answered: every failure of the shared address came from gw-3.
	groups := map[string]jsonGroup{}
	for _, g := range rep.Groups {
		if g.Header == "X-Served-By" {
			groups[g.Value] = g
		}
	}
	if len(groups) != demo.Instances {
		t.Errorf("groups %v; want the %d instances of X-Served-By", rep.Groups, demo.Instances)
	}
	for v, g := range groups {
		if want := map[bool]int64{true: g.Requests, false: 0}[v == "gw-3"]; g.Failed != want {
			t.Errorf("X-Served-By: %s: %d of %d failed; want %d", v, g.Failed, g.Requests, want)
		}
	}
	var kinds []string
	for _, s := range rep.Verdict.Suspects {
		switch s.Kind {
		case "endpoint":
			kinds = append(kinds, "endpoint "+s.Address)
		case "group":
			kinds = append(kinds, "group "+s.Group)
		case "connections":
			kinds = append(kinds, "connections "+s.Address)
		}
	}
	for _, want := range []string{"endpoint " + failing, "group X-Served-By: gw-3", "connections " + shared} {
		if !slices.Contains(kinds, want) {
			t.Errorf("suspects %v; want %q among them\nverdict: %s %q", kinds, want, rep.Verdict.Summary, rep.Verdict.Notes)
		}
	}
	if len(rep.DNS) != 1 || rep.DNS[0].Source != "demo" || rep.DNS[0].Host != demo.Host {
		t.Errorf("dns = %+v; want one entry for %s from demo", rep.DNS, demo.Host)
	}
}
