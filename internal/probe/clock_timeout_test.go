package probe

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// The request timeout on the clock of a synctest bubble: both request
// paths, unchanged, over net.Pipe connections to an http.Server in the
// bubble (Options.dial), so that when a request ends, and as what, is
// exact. TestTimeoutClassMeansTheTimeoutElapsed and the fault suite say it
// over loopback, within a real machine's slack.

// pipeListener is a net.Listener whose connections are net.Pipe ends that
// dial makes.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// dial connects to the listener's server, or fails as ctx ends.
func (l *pipeListener) dial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, ctx.Err()
	case <-l.done:
		client.Close()
		server.Close()
		return nil, net.ErrClosed
	}
}

// silentDial never connects: a SYN nobody answers. It returns when ctx
// ends, as a connect does at its deadline.
func silentDial(ctx context.Context) (net.Conn, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// muteDial connects to a peer that reads everything and never writes: a
// TLS server that never answers the ClientHello.
func muteDial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	go func() {
		defer server.Close()
		buf := make([]byte, 4096)
		for {
			if _, err := server.Read(buf); err != nil {
				return
			}
		}
	}()
	return client, nil
}

// TestClockTimeouts: with --timeout 1s, a request that gets no answer, or
// whose body stalls after the headers, or whose connect or TLS handshake is
// never answered, ends exactly 1 s after it started, as timeout
// (connect_timeout for the connect and the handshake); one answered in 300 ms is a 200 of exactly 300 ms; and a
// worker's next request after a timeout gets its full second again, on a
// new connection. Four requests a second for 2 s: eight each.
func TestClockTimeouts(t *testing.T) {
	const timeout = time.Second
	mux := http.NewServeMux()
	mux.HandleFunc("/silent", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		fmt.Fprint(w, "ok")
	})
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "half")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	cases := []struct {
		path   string
		dial   func(context.Context) (net.Conn, error) // nil: the server's
		scheme string
		status int
		class  ErrorClass
		took   time.Duration
	}{
		{path: "/silent", class: ClassTimeout, took: timeout},
		{path: "/stall", status: http.StatusOK, class: ClassTimeout, took: timeout},
		{path: "/slow", status: http.StatusOK, took: 300 * time.Millisecond},
		{path: "/slow", dial: silentDial, class: ClassConnectTimeout, took: timeout},
		{path: "/slow", scheme: "https", dial: muteDial, class: ClassConnectTimeout, took: timeout},
	}
	for _, client := range []ClientKind{ClientStd, ClientFast, ClientAuto} {
		t.Run(string(client), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newPipeListener()
				srv := &http.Server{Handler: mux}
				go srv.Serve(l)
				defer srv.Close()
				for _, c := range cases {
					scheme := cmp.Or(c.scheme, "http")
					eps := endpoints(t, scheme+"://pipe.test"+c.path, testserver.Lo4a)
					o := Options{Rate: 4, Duration: 2 * time.Second, Concurrency: 10, Client: client,
						ConnOptions: ConnOptions{Timeout: timeout}, cpu: fixedCPU(true), dial: l.dial}
					if c.dial != nil {
						o.dial = c.dial
					}
					start := time.Now()
					rs := sentOnly(attack(t, eps, o, time.Hour))
					conns := map[uint64]bool{}
					for _, r := range rs {
						conns[r.ConnID] = true
						at := r.Start.Sub(start)
						if r.Class != c.class || r.Status != c.status || r.Latency != c.took || at%(250*time.Millisecond) != 0 {
							t.Errorf("%s (%s): a request sent %v into the run ended as status %d, class %q after %v (%v); want %d, %q after exactly %v, sent on the 250 ms beat",
								c.path, scheme, at, r.Status, r.Class, r.Latency, r.Err, c.status, c.class, c.took)
						}
					}
					if len(rs) != 8 {
						t.Errorf("%s: %d requests; want the 8 due", c.path, len(rs))
					}
					// A request that timed out leaves no connection to reuse.
					if c.class == ClassTimeout && len(conns) != len(rs) {
						t.Errorf("%s: %d requests on %d connections; want a new connection after each timeout", c.path, len(rs), len(conns))
					}
					if took := time.Since(start); took != 2*time.Second-250*time.Millisecond+c.took {
						t.Errorf("%s: the run took %v; want its last request's %v after it was sent at 1.75s", c.path, took, c.took)
					}
				}
			})
		})
	}
}
