package testserver

import (
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"testing"
)

// TestLoggingProxy: the IPv4 address proxies to a healthy backend, the
// IPv6 one to a closed port; each request is logged with where it came
// from and to, where it went, and what came back: the backend's 200, or
// the proxy's own 502 with the error behind it.
func TestLoggingProxy(t *testing.T) {
	t.Parallel()
	if !HasIPv6Loopback() {
		t.Skip("no IPv6 loopback here")
	}
	backend := StartFleet(t, FleetOptions{Host: "127.0.0.1"}, Lo4a)
	ok := &url.URL{Scheme: "http", Host: netip.AddrPortFrom(Lo4a, backend.Port()).String()}
	dead := &url.URL{Scheme: "http", Host: ClosedAddrPort(t, Lo6).String()}
	var mu sync.Mutex
	var logged []Proxied
	p := StartLoggingProxy(t, map[netip.Addr]*url.URL{Lo4a: ok, Lo6: dead}, func(pr *Proxied) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, *pr)
	})
	for _, a := range []netip.Addr{Lo4a, Lo6} {
		at := netip.AddrPortFrom(a, p.Port)
		code, _, _ := get(t, pinnedClient(t, at, nil, false), "http://gw.test:1/sign?x=1", "X-Request-Id", "rid-"+a.String())
		if want := map[bool]int{true: http.StatusOK, false: http.StatusBadGateway}[a.Is4()]; code != want {
			t.Errorf("via %s: %d; want %d", a, code, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 2 {
		t.Fatalf("%d requests logged; want 2", len(logged))
	}
	for i, pr := range logged {
		a := []netip.Addr{Lo4a, Lo6}[i]
		if pr.N != int64(i+1) || pr.Client.Addr() != a || pr.Server != netip.AddrPortFrom(a, p.Port) || pr.Path != "/sign?x=1" ||
			pr.RequestID != "rid-"+a.String() || pr.Duration <= 0 {
			t.Errorf("request %d logged %+v; want #%d from and to %s, its path and ID", i, pr, i+1, a)
		}
		switch {
		case a.Is4() && (pr.Status != http.StatusOK || pr.Err != nil || pr.Backend != ok):
			t.Errorf("via %s: %d, %v, to %s; want the backend's 200 from %s", a, pr.Status, pr.Err, pr.Backend, ok)
		case a.Is6() && (pr.Status != http.StatusBadGateway || pr.Err == nil || pr.Backend != dead):
			t.Errorf("via %s: %d, %v, to %s; want the proxy's 502, the refused connection said", a, pr.Status, pr.Err, pr.Backend)
		}
	}
}
