package collect_test

import (
	"runtime"
	"testing"

	"pinprobe/internal/check"
	"pinprobe/internal/fixture"
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
