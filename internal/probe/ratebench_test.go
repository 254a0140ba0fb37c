package probe

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the user+system CPU time this process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAttackRate measures the open model at a fixed 2,000 req/s with 50
// workers allowed, as pinprobe --rate 2000 -c 50 runs: b.N requests take
// b.N/2000 s whatever the machine, so ns/op is meaningless here; the figures
// are cpu-µs/req (user+sys of the whole process per request: run it with
// PINPROBE_BENCH_ADDR so that the server's CPU is not counted) and allocs/op.
// "plain" sends bare requests; "defaults" what the command sends by default
// (a User-Agent, an X-Request-Id per request, evidence kept for failures).
// -benchtime=4000x gives 2 s runs.
// Each runs on both request paths, net/http (std) and the HTTP/1.1 fast path.
func BenchmarkAttackRate(b *testing.B) {
	for _, client := range clients {
		b.Run("client="+string(client)+"/plain", func(b *testing.B) { benchRate(b, Options{Client: client}) })
		b.Run("client="+string(client)+"/defaults", func(b *testing.B) {
			benchRate(b, Options{Client: client, UserAgent: "pinprobe/0.1.0", RequestID: true,
				Evidence: Evidence{Failed: func(s int) bool { return s >= 500 }, Samples: 5}})
		})
	}
}

func benchRate(b *testing.B, opts Options) {
	if b.N > 60000 {
		b.Fatalf("b.N %d would run for %v: use -benchtime=Nx with N <= 60000", b.N, time.Duration(b.N)*time.Second/2000)
	}
	ep := benchEndpoint(b)
	opts.Rate, opts.Concurrency, opts.Requests = 2000, 50, int64(b.N)
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
		if r.Err != nil || r.Status != 200 {
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
