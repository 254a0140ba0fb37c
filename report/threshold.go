package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/report/phrase"
	"github.com/pinprobe/pinprobe/report/stat"
)

// Limits are the release gate: what no endpoint, family or the total may
// exceed. The zero value checks nothing.
type Limits struct {
	// MaxFailureRate is the highest failure rate allowed, 0..1; negative = none.
	MaxFailureRate float64
	// MaxP99 is the highest p99 latency allowed; 0 = none.
	MaxP99 time.Duration
	// FailOnVerdict fails the gate when the verdict names a suspect
	// ("concentrated"): no backend may stand out.
	FailOnVerdict bool
	// Confidence is how sure a check must be to pass: the level of the
	// upper bound that must lie within the limit; 0 = DefaultConfidence.
	Confidence float64
}

// DefaultConfidence is the release gate's confidence unless --confidence
// says otherwise.
const DefaultConfidence = 0.95

// NoLimits checks nothing.
var NoLimits = Limits{MaxFailureRate: -1}

// Threshold statuses.
const (
	ThresholdOK       = "ok"
	ThresholdBreached = "breached"
	// ThresholdNotProven: the scope measured within the limit, but too few
	// requests to show it stays within it (the upper bound is past it):
	// not a pass.
	ThresholdNotProven = "not-proven"
	ThresholdNotJudged = "not-judged" // no request in the scope: nothing to judge, and not a pass
)

// Threshold is one check of one limit in one scope.
type Threshold struct {
	Name  string  `json:"name"`  // "max-failure-rate", "max-p99" or "fail-on-verdict"
	Scope string  `json:"scope"` // "total", "family ipv6", "endpoint ::1 (URL)" or "verdict"
	Limit float64 `json:"limit"` // a ratio (0.001), milliseconds, or 0 suspects
	Unit  string  `json:"unit"`  // "ratio", "ms" or "suspects"
	// Value is what the scope measured; null when it was not judged.
	Value  *float64 `json:"value"`
	Status string   `json:"status"`
	OK     bool     `json:"ok"`
	// Requests is how many requests the scope had.
	Requests int64 `json:"requests,omitempty"`
	// Confidence is the level Bound is of.
	Confidence float64 `json:"confidence,omitempty"`
	// Bound is what the scope is shown to stay at or under with
	// Confidence: the exact upper confidence bound of its failure rate
	// (Clopper-Pearson), or of its p99 (an order statistic); the check
	// passes only when it is within the limit. Nil when not judged, for
	// fail-on-verdict, and for a p99 of too few requests to bound it.
	Bound *float64 `json:"bound,omitempty"`
	// NeedRequests is, for a check not proven, how many requests the scope
	// would need to prove it if it went on failing (or answering) as
	// measured, and NeedS how long that takes at its rate; 0 when no run
	// of up to a billion requests would.
	NeedRequests int64   `json:"need_requests,omitempty"`
	NeedS        float64 `json:"need_s,omitempty"`
	// SmallestFault is, for fail-on-verdict, the least failure rate of one
	// address that the verdict would have named with Confidence, against
	// the other addresses of its URL as they answered; the largest over
	// the addresses, the one least seen. Nil when no URL had two addresses.
	SmallestFault *float64 `json:"smallest_fault,omitempty"`
}

// Breached reports whether any check failed, was not proven or could not
// be judged: the gate passes only when every check was judged and proven.
func Breached(ts []Threshold) bool {
	for _, t := range ts {
		if !t.OK {
			return true
		}
	}
	return false
}

