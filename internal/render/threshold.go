package render

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// thresholdWords says one check in a line: "max-failure-rate, endpoint ::1
// (URL): 100% > 0.1%".
func thresholdWords(t *report.Threshold) string {
	check, limit := t.Name+", "+t.Scope+": ", thresholdValue(t, t.Limit)
	if t.Status == report.ThresholdNotJudged {
		return check + "not judged, no request reached it (limit " + limit + ")"
	}
	value := thresholdValue(t, *t.Value)
	switch t.Status {
	case report.ThresholdBreached:
		if t.Name == "fail-on-verdict" && *t.Value == 0 {
			return check + "no suspect, but an outage: every address fails nearly every request"
		}
		return check + value + " > " + limit
	case report.ThresholdNotProven:
		if t.Unit == "ms" {
			value = "p99 " + value
		}
		in := value + " in " + requestsWords(t.Requests)
		if t.Bound == nil {
			return check + "not proven, " + in + ": too few to bound a p99 (" + words.PctRate(t.Confidence) + " needs 299 at least)"
		}
		// A rate is shown "below" a bound, a p99 "within" it.
		bound := map[bool]string{true: "within", false: "below"}[t.Unit == "ms"]
		return fmt.Sprintf("%snot proven, %s shows it only %s %s (at %s), not %s %s", check, in, bound, boundValue(t, *t.Bound), words.PctRate(t.Confidence), bound, limit)
	}
	return check + value + " ≤ " + limit
}

// requestsWords says a number of requests: "3 requests", "1 request".
func requestsWords(n int64) string {
	return words.Count(n) + " request" + words.Plural(int(n))
}

// proveWords says what run would prove the checks not proven: the one that
// needs the longest at the run's rate, and those no run would prove; ""
// when none is not proven.
func proveWords(ts []report.Threshold, plan report.Plan) string {
	var longest *report.Threshold
	never, unproven := []string{}, 0
	for i := range ts {
		t := &ts[i]
		if t.Status != report.ThresholdNotProven {
			continue
		}
		unproven++
		switch {
		case t.NeedRequests == 0:
			never = append(never, t.Name+", "+t.Scope)
		case longest == nil || t.NeedS > longest.NeedS || t.NeedS == longest.NeedS && t.NeedRequests > longest.NeedRequests:
			longest = t
		}
	}
	var out []string
	if longest != nil {
		every := "every check not proven here"
		if unproven-len(never) == 1 {
			every = "the check not proven here"
		} else if len(never) > 0 {
			every = "the others not proven here"
		}
		s := "If the service goes on answering as it did, "
		switch {
		case longest.NeedS > 24*3600:
			s += fmt.Sprintf("a run of more than a day at this rate would prove %s (a higher rate or a looser limit proves it sooner): ", every)
		case longest.NeedS > 0:
			d := words.RunLength(report.SecondsDuration(longest.NeedS))
			flags := "-d " + d
			if p := plan; p.Requests > 0 && !p.Max && p.Rate > 0 {
				flags += fmt.Sprintf(", and -n 0 or at least %s", words.Count(int64(math.Ceil(longest.NeedS*p.Rate))))
			}
			s += fmt.Sprintf("a run of about %s at this rate (%s) would prove %s: ", d, flags, every)
		default:
			s += fmt.Sprintf("more requests would prove %s: ", every)
		}
		// The scope said shortly: an endpoint by its address and URL.
		scope := cmp.Or(map[string]string{"total": "the total"}[longest.Scope], strings.TrimPrefix(longest.Scope, "endpoint "))
		s += fmt.Sprintf("%s, %s, needs %s", longest.Name, scope, requestsWords(longest.NeedRequests))
		out = append(out, s+".")
	}
	if len(never) > 0 {
		out = append(out, fmt.Sprintf("No run of up to a billion requests would prove %s: %s measured too near the limit.",
			strings.Join(words.CapItems(never, 3), "; "), map[bool]string{true: "it", false: "each"}[len(never) == 1]))
	}
	return strings.Join(out, " ")
}

// seenWords says, when --fail-on-verdict (t) passed, how large a fault of
// one address the run would have seen; "" when it named one.
func seenWords(t *report.Threshold, r *report.Report) string {
	if *t.Value > 0 {
		return "" // a fault was seen: the verdict says it
	}
	named := "No address stood out"
	if t.SmallestFault == nil {
		return named + "; no URL had two addresses with requests, so no address could stand out against another (only an instance or some connections could be named)."
	}
	f := *t.SmallestFault
	if f >= 1 {
		return fmt.Sprintf("%s, but this run was too short to see one: not even an address failing every request would have been named at the verdict's level (%s requests in all).", named, words.Count(r.Totals.Requests))
	}
	return fmt.Sprintf("%s; an address failing %s of its requests or more would have been named (with %s probability, at this run's requests per address).",
		named, words.PctCeil(f), words.PctRate(t.Confidence))
}

func thresholdValue(t *report.Threshold, v float64) string {
	switch t.Unit {
	case "ratio":
		return words.PctRate(v)
	case "ms":
		return words.Latency(v, 1)
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " suspect" + words.Plural(int(v))
}

// boundValue formats a check's bound, rounded up so that "below" and
// "within" stay true.
func boundValue(t *report.Threshold, v float64) string {
	switch {
	case t.Unit == "ratio" && v > 0:
		return words.PctCeil(v)
	case t.Unit == "ms":
		return words.LatencyCeil(v)
	}
	return thresholdValue(t, v)
}
