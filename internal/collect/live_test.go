package collect

import (
	"testing"
	"time"
)

// TestLiveLatency: Recent says the rate and p50/p99 of the requests that
// ended in the whole seconds before now, forgets older ones, and sees a
// slowdown as soon as those seconds are slow.
func TestLiveLatency(t *testing.T) {
	var l LiveLatency
	t0 := time.Unix(1_000_000, 0)
	// 12 s at 20 requests/s: 1 ms for 6 s, then 50 ms; looked at after
	// each second, as the live view does.
	for s := range 12 {
		lat := time.Millisecond
		if s >= 6 {
			lat = 50 * time.Millisecond
		}
		for i := range 20 {
			l.add(t0.Add(time.Duration(s)*time.Second+time.Duration(i)*50*time.Millisecond), lat)
		}
		now := t0.Add(time.Duration(s+1)*time.Second + 100*time.Millisecond)
		w := l.Recent(now, t0, 5)
		seconds := min(s+1, 5) // whole seconds with requests in the window
		slow := max(0, s-5)    // of which slow
		if want := int64(20 * seconds); w.Requests != want {
			t.Errorf("after %ds: %d requests; want %d", s+1, w.Requests, want)
		}
		if want := 20.0; w.Rate != want {
			t.Errorf("after %ds: rate %v; want %v", s+1, w.Rate, want)
		}
		wantP50, wantP99 := time.Millisecond, time.Millisecond
		if 2*slow > seconds {
			wantP50 = 50 * time.Millisecond
		}
		if slow > 0 {
			wantP99 = 50 * time.Millisecond
		}
		if w.P50 < wantP50*98/100 || w.P50 > wantP50*102/100 || w.P99 < wantP99*98/100 || w.P99 > wantP99*102/100 {
			t.Errorf("after %ds: p50 %v, p99 %v; want %v, %v", s+1, w.P50, w.P99, wantP50, wantP99)
		}
	}
	if w := l.Recent(t0.Add(30*time.Second), t0, 5); w.Requests != 0 {
		t.Errorf("long after the last request: %d requests; want 0", w.Requests)
	}
	// The second not over yet is not counted.
	if w := l.Recent(t0.Add(11*time.Second+500*time.Millisecond), t0, 1); w.Requests != 20 {
		t.Errorf("during the last second: %d requests; want the 20 of the second before", w.Requests)
	}
	// A zero time (a test's result) is counted, not a panic.
	var z LiveLatency
	z.add(time.Time{}, time.Millisecond)
	// A run that started mid-second: its rate is over the time it ran,
	// not the whole window.
	var m LiveLatency
	start := t0.Add(500 * time.Millisecond)
	for i := range 50 { // 20/s from start, for 2.5 s
		m.add(start.Add(time.Duration(i)*50*time.Millisecond), time.Millisecond)
	}
	if w := m.Recent(t0.Add(3*time.Second+100*time.Millisecond), start, 5); w.Requests != 50 || w.Rate != 20 || w.Seconds != 3 {
		t.Errorf("2.5 s into a run: %d requests, %v/s over %ds; want 50, 20/s over 3s", w.Requests, w.Rate, w.Seconds)
	}
}

// TestLiveLatencyConcurrent: the display reads while the collector adds
// (run with -race).
func TestLiveLatencyConcurrent(t *testing.T) {
	var l LiveLatency
	t0 := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 5000 {
			l.add(t0.Add(time.Duration(i)*time.Millisecond), time.Millisecond)
		}
	}()
	for range 200 {
		_ = l.Recent(t0.Add(3*time.Second), t0, 5)
	}
	<-done
	if w := l.Recent(t0.Add(6*time.Second), t0, 5); w.Requests == 0 {
		t.Errorf("no request counted")
	}
}
