package render

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// View is a report prepared for reading: the rows, labels and sentences
// every format shows, derived once.
type View struct {
	// r is the report: a page builder reads its own fields there; the
	// writers read only the page.
	r *report.Report
	// Headline says the verdict in a few words: "failures concentrate on
	// IPv6 (::1)". Hosts names the probed hosts, at most three.
	Headline, Hosts string
	MultiURL        bool // more than one URL: rows name URL and address
	Verdict         VerdictView
	Run             RunView
	Vantage         string // where the run was probed from (vantageOf)
	DNS             []DNSRow
	Families        []StatsRow // each family, then the total
	Targets         []TargetView
	Who             []WhoRow
	Timeline        TimelineView
	OverTime        OverTimeView
	Samples         []SampleGroup
	Gate            GateView
	Groups          []GroupTable // one table per instance header
	// Conns are the failing connections of each endpoint whose failures
	// stick to connections.
	Conns []ConnTable
	Logs  LogsView
	short map[string]string // each target as short as tells it apart
}

// VerdictView is the verdict, said for reading.
type VerdictView struct {
	// Status is the report's ("concentrated", "spread", "ok", "no-data"),
	// or "outage", "unfinished" (an ok with abandoned requests), "none".
	Status string
	Tone   string // "bad", "warn", "good" or "" (none)
	// Line is the verdict in one line: "63 of 150 requests failed (42.0%):
	// IPv6 (::1) answers 502; …"; "" without a verdict.
	Line     string
	Summary  string
	Suspects []SuspectRow
	Notes    []string // the further findings, each once (newNotes)
	// Level says how sure the verdict is, without a full stop: "A
	// difference counts as significant when p is below 0.00007: …".
	Level string
}

// SuspectRow is one suspect of the verdict, of any kind.
type SuspectRow struct {
	Kind    string // SuspectEndpoint, SuspectGroup or SuspectConnections
	What    string // "address", "instance" or "connections"
	Label   string // "::1", "X-Served-By: gw-3 behind 127.0.0.2", "connections of 127.0.0.2"
	URL     string // the address's short URL when the run has several
	Address string // "" for an instance
	Family  string // "IPv6"; "" for an instance
	How     string // "answers 502", "answers 502; on 127.0.0.2 ×12", …
	Failed  string // "12 of 12 requests failed"
	RateCI  string // "100.0% (76–100%)"
	P       string // "p<1e-9"
}

// GroupTable is the groups of one instance header.
type GroupTable struct {
	Header string
	Rows   []StatsRow // Label is the value; Note the addresses it answered for
}

// ConnTable is the failing connections of one endpoint.
type ConnTable struct {
	Label, Address, Target string
	Summary                string // "3 of 13 connections failed"
	Rows                   []*report.ConnRecord
	More                   int // failing connections not listed (past MaxConnRecords)
}

// GateView is the release gate said in sentences (its checks: gateRows).
type GateView struct {
	// Summary is "" when no limit was set, else e.g. "FAILED: 2 of 9 checks
	// breached, 1 not judged" or "passed: all 9 checks, each proven at 95%".
	Summary string
	Passed  bool
	// Lines say each check that did not pass.
	Lines []string
	// Prove says what run would prove the checks not proven ("" when
	// every check was proven, breached or not judged); Seen says, for
	// --fail-on-verdict, how large a fault of one address the run would
	// have seen ("" without it).
	Prove, Seen string
}

// RunView is what ran, and when.
type RunView struct {
	From, To string // UTC, to the millisecond
	Started  string // "2026-06-16 20:43:00": From to the second, for a heading
	Seconds  string // how long it sent: "30.0s", Took's first figure
	Took     string // "12.5s", or "10.0s sending, then 2.5s waiting for requests in flight"
	Length   string // "12.5 s", or for a merge with gaps "16.0 s of runs over 21.0 s"
	Ended    string // "completed" or "interrupted"
	Plan     string // the whole plan in a sentence (planWords)
	Sent     string // "150 requests (30.0/s) to 3 endpoints; 62 failed", and what was not sent
	Settled  string // when --until-verdict stopped the run early; ""
	// Pauses say each stretch in which pinprobe did not run: "3.0s at
	// 20:43:05 UTC: 6000 requests due then not sent (…)".
	Pauses  []string
	Command string // shell-quoted, secrets redacted
}

// DNSRow is one resolved host:port, and one line per change seen.
type DNSRow struct {
	Host   string // host:port
	Source string
	// Inputs are the inputs of a merge that got this same answer; nil in
	// one run's report. Where says both: "demo, in a.json and b.json".
	Inputs    []string
	Where     string
	Addresses string // or "no addresses: why"
	Failed    bool
	Changes   []DNSChangeRow
	Missed    string // the looks of --re-resolve that got no addresses in time; ""
}

