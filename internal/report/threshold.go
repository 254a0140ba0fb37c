package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/stat"
	"github.com/pinprobe/pinprobe/internal/words"
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

// CheckLimits judges r against l for each endpoint (but one that left DNS
// during the run: it counts in its family and the total), family and the total.
// A check passes only when proven: the upper bound at l.Confidence of the
// failure rate (or p99), abandoned requests counted as failed, within the limit;
// else ThresholdNotProven, or ThresholdNotJudged without requests. A limit of 0
// failures passes when none failed or was abandoned. --fail-on-verdict fails on
// a suspect or an outage. The checks come in a stable order; none when l is empty.
func CheckLimits(r *Report, l Limits) []Threshold {
	out := []Threshold{}
	conf := l.Confidence
	if conf <= 0 {
		conf = DefaultConfidence
	}
	alpha := 1 - conf
	scopes := limitScopes(r)
	if l.MaxFailureRate >= 0 {
		for _, sc := range scopes {
			t := sc.check("max-failure-rate", "ratio", l.MaxFailureRate)
			s := sc.s
			// The abandoned requests may have failed: shown below the limit
			// only if they did.
			k, n := s.Failed+s.Abandoned, s.Requests+s.Abandoned
			b := stat.UpperBound(k, n, alpha)
			none := l.MaxFailureRate == 0 && k == 0
			out = append(out, sc.judge(t, conf, s.FailureRate, &b, none, stat.RequestsToBound(k, n, l.MaxFailureRate, alpha)))
		}
	}
	if l.MaxP99 > 0 {
		limit := float64(l.MaxP99) / float64(time.Millisecond)
		for _, sc := range scopes {
			t := sc.check("max-p99", "ms", limit)
			bound, need := p99Bound(sc.s, l.MaxP99, alpha)
			out = append(out, sc.judge(t, conf, sc.s.LatencyMS.P99, bound, false, need))
		}
	}
	if l.FailOnVerdict {
		t := limitScope{"verdict", &r.Totals, 0}.check("fail-on-verdict", "suspects", 0)
		if r.Totals.Requests > 0 {
			v := float64(len(r.Verdict.Suspects))
			t.Value, t.Confidence = &v, conf
			t.Status, t.OK = ThresholdBreached, false
			if v == 0 && !r.Verdict.Outage {
				t.Status, t.OK = ThresholdOK, true
				t.SmallestFault = smallestFault(r, conf)
			}
		}
		out = append(out, t)
	}
	return out
}

// limitScope is a scope CheckLimits judges, with its rate, for how long
// proving it would take.
type limitScope struct {
	name string
	s    *Stats
	rps  float64
}

// limitScopes are the total, each family and each endpoint still in DNS
// at the end. A scope's rate is its share of the planned rate by its
// endpoints still probed at the end (the measured one under --rate max),
// or the rate its requests finished at when that was lower (drops,
// abandoned requests, a slow backend).
func limitScopes(r *Report) []limitScope {
	active := 0
	for i := range r.Endpoints {
		if r.Endpoints[i].RemovedAt == nil {
			active++
		}
	}
	rate := func(s *Stats, eps int) float64 {
		rps := s.RPS
		if !r.Plan.Max && r.Plan.Rate > 0 && active > 0 {
			rps = r.Plan.Rate * float64(eps) / float64(active)
		}
		if r.SendS > 0 {
			if done := float64(s.Requests) / r.SendS; done < rps {
				rps = done
			}
		}
		return rps
	}
	scopes := []limitScope{{"total", &r.Totals, rate(&r.Totals, active)}}
	for _, f := range words.SortedKeys(r.Families) {
		eps := 0
		for i := range r.Endpoints {
			if e := &r.Endpoints[i]; e.Family == f && e.RemovedAt == nil {
				eps++
			}
		}
		scopes = append(scopes, limitScope{"family " + f, r.Families[f], rate(r.Families[f], eps)})
	}
	for i := range r.Endpoints {
		if e := &r.Endpoints[i]; e.RemovedAt == nil {
			scopes = append(scopes, limitScope{"endpoint " + e.Address + " (" + e.Target + ")", &e.Stats, rate(&e.Stats, 1)})
		}
	}
	return scopes
}

// check is the scope's check of a limit, not judged yet.
func (sc limitScope) check(name, unit string, limit float64) Threshold {
	return Threshold{Name: name, Scope: sc.name, Limit: limit, Unit: unit, Status: ThresholdNotJudged, Requests: sc.s.Requests}
}

