package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Verdict statuses.
const (
	VerdictOK           = "ok"
	VerdictConcentrated = "concentrated"
	VerdictSpread       = "spread"
	VerdictNoData       = "no-data"
)

// familyAlpha and endpointAlpha are the significance levels of the whole
// family of tests, split over the tests made (Bonferroni). They are strict
// on purpose: a verdict names a backend in a support ticket, so 5 of 5
// against 0 of 5 is not enough, while 10 of 10 against 0 of 10 is.
const testAlpha = 0.001

// Verdict says whether failures concentrate on some addresses or a family.
type Verdict struct {
	Status   string    `json:"status"`
	Summary  string    `json:"summary"`
	Suspects []Suspect `json:"suspects"`
	// Tests lists every comparison made, suspect or not, so the reader can
	// check the reasoning.
	Tests []Test `json:"tests"`
}

// Suspect is an endpoint whose failures are significantly above the rest.
type Suspect struct {
	Address     string     `json:"address"`
	Family      string     `json:"family"`
	Target      string     `json:"target"`
	Requests    int64      `json:"requests"`
	Failed      int64      `json:"failed"`
	FailureRate float64    `json:"failure_rate"`
	CI95        [2]float64 `json:"ci95"`
	P           float64    `json:"p"`
}

// Test is one exact test of a scope (an endpoint or a family) against the rest.
type Test struct {
	Scope       string     `json:"scope"` // "family ipv6" or "endpoint ::1 (URL)"
	Requests    int64      `json:"requests"`
	Failed      int64      `json:"failed"`
	FailureRate float64    `json:"failure_rate"`
	CI95        [2]float64 `json:"ci95"`
	RestFailed  int64      `json:"rest_failed"`
	RestTotal   int64      `json:"rest_requests"`
	P           float64    `json:"p"` // one-sided Fisher exact: the scope fails more than the rest
	Significant bool       `json:"significant"`
}

// Judge computes the verdict of a report whose totals, families and
// endpoints are filled.
func Judge(r *Report) Verdict {
	tot := r.Totals
	v := Verdict{Suspects: []Suspect{}, Tests: []Test{}}
	switch {
	case tot.Requests == 0:
		v.Status, v.Summary = VerdictNoData, "No request was sent, so there is nothing to judge."
		return v
	case tot.Failed == 0:
		v.Status = VerdictOK
		v.Summary = fmt.Sprintf("0 failures in %d requests: below %s with 95%% confidence.",
			tot.Requests, pctCeil(UpperBoundZero(tot.Requests)))
		return v
	}

	fams := sortedKeys(r.Families)
	m := 0 // tests made, for the Bonferroni split
	if len(fams) == 2 {
		m += 2
	}
	if len(r.Endpoints) > 1 {
		m += len(r.Endpoints)
	}
	alpha := testAlpha / float64(max(m, 1))

	var badFamily string
	if len(fams) == 2 {
		for i, f := range fams {
			s, o := r.Families[f], r.Families[fams[1-i]]
			t := newTest("family "+f, s.Failed, s.Requests, o.Failed, o.Requests, alpha)
			v.Tests = append(v.Tests, t)
			if t.Significant {
				badFamily = f
			}
		}
	}
	suspect := map[int]float64{} // endpoint index -> p
	if len(r.Endpoints) > 1 {
		for i, e := range r.Endpoints {
			t := newTest("endpoint "+e.Address+" ("+e.Target+")", e.Failed, e.Requests,
				tot.Failed-e.Failed, tot.Requests-e.Requests, alpha)
			v.Tests = append(v.Tests, t)
			if t.Significant {
				suspect[i] = t.P
			}
		}
	}
	// When a family stands out, its failing endpoints are judged against the
	// other family alone: four failing IPv6 addresses do not hide each other.
	if badFamily != "" {
		other := r.Families[otherFamily(fams, badFamily)]
		for i, e := range r.Endpoints {
			if e.Family != badFamily || e.Failed == 0 {
				continue
			}
			p := FisherGreater(e.Failed, e.Requests, other.Failed, other.Requests)
			if p < alpha {
				if old, ok := suspect[i]; !ok || p < old {
					suspect[i] = p
				}
			}
		}
	}
	for i, p := range suspect {
		e := r.Endpoints[i]
		lo, hi := Wilson(e.Failed, e.Requests)
		v.Suspects = append(v.Suspects, Suspect{
			Address: e.Address, Family: e.Family, Target: e.Target,
			Requests: e.Requests, Failed: e.Failed, FailureRate: e.FailureRate,
			CI95: [2]float64{round(lo, 4), round(hi, 4)}, P: p,
		})
	}
	sort.Slice(v.Suspects, func(i, j int) bool {
		a, b := v.Suspects[i], v.Suspects[j]
		if a.FailureRate != b.FailureRate {
			return a.FailureRate > b.FailureRate
		}
		if a.Address != b.Address {
			return a.Address < b.Address
		}
		return a.Target < b.Target
	})
	// The family is the cause only when every one of its endpoints fails
	// significantly; one bad IPv4 address among good ones is that address.
	if badFamily != "" {
		for i, e := range r.Endpoints {
			if _, ok := suspect[i]; e.Family == badFamily && e.Requests > 0 && !ok {
				badFamily = ""
				break
			}
		}
	}

	switch {
	case badFamily != "":
		v.Status = VerdictConcentrated
		v.Summary = familySummary(r, fams, badFamily)
	case len(v.Suspects) > 0:
		v.Status = VerdictConcentrated
		v.Summary = endpointSummary(r, v.Suspects)
	default:
		v.Status = VerdictSpread
		lo, hi := Wilson(tot.Failed, tot.Requests)
		minP := 1.0
		for _, t := range v.Tests {
			minP = math.Min(minP, t.P)
		}
		if len(v.Tests) == 0 {
			v.Summary = fmt.Sprintf("%d of %d requests failed (%s, 95%% CI %s) on the only endpoint probed, %s: with no other address to compare it with, the failures cannot be pinned on one.",
				tot.Failed, tot.Requests, pctRate(tot.FailureRate), ciRange(lo, hi), r.Endpoints[0].Address)
			break
		}
		v.Summary = fmt.Sprintf("Failures are spread: %d of %d requests failed (%s, 95%% CI %s), and no address or family fails significantly more than the rest (smallest %s).",
			tot.Failed, tot.Requests, pctRate(tot.FailureRate), ciRange(lo, hi), pValue(minP))
	}
	return v
}

