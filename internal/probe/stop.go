package probe

import (
	"slices"
	"time"
)

// Stop ends the sending now, as the end of Duration would: no request is
// started after it, and the requests in flight finish and report.
func (r *Run) Stop() { r.stop() }

// Abandon stops waiting for the requests in flight, as a second Ctrl-C
// asks: it stops the sending as Stop does, and returns the last results,
// as Take would, followed, for each endpoint with requests started whose
// results were not taken, by a Result that counts them (Abandoned), and
// for each with requests it still owed, one that counts them as dropped.
// So every request started is counted once: by its result, taken before,
// or as abandoned. The results of the abandoned requests are let go when
// they come, and their contexts are cancelled (a dial or a net/http request
// ends at once; the HTTP/1.1 fast path's read ends at its deadline). After
// Abandon, Take returns nothing; Ready is closed only once the abandoned
// requests have ended, so its reader stops reading it. Call it from the
// goroutine that calls Take, at most once.
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