// judge is t with its outcome at confidence conf, from what the scope
// measured (value) and what it is shown to stay under (bound, unrounded;
// nil when nothing is), and what would prove it (need requests); proven
// says it passes without a bound within the limit (--max-failure-rate 0
// of a scope where none failed). A scope without requests is not judged.
func (sc limitScope) judge(t Threshold, conf, value float64, bound *float64, proven bool, need int64) Threshold {
	if sc.s.Requests <= 0 {
		return t
	}
	t.Value, t.Confidence = &value, conf
	if bound != nil {
		// Rounded up, as it is written: a bound said is never lower than
		// the bound.
		b := math.Ceil(*bound*1e6-1e-9) / 1e6
		if t.Unit == "ms" {
			b = *bound
		}
		t.Bound = &b
	}
	switch {
	case value > t.Limit:
		t.Status = ThresholdBreached
	case proven || bound != nil && *bound <= t.Limit:
		t.Status, t.OK = ThresholdOK, true
	default:
		t.Status = ThresholdNotProven
		if need > 0 {
			t.NeedRequests = need
			if sc.rps > 0 {
				t.NeedS = math.Ceil(float64(need) / sc.rps)
			}
		}
	}
	return t
}

// p99Bound is the upper bound of s's p99 at level alpha, in milliseconds,
// the abandoned requests counted as slower than any (nil when s has too
// few requests for one, or no histogram), and, when that bound is past
// limit, how many requests would bring it within limit if s answered as it
// did.
func p99Bound(s *Stats, limit time.Duration, alpha float64) (*float64, int64) {
	h := NewLatencyHist()
	if s.Requests <= 0 || s.HDR == "" || h.Add(s.HDR) != nil || h.TotalCount() == 0 {
		return nil, 0
	}
	n := h.TotalCount() + s.Abandoned
	share := float64(h.CountAtOrBelow(limit.Microseconds())) / float64(n)
	need := stat.RequestsToQuantile(n, share, 0.99, alpha)
	r, ok := stat.QuantileUpperRank(n, 0.99, alpha)
	if !ok || r > h.TotalCount() {
		return nil, need
	}
	// The top of the bucket holding rank r, in µs: exact to the
	// microsecond, never below the value.
	b := float64(h.ValueAtRank(r)) / 1000
	if b <= float64(limit)/float64(time.Millisecond) {
		need = 0
	}
	return &b, need
}

// smallestFault is the least failure rate one address could have had and
// been named by the verdict with probability conf, against the other
// addresses of its URL as they answered, at the level each test would have
// had then: the verdict's alpha over its tests and the two it adds on the
// connections of a failing address; the largest over the addresses (the
// least seen), rounded up. Nil when no URL had two addresses with requests.
func smallestFault(r *Report, conf float64) *float64 {
	lv := r.Verdict.Level
	alpha, tests := lv.Alpha, lv.Tests
	if !(alpha > 0) {
		alpha = 0.001
	}
	each := alpha / float64(max(tests, 1)+2)
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
		f = math.Ceil(f*1e6-1e-9) / 1e6
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

// thresholdResults say each status of a check in words.
var thresholdResults = map[string]string{ThresholdOK: "passed", ThresholdBreached: "breached",
	ThresholdNotProven: "not proven", ThresholdNotJudged: "not judged"}

// ThresholdResult says a check's status in words: "passed", "breached",
// "not proven", "not judged"; "" for another.
func ThresholdResult(status string) string { return thresholdResults[status] }

// GateSummary says the release gate's outcome in a line: "passed: all 4
// checks, each proven at 95%", "FAILED: 1 of 4 checks breached, 1 not
// proven"; "" when there is no check.
func GateSummary(ts []Threshold) string {
	n := len(ts)
	if n == 0 {
		return ""
	}
	count := map[string]int{}
	conf, bounded, zero := 0.0, 0, 0
	for i := range ts {
		t := &ts[i]
		if t.Bound != nil {
			bounded++
			if t.OK && *t.Bound > t.Limit { // --max-failure-rate 0, passed as asked
				zero++
			}
		}
		conf = max(conf, t.Confidence)
		count[t.Status]++
	}
	if !Breached(ts) {
		summary := fmt.Sprintf("passed: all %d checks", n)
		if n == 1 {
			summary = "passed: its 1 check"
		}
		switch {
		case zero > 0:
			summary += " (no request failed, as --max-failure-rate 0 asks: no run proves a rate of 0)"
		case bounded > 0:
			summary += ", " + map[bool]string{true: "", false: "each "}[bounded == 1] + "proven at " + words.PctRate(conf)
		}
		return summary
	}
	var parts []string
	for _, st := range []string{ThresholdBreached, ThresholdNotProven, ThresholdNotJudged} {
		if count[st] == 0 {
			continue
		}
		what := thresholdResults[st]
		if st == ThresholdNotJudged {
			what += " (no request reached the scope)"
		}
		if len(parts) == 0 {
			parts = append(parts, fmt.Sprintf("%d of %d check%s %s", count[st], n, words.Plural(n), what))
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", count[st], what))
		}
	}
	return "FAILED: " + strings.Join(parts, ", ")
}
