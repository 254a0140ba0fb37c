package probe

import (
	"math"
	"time"
)

// pacer is the send schedule of one endpoint in the open model, a pure
// function of the request's number: request k is due at
// base + (phase + k×share)/rate seconds after the run's start, where share
// is the number of endpoints the rate is split over. It is computed, never
// accumulated, so a late wake-up shifts no later request; a due time that
// is a whole number of nanoseconds comes out exactly (one rounding), and
// PlannedRequests counts with the very arithmetic the scheduler sends by.
type pacer struct {
	base  time.Duration // from the run's start
	phase int64         // in requests of the total rate
	share int64         // endpoints sharing the rate
	rate  float64       // total requests/s
	k     int64         // the next request's number
}

// startPacer is the schedule of endpoint i of n sharing rate requests/s:
// one request every n/rate seconds, the endpoints staggered evenly over one
// such period (endpoint i starts at i/rate), so that together they send at
// the total rate from the first request on, interleaved.
func startPacer(i, n int, rate float64) pacer {
	return pacer{phase: int64(i), share: int64(n), rate: rate}
}

// at returns when request k is due, from the run's start.
func (p *pacer) at(k int64) time.Duration {
	return p.base + time.Duration(float64(p.phase+k*p.share)*1e9/p.rate)
}

// next returns when the next request is due.
func (p *pacer) next() time.Duration { return p.at(p.k) }

// retune splits the rate over share endpoints from now on. A request that
// was sent keeps its time, and the next one is due one new period after
// it; before the first request, the first one keeps its time.
func (p *pacer) retune(share int64) {
	if p.k > 0 {
		p.base, p.k = p.at(p.k-1), 1
	} else {
		p.base = p.at(0)
	}
	p.phase, p.share = 0, share
}

// countBefore returns how many requests from number 0 are due before end.
func (p *pacer) countBefore(end time.Duration) int64 {
	if p.at(0) >= end {
		return 0
	}
	// The first request due at or after end, estimated and then settled
	// with at itself, so that the count is what the scheduler sends.
	slots := float64(end-p.base) * p.rate / 1e9
	k := int64(math.Ceil((slots - float64(p.phase)) / float64(p.share)))
	for k > 0 && p.at(k-1) >= end {
		k--
	}
	for p.at(k) < end {
		k++
	}
	return k
}

// PlannedRequests returns how many requests each of endpoints endpoints
// gets in the open model (in the order of the endpoints given to Start)
// when nothing is dropped, no endpoint is added or removed and the client
// keeps up with the rate (see lateGrace): the
// requests due before Duration, and of those the first Requests of the
// run. The endpoints are staggered over one per-endpoint period, so when
// the run is shorter than that period some get none: 2 req/s over 20
// endpoints for 5 s is 10 requests, one each for the first 10 endpoints.
// Under Requests the total is exact, but which endpoint sends the last
// requests follows the order in which their schedulers wake, so an
// endpoint may get one request more or less than planned when the
// requests of several are due within a scheduling delay of each other.
// It returns nil for a run that no plan bounds: the closed
// model (Max), no rate, or neither Duration nor Requests.
func PlannedRequests(o Options, endpoints int) []int64 {
	if o.Max || !(o.Rate > 0) || endpoints <= 0 || (o.Duration <= 0 && o.Requests <= 0) {
		return nil
	}
	out := make([]int64, endpoints)
	for i := range out {
		n := int64(math.MaxInt64)
		if o.Duration > 0 {
			p := startPacer(i, endpoints, o.Rate)
			n = p.countBefore(o.Duration)
		}
		if o.Requests > 0 {
			// Request j of the run is endpoint j mod endpoints's.
			share := int64(0)
			if m, id := o.Requests, int64(i); id < m {
				share = (m - id + int64(endpoints) - 1) / int64(endpoints)
			}
			n = min(n, share)
		}
		out[i] = n
	}
	return out
}
