package accesslog

import "runtime"

// runtimeMem is the bytes allocated so far (runtime.MemStats.TotalAlloc).
type runtimeMem struct{ total uint64 }

func (m *runtimeMem) read() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.total = ms.TotalAlloc
}
