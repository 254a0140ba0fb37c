package probe

import (
	"slices"
	"time"
)

// Stop ends the sending now, as the end of Duration would: no request is
// started after it, and the requests in flight finish and report.
func (r *Run) Stop() { r.stop() }

// Abandon stops waiting for the requests in flight (a second Ctrl-C): it stops
// sending as Stop does and returns the last results, then per endpoint a Result
// counting its started requests not taken (Abandoned) and one counting what it
// still owed as dropped, so every request started is counted once. Abandoned
// requests' contexts are cancelled; after Abandon, Take returns nothing and
// Ready closes once they have ended. Call it from Take's goroutine, once.
func (r *Run) Abandon() []Result {
	r.stop()
	r.mu.Lock()
	pools := slices.Clone(r.pools)
	states := make([]int, 0, len(r.states))
	for id := range r.states {
		states = append(states, id)
	}
	slices.Sort(states)
	r.mu.Unlock()
	// The pools first: a worker they would free does not start another
	// request, and what they owed is known.
	owed := map[int]int{}
	for _, pl := range pools {
		if n := pl.abandon(); n > 0 {
			owed[pl.s.ep.ID] += n
		}
	}
	r.boxMu.Lock()
	defer r.boxMu.Unlock()
	// Every result in an outbox now is taken; one added after this is
	// not, and its request stays open: counted as abandoned below.
	mail := r.takeLocked()
	r.abandoned.Store(true)
	now := time.Now()
	r.mu.Lock()
	for _, id := range states {
		if n := r.states[id].abandon(); n > 0 {
			mail = append(mail, Result{Endpoint: id, Start: now, Abandoned: int(n)})
		}
		if n := owed[id]; n > 0 {
			mail = append(mail, Result{Endpoint: id, Start: now, Dropped: n})
		}
	}
	r.mu.Unlock()
	r.cancelReqs()
	r.mail = mail
	return mail
}