// DNSChangeRow is one change of a host's addresses.
type DNSChangeRow struct {
	At   report.Time
	What string // "added 2001:db8::9; removed 2001:db8::20"
}

// StatsRow is one scope's tallies, formatted.
type StatsRow struct {
	Stats    *report.Stats // the numbers the row formats
	Label    string        // the family, the address, the value or "total"
	Family   string        // "IPv4", "IPv6"
	Failing  bool          // some request failed
	Suspect  bool          // named by the verdict
	Tag      string        // why a suspect is one: "suspect", "failing connections"
	Count    string        // endpoints in a family row
	Answers  string        // statuses and error classes, most first: "200×40 502×20 reset×3"
	P50, P99 string
	Max      string
	Note     string // an endpoint's DNS changes, what the verdict says of it
	Where    string // a group's addresses: "127.0.0.2 ×12"
	DNSNote  string // "appeared in DNS at 20:43:05.250", "left DNS at …, not probed after"
}

// TargetView is one URL's endpoints.
type TargetView struct {
	Target string
	Rows   []StatsRow
}

// WhoRow is one kind of failure and who produced it: its fingerprint,
// and what it was: "502", "reset", or "other kinds (…)".
type WhoRow struct {
	*report.Fingerprint
	What string
}

// TimelineView is failures over time, one series per endpoint.
type TimelineView struct {
	Step     float64 // seconds per bucket
	Buckets  int     // the longest series'
	From, To report.Time
	Series   []SeriesRow
}

// SeriesRow is one endpoint's requests and failures per bucket.
type SeriesRow struct {
	Label, Target     string
	Full              string // Label with the URL too when the run has several
	Failing           bool
	Suspect           bool         // the verdict names the endpoint or its connections
	Added, Removed    *report.Time // when it came into DNS, left it for good; nil
	Requests, Failed  []int64
	TotalN, TotalFail int64
}

// SampleGroup is the samples of one endpoint.
type SampleGroup struct {
	Label, Address, Target string
	Rows                   []SampleRow
}

// SampleRow is one request kept as evidence: the sample, and what the
// view says of it.
type SampleRow struct {
	*report.Sample
	Result      string   // status, or error class: raw text, for a code block
	Remote      string   // the sample's, else its endpoint's address and port
	Conn        string   // "new", "reused" or "none"
	Correlation []string // the response's own correlation IDs, "Name: value"
	HeaderLines []string // "Name: value", sorted, secrets redacted
}

// NewView prepares r for reading.
func NewView(r *report.Report) *View {
	v := &View{r: r, Hosts: titleHosts(r), Headline: headlineOf(r), Vantage: vantageOf(r), short: report.ShortURLs(r)}
	targets := report.TargetsOf(r)
	v.MultiURL = len(targets) > 1
	v.verdict(r)
	v.run(r)
	v.dns(r)
	v.families(r)
	v.endpoints(r, targets)
	v.who(r)
	v.timeline(r)
	v.samples(r)
	v.gate(r)
	v.groups(r)
	v.conns(r)
	v.logs(r)
	v.overTime(r)
	return v
}

// verdict says the verdict: its suspects of every kind, its notes and its
// slow scopes.
func (v *View) verdict(r *report.Report) {
	vd := &r.Verdict
	v.Verdict = VerdictView{Status: vd.Status, Summary: vd.Summary, Notes: vd.Notes}
	v.Verdict.Notes = newNotes(&v.Verdict)
	switch vd.Status {
	case "":
		v.Verdict.Status = "none"
	case report.VerdictConcentrated:
		v.Verdict.Tone = "bad"
		if vd.Outage {
			v.Verdict.Status = "outage"
		}
	case report.VerdictSpread:
		v.Verdict.Tone = "warn"
		if vd.Outage {
			v.Verdict.Status, v.Verdict.Tone = "outage", "bad"
		}
	case report.VerdictOK:
		v.Verdict.Tone = "good"
		if r.Totals.Abandoned > 0 {
			// None of the requests that finished failed, but some never
			// did: their outcome is unknown, and a backend that holds
			// requests may be failing them. Not an OK to act on.
			v.Verdict.Status, v.Verdict.Tone = "unfinished", "warn"
		}
	}
	if r.NotProbed == "" { // a verdict that tested nothing has no level to speak of
		v.Verdict.Level = words.Capitalize(levelWords(vd.Level))
	}
	v.Verdict.Line = verdictLine(r)
	for _, s := range vd.Suspects {
		row := SuspectRow{Kind: s.Kind, How: s.How,
			Failed: fmt.Sprintf("%d of %d request%s failed", s.Failed, s.Requests, words.Plural(int(s.Requests))),
			RateCI: rateCI(s.Failed, s.Requests, s.FailureRate), P: words.PValue(s.P)}
		row.URL, row.Address, row.Family = v.urlOf(s.Target), s.Address, words.FamilyName(s.Family)
		switch s.Kind {
		case report.SuspectGroup:
			row.What, row.Label = "instance", s.Group
			if s.Address != "" {
				row.Label += " behind " + s.Address
			}
			if g := r.FindGroup(s.Group); g != nil {
				row.How += "; on " + counts(g.Addresses, " ×")
			}
			if s.Connections > 0 { // its failing connections, its evidence
				row.How += fmt.Sprintf("; %d of %d connections failed", s.FailingConnections, s.Connections)
			}
		case report.SuspectConnections:
			row.What, row.Label = "connections", "connections of "+s.Address
			row.How += fmt.Sprintf("; %d of %d connections failed", s.FailingConnections, s.Connections)
		default:
			row.Kind, row.What, row.Label = report.SuspectEndpoint, "address", s.Address
		}
		v.Verdict.Suspects = append(v.Verdict.Suspects, row)
	}
}

