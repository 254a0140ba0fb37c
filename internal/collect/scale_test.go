package collect_test

import (
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/probe"
)

// TestEndpointStateSizedByUse: an endpoint's state in the aggregator is
// sized by what it saw, not by the histograms' range: 2,000 URL endpoints,
// half of them with 2 responses, hold at most 4 kB each, targets included
// (each held 0.27 MB of empty histogram and status arrays, 0.35 MB in
// all). Measured in live heap, not timed.
func TestEndpointStateSizedByUse(t *testing.T) {
	if check.Race {
		t.Skip("the race detector's allocations are not the program's")
	}
	const n = 2000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	agg := fixture.URLRun(t, n, 2)
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d bytes an endpoint", per)
	if per > 4096 {
		t.Errorf("an endpoint holds %d bytes of the aggregator after 2 responses; want at most 4 kB", per)
	}
	runtime.KeepAlive(agg)
}

// TestAddAllocatesNothing: counting a response on a connection the
// aggregator knows, in a bucket it has seen, allocates nothing (the
// endpoint's address was written for every result).
func TestAddAllocatesNothing(t *testing.T) {
	if check.Race {
		t.Skip("the race detector's allocations are not the program's")
	}
	agg := fixture.URLRun(t, 4, 3)
	r := fixture.Decide(fixture.Fail, probe.Result{Endpoint: 2, Start: fixture.FzStart.Add(time.Second), Status: 200, Bytes: 3,
		Latency: 900 * time.Microsecond, ConnID: 3, Reused: true, Local: netip.MustParseAddrPort("127.0.0.1:10002")})
	agg.Add(r)
	if n := testing.AllocsPerRun(1000, func() { agg.Add(r) }); n != 0 {
		t.Errorf("Add of a response allocates %.1f times; want 0", n)
	}
}
