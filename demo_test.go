package main

// The demo: --demo probes servers of its own, one of which fails.

import (
	"slices"
	"testing"

	"pinprobe/internal/demo"
)

// TestDemo: --demo probes its own servers, where the IPv6 address (or the
// last address without IPv6) answers 502 and the others 200.
func TestDemo(t *testing.T) {
	code, stdout, stderr := pinprobe(t, "--demo", "-q", "--duration", "1s", "--rate", "60", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d; want 0; stderr:\n%s", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	if len(rep.Endpoints) < 2 {
		t.Fatalf("demo has endpoints %v; want at least two", endpointAddrs(rep))
	}
	failing := rep.Endpoints[len(rep.Endpoints)-1].Address // ::1, or the last IPv4 address without IPv6
	if slices.Contains(endpointAddrs(rep), "::1") {
		failing = "::1"
	}
	for _, e := range rep.Endpoints {
		if e.Host != demo.Host {
			t.Errorf("endpoint %s: host %q; want %s", e.Address, e.Host, demo.Host)
		}
		if e.Requests == 0 {
			t.Errorf("endpoint %s: no request", e.Address)
			continue
		}
		if e.Address == failing {
			if !equalCounts(e.Status, map[string]int64{"502": e.Requests}) || e.FailureRate != 1 {
				t.Errorf("failing endpoint %s: status %v, errors %v, failure_rate %v; want 100%% 502",
					e.Address, e.Status, e.Errors, e.FailureRate)
			}
		} else if e.Failed != 0 || !equalCounts(e.Status, map[string]int64{"200": e.Requests}) {
			t.Errorf("healthy endpoint %s: %d failed, status %v, errors %v; want all 200", e.Address, e.Failed, e.Status, e.Errors)
		}
	}
	if failing == "::1" {
		if v4 := rep.Families["ipv4"]; v4.Failed != 0 || v4.Requests == 0 {
			t.Errorf("families.ipv4: %d of %d failed; want none", v4.Failed, v4.Requests)
		}
		if v6 := rep.Families["ipv6"]; v6.FailureRate != 1 {
			t.Errorf("families.ipv6.failure_rate = %v; want 1", v6.FailureRate)
		}
	}
	if len(rep.DNS) != 1 || rep.DNS[0].Source != "demo" || rep.DNS[0].Host != demo.Host {
		t.Errorf("dns = %+v; want one entry for %s from demo", rep.DNS, demo.Host)
	}
}