// headlineOf is a verdict's headline, or its status in a few words when it
// names no suspect.
func headlineOf(r *report.Report) string {
	v := &r.Verdict
	switch v.Status {
	case report.VerdictOK:
		return "no failures"
	case report.VerdictNoData:
		if r.NotProbed != "" {
			return "nothing probed"
		}
		return "no data"
	case report.VerdictSpread:
		if v.Headline != "" { // an outage, or a vantage that sees them fail in a merge
			return v.Headline
		}
		return "failures not attributable to one address"
	case report.VerdictConcentrated:
		if v.Headline != "" {
			return v.Headline
		}
		return "failures concentrate"
	case "":
		return "no verdict"
	}
	return v.Status
}

// verdictLine is VerdictView.Line: the failures counted, then the
// headline, which names every suspect.
func verdictLine(r *report.Report) string {
	vd, t := &r.Verdict, &r.Totals
	failed := fmt.Sprintf("%d of %d request%s failed", t.Failed, t.Requests, words.Plural(int(t.Requests)))
	abandoned := ""
	if t.Abandoned > 0 {
		abandoned = fmt.Sprintf(", %d more abandoned in flight", t.Abandoned)
	}
	switch vd.Status {
	case "":
		return ""
	case report.VerdictNoData:
		if r.NotProbed != "" {
			return "nothing was probed: " + strings.TrimSuffix(r.NotProbed, ".")
		}
		if t.Abandoned > 0 {
			return fmt.Sprintf("no request finished; %d abandoned in flight", t.Abandoned)
		}
		return "no request was sent"
	case report.VerdictOK:
		if t.Abandoned > 0 {
			return fmt.Sprintf("%d of %d finished request%s failed; %d more were still unanswered when the report was written (abandoned): how they ended is unknown",
				t.Failed, t.Requests, words.Plural(int(t.Requests)), t.Abandoned)
		}
		return failed
	}
	return failed + " (" + pct(t.FailureRate, t.Requests) + ")" + abandoned + ": " + headlineOf(r)
}

// levelWords says a verdict's level: "a difference counts as significant
// when p is below 0.000083: 0.001 split over …"; "" without one.
func levelWords(l report.Level) string {
	if l.Alpha <= 0 {
		return ""
	}
	alpha := words.AlphaValue(l.Alpha)
	if l.Looks > 1 {
		// The looks' share comes before the split, which it precedes.
		looks := fmt.Sprintf("0.001 spent over up to %d looks of --until-verdict", l.Looks)
		if l.Last {
			looks = fmt.Sprintf("half of 0.001, the other half spent over up to %d looks of --until-verdict", l.Looks)
		}
		alpha += " (" + looks + ")"
	}
	return fmt.Sprintf("a difference counts as significant when p is below %s: %s split over the %d finding%s the verdict could make (Bonferroni)",
		words.AlphaValue(l.Each), alpha, l.Tests, words.Plural(l.Tests))
}

// slowScope names a slow finding's scope ("address", "::1", its URL when
// the run has several) and what it was compared with.
func (v *View) slowScope(f *report.SlowFinding) (what, label, url, against string) {
	switch f.Kind {
	case report.TestGroup:
		return "instance", f.Header + ": " + f.Value, "", "the other values of " + f.Header
	case report.TestEndpoint:
		return "address", f.Address, v.urlOf(f.Target), "the other addresses of its URL"
	}
	return "scope", f.Scope, "", "the rest"
}

