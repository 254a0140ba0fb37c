package main

// A real nginx gateway: the incident reproduced with nginx itself answering
// 502 for its IPv6 listener.

import (
	"fmt"
	"net/http"
	"net/netip"
	"testing"

	"pinprobe/internal/testserver"
)

// TestNginxGatewayIPv6Backend reproduces the incident with a real gateway:
// nginx listens on 127.0.0.1 and [::1] on one port; the IPv4 server proxies
// to a healthy backend, the IPv6 server to an IPv6 backend address nothing
// listens on, so nginx itself answers 502 Bad Gateway. pinprobe must pin
// each address and put every 502 on ::1.
func TestNginxGatewayIPv6Backend(t *testing.T) {
	if !testserver.HasIPv6Loopback() {
		t.Skip("no IPv6 loopback here")
	}
	testserver.NginxBinary(t) // skips (fails in CI) before anything starts

	// nginx forwards the Host of its proxy_pass URL: 127.0.0.1:PORT.
	backend := testserver.StartFleet(t, testserver.FleetOptions{Host: "127.0.0.1",
		Each: func(n int64, r *http.Request) testserver.Answer {
			return testserver.Answer{Status: http.StatusOK, Body: "signed\n"}
		}}, testserver.Lo4a)
	dead := testserver.ClosedAddrPort(t, testserver.Lo6)
	port := testserver.FreePort(t, testserver.Lo4a, testserver.Lo6)
	listen := []netip.AddrPort{netip.AddrPortFrom(testserver.Lo4a, port), netip.AddrPortFrom(testserver.Lo6, port)}
	upstream := netip.AddrPortFrom(testserver.Lo4a, backend.Port())
	testserver.Nginx(t, fmt.Sprintf(`  server { listen %s; location / { proxy_pass http://%s; } }
  server { listen %s; location / { proxy_pass http://%s; } }
`, listen[0], upstream, listen[1], dead), listen...)

	host := fmt.Sprintf("gw.test:%d", port)
	code, stdout, stderr := pinprobe(t, "-q", "--format", "json", "--rate", "400", "--requests", "80",
		"--resolve", host+":127.0.0.1,::1", "http://"+host+"/sign")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	if got := rep.Families["ipv6"]; got.Requests == 0 || got.Failed != got.Requests {
		t.Errorf("ipv6 family: got %d failed of %d; want all failed", got.Failed, got.Requests)
	}
	if got := rep.Families["ipv4"]; got.Requests == 0 || got.Failed != 0 {
		t.Errorf("ipv4 family: got %d failed of %d; want none", got.Failed, got.Requests)
	}
	for _, e := range rep.Endpoints {
		switch e.Address {
		case "::1":
			if e.Status["502"] != e.Requests || len(e.Errors) != 0 {
				t.Errorf("::1: got status %v errors %v; want all %d requests answered 502 by nginx", e.Status, e.Errors, e.Requests)
			}
		case "127.0.0.1":
			if e.Status["200"] != e.Requests {
				t.Errorf("127.0.0.1: got status %v; want all %d 200", e.Status, e.Requests)
			}
			// Every IPv4 request went through nginx to the backend, and
			// nothing else did.
			if got := backend.Total(); got != e.Requests {
				t.Errorf("the backend behind nginx served %d requests; pinprobe sent %d to 127.0.0.1", got, e.Requests)
			}
		default:
			t.Errorf("unexpected endpoint %s", e.Address)
		}
	}
	backend.CheckPlacement(t)
}
