package check

import "runtime"

// Allocated is how many bytes f allocates; 0 under the race detector,
// whose sync.Pool drops what it holds (see Race).
func Allocated(f func()) uint64 {
	if Race {
		f()
		return 0
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