func (v *View) groups(r *report.Report) {
	suspect := map[string]bool{}
	for _, s := range r.Verdict.Suspects {
		if s.Kind == report.SuspectGroup {
			suspect[s.Group] = true
		}
	}
	for i := range r.Groups {
		g := &r.Groups[i]
		if len(v.Groups) == 0 || v.Groups[len(v.Groups)-1].Header != g.Header {
			v.Groups = append(v.Groups, GroupTable{Header: g.Header})
		}
		row := statsRow(g.Value, &g.Stats)
		if suspect[g.Header+": "+g.Value] {
			row.Suspect, row.Tag = true, "suspect"
		}
		row.Where = counts(g.Addresses, " ×")
		t := &v.Groups[len(v.Groups)-1]
		t.Rows = append(t.Rows, row)
	}
	for _, t := range v.Groups {
		byValue(t.Rows, func(r StatsRow) string { return r.Label })
	}
}

// byValue puts an instance header's rows in the order a reader looks for
// them (gw-1, gw-2, …, gw-10), not by their counts (gw-2, gw-3, gw-4,
// gw-1), and the values past the cap last.
func byValue[R any](rows []R, value func(R) string) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := value(rows[i]), value(rows[j])
		if (a == report.OtherValues) != (b == report.OtherValues) {
			return b == report.OtherValues
		}
		return naturalLess(a, b)
	})
}

// naturalLess orders strings as a person would: runs of digits by their
// value ("gw-2" before "gw-10"), the rest byte by byte.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			if da != db { // "01" and "1": the shorter first, to be total
				return da < db
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

// digitRun is how many ASCII digits s starts with.
func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

func (v *View) conns(r *report.Report) {
	for _, s := range r.Verdict.Suspects {
		if !failingConns(&s) {
			continue
		}
		e := r.FindEndpoint(s.Target, s.Address)
		if e == nil || e.Conns == nil {
			continue
		}
		failing, all := s.FailingConnections, s.Connections
		if s.Kind == report.SuspectGroup {
			// An instance's evidence: its endpoint's connections.
			failing, all = e.Conns.Failing()
		}
		t := ConnTable{Label: v.Label(e), Address: e.Address, Target: e.Target,
			Summary: fmt.Sprintf("%d of %d connections failed", failing, all)}
		for i := range e.Conns.Records {
			if c := &e.Conns.Records[i]; c.Failed > 0 {
				t.Rows = append(t.Rows, c)
			}
		}
		if e.Conns.Overflow.Failed > 0 {
			t.More = int(e.Conns.Overflow.Connections)
		}
		v.Conns = append(v.Conns, t)
	}
}

// failingConns reports whether s names failing connections of an
// address: a connections suspect, or an instance whose failures are those
// of its address's failing connections (their counts are its evidence).
func failingConns(s *report.Suspect) bool {
	return s.Kind == report.SuspectConnections || s.Kind == report.SuspectGroup && s.Connections > 0 && s.Address != ""
}

func (v *View) gate(r *report.Report) {
	if len(r.Thresholds) == 0 {
		return
	}
	for i := range r.Thresholds {
		t := &r.Thresholds[i]
		if !t.OK {
			v.Gate.Lines = append(v.Gate.Lines, thresholdWords(t))
		}
		if t.Name == "fail-on-verdict" && t.Value != nil {
			v.Gate.Seen = seenWords(t, r)
		}
	}
	v.Gate.Passed, v.Gate.Summary = !report.Breached(r.Thresholds), report.GateSummary(r.Thresholds)
	if !v.Gate.Passed {
		v.Gate.Prove = proveWords(r.Thresholds, r.Plan)
	}
}

// gateRows is a row per check, those that did not pass first; an
// endpoint's scope is said shortly too, by its address (and URL).
func gateRows(v *View) []Row {
	where := map[string]*report.Endpoint{} // an endpoint's scope, as CheckLimits names it
	for i := range v.r.Endpoints {
		e := &v.r.Endpoints[i]
		where["endpoint "+e.Address+" ("+e.Target+")"] = e
	}
	var rows []Row
	for i := range v.r.Thresholds {
		t := &v.r.Thresholds[i]
		short, value, bound := t.Scope, "-", "-"
		if e := where[t.Scope]; e != nil {
			short = v.named(e.Address, e.Target)
		}
		if t.Value != nil {
			value = thresholdValue(t, *t.Value)
		}
		if t.Bound != nil {
			bound = "≤ " + boundValue(t, *t.Bound)
		}
		rows = append(rows, Row{Failing: !t.OK, Cells: []string{t.Name, t.Scope, strings.TrimSpace(short), value, bound, thresholdValue(t, t.Limit),
			cmp.Or(report.ThresholdResult(t.Status), "-")}})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Failing && !rows[j].Failing })
	return rows
}

