package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// demoHost is the made-up name the demo resolves (.test is reserved, RFC 2606).
const demoHost = "sign.pinprobe.test"

// azureBadGateway is the page Azure Application Gateway v2 serves when it
// cannot reach a backend.
const azureBadGateway = `<html>
<head><title>502 Bad Gateway</title></head>
<body>
<center><h1>502 Bad Gateway</h1></center>
<hr><center>Microsoft-Azure-Application-Gateway/v2</center>
</body>
</html>
`

// demoGateway reproduces the incident on loopback: one "application
// gateway" port on 127.0.0.1, 127.0.0.2 and [::1]. The IPv4 instances proxy
// to a healthy backend; the IPv6 instance was handed an IPv6 backend address
// it cannot reach, so every request through it is a genuine proxy failure,
// answered with the gateway's 502 page.
type demoGateway struct {
	port    uint16
	addrs   []netip.Addr // every address the demo host resolves to
	failing netip.Addr   // the instance with the unreachable backend
	note    string       // what the demo had to change on this OS, "" when nothing
	servers []*http.Server
}

func startDemo() (*demoGateway, error) {
	backend, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo backend: %w", err)
	}
	g := &demoGateway{}
	g.serve(backend, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><body><h1>SimpliSign</h1><p>Ready to sign, %s.</p></body></html>\n", r.Host)
	}))
	healthy, _ := url.Parse("http://" + backend.Addr().String())

	listeners, err := listenSamePort()
	if err != nil {
		g.Close()
		return nil, err
	}
	for _, ln := range listeners {
		g.addrs = append(g.addrs, addrOf(ln))
	}
	g.port = uint16(ln0Port(listeners))
	// The instance that fails: IPv6 when the OS has it, else the last IPv4 one.
	g.failing = g.addrs[len(g.addrs)-1]
	if g.failing.Is4() {
		g.note = fmt.Sprintf("this machine has no IPv6 loopback ([::1]): %s plays the gateway instance with the IPv6 backend", g.failing)
	}
	unreachable, err := unreachableBackend(g.failing)
	if err != nil {
		g.Close()
		return nil, err
	}
	for _, ln := range listeners {
		target := healthy
		if addrOf(ln) == g.failing {
			target = unreachable
		}
		g.serve(ln, gatewayProxy(target))
	}
	return g, nil
}

// gatewayProxy forwards to backend and answers a failed forward as Azure
// Application Gateway does.
func gatewayProxy(backend *url.URL) http.Handler {
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(backend)
			pr.Out.Host = pr.In.Host
		},
		Transport: &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: time.Second}).DialContext},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprint(w, azureBadGateway)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "Microsoft-Azure-Application-Gateway/v2")
		p.ServeHTTP(w, r)
	})
}

// unreachableBackend returns a URL on a closed port of addr's family: the
// backend address the broken gateway instance was given.
func unreachableBackend(addr netip.Addr) (*url.URL, error) {
	ln, err := net.Listen("tcp", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	hostport := ln.Addr().String()
	ln.Close()
	return &url.URL{Scheme: "http", Host: hostport}, nil
}

// listenSamePort binds one port on 127.0.0.1 and, where the OS allows, on
// 127.0.0.2 and [::1].
func listenSamePort() ([]net.Listener, error) {
	var lastErr error
	for range 20 {
		first, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("demo: listen on 127.0.0.1: %w", err)
		}
		port := strconv.Itoa(ln0Port([]net.Listener{first}))
		lns := []net.Listener{first}
		retry := false
		for _, host := range []string{"127.0.0.2", "::1"} {
			ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
			switch {
			case err == nil:
				lns = append(lns, ln)
			case errors.Is(err, syscall.EADDRINUSE):
				retry, lastErr = true, err
			}
			// Any other error: this OS has no such loopback address; go on without it.
		}
		if !retry {
			return lns, nil
		}
		for _, ln := range lns {
			ln.Close()
		}
	}
	return nil, fmt.Errorf("demo: no port free on every loopback address: %w", lastErr)
}

func ln0Port(lns []net.Listener) int { return lns[0].Addr().(*net.TCPAddr).Port }

func addrOf(ln net.Listener) netip.Addr {
	return ln.Addr().(*net.TCPAddr).AddrPort().Addr().Unmap()
}

func (g *demoGateway) serve(ln net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	g.servers = append(g.servers, srv)
	go srv.Serve(ln)
}

// URL is the address the demo probes.
func (g *demoGateway) URL() string {
	return "http://" + demoHost + ":" + strconv.Itoa(int(g.port)) + "/sign"
}

// Close stops every server of the demo.
func (g *demoGateway) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, s := range g.servers {
		_ = s.Shutdown(ctx)
	}
}
