package probe

import (
	"sync"
	"time"
)

// cpuSampler tells whether the machine has CPU to spare: a run that falls
// behind its schedule because the machine is out of CPU gains nothing from
// more workers and connections, which only cost more CPU; a run that falls
// behind because the backend is slow does (see spawnAge).
type cpuSampler struct {
	mu         sync.Mutex
	at         time.Time
	idle, tot  uint64
	spare      bool
	unknown    bool
	sampleFreq time.Duration
}

var machineCPU = &cpuSampler{sampleFreq: 100 * time.Millisecond, spare: true}

// spareCPU reports whether, over the last sample period, the machine's
// CPUs were idle at least a quarter of one CPU's time. Where the machine's
// CPU time is not known it says yes.
func (c *cpuSampler) spareCPU(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unknown || now.Sub(c.at) < c.sampleFreq {
		return c.spare || c.unknown
	}
	idle, tot, ok := cpuTimes()
	if !ok {
		c.unknown = true
		return true
	}
	if !c.at.IsZero() && tot > c.tot {
		// idle share of all CPUs' time, against a quarter of one CPU
		c.spare = float64(idle-c.idle)/float64(tot-c.tot) >= 0.25/float64(numCPU())
	}
	c.at, c.idle, c.tot = now, idle, tot
	return c.spare
}

// late reports whether a look at the schedule lag behind it says that the
// client itself is behind (see lateLimit).
func (c *cpuSampler) late(lag time.Duration) bool { return lag > lateLimit }
