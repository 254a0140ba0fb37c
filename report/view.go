package report

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// View is a report prepared for reading. Every renderer (text, Markdown,
// HTML) shows these rows, labels and sentences and derives none of its own,
// so the formats say the same thing; a new format is a new view of this.
type View struct {
	R *Report
	// Headline says the verdict in a few words: "failures concentrate on
	// IPv6 (::1)". Hosts names the probed hosts, at most three.
	Headline, Hosts string
	// MultiURL is set when the run probed more than one URL: rows are then
	// labelled by URL and address.
	MultiURL bool
	Run      RunView
	DNS      []DNSRow
	Families []StatsRow // each family, then the total
	Targets  []TargetView
	Who      []WhoRow
	Phases   []PhaseRow
	Timeline TimelineView
	Samples  []SampleGroup
	Tests    []TestRow
	Gate     GateView
	// Groups are the responses by instance header, one table per header.
	Groups []GroupTable
	// Conns lists, for each endpoint whose failures stick to connections,
	// the connections that failed: their client ports find the instance in
	// the gateway's logs.
	Conns []ConnTable
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
	Rows                   []ConnRow
	More                   int // failing connections not listed (past MaxConnRecords)
}

// ConnRow is one connection.
type ConnRow struct {
	Port        uint16
	First, Last string // UTC, to the millisecond
	Requests    int64
	Failed      int64
}

// GateView is the release gate: every threshold check, and a summary.
type GateView struct {
	// Summary is "" when no limit was set, else e.g. "FAILED: 2 of 9 checks
	// breached, 1 not judged" or "passed: all 9 checks".
	Summary string
	Passed  bool
	// Lines say each check that did not pass, then (in Checks) every check.
	Lines  []string
	Checks []ThresholdRow
}

// ThresholdRow is one check.
type ThresholdRow struct {
	Name, Scope, Limit, Value, Status string
	OK                                bool
}

// RunView is what ran, and when.
type RunView struct {
	Version     string
	From, To    string // UTC, to the millisecond
	Took        string // "12.5s", or "10.0s sending, then 2.5s waiting for requests in flight"
	Planned     string // "20 req/s planned", or "max rate (closed model)"
	Achieved    string // "10.4 req/s"
	Requests    int64
	Failed      int64
	Dropped     int64
	Endpoints   int
	Interrupted bool
	Command     string // shell-quoted, secrets redacted
}

// DNSRow is one resolved host:port, and one line per change seen.
type DNSRow struct {
	Host      string // host:port
	Source    string
	Addresses string // or "no addresses: why"
	Failed    bool
	Changes   []string // "20:43:05: added 2001:db8::9; removed 2001:db8::20"
}

// StatsRow is one scope's tallies, formatted.
type StatsRow struct {
	Label    string // the family, the address, or "total"
	Family   string // "IPv4", "IPv6"
	Target   string // the endpoint's URL, "" for families
	Failing  bool   // some request failed
	Suspect  bool   // named by the verdict
	Count    string // endpoints in a family row
	Requests string
	Failed   string
	Rate     string // "4.5%"
	RateCI   string // "4.5% (1.2–9.8%)"
	Answers  string // statuses and error classes, most first: "200×40 502×20 reset×3"
	Status   string // "200×40 502×20"
	Errors   string // "reset×3"
	P50, P99 string
	Max      string
	Dropped  string
	Note     string // DNS changes, the verdict's p
	DNSNote  string // "appeared in DNS at 20:43:05.250", "left DNS at …, not probed after"
	n        int64
}

// TargetView is one URL's endpoints.
type TargetView struct {
	Target string
	Rows   []StatsRow
}

// WhoRow is one kind of failure and who produced it.
type WhoRow struct {
	Count     int64
	What      string // "502", "reset", or "other kinds (…)"
	Server    string // the Server header, "" when none
	Producer  string // "Azure Application Gateway", "" when not recognised
	BodyHash  string
	Body      string // first bytes of one such body
	Where     string // "::1 ×20, 127.0.0.2 ×3"
	Fresh     int64
	Reused    int64
	Addresses map[string]int64
}

// PhaseRow is one endpoint's connect, TLS and first-byte times.
type PhaseRow struct {
	Label, Target       string
	Failing             bool
	Connect, TLS, TTFB  string // "0.23ms / 0.97ms", "-" when none
	FreshFailed, Fresh  int64
	ReusedFailed, Reuse int64
	PlainHTTP           bool
}

