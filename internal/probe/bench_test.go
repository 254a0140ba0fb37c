package probe

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"
)

// benchAddr is $PINPROBE_BENCH_ADDR (e.g. a loopback nginx that
// examples/bench.sh starts, "127.0.0.1:8080"), if set.
func benchAddr(b *testing.B) (netip.AddrPort, bool) {
	s := os.Getenv("PINPROBE_BENCH_ADDR")
	if s == "" {
		return netip.AddrPort{}, false
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		b.Fatalf("PINPROBE_BENCH_ADDR %q: %v", s, err)
	}
	return ap, true
}

// benchTarget returns the server the benchmarks load: benchAddr, or an
// in-process server otherwise, whose CPU then counts too.
func benchTarget(b *testing.B) netip.AddrPort {
	if ap, ok := benchAddr(b); ok {
		return ap
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
	}))
	b.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).AddrPort()
}

// cpuTime is the user+system CPU time this process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAttackMax measures the closed model with 50 workers, on both
// request paths: ns/op is the wall time per request at saturation
// (1e9/ns-per-op = requests/s), cpu-µs/req the process's CPU per request.
func BenchmarkAttackMax(b *testing.B) {
	for _, client := range clients {
		b.Run("client="+string(client), func(b *testing.B) {
			benchAttack(b, Options{Max: true, Concurrency: 50, Client: client})
		})
	}
}

// BenchmarkAttackRate measures the open model at a fixed 2,000 req/s with 50
// workers allowed, as pinprobe --rate 2000 -c 50 runs: b.N requests take
// b.N/2000 s whatever the machine, so ns/op is meaningless here; the figures
// are cpu-µs/req (user+sys of the whole process per request: run it with
// PINPROBE_BENCH_ADDR so that the server's CPU is not counted) and allocs/op.
// "plain" sends bare requests; "defaults" what the command sends by default
// (a User-Agent, an X-Request-Id per request, evidence kept for failures).
// -benchtime=4000x gives 2 s runs. Each runs on both request paths.
func BenchmarkAttackRate(b *testing.B) {
	for _, client := range clients {
		open := Options{Rate: 2000, Concurrency: 50, Client: client}
		b.Run("client="+string(client)+"/plain", func(b *testing.B) { benchAttack(b, open) })
		b.Run("client="+string(client)+"/defaults", func(b *testing.B) {
			o := open
			o.UserAgent, o.RequestID = "pinprobe/0.1.0", true
			o.Evidence = Evidence{Failed: func(s int) bool { return s >= 500 }, Samples: 5}
			benchAttack(b, o)
		})
	}
}

// benchAttack runs b.N requests of opts against benchTarget with 50
// connections allowed, and reports the CPU per request and the connections
// used; every request must succeed. An open model runs 30 s at the most.
func benchAttack(b *testing.B, opts Options) {
	if most := int(30 * opts.Rate); !opts.Max && b.N > most {
		b.Fatalf("b.N %d would run for %v: use -benchtime=Nx with N <= %d", b.N, time.Duration(float64(b.N)/opts.Rate*float64(time.Second)), most)
	}
	tg := benchTarget(b)
	ep := endpoints(b, hostURL("http", tg.Port()), tg.Addr())[0]
	opts.Requests = int64(b.N)
	opts.ConnOptions = ConnOptions{Timeout: 10 * time.Second, Concurrency: 50}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	results, err := Attack(context.Background(), []*Endpoint{ep}, opts)
	if err != nil {
		b.Fatal(err)
	}
	n, failed, dropped := 0, 0, 0
	conns := map[uint64]bool{}
	for r := range results {
		if !r.Request() {
			dropped += r.Dropped
			continue
		}
		n++
		conns[r.ConnID] = true
		if r.Err != nil || r.Status != http.StatusOK {
			failed++
		}
	}
	cpu := cpuTime(b) - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/float64(max(n, 1)), "cpu-µs/req")
	b.ReportMetric(float64(len(conns)), "conns")
	if n != b.N || failed > 0 {
		b.Fatalf("got %d results (%d dropped), %d failed; want %d, 0 failed", n, dropped, failed, b.N)
	}
}

// BenchmarkBareClient is the baseline: 50 goroutines looping on a plain
// http.Client GET with a drained body and nothing else, against the same
// server as BenchmarkAttackMax. Compare the two ns/op of one run.
func BenchmarkBareClient(b *testing.B) {
	ap := benchTarget(b)
	url := "http://" + ap.String() + "/"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 50, Proxy: nil}}
	benchLoop(b, 50, func(more func() bool) (failed int64) {
		for more() {
			resp, err := client.Get(url)
			if err != nil {
				failed++
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return failed
	})
}
