// Package demo is pinprobe's built-in incident: an "application gateway" on
// loopback whose IPv6 instance was given a backend it cannot reach, so it
// answers genuine 502 Bad Gateway pages while its IPv4 instances work.
package demo

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pinprobe/pinprobe/internal/loopback"
)

// Host is the made-up name the demo resolves (.test is reserved, RFC 2606).
const Host = "sign.pinprobe.test"

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

// Gateway reproduces the incident on loopback: one "application
// gateway" port on 127.0.0.1, 127.0.0.2 and [::1]. The IPv4 instances proxy
// to a healthy backend; the IPv6 instance was handed an IPv6 backend address
// it cannot reach, so every request through it is a genuine proxy failure,
// answered with the gateway's 502 page.
type Gateway struct {
	Port    uint16
	Addrs   []netip.Addr // every address the demo host resolves to
	Failing netip.Addr   // the instance with the unreachable backend
	// Shared is the address that fronts Instances gateway instances, each
	// TCP connection kept on one of them (round robin); Broken names the
	// one given the unreachable backend. Shared is invalid when the OS
	// has too few loopback addresses for this second face of the incident.
	Shared netip.Addr
	Broken string
	Note   string // what the demo had to change on this OS, "" when nothing
	// PortNote says why the gateway is not on Port ("port 47080 is taken
	// on 127.0.0.2: …"), so that the user knows this run's URL is not
	// another demo run's; "" when it is on Port.
	PortNote string
	servers  []*http.Server
	closers  []io.Closer
	log      *accessLog // nil when it writes none
}

// LogFormat is the nginx log_format of the demo gateway's access log: the
// one README suggests for nginx, with the instance as $hostname.
const LogFormat = `$remote_addr:$remote_port [$time_local] "$request" $status $body_bytes_sent ` +
	`up=$upstream_addr us=$upstream_status rid=$http_x_request_id srv=$server_addr:$server_port rt=$request_time host=$hostname`

// Start starts the demo gateway on loopback; Close stops it.
func Start() (*Gateway, error) { return StartLogged(nil) }

// StartLogged is Start with the gateway writing its access log to w, a
// line per request in LogFormat, as nginx would; nil writes none.
func StartLogged(w io.Writer) (*Gateway, error) {
	backend, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo backend: %w", err)
	}
	g := &Gateway{}
	if w != nil {
		g.log = &accessLog{w: w}
	}
	g.serve(backend, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><body><h1>SimpliSign</h1><p>Ready to sign, %s.</p></body></html>\n", r.Host)
	}))
	healthy, _ := url.Parse("http://" + backend.Addr().String())

	listeners, taken, err := listenSamePort()
	if err != nil {
		g.Close()
		return nil, err
	}
	for _, ln := range listeners {
		g.Addrs = append(g.Addrs, addrOf(ln))
	}
	g.Port = uint16(ln0Port(listeners))
	if taken != "" {
		g.PortNote = fmt.Sprintf("port %d is taken on %s, so the gateway took port %d: this run's URL is not that of a demo run on port %d, and `pinprobe compare` matches the two only with --match host",
			Preferred, taken, g.Port, Preferred)
	}
	// The instance that fails: IPv6 when the OS has it, else the last IPv4 one.
	g.Failing = g.Addrs[len(g.Addrs)-1]
	if g.Failing.Is4() {
		g.Note = fmt.Sprintf("this machine has no IPv6 loopback ([::1]): %s plays the gateway instance with the IPv6 backend", g.Failing)
	}
	unreachable, err := g.unreachableBackend(g.Failing)
	if err != nil {
		g.Close()
		return nil, err
	}
	if len(g.Addrs) >= 3 {
		g.Shared = g.Addrs[len(g.Addrs)-2]
		g.Broken = instanceName(brokenInstance)
	}
	for _, ln := range listeners {
		switch addrOf(ln) {
		case g.Failing:
			g.serve(ln, g.log.wrap(gatewayProxy(unreachable), unreachable, addrInstance(addrOf(ln))))
		case g.Shared:
			g.serveInstances(ln, gatewayProxy(healthy), gatewayProxy(unreachable), healthy, unreachable)
		default:
			g.serve(ln, g.log.wrap(gatewayProxy(healthy), healthy, addrInstance(addrOf(ln))))
		}
	}
	return g, nil
}

// Instances is how many gateway instances the shared address fronts.
const Instances = 4

// brokenInstance is the index of the instance with the unreachable backend.
const brokenInstance = 2

func instanceName(i int) string { return "gw-" + strconv.Itoa(i+1) }

// addrInstance names the one gateway instance behind an address of its
// own, as an operator names an instance, not by an address the run's
// report never shows as one: gw-v6 behind ::1, gw-v4 behind 127.0.0.1,
// gw-v4b behind 127.0.0.2 (the failing one when the OS has no IPv6
// loopback). The join's "by instances gw-3 and gw-v6" then reads as two
// instances ("gw-[::1]" read as an address).
func addrInstance(a netip.Addr) string {
	if a.Is6() {
		return "gw-v6"
	}
	switch last := a.As4()[3]; {
	case last == 1:
		return "gw-v4"
	case last <= 26:
		return "gw-v4" + string(rune('a'+last-1))
	default:
		return "gw-v4-" + strconv.Itoa(int(last))
	}
}

type instanceKey struct{}

