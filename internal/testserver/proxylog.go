package testserver

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"sync"
	"testing"
	"time"
)

// ProxyRequest is what a proxy knows of one request it forwarded: what a
// test writes as a gateway's access-log line (Envoy's, where no real
// Envoy is installed), field for field.
type ProxyRequest struct {
	Start    time.Time
	Duration time.Duration
	Method   string
	Path     string
	Proto    string
	Host     string
	Agent    string
	// RequestID is the X-Request-Id the request came with.
	RequestID string
	// Status is what the proxy answered; Failed says it could not reach
	// the upstream (connection refused: Envoy's 503 UF).
	Status int
	Failed bool
	// Client is the downstream peer; Local the address it connected to.
	Client, Local netip.AddrPort
	// Upstream is where the request was routed, Cluster its name.
	Upstream netip.AddrPort
	Cluster  string
}

// ProxyRoute is one listener of a logging proxy and where it routes.
type ProxyRoute struct {
	Listener net.Listener
	Upstream netip.AddrPort
	Cluster  string
}

// LoggingProxy is an HTTP reverse proxy on every route's listener that
// records each request it forwards; a route whose upstream refuses is
// answered 503, as Envoy does.
type LoggingProxy struct {
	mu   sync.Mutex
	reqs []ProxyRequest
}

// StartLoggingProxy serves every route until the test ends.
func StartLoggingProxy(t testing.TB, routes ...ProxyRoute) *LoggingProxy {
	t.Helper()
	p := &LoggingProxy{}
	for _, rt := range routes {
		rt := rt
		target := &url.URL{Scheme: "http", Host: rt.Upstream.String()}
		rp := &httputil.ReverseProxy{
			Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target); pr.Out.Host = pr.In.Host },
			Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		}
		srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			pr := ProxyRequest{Start: time.Now(), Method: r.Method, Path: r.URL.RequestURI(), Proto: r.Proto, Host: r.Host,
				Agent: r.UserAgent(), RequestID: r.Header.Get("X-Request-Id"), Upstream: rt.Upstream, Cluster: rt.Cluster}
			pr.Client, _ = netip.ParseAddrPort(r.RemoteAddr)
			if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
				pr.Local = addrPortOf(la)
			}
			rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
			failed := false
			h := *rp
			h.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, _ error) {
				failed = true
				w.WriteHeader(http.StatusServiceUnavailable)
			}
			h.ServeHTTP(rec, r)
			pr.Status, pr.Failed, pr.Duration = rec.status, failed, time.Since(pr.Start)
			pr.Client = netip.AddrPortFrom(pr.Client.Addr().Unmap(), pr.Client.Port())
			p.mu.Lock()
			p.reqs = append(p.reqs, pr)
			p.mu.Unlock()
		})}
		go srv.Serve(rt.Listener)
		t.Cleanup(func() { srv.Close() })
	}
	return p
}

// Requests are the requests forwarded so far, in the order they ended.
func (p *LoggingProxy) Requests() []ProxyRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ProxyRequest(nil), p.reqs...)
}

// statusWriter keeps the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}
