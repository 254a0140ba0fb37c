package render

// The phrasing every format shares: what the view says, written once, on
// nothing format-specific; and the one place render takes a failure rate's
// interval (the renderers compute no other statistic).

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
	"github.com/pinprobe/pinprobe/internal/words"
)

// failureCI is the 95% Wilson interval of failed of n requests.
func failureCI(failed, n int64) (lo, hi float64) { return stat.Wilson(failed, n) }

// titleHosts names the probed hosts, at most three.
func titleHosts(r *report.Report) string {
	var hosts []string
	for _, d := range r.DNS {
		hosts = append(hosts, d.Host)
	}
	for _, e := range r.Endpoints {
		hosts = append(hosts, e.Host)
	}
	hosts = words.Dedupe(hosts)
	switch {
	case len(hosts) == 0:
		return "no host"
	case len(hosts) > 3:
		return strings.Join(hosts[:3], ", ") + fmt.Sprintf(" and %d more", len(hosts)-3)
	}
	return strings.Join(hosts, ", ")
}

// PlanLine says in a line the plan of a run about to start, over the
// given number of endpoints (over names them): "10 requests/s in total
// (3.333 per endpoint); for 30 s over 3 endpoints of sign.example.com: …".
// It is what pinprobe prints before the load: the few phrases of the plan
// the line takes, worded as the report's sentence (planWords) words them.
func PlanLine(p report.Plan, endpoints int, over string) string {
	return joinPlan(planPhrases(&p, endpoints), true) + " over " + over
}

// planWords says the run's plan in a sentence: every phrase of the report.
func planWords(p *report.Plan) string { return joinPlan(planPhrases(p, 0), false) }

// planPhrase is one fact of a plan in words: line marks the few said in the
// line before the load, doc those said in the report's sentence.
type planPhrase struct {
	text      string
	line, doc bool
}

// inBoth marks a phrase for the line and the report, inDoc for the report only.
func inBoth(s string) planPhrase { return planPhrase{text: s, line: true, doc: true} }
func inDoc(s string) planPhrase  { return planPhrase{text: s, doc: true} }

// joinPlan joins the phrases of the line, or of the report's sentence.
func joinPlan(ps []planPhrase, line bool) string {
	var out []string
	for _, p := range ps {
		if (line && p.line) || (!line && p.doc) {
			out = append(out, p.text)
		}
	}
	return strings.Join(out, "; ")
}

// planPhrases words each fact of a plan once, for both the line before the
// load and the report. The line knows how many endpoints share the rate
// and says each one's share; the report (endpoints 0) says the split.
func planPhrases(p *report.Plan, endpoints int) []planPhrase {
	ps := loadPhrases(p, endpoints)
	ps = append(ps, endPhrases(p)...)
	return append(ps, connPhrases(p)...)
}

// loadPhrases says the rate, or the closed model, and how it is sent.
func loadPhrases(p *report.Plan, endpoints int) []planPhrase {
	if p.Max {
		return []planPhrase{inBoth(fmt.Sprintf("as fast as possible (closed model, %d workers per endpoint)", p.Concurrency))}
	}
	rate := words.Num(p.Rate) + " requests/s in total"
	switch {
	case endpoints == 0:
		rate += ", split evenly over the endpoints"
	case endpoints > 1:
		rate += fmt.Sprintf(" (%.4g per endpoint)", p.Rate/float64(endpoints))
	}
	ps := []planPhrase{inBoth(rate), inDoc(fmt.Sprintf("at most %d in flight per endpoint", p.Concurrency))}
	if p.PaceGrainS > 0 {
		ps = append(ps, inDoc("the requests due within each "+words.Num(p.PaceGrainS*1000)+" ms sent together at its start (--pace-grain)"))
	}
	return ps
}

// endPhrases says what ends the run: its duration, its count of requests,
// whichever comes first, or, in the line, Ctrl-C.
func endPhrases(p *report.Plan) []planPhrase {
	var ps []planPhrase
	if p.DurationS > 0 {
		ps = append(ps, inBoth("for "+words.Num(p.DurationS)+" s"))
	}
	if p.Requests > 0 {
		ps = append(ps, inBoth(fmt.Sprintf("at most %d request%s", p.Requests, words.Plural(int(p.Requests)))))
	}
	if len(ps) == 0 { // the line only: the report says how the run ended
		ps = append(ps, planPhrase{text: "until Ctrl-C", line: true})
	}
	return ps
}