// TimelineView is failures over time, one series per endpoint.
type TimelineView struct {
	Step     float64 // seconds per bucket
	From, To Time
	Series   []SeriesRow
}

// SeriesRow is one endpoint's requests and failures per bucket.
type SeriesRow struct {
	Label, Target     string
	Failing           bool
	Requests, Failed  []int64
	TotalN, TotalFail int64
}

// SampleGroup is the samples of one endpoint.
type SampleGroup struct {
	Label, Address, Target string
	Rows                   []SampleRow
}

// SampleRow is one request kept as evidence.
type SampleRow struct {
	Failed    bool
	At        string // UTC, to the millisecond
	Result    string // status, or error class
	Error     string
	RequestID string // the X-Request-Id pinprobe sent
	// Correlation lists the response's own correlation IDs, "Name: value".
	Correlation []string
	Latency     string
	Local       string
	Remote      string
	Conn        string // "new", "reused" or "none"
	Proto       string
	Headers     []string // "Name: value", sorted, secrets redacted
	Body        string
}

// TestRow is one comparison the verdict made.
type TestRow struct {
	Scope       string
	Failed      string // "3 of 40"
	RateCI      string
	Rest        string // "0 of 80 (0.0%)"
	P           string
	Significant bool
}

// NewView prepares r for reading.
func NewView(r *Report) *View {
	v := &View{R: r, Hosts: titleHosts(r), Headline: verdictWords(r)}
	targets := targetsOf(r)
	v.MultiURL = len(targets) > 1
	v.run(r)
	v.dns(r)
	v.families(r)
	v.endpoints(r, targets)
	v.who(r)
	v.phases(r)
	v.timeline(r)
	v.samples(r)
	v.tests(r)
	v.gate(r)
	v.groups(r)
	v.conns(r)
	return v
}

func (v *View) groups(r *Report) {
	suspect := map[string]bool{}
	for _, s := range r.Verdict.Suspects {
		if s.Kind == SuspectGroup {
			suspect[s.Group] = true
		}
	}
	for _, g := range r.Groups {
		if len(v.Groups) == 0 || v.Groups[len(v.Groups)-1].Header != g.Header {
			v.Groups = append(v.Groups, GroupTable{Header: g.Header})
		}
		row := statsRow(g.Value, &g.Stats)
		row.Suspect = suspect[g.Header+": "+g.Value]
		row.Note = "on " + counts(g.Addresses, " ×")
		t := &v.Groups[len(v.Groups)-1]
		t.Rows = append(t.Rows, row)
	}
}

func (v *View) conns(r *Report) {
	for _, s := range r.Verdict.Suspects {
		if s.Kind != SuspectConnections {
			continue
		}
		e := r.endpoint(s.Target, s.Address)
		if e == nil || e.Conns == nil {
			continue
		}
		t := ConnTable{Label: v.Label(e), Address: e.Address, Target: e.Target,
			Summary: fmt.Sprintf("%d of %d connections failed", s.FailingConnections, s.Connections)}
		for _, c := range e.Conns.Records {
			if c.Failed > 0 {
				t.Rows = append(t.Rows, ConnRow{Port: c.LocalPort, First: utc(c.First), Last: utc(c.Last), Requests: c.Requests, Failed: c.Failed})
			}
		}
		if e.Conns.Overflow.Failed > 0 {
			t.More = int(e.Conns.Overflow.Connections)
		}
		v.Conns = append(v.Conns, t)
	}
}

func (v *View) gate(r *Report) {
	if len(r.Thresholds) == 0 {
		return
	}
	breached, unjudged := 0, 0
	for i := range r.Thresholds {
		t := &r.Thresholds[i]
		row := ThresholdRow{Name: t.Name, Scope: t.Scope, Limit: thresholdValue(t, t.Limit), Value: "-", Status: t.Status, OK: t.OK}
		if t.Value != nil {
			row.Value = thresholdValue(t, *t.Value)
		}
		switch t.Status {
		case ThresholdBreached:
			breached++
		case ThresholdNotJudged:
			unjudged++
		}
		if !t.OK {
			v.Gate.Lines = append(v.Gate.Lines, thresholdWords(t))
		}
		v.Gate.Checks = append(v.Gate.Checks, row)
	}
	n := len(r.Thresholds)
	v.Gate.Passed = breached+unjudged == 0
	switch {
	case v.Gate.Passed:
		v.Gate.Summary = fmt.Sprintf("passed: all %d check%s", n, Plural(n))
	case unjudged == 0:
		v.Gate.Summary = fmt.Sprintf("FAILED: %d of %d check%s breached", breached, n, Plural(n))
	default:
		v.Gate.Summary = fmt.Sprintf("FAILED: %d of %d check%s breached, %d not judged (no request reached the scope)", breached, n, Plural(n), unjudged)
	}
}

