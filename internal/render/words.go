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
// given number of endpoints (over names them): "10 req/s (3.333 per
// endpoint) for 30s over 3 endpoints of sign.example.com: 127.0.0.1, …".
// It is what pinprobe prints before the load; planWords says the same
// plan in the report.
func PlanLine(p report.Plan, endpoints int, over string) string {
	var b strings.Builder
	if p.Max {
		fmt.Fprintf(&b, "max rate (%d workers per endpoint, back to back)", p.Concurrency)
	} else {
		b.WriteString(strconv.FormatFloat(p.Rate, 'f', -1, 64) + " req/s")
		if endpoints > 1 {
			fmt.Fprintf(&b, " (%.4g per endpoint)", p.Rate/float64(endpoints))
		}
	}
	d := time.Duration(p.DurationS * float64(time.Second))
	switch {
	case d > 0 && p.Requests > 0:
		fmt.Fprintf(&b, " for %s or %d request%s, whichever comes first,", d, p.Requests, words.Plural(int(p.Requests)))
	case d > 0:
		fmt.Fprintf(&b, " for %s", d)
	case p.Requests > 0:
		fmt.Fprintf(&b, " for %d request%s", p.Requests, words.Plural(int(p.Requests)))
	default:
		b.WriteString(" until Ctrl-C")
	}
	return b.String() + " over " + over
}

// planWords says the run's plan in a sentence.
func planWords(p *report.Plan) string {
	var parts []string
	if p.Max {
		parts = append(parts, fmt.Sprintf("as fast as possible (closed model, %d workers per endpoint)", p.Concurrency))
	} else {
		parts = append(parts, words.Num(p.Rate)+" requests/s in total, split evenly over the endpoints",
			fmt.Sprintf("at most %d in flight per endpoint", p.Concurrency))
		if p.PaceGrainS > 0 {
			parts = append(parts, "the requests due within each "+words.Num(p.PaceGrainS*1000)+" ms sent together at its start (--pace-grain)")
		}
	}
	if p.DurationS > 0 {
		parts = append(parts, "for "+words.Num(p.DurationS)+" s")
	}
	if p.Requests > 0 {
		parts = append(parts, fmt.Sprintf("at most %d request%s", p.Requests, words.Plural(int(p.Requests))))
	}
	if p.Timeout > 0 {
		parts = append(parts, "timeout "+words.Num(p.Timeout)+" s")
	}
	if p.HTTP != "" {
		parts = append(parts, "HTTP "+p.HTTP)
	}
	if p.NewConn {
		parts = append(parts, "a new connection for every request")
	} else {
		parts = append(parts, "keep-alive connections")
	}
	fs := p.FailStatus
	if fs == "" {
		fs = "5xx"
	}
	parts = append(parts, "a failure is a transport error or a status in "+fs)
	return strings.Join(parts, "; ")
}

// rateCI formats a failure rate with its Wilson 95% interval: "9.2% (4.3–19%)".
func rateCI(failed, n int64, rate float64) string {
	if n == 0 {
		return "-"
	}
	lo, hi := failureCI(failed, n)
	return pct(rate, n) + " (" + words.CIRange(lo, hi) + ")"
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
