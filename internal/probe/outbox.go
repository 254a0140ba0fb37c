package probe

import (
	"sync"
	"time"
)

// Results travel in batches. Each goroutine that produces them (a worker,
// or an endpoint's pool for its drops and pauses) appends them to an outbox
// of its own, under a lock no one else takes but the collector; the
// collector (Take) empties every outbox at once. So a request's result
// wakes no one: the collector is told every collectEvery that results
// wait (Ready), and a look that must see everything finished so far (the
// live view, --until-verdict) takes them itself, at once.

// collectEvery is how often Ready says that results wait: they reach the
// collector this long after they finished, at most, unless it takes them
// sooner.
const collectEvery = 10 * time.Millisecond

// pendingCap is how many results a run's outboxes hold together before a
// goroutine adding to a non-empty one waits for the collector: a collector that
// falls behind slows the requests instead of holding results without bound. At
// --rate max (the closed model) a waiting result buys nothing, so the outboxes
// hold pendingCapClosed together and boxCapClosed each: an outbox keeps the
// capacity it grew to, and would otherwise grow to the largest batch a slow
// collector ever left it (BENCHMARKS.md, Memory).
const (
	pendingCap       = 1 << 14
	pendingCapClosed = 1 << 11
	boxCapClosed     = 32
)

// outbox holds one goroutine's results until the collector takes them.
type outbox struct {
	mu      sync.Mutex
	taken   sync.Cond // signalled when the collector empties buf
	full    bool      // a goroutine waits on taken
	buf     []Result
	max     int // results it holds before its goroutine waits (with fewer than run.pendingMax pending)
	ep      int // the endpoint a drop count is reported for
	dropped int // requests dropped, not reported yet
	// st is the endpoint's state when the outbox holds requests' results
	// only (a worker's), whose open count Take lowers; nil for a pool's.
	st     *epState
	closed bool
	run    *Run
}

// newBox returns an outbox that Take empties, for results of endpoint ep.
func (r *Run) newBox(ep int) *outbox { return r.addBox(ep, nil) }

// addBox returns an outbox for results of endpoint ep, with st (see
// outbox.st), that Take empties.
func (r *Run) addBox(ep int, st *epState) *outbox {
	b := &outbox{ep: ep, st: st, run: r, max: pendingCap}
	if r.opts.Max {
		b.max = boxCapClosed
	}
	b.taken.L = &b.mu
	r.boxMu.Lock()
	r.boxes = append(r.boxes, b)
	r.boxMu.Unlock()
	return b
}

// newRequestBox returns the outbox of a worker of s, which holds the
// results of the requests it sends and nothing else.
func (r *Run) newRequestBox(s *stream) *outbox {
	return r.addBox(s.ep.ID, s.state)
}

// add puts res in the outbox; it waits while the outbox is full. Once the
// run was abandoned, nobody takes results any more: res is let go.
func (b *outbox) add(res *Result) {
	if b.run.abandoned.Load() {
		return
	}
	b.mu.Lock()
	for len(b.buf) > 0 && (b.run.pending.Load() >= b.run.pendingMax || len(b.buf) >= b.max) {
		b.full = true
		b.taken.Wait()
	}
	b.buf = append(b.buf, *res)
	first := len(b.buf) == 1
	b.mu.Unlock()
	b.run.pending.Add(1)
	if first {
		b.run.waiting.Store(true)
	}
}

// drop counts n requests that were due but dropped.
func (b *outbox) drop(n int) {
	b.mu.Lock()
	b.dropped += n
	b.mu.Unlock()
	b.run.waiting.Store(true)
}

// close says its goroutine is done: once emptied, Take forgets the outbox.
func (b *outbox) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
}

// Ready returns a channel on which the run says, about every collectEvery,
// that results are waiting for Take; it is closed once the run has ended,
// after the last result was finished. A run's results are read either
// this way or through Results, not both.
func (r *Run) Ready() <-chan struct{} { return r.ready }

// Take returns every result finished since its previous call, and counts
// of the requests dropped meanwhile. The slice is the run's and is valid
// until the next call of Take; call it from one goroutine. After Ready is
// closed, one more Take returns all that is left. After Abandon it returns
// nothing.
func (r *Run) Take() []Result {
	r.boxMu.Lock()
	defer r.boxMu.Unlock()
	if r.abandoned.Load() {
		return nil
	}
	return r.takeLocked()
}

// takeLocked is Take, with boxMu held.
func (r *Run) takeLocked() []Result {
	clear(r.mail) // the previous batch's results: hold on to nothing they point to
	r.mail = r.mail[:0]
	r.waiting.Store(false)
	now := time.Time{}
	kept := r.boxes[:0]
	for _, b := range r.boxes {
		b.mu.Lock()
		r.mail = append(r.mail, b.buf...)
		r.pending.Add(-int64(len(b.buf)))
		if b.st != nil && len(b.buf) > 0 {
			b.st.open.Add(-int64(len(b.buf)))
		}
		if b.full {
			b.full = false
			b.taken.Broadcast()
		}
		clear(b.buf)
		b.buf = b.buf[:0]
		if b.dropped > 0 {
			if now.IsZero() {
				now = time.Now()
			}
			r.mail = append(r.mail, Result{Endpoint: b.ep, Start: now, Dropped: b.dropped})
			b.dropped = 0
		}
		closed := b.closed
		b.mu.Unlock()
		if !closed {
			kept = append(kept, b)
		}
	}
	clear(r.boxes[len(kept):])
	r.boxes = kept
	return r.mail
}

// notify tells Ready's reader, every collectEvery, that results wait, and
// closes Ready once done is closed (every goroutine that produces results
// has ended).
func (r *Run) notify(done <-chan struct{}) {
	tick := time.NewTicker(collectEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if r.waiting.Load() {
				select {
				case r.ready <- struct{}{}:
				default: // one is pending already
				}
			}
		case <-done:
			close(r.ready)
			return
		}
	}
}

// Results returns a channel of every result of the run, one at a time,
// closed once the run has ended: Ready and Take, for a reader that wants
// them one by one. The first call starts the goroutine that feeds it.
func (r *Run) Results() <-chan Result {
	r.resultsOnce.Do(func() {
		r.results = make(chan Result, 1024)
		go func() {
			for {
				_, more := <-r.ready
				for _, res := range r.Take() {
					r.results <- res
				}
				if !more {
					close(r.results)
					return
				}
			}
		}()
	})
	return r.results
}
