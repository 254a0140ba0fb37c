package testserver

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// GatewayOptions configure StartGateway.
type GatewayOptions struct {
	// Instances is the number K of nginx gateway instances; 3 when 0.
	Instances int
	// Broken lists the instances (0 to K-1) whose upstream is an IPv6
	// address nothing listens on, so nginx itself answers 502 Bad Gateway.
	// nil means the last instance; an empty, non-nil slice means none.
	Broken []int
	// Header is the header every instance adds to every answer with its
	// name ("gw-1"); "X-Served-By" when "".
	Header string
	// Balance is HAProxy's algorithm over the instances: "random" (when
	// "") or "roundrobin". HAProxy's random is not seeded: use roundrobin
	// for a count a test can predict.
	Balance string
	// Upstream answers for the healthy instances' upstream; OK when nil.
	Upstream Policy
	// Host is the host name of URL and Resolve; "gw.test" when "".
	Host string
}

// Gateway is the incident's topology with real software: an HAProxy TCP
// frontend on one port of 127.0.0.1 and [::1] balancing each client
// connection to one of K nginx instances, which proxy to a healthy Go
// upstream, except the broken ones, whose upstream is an unreachable IPv6
// address, so they answer nginx's own 502. Because HAProxy balances
// connections, failures follow the connection (its instance), not the
// address the client dialled.
type Gateway struct {
	// Port is HAProxy's port on 127.0.0.1 and [::1].
	Port uint16
	// Instances are the nginx instances, in order.
	Instances []GatewayInstance
	// Upstream is the healthy upstream on 127.0.0.1; its Host is
	// "127.0.0.1", as nginx forwards it.
	Upstream *Fleet
	// Nginx runs every instance; HAProxy the frontend.
	Nginx, HAProxy *Process

	host string
}

// GatewayInstance is one nginx instance of a Gateway.
type GatewayInstance struct {
	// Name is the value of the instance header ("gw-0").
	Name string
	// Addr is where the instance listens, on 127.0.0.1.
	Addr netip.AddrPort
	// Broken says the instance answers 502 to every request.
	Broken bool
}

// StartGateway starts the upstream, nginx and HAProxy, and returns once
// all listen. It skips the test without IPv6 on loopback, or without nginx
// or haproxy (outside CI; see NginxBinary). Everything stops when the test
// ends.
func StartGateway(t testing.TB, o GatewayOptions) *Gateway {
	t.Helper()
	if !HasIPv6Loopback() {
		t.Skip("the gateway needs IPv6 on loopback")
	}
	if o.Instances <= 0 {
		o.Instances = 3
	}
	if o.Broken == nil {
		o.Broken = []int{o.Instances - 1}
	}
	if o.Header == "" {
		o.Header = "X-Served-By"
	}
	if o.Balance == "" {
		o.Balance = "random"
	}
	if o.Host == "" {
		o.Host = "gw.test"
	}
	NginxBinary(t) // skip before starting anything
	HAProxyBinary(t)
	g := &Gateway{host: o.Host}
	g.Upstream = StartFleet(t, FleetOptions{Host: "127.0.0.1", Each: o.Upstream}, Lo4a)
	dead := ClosedAddrPort(t, Lo6)
	ports := freePorts(t, o.Instances+1)
	g.Port = ports[o.Instances]

	var nginx strings.Builder
	var listen []netip.AddrPort
	for i := range o.Instances {
		in := GatewayInstance{Name: fmt.Sprintf("gw-%d", i), Addr: netip.AddrPortFrom(Lo4a, ports[i]), Broken: slices.Contains(o.Broken, i)}
		upstream := netip.AddrPortFrom(Lo4a, g.Upstream.Port())
		if in.Broken {
			upstream = dead
		}
		fmt.Fprintf(&nginx, "  server {\n    listen %s;\n    add_header %s %s always;\n    location / { proxy_pass http://%s; }\n  }\n",
			in.Addr, o.Header, in.Name, upstream)
		g.Instances = append(g.Instances, in)
		listen = append(listen, in.Addr)
	}
	g.Nginx = Nginx(t, nginx.String(), listen...)

	front := []netip.AddrPort{netip.AddrPortFrom(Lo4a, g.Port), netip.AddrPortFrom(Lo6, g.Port)}
	var hap strings.Builder
	fmt.Fprintf(&hap, "frontend gateway\n  mode tcp\n  bind %s\n  bind %s\n  default_backend instances\n\n", front[0], front[1])
	fmt.Fprintf(&hap, "backend instances\n  mode tcp\n  balance %s\n", o.Balance)
	for _, in := range g.Instances {
		fmt.Fprintf(&hap, "  server %s %s\n", in.Name, in.Addr)
	}
	g.HAProxy = HAProxy(t, hap.String(), front...)
	return g
}

// freePorts returns n distinct ports free on 127.0.0.1 and [::1] a moment
// ago (see FreePort).
func freePorts(t testing.TB, n int) []uint16 {
	t.Helper()
	var ports []uint16
	var held [][]net.Listener
	for len(ports) < n {
		port, lns := ListenSamePort(t, Lo4a, Lo6)
		ports = append(ports, port)
		held = append(held, lns)
	}
	for _, lns := range held {
		closeAll(lns)
	}
	return ports
}

// Addrs are the addresses the frontend listens on: 127.0.0.1 and ::1.
func (g *Gateway) Addrs() []netip.Addr { return []netip.Addr{Lo4a, Lo6} }

// URL is "http://gw.test:PORT/".
func (g *Gateway) URL() string { return "http://" + hostPort(g.host, g.Port) + "/" }

// Resolve is the --resolve value mapping the host to 127.0.0.1 and ::1.
func (g *Gateway) Resolve() string { return fmt.Sprintf("%s:%d:127.0.0.1,::1", g.host, g.Port) }