func (v *View) run(r *report.Report) {
	took := fmt.Sprintf("%.1fs", r.DurationS)
	seconds := took
	if r.SendS > 0 && r.DurationS-r.SendS >= 0.5 {
		seconds = fmt.Sprintf("%.1fs", r.SendS)
		took = fmt.Sprintf("%.1fs sending, then %.1fs waiting for requests in flight", r.SendS, r.DurationS-r.SendS)
	}
	// A merge of runs with gaps between them covered less time than its
	// window spans: both are said, so "21 s" of window and "16.0 s" agree.
	length := mdSecs(r.DurationS)
	if s := r.EndedAt.Sub(r.StartedAt.Time).Seconds(); len(r.Inputs) > 0 && s-r.DurationS >= 0.5 {
		took = fmt.Sprintf("%.1fs of runs, over a window of %.1fs", r.DurationS, s)
		length += " of runs over " + mdSecs(s)
	}
	t := &r.Totals
	v.Run = RunView{
		From: utc(r.StartedAt), To: utc(r.EndedAt), Started: stamp(r.StartedAt.Time),
		Seconds: seconds, Length: length, Took: took, Ended: ended(r.Interrupted), Plan: planWords(&r.Plan), Command: shellJoin(r.Command),
	}
	rps, eps := strconv.FormatFloat(t.RPS, 'f', 1, 64), fmt.Sprintf("%d endpoint%s", len(r.Endpoints), words.Plural(len(r.Endpoints)))
	sent := fmt.Sprintf("%d request%s (%s/s) to %s; %d failed", t.Requests, words.Plural(int(t.Requests)), rps, eps, t.Failed)
	if t.Abandoned > 0 {
		// The rate is of every request sent, the abandoned too.
		n := t.Requests + t.Abandoned
		sent = fmt.Sprintf("%d request%s (%s/s) to %s: %d finished, %d of them failed, and %d %s abandoned: still in flight when a second interrupt ended the wait, so how they ended is unknown",
			n, words.Plural(int(n)), rps, eps, t.Requests, t.Failed, t.Abandoned, words.Agree(int(t.Abandoned), "was", "were"))
	}
	if t.Dropped > 0 {
		sent += fmt.Sprintf("; %d more were due but not sent (dropped) because an endpoint already had %d request%s in flight", t.Dropped, r.Plan.Concurrency, words.Plural(r.Plan.Concurrency))
	}
	if t.ClientErrors > 0 {
		sent += fmt.Sprintf("; %d could not be sent by this machine (client errors)", t.ClientErrors)
	}
	v.Run.Sent = sent
	for _, p := range r.Pauses {
		v.Run.Pauses = append(v.Run.Pauses, fmt.Sprintf("%.1fs at %s UTC: %d request%s due then not sent (pinprobe itself did not run: the process was stopped, as by Ctrl-Z, or the machine suspended)",
			p.DurationS, clock(p.At.Time), p.Requests, words.Plural(int(p.Requests))))
	}
	if s := r.Settled; s != nil {
		v.Run.Settled = fmt.Sprintf("--until-verdict stopped the run once the verdict was settled: at %s UTC, after %d request%s (look %d of %d, at level %s)",
			words.Clock(s.At.Time), s.Requests, words.Plural(int(s.Requests)), s.Look, s.MaxLooks, words.AlphaValue(s.Alpha))
		if n := r.Totals.Requests - s.Requests; n > 0 {
			// Said beside the run's own count, which the requests in
			// flight at the look joined when they finished.
			v.Run.Settled += fmt.Sprintf("; the run's %d requests include the %d in flight then", r.Totals.Requests, n)
		}
		if s.Suspects > 0 {
			v.Run.Settled += fmt.Sprintf(": %d fault%s proven at that level; %d other address%s and instance%s shown to fail less than %s; every other address on %d connections or more, enough to reach an instance taking one connection in four with probability %s",
				s.Suspects, words.Plural(s.Suspects), s.Bounded, map[bool]string{true: "", false: "es"}[s.Bounded == 1], words.Plural(s.Bounded),
				words.PctRate(s.Tolerance), s.MinConnections, words.PctRate(s.Reach))
		}
	}
}

// ended says how a run ended.
func ended(interrupted bool) string {
	if interrupted {
		return "interrupted"
	}
	return "completed"
}

