package judge

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// InstanceShare is the share of an address's connections that the
// smallest instance behind it is assumed to get: one in four. With n
// connections an instance that takes that share is reached with
// probability 1 - (1 - InstanceShare)^n.
const InstanceShare = 0.25

// ReachProbability is the chance that n connections reach an instance
// serving InstanceShare of them (each connection landing on it
// independently).
func ReachProbability(n int64) float64 { return 1 - math.Pow(1-InstanceShare, float64(n)) }

// ReachConnections is the fewest connections that reach an instance
// serving InstanceShare of them with probability p.
func ReachConnections(p float64) int64 {
	return int64(math.Ceil(math.Log(1-p)/math.Log(1-InstanceShare) - 1e-9))
}

// fewReach is the reach below which the verdict says an address rode too
// few connections: 95%, 11 connections.
const fewReach = 0.95

// fewConns names the endpoints whose requests ran on so few connections
// that a gateway instance behind the address may never have been reached:
// what the verdict says of them holds for the instances their connections
// landed on, not for the address.
func (j *judgement) fewConns() string {
	r := j.r
	need := ReachConnections(fewReach)
	type load struct{ requests, conns int64 }
	var order []load
	labels := map[load][]string{} // addresses by their requests and connections
	least := need
	for i, e := range r.Endpoints {
		c := e.Conns
		if c == nil || c.Connections == 0 || c.Connections >= need || e.Requests < 4*c.Connections {
			continue
		}
		order = appendTo(order, labels, load{e.Requests, c.Connections}, j.label(i))
		least = min(least, c.Connections)
	}
	if len(order) == 0 {
		return ""
	}
	var parts []string
	if len(order) > 3 {
		// Many different loads: name the addresses, not each one's load.
		var all []string
		for _, k := range order {
			all = append(all, labels[k]...)
		}
		parts = append(parts, fmt.Sprintf("%s sent their requests over fewer than %d connections each", words.JoinAnd(words.CapItems(all, 8)), need))
	} else {
		for _, k := range order {
			each := ""
			if len(labels[k]) > 1 {
				each = " each"
			}
			parts = append(parts, fmt.Sprintf("%s sent %d requests over %d connection%s%s",
				words.JoinAnd(words.CapItems(labels[k], 6)), k.requests, k.conns, words.Plural(int(k.conns)), each))
		}
	}
	fix := "a longer run or a lower --conn-requests samples more of them."
	if r.Plan.ConnRequests == 0 && !r.Plan.NewConn {
		fix = "--conn-requests 0 kept each connection for the whole run; without it pinprobe spreads the requests over many connections."
	}
	return fmt.Sprintf("Few connections: %s. Each TCP connection stays on one gateway instance, so an instance behind these addresses that no connection reached was not tested (an instance taking one connection in four is reached with probability %s by %d connection%s, %s by %d); %s",
		strings.Join(parts, "; "), words.PctRate(ReachProbability(least)), least, words.Plural(int(least)), words.PctRate(ReachProbability(need)), need, fix)
}

// untested says which family was not probed for which host, and why.
func untested(r *report.Report) []string {
	notes := []string{}
	if r.Plan.Only != "" {
		other := "IPv6"
		flag := "-4"
		if r.Plan.Only == "ipv6" {
			other, flag = "IPv4", "-6"
		}
		return append(notes, other+" not tested ("+flag+").")
	}
	families := map[string][]string{} // host -> families of its endpoints
	var order []string
	for _, e := range r.Endpoints {
		order = appendTo(order, families, e.Host, e.Family)
	}
	how := resolvedBy(r)
	for _, fam := range []struct{ name, record, key, other string }{{"IPv6", "AAAA", "ipv6", "IPv4"}, {"IPv4", "A", "ipv4", "IPv6"}} {
		byHow := map[string][]string{} // how the hosts were resolved -> the hosts without the family
		for _, h := range order {
			k := how[h]
			if k == "" {
				k = "dns"
			}
			if !slices.Contains(families[h], fam.key) && k != "literal" { // an IP literal is one address: of one family
				byHow[k] = append(byHow[k], h)
			}
		}
		for _, k := range []string{"dns", "resolve", "demo", "mixed"} {
			hosts := words.Dedupe(byHow[k])
			if len(hosts) == 0 {
				continue
			}
			// Say what is true of where the addresses came from: a DNS
			// answer without the record, --resolve that gave none, the demo.
			list := words.JoinAnd(hosts)
			switch k {
			case "dns":
				notes = append(notes, fmt.Sprintf("No %s address (%s record) for %s: %s not tested.", fam.name, fam.record, list, fam.name))
			case "resolve":
				notes = append(notes, fmt.Sprintf("%s not tested for %s: --resolve gave only %s addresses, and no DNS lookup was made.", fam.name, list, fam.other))
			case "demo":
				notes = append(notes, fmt.Sprintf("%s not tested for %s: the demo has no %s address on this machine.", fam.name, list, fam.name))
			default:
				notes = append(notes, fmt.Sprintf("No %s address for %s, neither from DNS (%s record) nor from --resolve: %s not tested.", fam.name, list, fam.record, fam.name))
			}
		}
	}
	return notes
}

