package judge

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
	"github.com/pinprobe/pinprobe/internal/words"
)

// NearlyAll is the share of its requests every address must have failed
// for the verdict to read as an outage: the service does not answer (or
// hardly answers) on any address, which is no backend's fault among
// others, and no comparison between addresses can show it.
const NearlyAll = 0.9

// OutageShown is the failure rate the run must show, with 95% confidence,
// for its failures to read as an outage: 5 failures of 5 requests show it,
// 1 of 1 does not.
const OutageShown = 0.5

// outageWords is an outage said: its headline and summary.
type outageWords struct{ headline, summary string }

// failKind is one way requests failed, with how many did: "timed out"
// said of every request, and short, after "failed" or an address.
type failKind struct {
	every, short string
	n            int64
}

// pastWords say how a request of each error class failed: of "every
// request", and in short.
var pastWords = map[string][2]string{
	"dns":                 {"did not resolve", "did not resolve"},
	"connect_refused":     {"was refused", "refused"},
	"connect_timeout":     {"timed out connecting", "timed out connecting"},
	"network_unreachable": {"found the network unreachable", "network unreachable"},
	"tls":                 {"failed the TLS handshake", "TLS handshake failed"},
	"reset":               {"was reset", "reset"},
	"eof":                 {"was closed without an answer", "closed without an answer"},
	"timeout":             {"timed out", "timed out"},
	"protocol":            {"got broken HTTP", "broken HTTP"},
	"other":               {"failed with other errors", "other errors"},
}

// failKinds says how s's failed requests failed, most first: each failing
// status and each error class.
func failKinds(s *report.Stats, fail report.FailStatus) []failKind {
	var out []failKind
	for _, k := range failingStatuses(s.Status, fail) {
		if s.Status[k] > 0 {
			out = append(out, failKind{"was answered " + k, "answered " + k, s.Status[k]})
		}
	}
	for _, c := range words.ByCount(s.Errors) {
		if s.Errors[c] == 0 {
			continue
		}
		w, ok := pastWords[c]
		if !ok {
			w = [2]string{"failed with " + c, c}
		}
		out = append(out, failKind{w[0], w[1], s.Errors[c]})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].n > out[b].n })
	return out
}

// shortKinds joins kinds in short: "timed out or refused".
func shortKinds(ks []failKind) string {
	words := make([]string, len(ks))
	for i, k := range ks {
		words[i] = k.short
	}
	if len(words) > 3 {
		words = append(words[:3], "more")
	}
	return strings.Join(words, " or ")
}

// everyKinds says how every request failed: "timed out" of one kind,
// "failed (timed out or refused)" of several.
func everyKinds(ks []failKind) string {
	if len(ks) == 1 {
		return ks[0].every
	}
	return "failed (" + shortKinds(ks) + ")"
}

// countKinds says how many failed each way: "20 timed out, 10 refused".
func countKinds(ks []failKind) string {
	words := make([]string, len(ks))
	for i, k := range ks {
		words[i] = fmt.Sprintf("%d %s", k.n, k.short)
	}
	return strings.Join(words, ", ")
}

// outage says an outage: every address that got requests failed nearly
// every one of them (NearlyAll), so the service, or the path to it from
// where it was probed, is down, on its only address or on all of them.
// It says how each address failed, so that different causes (refused on
// one, timed out on another) read as such. nil when some address answered
// more than that.
func (j *judgement) outage() *outageWords {
	addrs, known := outageAddrs(j.r)
	if len(addrs) == 0 {
		return nil
	}
	all := true
	var failed, n int64
	minRate, maxRate := 1.0, 0.0
	for _, a := range addrs {
		rate := float64(a.s.Failed) / float64(a.s.Requests)
		if rate < NearlyAll {
			return nil
		}
		all = all && a.s.Failed == a.s.Requests
		failed, n = failed+a.s.Failed, n+a.s.Requests
		minRate, maxRate = min(minRate, rate), max(maxRate, rate)
	}
	// A handful of requests that all failed is no outage shown: with 95%
	// confidence, most requests of the run must fail (5 of 5 at least).
	if 1-stat.UpperBound(n-failed, n, 0.05) < OutageShown {
		return nil
	}
	every := "every request"
	if !all {
		every = "nearly every request"
	}
	if len(addrs) == 1 {
		return j.oneAddressOutage(addrs[0], every, all, known > 1)
	}
	o, ways := j.everyAddressOutage(addrs, every, all, minRate, maxRate)
	o.summary = fmt.Sprintf("%s to every address failed (%d of %d): %s", words.Capitalize(every), failed, n, o.summary)
	if all {
		o.summary += "The service is down everywhere (or the path to it from where it was probed is), not one backend: no address answered, so there is none to compare the others with."
	} else {
		o.summary += fmt.Sprintf("The service is down nearly everywhere (or the path to it from where it was probed is), not one backend: every address failed at least %s of its requests, and only %d of %d succeeded.",
			words.PctRate(NearlyAll), n-failed, n)
	}
	if ways > 1 {
		o.summary += " The addresses fail in different ways, so there may be more than one cause, and each must be fixed for the service to answer."
	}
	return o
}