func (v *View) dns(r *report.Report) {
	for _, d := range r.DNS {
		row := DNSRow{Host: hostPort(d.Host, d.Port), Source: d.Source, Addresses: strings.Join(d.Addresses, ", ")}
		if d.Error != "" {
			row.Addresses, row.Failed = "no addresses: "+d.Error, true
		}
		for _, c := range d.Changes {
			var what []string
			if len(c.Added) > 0 {
				what = append(what, "added "+strings.Join(c.Added, ", "))
			}
			if len(c.Removed) > 0 {
				what = append(what, "removed "+strings.Join(c.Removed, ", "))
			}
			row.Changes = append(row.Changes, DNSChangeRow{At: c.At, What: strings.Join(what, "; ")})
		}
		if m := d.Missed; m != nil {
			when := "at " + clock(m.First.Time)
			if m.Looks > 1 {
				when = clock(m.First.Time) + "–" + clock(m.Last.Time)
			}
			row.Missed = fmt.Sprintf("%d of %d look%s of --re-resolve got no addresses in time, %s UTC (%s): a change then went unseen",
				m.Looks, d.Looks, words.Plural(int(d.Looks)), when, m.Error)
		}
		// The inputs of a merge that saw the same answer share one row,
		// which names them: two identical lines named neither.
		if d.Input != "" {
			same := func(r DNSRow) bool {
				return r.Inputs != nil && r.Host == row.Host && r.Source == row.Source && r.Addresses == row.Addresses && r.Failed == row.Failed &&
					len(r.Changes)+len(row.Changes) == 0 && r.Missed+row.Missed == ""
			}
			if i := slices.IndexFunc(v.DNS, same); i >= 0 {
				v.DNS[i].Inputs = append(v.DNS[i].Inputs, d.Input)
				continue
			}
			row.Inputs = []string{d.Input}
		}
		v.DNS = append(v.DNS, row)
	}
	for i := range v.DNS {
		d := &v.DNS[i]
		d.Where = d.Source
		if len(d.Inputs) > 0 {
			d.Where += ", in " + words.JoinAnd(words.CapItems(slices.Clone(d.Inputs), 4))
		}
	}
}

// statsRow formats s under label.
func statsRow(label string, s *report.Stats) StatsRow {
	return StatsRow{
		Stats: s, Label: label, Failing: s.Failed > 0,
		Answers: answers(s),
		P50:     words.Latency(s.LatencyMS.P50, s.Requests),
		P99:     words.Latency(s.LatencyMS.P99, s.Requests),
		Max:     words.Latency(s.LatencyMS.Max, s.Requests),
	}
}

// answers merges statuses and error classes, most first: "200×40 502×20 reset×3".
func answers(s *report.Stats) string {
	m := make(map[string]int64, len(s.Status)+len(s.Errors))
	maps.Copy(m, s.Status)
	maps.Copy(m, s.Errors)
	return counts(m, "×")
}

func (v *View) families(r *report.Report) {
	endpoints := map[string]int{}
	for _, e := range r.Endpoints {
		endpoints[e.Family]++
	}
	for _, fam := range words.SortedKeys(r.Families) {
		row := statsRow(words.FamilyName(fam), r.Families[fam])
		row.Family, row.Count = words.FamilyName(fam), strconv.Itoa(endpoints[fam])
		v.Families = append(v.Families, row)
	}
	total := statsRow("total", &r.Totals)
	total.Count, total.Failing = strconv.Itoa(len(r.Endpoints)), false
	v.Families = append(v.Families, total)
}

// blame is what the verdict says of an endpoint: suspect, or its
// connections.
type blame struct{ endpoint, conns *report.Suspect }

// blamed is what the verdict says of each endpoint it names, by target
// and address.
func blamed(r *report.Report) map[string]*blame {
	blamed := map[string]*blame{}
	for i := range r.Verdict.Suspects {
		s := &r.Verdict.Suspects[i]
		if s.Kind == report.SuspectGroup && !failingConns(s) {
			continue
		}
		b := blamed[s.Target+" "+s.Address]
		if b == nil {
			b = &blame{}
			blamed[s.Target+" "+s.Address] = b
		}
		if failingConns(s) {
			b.conns = s
		} else {
			b.endpoint = s
		}
	}
	return blamed
}