// resolvedBy says how each host of r's DNS entries got its addresses:
// "dns" (the system resolver or --dns-server), "resolve" (--resolve,
// no lookup), "literal" (the URL names an address), "demo", or "mixed"
// when the inputs of a merge differ. A host without an entry (a report
// made by hand) is "dns".
func resolvedBy(r *report.Report) map[string]string {
	how := map[string]string{}
	for _, d := range r.DNS {
		k := "dns"
		switch d.Source {
		case "resolve", "literal", "demo":
			k = d.Source
		}
		switch prev, ok := how[d.Host]; {
		case !ok, prev == k:
		case prev == "literal" || k == "literal":
			k = "literal"
		default:
			k = "mixed"
		}
		how[d.Host] = k
	}
	return how
}

// explainAfterFailure says when a kind of failure without a response came
// only on connections right after a failed response: a gateway that closes
// the connection after its own error page without saying so. Browsers and
// curl resend such a request silently; pinprobe counts it, and says so.
func explainAfterFailure(r *report.Report, fail report.FailStatus) []string {
	var notes []string
	for _, e := range r.Endpoints {
		for _, class := range words.SortedKeys(e.AfterFailure) {
			n := e.AfterFailure[class]
			if n < 3 || e.Errors[class] != n {
				continue
			}
			statuses := failingStatuses(e.Status, fail)
			after := "a failed response"
			if len(statuses) > 0 {
				after = "a failed response (" + strings.Join(statuses[:min(2, len(statuses))], " or ") + ")"
			}
			notes = append(notes, fmt.Sprintf("All %d %s failures on %s came on a connection right after %s: the gateway closes the connection after its own error page without saying so (no Connection: close). Browsers and curl resend such a request silently; pinprobe counts it. --new-conn shows the gateway's answers alone.",
				n, class, e.Address, after))
		}
	}
	return notes
}

// ClientNote says that some requests could not be sent for the client's own
// reasons, which are nobody else's fault, and the fix; "" when none were.
func ClientNote(r *report.Report) string {
	n := r.Totals.ClientErrors
	if n == 0 {
		return ""
	}
	cause := ""
	if r.ClientError != "" {
		cause = " (" + r.ClientError + ")"
	}
	return fmt.Sprintf("%d request%s could not be sent by this machine%s: out of file descriptors or ephemeral ports. They count against no backend. Raise the descriptor limit (ulimit -n), lower -c, or keep connections longer (--conn-requests).",
		n, words.Plural(int(n)), cause)
}

// droppedNote says plainly what dropped requests mean: the endpoint had
// as many requests in flight as allowed, so the schedule skipped them.
func droppedNote(r *report.Report) string {
	d := r.Totals.Dropped
	if d == 0 {
		return ""
	}
	why := fmt.Sprintf("An endpoint gets more workers for a slow backend up to -c (%d): a backend that slow needs a higher -c.", r.Plan.Concurrency)
	if busy := r.Plan.BusyWorkers; busy > 0 && r.Plan.Concurrency > busy {
		why = fmt.Sprintf("An endpoint gets more workers for a slow backend up to -c (%d), and past %d only while this machine has CPU to spare: a backend that slow needs a higher -c, or a less busy client.",
			r.Plan.Concurrency, busy)
	}
	return fmt.Sprintf("%d request%s fell due but %s not sent, because every worker of the endpoint was busy: %s. They are in no count. %s",
		d, words.Plural(int(d)), words.Agree(int(d), "was", "were"), perAddress(r, func(e *report.Endpoint) int64 { return e.Dropped }), why)
}

