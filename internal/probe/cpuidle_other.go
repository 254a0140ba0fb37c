//go:build !linux

package probe

import "runtime"

// cpuTimes is not known here: the engine assumes CPU to spare.
func cpuTimes() (idle, total uint64, ok bool) { return 0, 0, false }

func numCPU() int { return runtime.NumCPU() }