func newTest(scope string, failed, n, restFailed, restN int64, alpha float64) Test {
	lo, hi := Wilson(failed, n)
	p := FisherGreater(failed, n, restFailed, restN)
	rate := 0.0
	if n > 0 {
		rate = round(float64(failed)/float64(n), 6)
	}
	return Test{
		Scope: scope, Requests: n, Failed: failed, FailureRate: rate,
		CI95: [2]float64{round(lo, 4), round(hi, 4)}, RestFailed: restFailed, RestTotal: restN,
		P: p, Significant: p < alpha,
	}
}

func otherFamily(fams []string, f string) string {
	if fams[0] == f {
		return fams[1]
	}
	return fams[0]
}

var familyNames = map[string]string{"ipv4": "IPv4", "ipv6": "IPv6"}

func familySummary(r *Report, fams []string, bad string) string {
	s, o := r.Families[bad], r.Families[otherFamily(fams, bad)]
	lo, hi := Wilson(s.Failed, s.Requests)
	olo, ohi := Wilson(o.Failed, o.Requests)
	p := FisherGreater(s.Failed, s.Requests, o.Failed, o.Requests)
	lead := "Failures concentrate on " + familyNames[bad]
	if o.Failed == 0 {
		lead = "All failures on " + familyNames[bad]
	}
	var addrs []string
	for _, e := range r.Endpoints {
		if e.Family == bad && e.Failed > 0 {
			addrs = append(addrs, e.Address)
		}
	}
	return fmt.Sprintf("%s: %d of %d %s requests failed (%s, 95%% CI %s) against %d of %d %s (%s, %s), %s. Failing addresses: %s.",
		lead, s.Failed, s.Requests, familyNames[bad], pctRate(s.FailureRate), ciRange(lo, hi),
		o.Failed, o.Requests, familyNames[otherFamily(fams, bad)], pctRate(o.FailureRate), ciRange(olo, ohi),
		pValue(p), strings.Join(dedupe(addrs), ", "))
}

func endpointSummary(r *Report, suspects []Suspect) string {
	var failed, n int64
	names := make([]string, len(suspects))
	minP := 1.0
	for i, s := range suspects {
		failed += s.Failed
		n += s.Requests
		names[i] = s.Address
		minP = math.Min(minP, s.P)
	}
	restF, restN := r.Totals.Failed-failed, r.Totals.Requests-n
	lo, hi := Wilson(failed, n)
	rlo, rhi := Wilson(restF, restN)
	rate := float64(failed) / float64(n)
	restRate := 0.0
	if restN > 0 {
		restRate = float64(restF) / float64(restN)
	}
	return fmt.Sprintf("Failures concentrate on %s: %d of %d requests failed (%s, 95%% CI %s) against %d of %d on the other endpoints (%s, %s), %s.",
		strings.Join(dedupe(names), ", "), failed, n, pctRate(rate), ciRange(lo, hi),
		restF, restN, pctRate(restRate), ciRange(rlo, rhi), pValue(minP))
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// pValue formats a p-value for a sentence: "p<1e-9", "p=3.2e-05", "p=0.004".
func pValue(p float64) string {
	switch {
	case p < 1e-9:
		return "p<1e-9"
	case p < 0.001:
		return "p=" + strings.Replace(fmt.Sprintf("%.1e", p), "e-0", "e-", 1)
	default:
		return fmt.Sprintf("p=%.2g", p)
	}
}

// pctRate formats a rate as a percentage with up to one decimal: "100%", "4.5%", "0.05%".
func pctRate(r float64) string {
	v := r * 100
	switch {
	case v == 0 || v >= 10 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f%%", v)
	case v >= 1:
		return fmt.Sprintf("%.1f%%", v)
	default:
		return fmt.Sprintf("%.2g%%", v)
	}
}

// pctCeil formats an upper bound, rounded up so the sentence stays true: 0.498% -> "0.5%".
func pctCeil(r float64) string {
	v := r * 100
	switch {
	case v >= 10:
		return fmt.Sprintf("%.0f%%", math.Ceil(v))
	case v >= 1:
		return fmt.Sprintf("%.1f%%", math.Ceil(v*10)/10)
	default:
		// Two significant digits, rounded up: 0.498 -> 0.5, 0.0000299 -> 0.00003.
		e := int(math.Floor(math.Log10(v))) - 1
		k := math.Ceil(v/math.Pow(10, float64(e)) - 1e-9) // 10..100
		out := strconv.FormatFloat(k*math.Pow(10, float64(e)), 'f', -e, 64)
		return strings.TrimRight(strings.TrimRight(out, "0"), ".") + "%"
	}
}

func ciRange(lo, hi float64) string {
	return strings.TrimSuffix(pctRate(lo), "%") + "–" + pctRate(hi)
}