// abandonedNote says what the requests abandoned at a second interrupt
// are: sent, not waited for, so in no count of requests or failures, and
// where they went. A backend that holds its requests shows here, not in
// the failures.
func abandonedNote(r *report.Report) string {
	n := r.Totals.Abandoned
	if n == 0 {
		return ""
	}
	waited := ""
	if w := r.DurationS - r.SendS; w >= 0.05 && r.SendS > 0 {
		waited = fmt.Sprintf(" after %.1fs of waiting", w)
	}
	return fmt.Sprintf("%d request%s %s abandoned: sent, and still in flight when a second interrupt ended the wait for them%s (the --timeout was %s): %s. How they ended is unknown, so they are in no count of requests or failures; a backend that holds requests that long may be failing in a way this report does not count.",
		n, words.Plural(int(n)), words.Agree(int(n), "was", "were"), waited, report.SecondsDuration(r.Plan.Timeout), perAddress(r, func(e *report.Endpoint) int64 { return e.Abandoned }))
}

// perAddress says the endpoints with a count of n: "::1 ×3, 127.0.0.2 ×1".
func perAddress(r *report.Report, n func(e *report.Endpoint) int64) string {
	var where []string
	for i := range r.Endpoints {
		if k := n(&r.Endpoints[i]); k > 0 {
			where = append(where, fmt.Sprintf("%s ×%d", r.Endpoints[i].Address, k))
		}
	}
	return strings.Join(words.CapItems(where, 6), ", ")
}

// unjudged names the endpoints no request reached: the verdict says
// nothing of them.
func (j *judgement) unjudged() string {
	var none []string
	for i, e := range j.r.Endpoints {
		if e.Requests == 0 && e.RemovedAt == nil {
			none = append(none, j.label(i))
		}
	}
	if len(none) == 0 {
		return ""
	}
	sort.Strings(none)
	shown := words.CapItems(none, 8)
	return fmt.Sprintf("%d endpoint%s got no request and %s not judged: %s. Raise -r or -d so every address gets requests.",
		len(none), words.Plural(len(none)), words.Agree(len(none), "is", "are"), words.JoinAnd(shown))
}

// groupByNotes says of each header asked for with --group-by that no
// response carried it, or no failed response did: otherwise an instance
// header the gateway never sent (a misspelt name, nginx's add_header
// without always) reads as "no instance stands out".
func groupByNotes(r *report.Report) []string {
	if len(r.Plan.GroupBy) == 0 || r.Totals.Requests == 0 {
		return nil
	}
	var errs int64 // requests without a response: they carry no header
	for _, n := range r.Totals.Errors {
		errs += n
	}
	responses := max(r.Totals.Requests-errs, 0)
	failed := max(r.Totals.Failed-errs, 0) // failed responses (a failing status)
	type seen struct{ n, failed int64 }
	by := map[string]seen{}
	for _, g := range r.Groups {
		s := by[strings.ToLower(g.Header)]
		by[strings.ToLower(g.Header)] = seen{s.n + g.Requests, s.failed + g.Failed}
	}
	var absent, notes []string
	for _, h := range r.Plan.GroupBy {
		switch s := by[strings.ToLower(h)]; {
		case s.n == 0:
			absent = append(absent, h)
		case failed > 0 && s.failed == 0:
			notes = append(notes, fmt.Sprintf("%s (--group-by) named an instance on %d of the %d responses but on none of the %d failed ones, so no failure could be put to an instance by it: they come from before the instances (a gateway's own error page), or the header is added to successful responses only (nginx's add_header is, unless given always).",
				h, s.n, responses, failed))
		}
	}
	if len(absent) > 0 {
		them, it := "it", "the header"
		if len(absent) > 1 {
			them, it = "them", "each header"
		}
		var note string
		if responses == 0 {
			note = fmt.Sprintf("No request got a response, so none carried %s (--group-by) and no instance could be named by %s.", words.JoinAnd(absent), them)
		} else {
			note = fmt.Sprintf("No response carried %s (--group-by): none of the %d responses could be put to an instance by %s, so no instance could stand out by it. Check the name, and that the gateway adds %s to every response: nginx's add_header skips error responses unless given always, and a location with add_header lines of its own inherits none from its server.",
				words.JoinAnd(absent), responses, them, it)
		}
		notes = append([]string{note}, notes...)
	}
	return notes
}
