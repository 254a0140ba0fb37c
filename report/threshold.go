package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/report/phrase"
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
}

// NoLimits checks nothing.
var NoLimits = Limits{MaxFailureRate: -1}

// Threshold statuses.
const (
	ThresholdOK        = "ok"
	ThresholdBreached  = "breached"
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
}

// Breached reports whether any check failed or could not be judged: the
// gate passes only when every check was judged and passed.
func Breached(ts []Threshold) bool {
	for _, t := range ts {
		if !t.OK {
			return true
		}
	}
	return false
}

// CheckLimits judges r against l in every scope: each endpoint, each
// family and the total. A scope without requests is not judged (and does not
// pass). It returns the checks in a stable order; none when l sets nothing.
func CheckLimits(r *Report, l Limits) []Threshold {
	out := []Threshold{}
	type scope struct {
		name string
		s    *Stats
	}
	scopes := []scope{{"total", &r.Totals}}
	for _, f := range phrase.SortedKeys(r.Families) {
		scopes = append(scopes, scope{"family " + f, r.Families[f]})
	}
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		scopes = append(scopes, scope{"endpoint " + e.Address + " (" + e.Target + ")", &e.Stats})
	}
	judge := func(name, unit, sc string, limit float64, n int64, value float64) {
		t := Threshold{Name: name, Scope: sc, Limit: limit, Unit: unit, Status: ThresholdNotJudged}
		if n > 0 {
			v := value
			t.Value = &v
			t.OK = value <= limit
			t.Status = ThresholdBreached
			if t.OK {
				t.Status = ThresholdOK
			}
		}
		out = append(out, t)
	}
	if l.MaxFailureRate >= 0 {
		for _, sc := range scopes {
			judge("max-failure-rate", "ratio", sc.name, l.MaxFailureRate, sc.s.Requests, sc.s.FailureRate)
		}
	}
	if l.MaxP99 > 0 {
		limit := float64(l.MaxP99) / float64(time.Millisecond)
		for _, sc := range scopes {
			judge("max-p99", "ms", sc.name, limit, sc.s.Requests, sc.s.LatencyMS.P99)
		}
	}
	if l.FailOnVerdict {
		judge("fail-on-verdict", "suspects", "verdict", 0, r.Totals.Requests, float64(len(r.Verdict.Suspects)))
	}
	return out
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
