package testserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/loopback"
)

// Proxied is one request a LoggingProxy served, as a gateway's access log
// says it: when it started and how long it took, who sent it and where it
// came to, what was asked, where it was sent and what came back.
type Proxied struct {
	Start    time.Time
	Duration time.Duration
	Client   netip.AddrPort
	Server   netip.AddrPort // the proxy's address and port it came to
	Method   string
	Path     string // the request target, query included
	Proto    string
	Host     string
	Agent    string // the User-Agent
	// RequestID is the request's X-Request-Id, "" when it had none.
	RequestID string
	// Backend is where the proxy sent it; Status what it answered the
	// client, Bytes the body's size.
	Backend *url.URL
	Status  int
	Bytes   int64
	// Err is why the backend gave no answer (a refused connection): the
	// proxy answered 502 itself. nil when the backend answered.
	Err error
	// N counts the proxy's requests, from 1.
	N int64
}

// LoggingProxy is a reverse proxy (net/http/httputil's) on one port of
// several loopback addresses, each address sending its requests to a
// backend of its own; it calls its log with each request it served, in
// the order they ended, one at a time. It stands in for a gateway whose
// log format a test writes (Traefik, Google Cloud's load balancer), where
// the gateway itself cannot run here.
type LoggingProxy struct {
	Port uint16
	mu   sync.Mutex
	n    int64
}

type proxiedKey struct{}

// StartLoggingProxy starts the proxy on every address of routes, each
// proxying to its backend URL; it stops when the test ends.
func StartLoggingProxy(t testing.TB, routes map[netip.Addr]*url.URL, log func(*Proxied)) *LoggingProxy {
	t.Helper()
	var addrs []netip.Addr
	for a := range routes {
		addrs = append(addrs, a)
	}
	p := &LoggingProxy{}
	port, lns := ListenSamePort(t, addrs...)
	p.Port = port
	for _, ln := range lns {
		backend := routes[netip.MustParseAddrPort(ln.Addr().String()).Addr().Unmap()]
		rp := httputil.NewSingleHostReverseProxy(backend)
		rp.ErrorLog = nil
		rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
			if pr, ok := r.Context().Value(proxiedKey{}).(*Proxied); ok {
				pr.Err = err
			}
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte(http.StatusText(http.StatusBadGateway)))
		}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			pr := &Proxied{Start: time.Now(), Method: r.Method, Path: r.RequestURI, Proto: r.Proto, Host: r.Host, Agent: r.UserAgent(),
				RequestID: r.Header.Get("X-Request-Id"), Backend: backend}
			pr.Client, _ = netip.ParseAddrPort(r.RemoteAddr)
			pr.Client = netip.AddrPortFrom(pr.Client.Addr().Unmap(), pr.Client.Port())
			if la, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok {
				ap := la.AddrPort()
				pr.Server = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
			}
			rec := &loopback.Recorder{ResponseWriter: w}
			rp.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), proxiedKey{}, pr)))
			pr.Duration = time.Since(pr.Start)
			pr.Status, pr.Bytes = rec.Status, rec.Bytes
			p.mu.Lock()
			defer p.mu.Unlock()
			p.n++
			pr.N = p.n
			log(pr)
		})
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
				t.Errorf("testserver: logging proxy: %v", err)
			}
		}()
		t.Cleanup(func() { srv.Close() })
	}
	return p
}