func (v *View) endpoints(r *report.Report, targets []string) {
	blamed := blamed(r)
	// Each target's endpoints, in report order, found in one pass (not a
	// loop over every endpoint for each target: quadratic).
	byTarget := make(map[string][]int, len(targets))
	for i := range r.Endpoints {
		byTarget[r.Endpoints[i].Target] = append(byTarget[r.Endpoints[i].Target], i)
	}
	for _, target := range targets {
		tv := TargetView{Target: target}
		for _, i := range byTarget[target] {
			e := &r.Endpoints[i]
			row := statsRow(e.Address, &e.Stats)
			row.Family = words.FamilyName(e.Family)
			var note []string
			if b := blamed[e.Target+" "+e.Address]; b != nil {
				row.Suspect = true
				if s := b.endpoint; s != nil {
					row.Tag = "suspect"
					note = append(note, "named by the verdict ("+words.PValue(s.P)+")")
				}
				if s := b.conns; s != nil {
					if row.Tag == "" {
						row.Tag = "failing connections"
					}
					if s.Kind == report.SuspectGroup {
						note = append(note, fmt.Sprintf("failures stick to some of its connections (%d of %d failed), those of %s", s.FailingConnections, s.Connections, s.Group))
					} else {
						note = append(note, fmt.Sprintf("failures stick to some of its connections (%d of %d failed, %s)", s.FailingConnections, s.Connections, words.PValue(s.P)))
					}
				}
			}
			row.DNSNote = dnsHistory(e, func(t report.Time) string { return words.Clock(t.Time) })
			if long := dnsHistory(e, utc); long != "" {
				note = append(note, long)
			}
			row.Note = strings.Join(note, "; ")
			tv.Rows = append(tv.Rows, row)
		}
		v.Targets = append(v.Targets, tv)
	}
}

// Label names endpoint e for a row outside its URL's own table: its address,
// and its URL too when the run has several (see ShortURL).
func (v *View) Label(e *report.Endpoint) string { return v.named(e.Address, e.Target) }

// named is address of target, with the URL too when the run has several.
func (v *View) named(address, target string) string {
	if !v.MultiURL {
		return address
	}
	return address + " " + v.short[target]
}

// urlOf is target's short URL when the run has several; "" otherwise.
func (v *View) urlOf(target string) string {
	if !v.MultiURL {
		return ""
	}
	return v.short[target]
}

// dnsHistory says when e's address came and went during the run, times
// written by when: "in DNS from 20:43:05", "left DNS at 20:43:06, back at
// 20:43:09", "…, not probed after"; "" when it stayed throughout.
func dnsHistory(e *report.Endpoint, when func(report.Time) string) string {
	var parts []string
	if e.AddedAt != nil {
		parts = append(parts, "appeared in DNS at "+when(*e.AddedAt))
	}
	for _, h := range e.DNSHistory {
		switch h.Event {
		case "removed":
			parts = append(parts, "left DNS at "+when(h.At))
		case "returned":
			parts = append(parts, "back at "+when(h.At))
		}
	}
	if e.RemovedAt != nil {
		if len(e.DNSHistory) == 0 { // a report written before dns_history
			parts = append(parts, "left DNS at "+when(*e.RemovedAt))
		}
		parts[len(parts)-1] += ", not probed after"
	}
	return strings.Join(parts, ", ")
}

func (v *View) who(r *report.Report) {
	for i := range r.Fingerprints {
		f := &r.Fingerprints[i]
		w := WhoRow{Fingerprint: f, What: f.Error}
		switch {
		case f.Merged:
			w.What = "other kinds (past the first 64, counted together)"
		case f.Status != 0:
			w.What = strconv.Itoa(f.Status)
		}
		v.Who = append(v.Who, w)
	}
}

func (v *View) timeline(r *report.Report) {
	tl := r.Timeline
	n := 0
	for _, s := range tl.Series {
		n = max(n, len(s.Requests))
	}
	v.Timeline = TimelineView{Step: tl.IntervalS, Buckets: n, From: tl.Start, To: report.Time{Time: tl.Start.Add(report.SecondsDuration(tl.IntervalS * float64(n)))}}
	blamed, eps := blamed(r), make(map[string]*report.Endpoint, len(r.Endpoints))
	for i := range r.Endpoints {
		eps[r.Endpoints[i].Target+" "+r.Endpoints[i].Address] = &r.Endpoints[i]
	}
	for _, s := range tl.Series {
		row := SeriesRow{Label: s.Address, Target: s.Target, Full: v.named(s.Address, s.Target), Requests: s.Requests, Failed: s.Failed,
			Suspect: blamed[s.Target+" "+s.Address] != nil}
		if e := eps[s.Target+" "+s.Address]; e != nil {
			row.Failing = e.Failed > 0
			row.Added, row.Removed = e.AddedAt, e.RemovedAt
		}
		for j := range s.Requests {
			row.TotalN += s.Requests[j]
			row.TotalFail += s.Failed[j]
		}
		v.Timeline.Series = append(v.Timeline.Series, row)
	}
}

// correlationHeaders are response headers that name a request in a
// gateway's or CDN's own logs, in the order samples show them.
var correlationHeaders = []string{"X-Request-Id", "X-Azure-Ref", "X-Ms-Request-Id", "X-Amzn-Trace-Id",
	"X-Amz-Cf-Id", "Cf-Ray", "X-Cache", "Via", "Traceparent"}

