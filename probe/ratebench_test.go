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
// -benchtime=4000x gives a 2 s run.
func BenchmarkAttackRate(b *testing.B) {
	if b.N > 60000 {
		b.Fatalf("b.N %d would run for %v: use -benchtime=Nx with N <= 60000", b.N, time.Duration(b.N)*time.Second/2000)
	}
	ep := benchEndpoint(b)
	opts := Options{Rate: 2000, Concurrency: 50, Requests: int64(b.N), ConnOptions: ConnOptions{Timeout: 10 * time.Second, Concurrency: 50}}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	results, err := Attack(context.Background(), []*Endpoint{ep}, opts)
	if err != nil {
		b.Fatal(err)
	}
	n, failed, dropped := 0, 0, 0
	for r := range results {
		if r.Dropped > 0 {
			dropped += r.Dropped
			continue
		}
		n++
		if r.Err != nil || r.Status != 200 {
			failed++
		}
	}
	cpu := cpuTime(b) - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/float64(max(n, 1)), "cpu-µs/req")
	if n != b.N || failed > 0 {
		b.Fatalf("got %d results (%d dropped), %d failed; want %d, 0 failed", n, dropped, failed, b.N)
	}
}