func (v *View) run(r *Report) {
	took := fmt.Sprintf("%.1fs", r.DurationS)
	if r.SendS > 0 && r.DurationS-r.SendS >= 0.5 {
		took = fmt.Sprintf("%.1fs sending, then %.1fs waiting for requests in flight", r.SendS, r.DurationS-r.SendS)
	}
	planned := "max rate (closed model)"
	if !r.Plan.Max {
		planned = num(r.Plan.Rate) + " req/s planned"
	}
	v.Run = RunView{
		Version: r.Version, From: utc(r.StartedAt), To: utc(r.EndedAt), Took: took, Planned: planned,
		Achieved: strconv.FormatFloat(r.Totals.RPS, 'f', 1, 64) + " req/s",
		Requests: r.Totals.Requests, Failed: r.Totals.Failed, Dropped: r.Totals.Dropped,
		Endpoints: len(r.Endpoints), Interrupted: r.Interrupted, Command: shellJoin(r.Command),
	}
}

func (v *View) dns(r *Report) {
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
			row.Changes = append(row.Changes, utc(c.At)+": "+strings.Join(what, "; "))
		}
		v.DNS = append(v.DNS, row)
	}
}

// statsRow formats s under label.
func statsRow(label string, s *Stats) StatsRow {
	lo, hi := Wilson(s.Failed, s.Requests)
	row := StatsRow{
		Label: label, Failing: s.Failed > 0, n: s.Requests,
		Requests: strconv.FormatInt(s.Requests, 10),
		Failed:   strconv.FormatInt(s.Failed, 10),
		Rate:     pct(s.FailureRate, s.Requests),
		Status:   counts(s.Status, "×"),
		Errors:   counts(s.Errors, "×"),
		Answers:  answers(s),
		P50:      latency(s.LatencyMS.P50, s.Requests),
		P99:      latency(s.LatencyMS.P99, s.Requests),
		Max:      latency(s.LatencyMS.Max, s.Requests),
		Dropped:  strconv.FormatInt(s.Dropped, 10),
	}
	row.RateCI = row.Rate
	if s.Requests > 0 {
		row.RateCI += " (" + ciRange(lo, hi) + ")"
	}
	return row
}

// answers merges statuses and error classes, most first: "200×40 502×20 reset×3".
func answers(s *Stats) string {
	m := make(map[string]int64, len(s.Status)+len(s.Errors))
	for k, n := range s.Status {
		m[k] = n
	}
	for k, n := range s.Errors {
		m[k] = n
	}
	return counts(m, "×")
}

func (v *View) families(r *Report) {
	endpoints := map[string]int{}
	for _, e := range r.Endpoints {
		endpoints[e.Family]++
	}
	for _, fam := range sortedKeys(r.Families) {
		row := statsRow(familyName(fam), r.Families[fam])
		row.Family, row.Count = familyName(fam), strconv.Itoa(endpoints[fam])
		v.Families = append(v.Families, row)
	}
	total := statsRow("total", &r.Totals)
	total.Count, total.Failing = strconv.Itoa(len(r.Endpoints)), false
	v.Families = append(v.Families, total)
}