func (v *View) samples(r *report.Report) {
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		if len(e.Samples) == 0 {
			continue
		}
		g := SampleGroup{Label: v.Label(e), Address: e.Address, Target: e.Target}
		for j := range e.Samples {
			s := &e.Samples[j]
			row := SampleRow{Sample: s, Result: cmp.Or(s.Class, "error"), Remote: cmp.Or(s.Remote, hostPort(e.Address, e.Port))}
			if s.Status != 0 {
				row.Result = strconv.Itoa(s.Status)
			}
			row.Conn = "new"
			switch {
			case s.Reused:
				row.Conn = "reused"
			case s.Local == "" && s.Status == 0:
				row.Conn = "none"
			}
			for _, k := range words.SortedKeys(s.Headers) {
				row.HeaderLines = append(row.HeaderLines, k+": "+s.Headers[k])
			}
			for _, h := range correlationHeaders {
				for k, val := range s.Headers {
					if strings.EqualFold(k, h) && val != s.RequestID { // an echo of pinprobe's own says nothing new
						row.Correlation = append(row.Correlation, k+": "+val)
					}
				}
			}
			g.Rows = append(g.Rows, row)
		}
		v.Samples = append(v.Samples, g)
	}
}

// headerBlock is every sample's response headers as one block of text,
// each sample under a line that names it: "# <request ID> · <sent at> ·
// <result> · <protocol>".
func headerBlock(rows []SampleRow) string {
	var b strings.Builder
	for i, s := range rows {
		if i > 0 {
			b.WriteString("\n")
		}
		id := s.RequestID
		if id == "" {
			id = "(no request ID)"
		}
		fmt.Fprintf(&b, "# %s · %s · %s", id, utc(s.At), s.Result)
		if s.Proto != "" {
			b.WriteString(" · " + s.Proto)
		}
		b.WriteString("\n")
		if s.Error != "" {
			b.WriteString("error: " + s.Error + "\n")
		}
		for _, h := range s.HeaderLines {
			b.WriteString(h + "\n")
		}
		if s.Truncated {
			b.WriteString("(more headers came: pinprobe keeps 64, each value cut at 512 bytes, 8 KiB in all)\n")
		}
	}
	return b.String()
}

// testsHow says how the verdict's tests were made.
func testsHow(v *View) string {
	how := "Each address family is compared with the other, each URL (when there are several) with the other URLs, and each endpoint with the other addresses of its URL, by a one-sided Fisher exact test (does it fail more often than the rest?)."
	kinds := map[string]bool{}
	for _, t := range v.r.Verdict.Tests {
		kinds[t.Kind] = true
	}
	if kinds[report.TestGroup] {
		how += " Inside the addresses, each instance (a value of an instance header) is compared with the other instances of its header the same way, and with the other instances on the same addresses (stratified by address): an instance whose responses are exactly an address's is that address."
	}
	if kinds[report.TestConnections] {
		how += " The connections of an address are judged by whether a request that follows a failure on its own connection fails more often than one that follows successes only (a stratified exact test), and then whether that holds among requests sent at the same moment on different connections: failures that follow time fail every connection open then."
	}
	if l := v.Verdict.Level; l != "" {
		how += " " + l + "."
	}
	return how
}

// newNotes is the verdict's notes as every format lists them: each once,
// and none that only repeats, sentence for sentence, what the summary
// above it says of the suspects.
func newNotes(vd *VerdictView) []string {
	summary := strings.Join(strings.Fields(vd.Summary), " ")
	var out []string
	for _, n := range vd.Notes {
		n = strings.Join(strings.Fields(n), " ")
		if n == "" || slices.Contains(out, n) {
			continue
		}
		repeated := summary != ""
		for _, sentence := range strings.Split(n, ". ") {
			if sentence = strings.TrimSuffix(sentence, "."); !strings.Contains(summary, sentence) {
				repeated = false
				break
			}
		}
		if !repeated {
			out = append(out, n)
		}
	}
	return out
}

// phaseWords formats a phase's p50 / p99, or why it has none.
func phaseWords(e *report.Endpoint, p report.Phase) string {
	switch {
	case e.Requests == 0:
		return "-"
	case p.Count > 0:
		return words.Latency(p.P50, p.Count) + " / " + words.Latency(p.P99, p.Count)
	case e.Connections["fresh"].Requests == 0:
		return "— (reused connections)"
	}
	return "— (no connection completed)"
}

// bodyLimit is how much of a body the document shows: what pinprobe keeps.
const bodyLimit = 512

// vantageOf is where a run was probed from, or the one vantage of every
// run of a merge; "" when none is named.
func vantageOf(r *report.Report) string {
	switch {
	case r.Vantage != "":
		return r.Vantage
	case len(r.Vantages) == 1 && r.Vantages[0].Name != "":
		return r.Vantages[0].Name + " (every run)"
	}
	return ""
}
