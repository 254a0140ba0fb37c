package report

import (
	"math"
)

// RepeatCounts is one stratum of an endpoint's reused requests (not the
// first request of a connection), split by whether their connection had
// already failed.
type RepeatCounts struct {
	AfterFailure       int64 `json:"after_failure"` // requests on a connection that had failed before
	AfterFailureFailed int64 `json:"after_failure_failed"`
	AfterOK            int64 `json:"after_ok"` // requests on a connection with only successes so far
	AfterOKFailed      int64 `json:"after_ok_failed"`
}

// RepeatResult says whether failures repeat on the connection they
// happened on: whether a request fails more often when its connection has
// failed before than when it has not.
type RepeatResult struct {
	// The counts over every stratum; the rates are those of the sentence
	// "after a failure on the same connection, 26 of 50 requests failed
	// (52%); after successes only, 6 of 150 (4%)".
	AfterFailure       int64      `json:"after_failure"`
	AfterFailureFailed int64      `json:"after_failure_failed"`
	AfterFailureRate   float64    `json:"after_failure_rate"`
	AfterFailureCI95   [2]float64 `json:"after_failure_ci95"`
	AfterOK            int64      `json:"after_ok"`
	AfterOKFailed      int64      `json:"after_ok_failed"`
	AfterOKRate        float64    `json:"after_ok_rate"`
	AfterOKCI95        [2]float64 `json:"after_ok_ci95"`
	// Strata counts the strata with both classes and both outcomes: the
	// only ones that weigh in the test.
	Strata int `json:"strata"`
	// P is the one-sided p-value of the exact conditional test of a
	// common odds ratio of 1 against one above 1, stratified.
	P float64 `json:"p"`
}

// Significant reports whether failures repeat on their connection at
// level alpha.
func (r RepeatResult) Significant(alpha float64) bool { return r.P < alpha }

// RepeatTest tests whether failures stick to connections: whether requests
// on a connection that has already failed fail more often than requests on
// a connection that has only succeeded, in the same stratum of the run.
// This is the test to blame connections (and so the instances behind a load
// balancer) with; ClusterTest on per-connection counts is not safe for it.
//
// Why not count failures per connection: a connection's length depends on
// its outcomes. A timeout or a response with Connection: close ends the
// connection, so under independent failures the failed requests sit on
// short connections, which looks like clustering: in simulation ClusterTest
// then alarms on every healthy run. Here a request's class (after a
// failure or after successes only) is fixed by the requests before it, so
// when requests fail independently it says nothing about the request's own
// outcome, however connections end: both classes fail alike. When failures
// always close their connection, there is no request after a failure, and
// the test rightly has nothing to say.
//
// Strata are consecutive stretches of the run (at least a second and 32
// requests): the test compares requests of the same stretch, so failures
// that come and go over the run (an outage, a deploy) are not read as
// failures sticking to connections. A burst shorter than a stratum still
// can be; test the time buckets too before blaming an instance.
//
// The p-value is exact given each stratum's margins: the sum over strata
// of the failures after a failure, each hypergeometric (Zelen's exact test
// of a common odds ratio, one-sided).
func RepeatTest(strata []RepeatCounts) RepeatResult {
	var r RepeatResult
	r.P = 1
	type hyper struct{ n, k, draws, obs int64 }
	var hs []hyper
	for _, s := range strata {
		a, af := max(s.AfterFailure, 0), min(max(s.AfterFailureFailed, 0), max(s.AfterFailure, 0))
		b, bf := max(s.AfterOK, 0), min(max(s.AfterOKFailed, 0), max(s.AfterOK, 0))
		r.AfterFailure += a
		r.AfterFailureFailed += af
		r.AfterOK += b
		r.AfterOKFailed += bf
		if k := af + bf; a > 0 && b > 0 && k > 0 && k < a+b {
			hs = append(hs, hyper{n: a + b, k: k, draws: a, obs: af})
		}
	}
	r.Strata = len(hs)
	r.AfterFailureRate, r.AfterFailureCI95 = rateCI95(r.AfterFailureFailed, r.AfterFailure)
	r.AfterOKRate, r.AfterOKCI95 = rateCI95(r.AfterOKFailed, r.AfterOK)
	if len(hs) == 0 {
		return r
	}
	// The law of the sum over strata of the failures after a failure,
	// each stratum hypergeometric given its margins. Offsets from the
	// smallest possible sum only grow, so every offset at or past the
	// observed one is merged into one absorbing cell.
	var lo, obs int64
	for _, h := range hs {
		lo += max(0, h.k-(h.n-h.draws))
		obs += h.obs
	}
	top := obs - lo // the absorbing cell
	dist := make([]float64, top+1)
	next := make([]float64, top+1)
	dist[0] = 1
	for _, h := range hs {
		hlo, hhi := max(0, h.k-(h.n-h.draws)), min(h.draws, h.k)
		den := lchoose(h.n, h.draws)
		clear(next)
		for x := hlo; x <= hhi; x++ {
			q := math.Exp(lchoose(h.k, x) + lchoose(h.n-h.k, h.draws-x) - den)
			for i, d := range dist {
				if d != 0 {
					next[min(int64(i)+x-hlo, top)] += d * q
				}
			}
		}
		dist, next = next, dist
	}
	p := dist[top]
	r.P = min(1, p)
	return r
}

// rateCI95 is k/n rounded as failure rates are, and its Wilson interval.
func rateCI95(k, n int64) (float64, [2]float64) {
	lo, hi := Wilson(k, n)
	rate := 0.0
	if n > 0 {
		rate = round(float64(k)/float64(n), 6)
	}
	return rate, [2]float64{round(lo, 4), round(hi, 4)}
}
