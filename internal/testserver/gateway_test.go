package testserver

import (
	"net/netip"
	"strings"
	"testing"
)

// TestGateway sends requests through HAProxy to the nginx instances: on
// fresh connections round-robin spreads them evenly, the broken instance
// answers nginx's own 502, a keep-alive connection stays on one instance,
// and after the test no process of either group is left.
func TestGateway(t *testing.T) {
	t.Parallel()
	var g *Gateway
	t.Run("run", func(t *testing.T) {
		g = StartGateway(t, GatewayOptions{Balance: "roundrobin"})
		perInstance := map[string]int{}
		const n = 12
		for i := range n {
			a := g.Addrs()[i%2]
			code, h, body := get(t, pinnedClient(t, netip.AddrPortFrom(a, g.Port), nil, false), g.URL())
			name := h.Get("X-Served-By")
			perInstance[name]++
			switch name {
			case "gw-2": // broken: nginx's own page
				if code != 502 || !strings.HasPrefix(h.Get("Server"), "nginx") || !strings.Contains(body, "502 Bad Gateway") {
					t.Errorf("via %s, gw-2: %d, Server %q, %q; want nginx's 502", a, code, h.Get("Server"), body)
				}
			case "gw-0", "gw-1":
				if code != 200 || body != "127.0.0.1 answers 200\n" {
					t.Errorf("via %s, %s: %d %q; want the upstream's 200", a, name, code, body)
				}
			default:
				t.Errorf("via %s: served by %q; want gw-0..gw-2", a, name)
			}
		}
		for _, in := range g.Instances {
			if perInstance[in.Name] != n/3 {
				t.Errorf("requests per instance %v; want %d each (roundrobin over fresh connections)", perInstance, n/3)
				break
			}
		}
		if got, want := g.Upstream.Total(), int64(perInstance["gw-0"]+perInstance["gw-1"]); got != want {
			t.Errorf("upstream saw %d requests; want %d", got, want)
		}
		g.Upstream.CheckPlacement(t)

		// One keep-alive connection: every request on the same instance.
		c := pinnedClient(t, netip.AddrPortFrom(Lo6, g.Port), nil, true)
		first := ""
		for i := range 5 {
			_, h, _ := get(t, c, g.URL())
			if i == 0 {
				first = h.Get("X-Served-By")
			} else if h.Get("X-Served-By") != first {
				t.Errorf("keep-alive request %d served by %q; the connection began on %q", i, h.Get("X-Served-By"), first)
			}
		}
	})
	if g == nil {
		return
	}
	checkGroupGone(t, "nginx", g.Nginx.PGID)
	checkGroupGone(t, "haproxy", g.HAProxy.PGID, netip.AddrPortFrom(Lo4a, g.Port), netip.AddrPortFrom(Lo6, g.Port))
}