// connPhrases says how requests are sent and what counts as a failure.
func connPhrases(p *report.Plan) []planPhrase {
	var ps []planPhrase
	if p.Timeout > 0 {
		ps = append(ps, inDoc("timeout "+words.Num(p.Timeout)+" s"))
	}
	if p.HTTP != "" {
		ps = append(ps, inDoc("HTTP "+p.HTTP))
	}
	if p.NewConn {
		ps = append(ps, inDoc("a new connection for every request"))
	} else {
		ps = append(ps, inDoc("keep-alive connections"))
	}
	fs := p.FailStatus
	if fs == "" {
		fs = "5xx"
	}
	return append(ps, inDoc("a failure is a transport error or a status in "+fs))
}

// rateCI formats a failure rate with its Wilson 95% interval: "9.2% (4.3–19%)".
func rateCI(failed, n int64, rate float64) string {
	if n == 0 {
		return "-"
	}
	lo, hi := failureCI(failed, n)
	return pct(rate, n) + " (" + words.CIRange(lo, hi) + ")"
}

// compactPhase turns "0.23ms / 0.97ms" into "0.23/0.97ms" when the units agree.
func compactPhase(s string) string {
	a, b, ok := strings.Cut(s, " / ")
	if !ok {
		if strings.HasPrefix(s, "—") {
			return "-"
		}
		return s
	}
	return unitOnce(a, "/", b)
}

// unitOnce joins two latencies with sep, their unit said once when they
// share it: "0.52→0.55ms", "0.9ms→1.2s".
func unitOnce(a, sep, b string) string {
	for _, unit := range []string{"ms", "s"} {
		if strings.HasSuffix(a, unit) && strings.HasSuffix(b, unit) && strings.HasSuffix(a, "ms") == strings.HasSuffix(b, "ms") {
			return strings.TrimSuffix(a, unit) + sep + b
		}
	}
	return a + sep + b
}

// hostPort joins a host and a port, an IPv6 address in brackets.
func hostPort(host string, port uint16) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// counts formats {"200": 9, "502": 3} as "200×9 502×3", largest first; "-"
// when empty.
func counts(m map[string]int64, sep string) string { return joinCounts(m, sep, " ") }

// addressCounts formats {"::1": 20, "127.0.0.2": 3} as "::1 ×20, 127.0.0.2 ×3".
func addressCounts(m map[string]int64) string { return joinCounts(m, " ×", ", ") }

func joinCounts(m map[string]int64, sep, join string) string {
	if len(m) == 0 {
		return "-"
	}
	keys := words.ByCount(m)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + sep + strconv.FormatInt(m[k], 10)
	}
	return strings.Join(parts, join)
}

// pct says a rate in percent to a tenth, "-" of no request.
func pct(rate float64, n int64) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatFloat(rate*100, 'f', 1, 64) + "%"
}

// shellJoin quotes args for a POSIX shell where they need it.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = words.ShellQuote(a)
	}
	return strings.Join(out, " ")
}

// mdTime is the timestamp format of the document: the one KQL's datetime()
// and most log search boxes accept.
const mdTime = "2006-01-02T15:04:05.000Z"

func utc(t report.Time) string { return t.UTC().Format(mdTime) }

// clock is a time of day in UTC, to the second: "20:43:05" (words.Clock
// is to the millisecond); stamp is the date too: "2026-06-16 20:43:05".
func clock(t time.Time) string { return t.UTC().Format("15:04:05") }
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

func mdSecs(s float64) string { return strconv.FormatFloat(s, 'f', 1, 64) + " s" }

// portWords lists the client ports, or their range when there are many.
func portWords(c report.Client) string {
	if c.PortsCount == 0 {
		return "none"
	}
	if p := clientPorts(c); p != nil {
		return fmt.Sprintf("%s (%d port%s)", joinInts(p, ", "), c.PortsCount, words.Plural(c.PortsCount))
	}
	if len(c.Ports) == c.PortsCount {
		return fmt.Sprintf("%d ports from %d to %d (the JSON report lists each)", c.PortsCount, c.PortMin, c.PortMax)
	}
	return fmt.Sprintf("%d ports from %d to %d (the JSON report lists the lowest %d)", c.PortsCount, c.PortMin, c.PortMax, len(c.Ports))
}

// maxListedPorts is how many client ports the document and its queries list
// one by one; past it they give the range.
const maxListedPorts = 100

func joinInts[T int | int64](v []T, sep string) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.FormatInt(int64(n), 10)
	}
	return strings.Join(s, sep)
}
