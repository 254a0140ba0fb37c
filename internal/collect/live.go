package collect

import (
	"math"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// liveSlots is how many one-second slots LiveLatency keeps: the live
// view's figures are of the last liveSlots-1 whole seconds.
const liveSlots = 6

// LiveLatency keeps the latencies of the last few seconds for the live
// view: the rate achieved and the current p50/p99, so a run that slows
// down shows it while it lasts. The collector adds to it (Add), the
// display reads it (Recent), each under its lock.
type LiveLatency struct {
	mu    sync.Mutex
	slots [liveSlots]liveSlot
}

// liveSlot is one second's requests, by the second they ended in.
type liveSlot struct {
	sec  int64 // Unix second; the slot is empty when another
	hist *hdr.Histogram
}

// add counts a request that ended at end after lat.
func (l *LiveLatency) add(end time.Time, lat time.Duration) {
	sec := end.Unix()
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &l.slots[(sec%liveSlots+liveSlots)%liveSlots] // before 1970 too: a test's zero time
	if s.hist == nil {
		// Two significant digits are enough to read, and small to merge
		// five times a second.
		s.hist = hdr.New(1, int64(time.Hour/time.Microsecond), 2)
	}
	if s.sec != sec {
		s.sec = sec
		s.hist.Reset()
	}
	_ = s.hist.RecordValue(max(lat.Microseconds(), 1))
}

// LiveWindow is what the requests of the last seconds did.
type LiveWindow struct {
	Seconds  int     // how long the window is, in whole seconds
	Requests int64   // the requests that ended in it
	Rate     float64 // Requests per second
	P50, P99 time.Duration
}

// Recent returns the requests that ended in the whole seconds before
// now (the current second is not over), over the last seconds, at most
// liveSlots-1, and none before since (the run's start): the rate is over
// the time the window covers. Requests is 0 when none ended in it.
func (l *LiveLatency) Recent(now, since time.Time, seconds int) LiveWindow {
	seconds = min(max(seconds, 1), liveSlots-1)
	cur := now.Unix()
	from := float64(cur - int64(seconds))
	if s := float64(since.UnixNano()) / 1e9; s > from {
		from = s
	}
	w := LiveWindow{Seconds: seconds}
	span := float64(cur) - from
	if span <= 0 {
		return w
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var sum *hdr.Histogram
	for i := range l.slots {
		s := &l.slots[i]
		if s.hist == nil || s.sec >= cur || s.sec < cur-int64(seconds) {
			continue
		}
		if sum == nil {
			sum = hdr.New(1, int64(time.Hour/time.Microsecond), 2)
		}
		sum.Merge(s.hist)
	}
	if sum == nil || sum.TotalCount() == 0 {
		return w
	}
	w.Seconds = int(math.Ceil(span))
	w.Requests = sum.TotalCount()
	w.Rate = float64(w.Requests) / span
	w.P50 = time.Duration(sum.ValueAtQuantile(50)) * time.Microsecond
	w.P99 = time.Duration(sum.ValueAtQuantile(99)) * time.Microsecond
	return w
}