func (v *View) endpoints(r *Report, targets []string) {
	suspects := map[string]Suspect{}
	for _, s := range r.Verdict.Suspects {
		suspects[s.Target+" "+s.Address] = s
	}
	for _, target := range targets {
		tv := TargetView{Target: target}
		for i := range r.Endpoints {
			e := &r.Endpoints[i]
			if e.Target != target {
				continue
			}
			row := statsRow(e.Address, &e.Stats)
			row.Family, row.Target = familyName(e.Family), e.Target
			var note []string
			if s, ok := suspects[e.Target+" "+e.Address]; ok {
				row.Suspect = true
				note = append(note, "named by the verdict ("+pValue(s.P)+")")
			}
			row.DNSNote = dnsHistory(e, clock)
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
func (v *View) Label(e *Endpoint) string {
	if !v.MultiURL {
		return e.Address
	}
	return e.Address + " " + ShortURL(v.R, e.Target)
}

// dnsHistory says when e's address came and went during the run, times
// written by when: "in DNS from 20:43:05", "left DNS at 20:43:06, back at
// 20:43:09", "…, not probed after"; "" when it stayed throughout.
func dnsHistory(e *Endpoint, when func(Time) string) string {
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

// clock is a time of day in UTC, to the millisecond: "20:43:05.250".
func clock(t Time) string { return t.UTC().Format("15:04:05.000") }

// ShortURL shortens target to what tells it apart from the report's other
// targets: its path when they all share scheme, host and port, else the URL
// without its scheme.
func ShortURL(r *Report, target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	same := true
	for _, t := range targetsOf(r) {
		o, err := url.Parse(t)
		same = same && err == nil && o.Scheme == u.Scheme && o.Host == u.Host
	}
	if same {
		return u.RequestURI()
	}
	return strings.TrimPrefix(strings.TrimPrefix(target, "https://"), "http://")
}

func (v *View) who(r *Report) {
	for _, f := range r.Fingerprints {
		w := WhoRow{Count: f.Count, Server: f.Server, Producer: f.Producer, BodyHash: f.BodyHash, Body: f.Body,
			Fresh: f.Fresh, Reused: f.Reused, Addresses: f.Addresses}
		switch {
		case f.Merged:
			w.What = "other kinds (past the first 64, counted together)"
		case f.Status != 0:
			w.What = strconv.Itoa(f.Status)
		default:
			w.What = f.Error
		}
		w.Where = counts(f.Addresses, " ×")
		v.Who = append(v.Who, w)
	}
}

func (v *View) phases(r *Report) {
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		fresh, reused := e.Connections["fresh"], e.Connections["reused"]
		v.Phases = append(v.Phases, PhaseRow{
			Label: e.Address, Target: e.Target, Failing: e.Failed > 0,
			Connect: phaseWords(e, e.Phases.Connect), TLS: phaseWords(e, e.Phases.TLS), TTFB: phaseWords(e, e.Phases.TTFB),
			FreshFailed: fresh.Failed, Fresh: fresh.Requests, ReusedFailed: reused.Failed, Reuse: reused.Requests,
			PlainHTTP: strings.HasPrefix(e.Target, "http://"),
		})
	}
}

func (v *View) timeline(r *Report) {
	tl := r.Timeline
	n := 0
	for _, s := range tl.Series {
		n = max(n, len(s.Requests))
	}
	v.Timeline = TimelineView{Step: tl.IntervalS, From: tl.Start, To: Time{tl.Start.Add(secsDuration(tl.IntervalS * float64(n)))}}
	for i, s := range tl.Series {
		row := SeriesRow{Label: s.Address, Target: s.Target, Requests: s.Requests, Failed: s.Failed}
		if i < len(r.Endpoints) {
			row.Failing = r.Endpoints[i].Failed > 0
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

func (v *View) samples(r *Report) {
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		if len(e.Samples) == 0 {
			continue
		}
		g := SampleGroup{Label: v.Label(e), Address: e.Address, Target: e.Target}
		for _, s := range e.Samples {
			row := SampleRow{
				Failed: s.Failed, At: utc(s.At), Result: sampleResult(&s), Error: s.Error, RequestID: s.RequestID,
				Latency: latency(s.LatencyMS, 1), Local: s.Local, Remote: s.Remote, Proto: s.Proto, Body: s.Body,
			}
			if row.Remote == "" {
				row.Remote = hostPort(e.Address, e.Port)
			}
			row.Conn = "new"
			switch {
			case s.Reused:
				row.Conn = "reused"
			case s.Local == "" && s.Status == 0:
				row.Conn = "none"
			}
			for _, k := range sortedKeys(s.Headers) {
				row.Headers = append(row.Headers, k+": "+s.Headers[k])
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

func (v *View) tests(r *Report) {
	for _, t := range r.Verdict.Tests {
		restRate := 0.0
		if t.RestTotal > 0 {
			restRate = float64(t.RestFailed) / float64(t.RestTotal)
		}
		v.Tests = append(v.Tests, TestRow{
			Scope:       t.Scope,
			Failed:      fmt.Sprintf("%d of %d", t.Failed, t.Requests),
			RateCI:      rateCI(t.Failed, t.Requests, t.FailureRate),
			Rest:        fmt.Sprintf("%d of %d (%s)", t.RestFailed, t.RestTotal, pct(restRate, t.RestTotal)),
			P:           pValue(t.P),
			Significant: t.Significant,
		})
	}
}

// sortByCount orders keys of m by count, most first, then by name.
func sortByCount(m map[string]int64) []string {
	keys := sortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	return keys
}
