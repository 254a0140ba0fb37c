package probe

import (
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkH1RoundTrip compares the HTTP/1.1 client with a net/http client
// loop against the same server: an in-process canned server (which
// allocates nothing per request) and, when $PINPROBE_BENCH_ADDR is set, that
// address (e.g. a loopback nginx, "127.0.0.1:8080"). conns=1 sends request
// after request on one connection: ns/op is the round trip. conns=50 runs 50
// connections, one goroutine each: ns/op is the wall time per request at
// saturation. cpu-ns/op is the process's user+system CPU per request, the
// in-process server's included; allocs/op counts the whole process too.
func BenchmarkH1RoundTrip(b *testing.B) {
	type target struct {
		name string
		ap   netip.AddrPort
	}
	targets := []target{{"canned", cannedServer(b, "HTTP/1.1 200 OK\r\nServer: canned\r\nContent-Length: 3\r\n\r\nok\n")}}
	if ap, ok := benchAddr(b); ok {
		targets = append(targets, target{"bench-addr", ap})
	}
	for _, tg := range targets {
		for _, conns := range []int{1, 50} {
			b.Run(fmt.Sprintf("%s/h1/conns=%d", tg.name, conns), func(b *testing.B) { benchH1(b, tg.ap, conns) })
			b.Run(fmt.Sprintf("%s/nethttp/conns=%d", tg.name, conns), func(b *testing.B) { benchNetHTTP(b, tg.ap, conns) })
		}
	}
}

// benchLoop runs b.N requests over conns goroutines, each running worker,
// which sends while next allows and returns its failures, and reports CPU per request and failures.
func benchLoop(b *testing.B, conns int, worker func(next func() bool) int64) {
	var next atomic.Int64
	more := func() bool { return next.Add(1) <= int64(b.N) }
	var failed atomic.Int64
	var wg sync.WaitGroup
	cpu0 := cpuTime(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range conns {
		wg.Go(func() { failed.Add(worker(more)) })
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d requests failed", n, b.N)
	}
}

func benchH1(b *testing.B, ap netip.AddrPort, conns int) {
	tmpl, d := h1Target(b, hostURL("http", ap.Port()), ap.Addr(), http.MethodGet, nil, ConnOptions{Timeout: 10 * time.Second}, nil)
	benchLoop(b, conns, func(more func() bool) (failed int64) {
		resp := newH1Response(BodyPrefix)
		var c *h1Conn
		defer func() {
			if c != nil {
				c.close()
			}
		}()
		for more() {
			if c == nil {
				var err error
				if c, err = d.dial(b.Context(), time.Time{}); err != nil {
					failed++
					continue
				}
			}
			if err := c.roundTrip(tmpl, "", false, time.Now().Add(10*time.Second), resp); err != nil || resp.status != 200 {
				failed++
			}
			if !c.reusable() {
				c = nil
			}
		}
		return failed
	})
}

func benchNetHTTP(b *testing.B, ap netip.AddrPort, conns int) {
	t := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: conns, DisableCompression: true}
	defer t.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, "http://"+ap.String()+"/", nil)
	if err != nil {
		b.Fatal(err)
	}
	benchLoop(b, conns, func(more func() bool) (failed int64) {
		for more() {
			resp, err := t.RoundTrip(req)
			if err != nil {
				failed++
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				failed++
			}
		}
		return failed
	})
}
