package probe

import (
	"math"
	"time"

	"github.com/pinprobe/pinprobe/internal/stat"
)

// pacer is the send schedule of one endpoint in the open model, a pure function
// of the request's number. Endpoints sharing the rate take one slot each in
// cycles of share slots, 1/rate apart, and every cycle turns the layout by a
// pseudo-random amount, so that a gateway handing requests round its backends
// does not give each address the same backend every time. Request k is due at
// base + (k×share + slot(k))/rate: computed, never accumulated (a late wake-up
// shifts nothing later), with one rounding, and counted by PlannedRequests with
// the very same arithmetic.
type pacer struct {
	base  time.Duration // from the run's start: where the layout's first cycle begins
	phase int64         // the endpoint's slot in the first cycle, 0 to share-1
	share int64         // endpoints sharing the rate: slots per cycle
	rate  float64       // total requests/s
	k     int64         // the next request's number
	// grain > 0 brings each due time down to a whole number of grains
	// from the run's start (Options.PaceGrain): the requests due within a
	// grain are due together at its start.
	grain time.Duration
}

// MaxPaceGrain is the coarsest Options.PaceGrain: a grain is a burst, and
// a longer one would be an on-off load rather than a rate.
const MaxPaceGrain = 100 * time.Millisecond

// startPacer is the schedule of endpoint i of n sharing rate requests/s:
// one request every n/rate seconds on average, the endpoints staggered
// over the first such period (endpoint i starts at i/rate), so that
// together they send at the total rate from the first request on,
// interleaved.
func startPacer(i, n int, rate float64, grain time.Duration) pacer {
	return pacer{phase: int64(i), share: int64(n), rate: rate, grain: grain}
}

// turn is how far cycle k turns the layout of share slots, the same for
// every endpoint of the layout and every run. The cycles go in blocks of
// share, and within a block the turns are each of 0 to share-1 once, in a
// pseudo-random order (an affine permutation drawn from splitmix64 of the
// block): every endpoint takes every slot once a block, so a gateway's
// turns are dealt out evenly, not by the luck of a coin per cycle. The
// first cycle is not turned, so the endpoints start in their order.
func turn(k, share int64) int64 {
	if k <= 0 || share <= 1 {
		return 0
	}
	b, q := k/share, k%share
	z := uint64(b+1) * 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	c := int64(z % uint64(share))
	if b == 0 {
		c = 0
	}
	// A step coprime to share makes q -> a*q+c a permutation.
	a := 1 + int64((z>>32)%uint64(share-1))
	for stat.GCD(a, share) != 1 {
		a = a%(share-1) + 1
	}
	return (a*q + c) % share
}

// slot is the endpoint's slot in cycle k.
func (p *pacer) slot(k int64) int64 {
	return (p.phase + turn(k, p.share)) % p.share
}

// at returns when request k is due, from the run's start.
func (p *pacer) at(k int64) time.Duration {
	t := p.base + time.Duration(float64(k*p.share+p.slot(k))*1e9/p.rate)
	if p.grain > 0 {
		t -= t % p.grain
	}
	return t
}

// sameLayout reports whether p and q are the same schedule, whatever
// request each is at.
func (p *pacer) sameLayout(q *pacer) bool {
	return p.base == q.base && p.phase == q.phase && p.share == q.share && p.rate == q.rate && p.grain == q.grain
}

// next returns when the next request is due.
func (p *pacer) next() time.Duration { return p.at(p.k) }

// pauseGap is how much further behind its schedule a scheduler may find
// itself than at its previous look (or than the time it slept until) and
// still have been merely late. Past it, pinprobe itself did not run
// meanwhile: the process was stopped (Ctrl-Z, SIGSTOP), the machine
// suspended, or starved of CPU for that long. A late wake-up of a loaded
// machine is milliseconds, tens of them at worst, though one running a
// whole repository's tests beside headless Chromium appears to have held
// a scheduler half a second once. A client that cannot keep up falls
// behind by a little at each look, never by this much at once.
const pauseGap = time.Second