// CheckLimits judges r against l in every scope: each endpoint, each
// family and the total. A check passes only when proven: the upper bound
// of the scope's failure rate (or p99) at l.Confidence lies within the
// limit; a scope that measured within it but is not proven does not pass
// (ThresholdNotProven), nor does one without requests (ThresholdNotJudged).
// --max-failure-rate 0 asks that no request fail, which no bound can
// show: it passes when none did. It returns the checks in a stable order;
// none when l sets nothing.
func CheckLimits(r *Report, l Limits) []Threshold {
	out := []Threshold{}
	conf := l.Confidence
	if conf <= 0 {
		conf = DefaultConfidence
	}
	alpha := 1 - conf
	// A scope's rate is its share of the planned rate (the measured one
	// under --rate max), by its endpoints: how long proving it would take.
	type scope struct {
		name string
		s    *Stats
		rps  float64
	}
	rate := func(s *Stats, eps int) float64 {
		if r.Plan.Max || !(r.Plan.Rate > 0) || len(r.Endpoints) == 0 {
			return s.RPS
		}
		return r.Plan.Rate * float64(eps) / float64(len(r.Endpoints))
	}
	scopes := []scope{{"total", &r.Totals, rate(&r.Totals, len(r.Endpoints))}}
	for _, f := range phrase.SortedKeys(r.Families) {
		eps := 0
		for i := range r.Endpoints {
			if r.Endpoints[i].Family == f {
				eps++
			}
		}
		scopes = append(scopes, scope{"family " + f, r.Families[f], rate(r.Families[f], eps)})
	}
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		scopes = append(scopes, scope{"endpoint " + e.Address + " (" + e.Target + ")", &e.Stats, rate(&e.Stats, 1)})
	}
	check := func(name, unit string, sc scope, limit float64) Threshold {
		return Threshold{Name: name, Scope: sc.name, Limit: limit, Unit: unit, Status: ThresholdNotJudged, Requests: sc.s.Requests}
	}
	// judge adds t, with its outcome from what the scope measured (value)
	// and what it is shown to stay under (bound, nil when nothing is), and
	// what would prove it.
	judge := func(t Threshold, sc scope, value float64, bound *float64, need int64) {
		defer func() { out = append(out, t) }()
		if sc.s.Requests <= 0 {
			return
		}
		t.Value, t.Bound, t.Confidence = &value, bound, conf
		switch {
		case value > t.Limit:
			t.Status = ThresholdBreached
		case bound != nil && *bound <= t.Limit:
			t.Status, t.OK = ThresholdOK, true
		default:
			t.Status = ThresholdNotProven
			if need > 0 {
				t.NeedRequests = need
				if sc.rps > 0 {
					t.NeedS = stat.Round(float64(need)/sc.rps, 1)
				}
			}
		}
	}
	if l.MaxFailureRate >= 0 {
		for _, sc := range scopes {
			t := check("max-failure-rate", "ratio", sc, l.MaxFailureRate)
			s := sc.s
			b := stat.Round(stat.UpperBound(s.Failed, s.Requests, alpha), 6)
			if l.MaxFailureRate == 0 && s.Failed == 0 {
				b = 0 // none failed, as asked; no bound could show a rate of 0
			}
			judge(t, sc, s.FailureRate, &b, stat.RequestsToBound(s.Failed, s.Requests, l.MaxFailureRate, alpha))
		}
	}
	if l.MaxP99 > 0 {
		limit := float64(l.MaxP99) / float64(time.Millisecond)
		for _, sc := range scopes {
			t := check("max-p99", "ms", sc, limit)
			bound, need := p99Bound(sc.s, l.MaxP99, alpha)
			judge(t, sc, sc.s.LatencyMS.P99, bound, need)
		}
	}
	if l.FailOnVerdict {
		t := check("fail-on-verdict", "suspects", scope{"verdict", &r.Totals, 0}, 0)
		if r.Totals.Requests > 0 {
			v := float64(len(r.Verdict.Suspects))
			t.Value, t.Confidence = &v, conf
			t.Status, t.OK = ThresholdBreached, false
			if v == 0 {
				t.Status, t.OK = ThresholdOK, true
			}
			t.SmallestFault = smallestFault(r, conf)
		}
		out = append(out, t)
	}
	return out
}

// p99Bound is the upper bound of s's p99 at level alpha, in milliseconds
// (nil when s has too few requests for one, or no histogram), and, when
// that bound is past limit, how many requests would bring it within limit
// if s answered as it did.
func p99Bound(s *Stats, limit time.Duration, alpha float64) (*float64, int64) {
	h := NewLatencyHist()
	if s.Requests <= 0 || s.HDR == "" || h.Add(s.HDR) != nil || h.TotalCount() == 0 {
		return nil, 0
	}
	n := h.TotalCount()
	share := float64(h.CountAtOrBelow(limit.Microseconds())) / float64(n)
	need := stat.RequestsToQuantile(n, share, 0.99, alpha)
	r, ok := stat.QuantileUpperRank(n, 0.99, alpha)
	if !ok {
		return nil, need
	}
	b := MicrosToMillis(h.ValueAtRank(r))
	if b <= float64(limit)/float64(time.Millisecond) {
		need = 0
	}
	return &b, need
}

// smallestFault is the least failure rate one address could have had and
// been named by the verdict with probability conf, at the verdict's level
// for each test, against the other addresses of its URL as they answered:
// the largest over the addresses (the least seen). Nil when no URL had two
// addresses with requests.
func smallestFault(r *Report, conf float64) *float64 {
	each := r.Verdict.Level.Each
	if !(each > 0) {
		each = 0.001
	}
	type tally struct{ n, failed int64 }
	byTarget := map[string]tally{}
	count := map[string]int{}
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		if e.Requests > 0 {
			t := byTarget[e.Target]
			byTarget[e.Target] = tally{t.n + e.Requests, t.failed + e.Failed}
			count[e.Target]++
		}
	}
	var worst *float64
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		if e.Requests <= 0 || count[e.Target] < 2 {
			continue
		}
		all := byTarget[e.Target]
		f, _ := stat.SmallestProvable(e.Requests, all.failed-e.Failed, all.n-e.Requests, each, conf)
		f = stat.Round(f, 6)
		if worst == nil || f > *worst {
			worst = &f
		}
	}
	return worst
}

// ParseRate parses a failure rate limit: "0.1%" or "0.001", from 0 to 1.
func ParseRate(s string) (float64, error) {
	v, pct := strings.TrimSpace(s), false
	if strings.HasSuffix(v, "%") {
		v, pct = strings.TrimSuffix(v, "%"), true
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("want a ratio such as 0.001 or a percentage such as 0.1%%")
	}
	if pct {
		f /= 100
	}
	if !(f >= 0 && f <= 1) {
		return 0, fmt.Errorf("want a rate from 0 to 1 (0%% to 100%%)")
	}
	return f, nil
}