// outageAddr is an address's requests, all its URLs together.
type outageAddr struct {
	name string
	s    report.Stats
}

// outageAddrs are the addresses that got requests, in the report's
// order, and how many addresses the report has, requests or not.
func outageAddrs(r *report.Report) (addrs []*outageAddr, known int) {
	by := map[string]*outageAddr{}
	seen := map[string]bool{}
	for _, e := range r.Endpoints {
		seen[e.Address] = true
		if e.Requests == 0 {
			continue
		}
		a := by[e.Address]
		if a == nil {
			a = &outageAddr{name: e.Address, s: report.Stats{Status: map[string]int64{}, Errors: map[string]int64{}}}
			by[e.Address] = a
			addrs = append(addrs, a)
		}
		report.AddCounts(&a.s, &e.Stats)
	}
	return addrs, len(seen)
}

// oneAddressOutage says the outage of the one address that got requests
// (others, when the report has them, got none).
func (j *judgement) oneAddressOutage(a *outageAddr, every string, all, others bool) *outageWords {
	var o outageWords
	ks := failKinds(&a.s, j.fail)
	to := "to the only address, " + a.name + ","
	if others {
		to = "sent, all to " + a.name + "," // the other addresses got none
	}
	how := everyKinds(ks)
	o.headline = every + " " + to + " " + how
	if !all {
		o.headline += fmt.Sprintf(" (%d of %d)", a.s.Failed, a.s.Requests)
	}
	lead := fmt.Sprintf("%s %s %s (%d of %d)", every, to, how, a.s.Failed, a.s.Requests)
	if len(ks) > 1 {
		lead = fmt.Sprintf("%s %s failed (%d of %d): %s", every, to, a.s.Failed, a.s.Requests, countKinds(ks))
	}
	what := "an outage"
	if !all {
		what = fmt.Sprintf("nearly an outage (%d of %d succeeded)", a.s.Requests-a.s.Failed, a.s.Requests)
	}
	o.summary = words.Capitalize(lead) + ". This is " + what + ", not an intermittent fault: with no other address to compare it with, pinprobe cannot tell a failing backend behind it from a service that is down, or from a broken path to it from where it was probed."
	return &o
}

// everyAddressOutage says the outage of several addresses, those that
// failed alike together: its headline, and in summary each address's
// failures (outage puts the sentence around them); ways is how many ways
// they failed.
func (j *judgement) everyAddressOutage(addrs []*outageAddr, every string, all bool, minRate, maxRate float64) (o *outageWords, ways int) {
	o = new(outageWords)
	var order []string
	alike := map[string][]string{}
	var details, names []string
	for _, a := range addrs {
		names = append(names, a.name)
		ks := failKinds(&a.s, j.fail)
		k := shortKinds(ks)
		order = appendTo(order, alike, k, a.name)
		d := fmt.Sprintf("%s %d of %d", a.name, a.s.Failed, a.s.Requests)
		if len(ks) > 1 {
			d += " (" + countKinds(ks) + ")"
		} else if len(ks) == 1 {
			d += " " + ks[0].short
		}
		details = append(details, d)
	}
	spread := ""
	if !all {
		spread = fmt.Sprintf(" (%s–%s each)", words.PctRate(minRate), words.PctRate(maxRate))
		if words.PctRate(minRate) == words.PctRate(maxRate) {
			spread = fmt.Sprintf(" (%s each)", words.PctRate(minRate))
		}
	}
	if len(order) == 1 {
		o.headline = fmt.Sprintf("%s to every address (%s) %s%s", every, words.JoinAnd(words.CapItems(names, 4)), everyKinds(failKinds(&addrs[0].s, j.fail)), spread)
	} else {
		var ways []string
		for _, k := range order {
			ways = append(ways, k+" on "+words.JoinAnd(words.CapItems(alike[k], 4)))
		}
		if len(ways) > 3 {
			ways = append(ways[:2], fmt.Sprintf("%d more ways on the others", len(ways)-2))
		}
		o.headline = fmt.Sprintf("%s to every address failed%s: %s", every, spread, strings.Join(ways, "; "))
	}
	o.summary = words.JoinAnd(words.CapItems(details, 8)) + ". "
	return o, len(order)
}
