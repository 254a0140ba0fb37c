package probe

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchTarget returns the server the benchmarks load: $PINPROBE_BENCH_ADDR
// (e.g. a loopback nginx that examples/bench.sh starts, "127.0.0.1:8080") or
// an in-process server otherwise, whose CPU then counts too.
func benchTarget(b *testing.B) netip.AddrPort {
	if s := os.Getenv("PINPROBE_BENCH_ADDR"); s != "" {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			b.Fatalf("PINPROBE_BENCH_ADDR %q: %v", s, err)
		}
		return ap
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
	}))
	b.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).AddrPort()
}

func benchEndpoint(b *testing.B) *Endpoint {
	ap := benchTarget(b)
	u := &url.URL{Scheme: "http", Host: "bench.test:" + itoa(int(ap.Port())), Path: "/"}
	return &Endpoint{Target: &Target{URL: u, Method: http.MethodGet}, Addr: ap.Addr()}
}

func itoa(n int) string { return netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(n)).String()[8:] }

// BenchmarkAttackMax measures the closed model with 50 workers, on both
// request paths: ns/op is the wall time per request at saturation
// (1e9/ns-per-op = requests/s), cpu-µs/req the process's CPU per request.
func BenchmarkAttackMax(b *testing.B) {
	for _, client := range clients {
		b.Run("client="+string(client), func(b *testing.B) { benchMax(b, client) })
	}
}

func benchMax(b *testing.B, client ClientKind) {
	ep := benchEndpoint(b)
	opts := Options{Max: true, Concurrency: 50, Requests: int64(b.N), Client: client, ConnOptions: ConnOptions{Timeout: 10 * time.Second, Concurrency: 50}}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	results, err := Attack(context.Background(), []*Endpoint{ep}, opts)
	if err != nil {
		b.Fatal(err)
	}
	n, failed, fresh := 0, 0, 0
	for r := range results {
		n++
		if !r.Reused {
			fresh++
		}
		if r.Err != nil || r.Status != 200 {
			failed++
		}
	}
	cpu := cpuTime(b) - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/float64(max(n, 1)), "cpu-µs/req")
	b.ReportMetric(float64(fresh), "conns")
	if n != b.N || failed > 0 {
		b.Fatalf("got %d results, %d failed; want %d, 0 failed", n, failed, b.N)
	}
}

// BenchmarkBareClient is the baseline: 50 goroutines looping on a plain
// http.Client GET with a drained body and nothing else, against the same
// server as BenchmarkAttackMax. Compare the two ns/op of one run.
func BenchmarkBareClient(b *testing.B) {
	ap := benchTarget(b)
	url := "http://" + ap.String() + "/"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 50, Proxy: nil}}
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for range 50 {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				resp, err := client.Get(url)
				if err != nil {
					failed.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d requests failed", failed.Load())
	}
}