// stalled reports whether a scheduler lag behind the request it is about
// to send has not run since its previous look, when it was before behind
// (0 or less: on time, or asleep until the request fell due): it fell
// behind by more than pauseGap at once.
func stalled(lag, before time.Duration) bool { return lag-max(before, 0) > pauseGap }

// look is a scheduler's look at the next request, found at now (from the
// run's start), its lag behind the schedule at the previous look being
// before (0 after it slept until a request fell due). It returns the lag
// to remember and, when the scheduler has been stalled meanwhile (see
// stalled), the requests it skips: those due before now, and before end
// when end > 0, which are then counted, not sent all at once. A client
// that falls behind a little at each look skips nothing: it sends what
// fell due, late.
func (p *pacer) look(now, before, end time.Duration) (lag time.Duration, missed int64) {
	lag = now - p.next()
	if !stalled(lag, before) {
		return lag, 0
	}
	return 0, p.skip(now, end)
}

// skip moves the schedule past a pause: the requests due before now (and
// before end, the run's planned end, when end > 0) are not to be sent,
// and it returns how many they are; the next is the first due at or after
// now.
func (p *pacer) skip(now, end time.Duration) int64 {
	if end > 0 {
		now = min(now, end)
	}
	n := p.countBefore(now)
	if n <= p.k {
		return 0
	}
	missed := n - p.k
	p.k = n
	return missed
}

// countBefore returns how many requests from number 0 are due before end.
func (p *pacer) countBefore(end time.Duration) int64 {
	if p.at(0) >= end {
		return 0
	}
	// The first request due at or after end, estimated and then settled
	// with at itself, so that the count is what the scheduler sends. The
	// estimate is within a cycle: a slot moves a request by less than one.
	// A grain moves it by less than a grain, earlier: the ones due (as
	// grained) at or after end are those whose own time is at or after
	// end's next whole grain, which the estimate starts from.
	from := end
	if p.grain > 0 {
		from = (end + p.grain - 1) / p.grain * p.grain
	}
	slots := float64(from-p.base) * p.rate / 1e9
	k := int64(math.Ceil(slots / float64(p.share)))
	for k > 0 && p.at(k-1) >= end {
		k--
	}
	for p.at(k) < end {
		k++
	}
	return k
}

// layout gives each of ids (in that order) its pacer in a layout that
// begins at base: the i-th takes slot i of the first cycle.
func layout(ids []int, base time.Duration, rate float64, grain time.Duration) map[int]pacer {
	out := make(map[int]pacer, len(ids))
	for i, id := range ids {
		p := startPacer(i, len(ids), rate, grain)
		p.base = base
		out[id] = p
	}
	return out
}

// PlannedRequests returns how many requests each of endpoints endpoints gets in
// the open model (in Start's order) when nothing is dropped, added or removed
// and the client keeps up (see lateGrace): those due before Duration, and of
// them the run's first Requests. Endpoints are staggered over the first
// per-endpoint period, so a short run gives some none; under Requests one may
// get one more or less when several are due within a scheduling delay. nil
// when no plan bounds the run (Max, no rate, neither Duration nor Requests).
func PlannedRequests(o Options, endpoints int) []int64 {
	if o.Max || !(o.Rate > 0) || endpoints <= 0 || (o.Duration <= 0 && o.Requests <= 0) {
		return nil
	}
	out := make([]int64, endpoints)
	n := int64(endpoints)
	for i := range out {
		p := startPacer(i, endpoints, o.Rate, o.PaceGrain)
		due := int64(math.MaxInt64)
		if o.Duration > 0 {
			due = p.countBefore(o.Duration)
		}
		if o.Requests > 0 {
			// The run's requests go in slot order: whole cycles, one
			// request each, and of the last cycle the first slots.
			cycles, rest := o.Requests/n, o.Requests%n
			share := cycles
			if p.slot(cycles) < rest {
				share++
			}
			due = min(due, share)
		}
		out[i] = due
	}
	return out
}