// serveInstances serves ln as a load balancer in front of Instances
// gateway instances: each new connection goes to the next instance and
// stays there, as a layer-4 balancer does; every answer names its instance
// in X-Served-By. The broken instance forwards to its unreachable backend.
func (g *Gateway) serveInstances(ln net.Listener, healthy, broken http.Handler, healthyURL, brokenURL *url.URL) {
	byInstance := make([]http.Handler, Instances)
	for i := range Instances {
		if i == brokenInstance {
			byInstance[i] = g.log.wrap(broken, brokenURL, instanceName(i))
		} else {
			byInstance[i] = g.log.wrap(healthy, healthyURL, instanceName(i))
		}
	}
	var next atomic.Int64
	srv := &http.Server{
		ReadHeaderTimeout: 5 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, instanceKey{}, int((next.Add(1)-1)%Instances))
		},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			i, _ := r.Context().Value(instanceKey{}).(int)
			w.Header().Set("X-Served-By", instanceName(i))
			byInstance[i].ServeHTTP(w, r)
		}),
	}
	g.servers = append(g.servers, srv)
	go srv.Serve(ln)
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

// unreachableBackend returns the URL of the backend address the broken
// gateway instance was given, on addr's family: a port the demo holds for
// as long as it runs, resetting every connection, so that the gateway
// cannot reach a backend there and nothing else can take the port
// meanwhile. (A port merely closed again could be taken by another
// program, which would then get the demo's requests: a test server did.)
func (g *Gateway) unreachableBackend(addr netip.Addr) (*url.URL, error) {
	ln, err := net.Listen("tcp", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	g.closers = append(g.closers, ln)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed
			}
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0) // a reset, not an orderly close
			}
			c.Close()
		}
	}()
	return &url.URL{Scheme: "http", Host: ln.Addr().String()}, nil
}

// Port is the port the demo's gateway takes when it is free, so that two
// demo runs have the same URL and `pinprobe compare` matches their
// endpoints; when it is taken, any free port will do.
const Port = 47080

// Preferred is the port Start tries first: Port, but in a test that must
// hold the port itself, whatever else on the machine takes and frees 47080
// meanwhile.
var Preferred = Port

// listenSamePort binds one port on 127.0.0.1 and, where the OS allows, on
// 127.0.0.2 and [::1]: Preferred if it is free on all of them, else
// another; taken names the address where Preferred was not free ("" when
// it was).
func listenSamePort() (lns []net.Listener, taken string, err error) {
	addrs := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("::1")}
	b, err := loopback.SamePort(addrs, loopback.Options{Preferred: uint16(Preferred), Optional: func(netip.Addr) bool { return true }})
	if err != nil {
		return nil, "", fmt.Errorf("demo: %w", err)
	}
	if b.Taken.IsValid() {
		taken = b.Taken.String()
	}
	return b.Listeners, taken, nil
}

func ln0Port(lns []net.Listener) int { return lns[0].Addr().(*net.TCPAddr).Port }

func addrOf(ln net.Listener) netip.Addr {
	return ln.Addr().(*net.TCPAddr).AddrPort().Addr().Unmap()
}

func (g *Gateway) serve(ln net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	g.servers = append(g.servers, srv)
	go srv.Serve(ln)
}

// URL is the address the demo probes.
func (g *Gateway) URL() string {
	return "http://" + Host + ":" + strconv.Itoa(int(g.Port)) + "/sign"
}

// Close stops every server of the demo.
func (g *Gateway) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, s := range g.servers {
		_ = s.Shutdown(ctx)
	}
	for _, c := range g.closers {
		_ = c.Close()
	}
}

// accessLog writes the gateway's access log, a line per request in
// LogFormat; its writes are serialised.
type accessLog struct {
	mu sync.Mutex
	w  io.Writer
}

// wrap logs every request h serves, as routed to backend by instance;
// h itself when l is nil.
func (l *accessLog) wrap(h http.Handler, backend *url.URL, instance string) http.Handler {
	if l == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &loopback.Recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		end := time.Now()
		remote, _ := netip.ParseAddrPort(r.RemoteAddr)
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		server := "-:-"
		if ta, ok := local.(*net.TCPAddr); ok {
			ap := ta.AddrPort()
			server = ap.Addr().Unmap().String() + ":" + strconv.Itoa(int(ap.Port()))
		}
		rid := r.Header.Get("X-Request-Id")
		if rid == "" {
			rid = "-"
		}
		// nginx writes the status it got from the upstream; a failed
		// connection as 502.
		line := fmt.Sprintf("%s:%d [%s] \"%s\" %d %d up=%s us=%d rid=%s srv=%s rt=%.3f host=%s\n",
			remote.Addr().Unmap(), remote.Port(), end.Format("02/Jan/2006:15:04:05 -0700"),
			logEscape(r.Method+" "+r.RequestURI+" "+r.Proto), rec.Status, rec.Bytes, backend.Host, rec.Status,
			logEscape(rid), server, end.Sub(start).Seconds(), instance)
		l.mu.Lock()
		defer l.mu.Unlock()
		io.WriteString(l.w, line)
	})
}

// logEscape escapes as nginx does: a double quote, a backslash, a space
// in a bare value and every byte outside printable ASCII as \xNN.
func logEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			fmt.Fprintf(&b, "\\x%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
