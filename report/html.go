package report

import (
	"bytes"
	"crypto/sha256"
	_ "embed" // the page's template and style sheet
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

//go:embed html.tmpl
var htmlSource string

//go:embed html.css
var htmlCSS string

// htmlTemplate is the page. html/template escapes every value for where it
// lands (text, attribute, <pre>), so nothing from the network or the command
// line can become markup; text and pre also show control characters and
// the invisible ones that reorder text as escapes, as the other formats do.
var htmlTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"text":   func(s string) string { return safeText(s, false) },
	"pre":    func(s string) string { return safeText(s, true) },
	"plural": Plural,
	"items":  strings.Fields,
}).Parse(htmlSource))

// htmlCSP forbids the page every fetch and every script: it is one file that
// works offline, and a body that slipped past the escaping could load or run
// nothing. The style sheet is allowed by its hash.
var htmlCSP = func() string {
	sum := sha256.Sum256([]byte(htmlCSS))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

// HTML writes the report as one self-contained HTML page for a browser or a
// ticket attachment: the verdict first, then what ran, DNS, server-drawn SVG
// charts (failures over time, the answers per family, latency per
// endpoint), the tables of the other formats, who answered the failures,
// sample requests and queries for the gateway's logs. It loads nothing and
// runs no script; it prints readably.
func HTML(w io.Writer, r *Report) error {
	var buf bytes.Buffer
	if err := htmlTemplate.Execute(&buf, newHTMLPage(NewView(r))); err != nil {
		return fmt.Errorf("render html report: %w", err)
	}
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

// htmlPage is what the template shows: the view, and what the page adds
// to it (charts, interval bars).
type htmlPage struct {
	V        *View
	CSS      template.CSS
	CSP      string
	Title    string
	Heading  string // the headline, capitalised
	Started  string // "2026-06-16 20:43:00"
	Status   string // the verdict's status, upper case
	Tone     string // "bad", "warn", "good" or "none": the verdict's colour
	Suspects []htmlSuspect
	Ended    string // "completed" or "interrupted"
	Sent     string
	Plan     string
	Ports    string
	Families []htmlRow
	Targets  []htmlTarget
	Who      []htmlWho
	Phases   []htmlPhase
	Samples  []htmlSamples
	Alpha    string
	Logs     *htmlLogs
	Timeline *timelineChart
	Mix      *mixChart
	Latency  *latencyChart
}

// htmlSuspect is one endpoint the verdict names.
type htmlSuspect struct {
	Address, Family, Target, Failed, RateCI, P string
}

// htmlRow is a table row with its failure-rate interval drawn.
type htmlRow struct {
	StatsRow
	CI ciBar
}

// htmlTarget is one URL's endpoint rows; Notes is set when one of them has
// a DNS note.
type htmlTarget struct {
	Target string
	Rows   []htmlRow
	Notes  bool
}

// htmlWho is one kind of failure, numbered, its body cut to what is shown.
type htmlWho struct {
	WhoRow
	N    int
	Body string
}

// htmlPhase is a phase row with the TLS cell said for plain HTTP, and its
// URL as short as tells it apart.
type htmlPhase struct {
	PhaseRow
	TLSShown, URL string
}

// htmlSamples is one endpoint's samples and their response headers as one
// block of text.
type htmlSamples struct {
	SampleGroup
	Headers string
}

// htmlLogs is what to look for in the gateway's logs.
type htmlLogs struct {
	From, To, Margin             string
	AGWSummary, AGWRows, AzDiags string
	Ports                        bool
	Filters                      [][2]string
}

func newHTMLPage(v *View) *htmlPage {
	r := v.R
	p := &htmlPage{
		V: v, CSS: template.CSS(htmlCSS), CSP: htmlCSP,
		Title:   "pinprobe: " + v.Headline + " — " + v.Hosts,
		Heading: capitalise(v.Headline),
		Started: strings.Replace(v.Run.From, "T", " ", 1)[:min(19, len(v.Run.From))],
		Status:  strings.ToUpper(orDash(r.Verdict.Status)),
		Ended:   "completed",
		Plan:    planWords(&r.Plan),
		Ports:   portWords(r.Client),
		Alpha:   num(testAlpha),
	}
	switch r.Verdict.Status {
	case VerdictConcentrated:
		p.Tone = "bad"
	case VerdictSpread:
		p.Tone = "warn"
	case VerdictOK:
		p.Tone = "good"
	default:
		p.Tone = "none"
	}
	if r.Interrupted {
		p.Ended = "interrupted"
	}
	p.Sent = fmt.Sprintf("%d request%s (%s) to %d endpoint%s; %d failed", v.Run.Requests, Plural(int(v.Run.Requests)),
		v.Run.Achieved, v.Run.Endpoints, Plural(v.Run.Endpoints), v.Run.Failed)
	if v.Run.Dropped > 0 {
		p.Sent += fmt.Sprintf("; %d more were due but not sent (dropped): their endpoint already had %d requests in flight",
			v.Run.Dropped, r.Plan.Concurrency)
	}
	for _, s := range r.Verdict.Suspects {
		p.Suspects = append(p.Suspects, htmlSuspect{
			Address: s.Address, Family: familyName(s.Family), Target: s.Target,
			Failed: fmt.Sprintf("%d of %d failed", s.Failed, s.Requests),
			RateCI: rateCI(s.Failed, s.Requests, s.FailureRate), P: pValue(s.P),
		})
	}
	keys := sortedKeys(r.Families)
	for i, row := range v.Families {
		s := &r.Totals
		if i < len(keys) {
			s = r.Families[keys[i]]
		}
		p.Families = append(p.Families, htmlRow{row, newCIBar(s.Failed, s.Requests, row.Failing)})
	}
	eps := endpointIndex(r)
	for _, tv := range v.Targets {
		t := htmlTarget{Target: tv.Target}
		for _, row := range tv.Rows {
			var ci ciBar
			if e := eps[row.Target+" "+row.Label]; e != nil {
				ci = newCIBar(e.Failed, e.Requests, row.Failing)
			}
			t.Rows = append(t.Rows, htmlRow{row, ci})
			t.Notes = t.Notes || row.DNSNote != ""
		}
		p.Targets = append(p.Targets, t)
	}
	for i, w := range v.Who {
		p.Who = append(p.Who, htmlWho{WhoRow: w, N: i + 1, Body: limitBytes(w.Body, bodyLimit)})
	}
	for _, ph := range v.Phases {
		tls := ph.TLS
		if ph.PlainHTTP && ph.Fresh+ph.Reuse > 0 {
			tls = "— (plain HTTP)"
		}
		p.Phases = append(p.Phases, htmlPhase{ph, tls, ShortURL(r, ph.Target)})
	}
	for _, g := range v.Samples {
		p.Samples = append(p.Samples, htmlSamples{g, sampleHeaders(g.Rows)})
	}
	if r.Totals.Failed > 0 {
		p.Logs = newHTMLLogs(r)
	}
	p.Timeline = newTimelineChart(v, eps)
	p.Mix = newMixChart(v)
	p.Latency = newLatencyChart(v, eps)
	return p
}

// endpointIndex finds an endpoint by its target and address.
func endpointIndex(r *Report) map[string]*Endpoint {
	m := make(map[string]*Endpoint, len(r.Endpoints))
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		m[e.Target+" "+e.Address] = e
	}
	return m
}

// capitalise upper-cases the first letter of s.
func capitalise(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// sampleHeaders writes each sample's response headers under a line that
// names it, as the Markdown report does.
func sampleHeaders(rows []SampleRow) string {
	var b strings.Builder
	for i, s := range rows {
		if i > 0 {
			b.WriteString("\n")
		}
		id := s.RequestID
		if id == "" {
			id = "(no request ID)"
		}
		fmt.Fprintf(&b, "# %s · %s · %s", id, s.At, s.Result)
		if s.Proto != "" {
			b.WriteString(" · " + s.Proto)
		}
		b.WriteString("\n")
		if s.Error != "" {
			b.WriteString("error: " + s.Error + "\n")
		}
		for _, h := range s.Headers {
			b.WriteString(h + "\n")
		}
	}
	return b.String()
}

func newHTMLLogs(r *Report) *htmlLogs {
	q := newLogQuery(r, failStatusOf(r))
	l := &htmlLogs{
		From: utc(r.StartedAt), To: utc(r.EndedAt), Margin: strings.TrimSuffix(logMargin.String(), "s") + " s",
		AGWSummary: q.agw(true), AGWRows: q.agw(false), AzDiags: q.diagnostics(), Ports: q.ports != "",
	}
	l.Filters = append(l.Filters, [2]string{"Time (UTC)", l.From + " to " + l.To + ", give or take a few seconds"})
	if c := r.Client; len(c.LocalAddresses) > 0 {
		l.Filters = append(l.Filters,
			[2]string{"Client address", strings.Join(c.LocalAddresses, ", ") + " (as this machine sees itself; behind a NAT the gateway sees the NAT's public address)"},
			[2]string{"Client ports", portWords(c)})
	}
	var dests []string
	for _, e := range r.Endpoints {
		dests = append(dests, hostPort(e.Address, e.Port))
	}
	if dests = dedupe(dests); len(dests) > 0 {
		l.Filters = append(l.Filters, [2]string{"Server address", strings.Join(dests, ", ")})
	}
	if len(q.hosts) > 0 {
		l.Filters = append(l.Filters, [2]string{"Host header", strings.Join(q.hosts, ", ")})
	}
	if paths := requestPaths(r); len(paths) > 0 {
		l.Filters = append(l.Filters, [2]string{"Request path", strings.Join(paths, ", ")})
	}
	return l
}

// f formats a coordinate to one decimal, the precision of every number in
// the page's SVG, so the output is byte-stable.
func f(x float64) string {
	s := strconv.FormatFloat(x, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	if s == "-0" {
		return "0"
	}
	return s
}

// ciBar draws a failure rate and its Wilson 95% interval on 0–100%, in a
// 100 × 12 box.
type ciBar struct {
	Show          bool
	Failing       bool
	Lo, Width, At string
	Title         string
}

func newCIBar(failed, n int64, failing bool) ciBar {
	if n <= 0 {
		return ciBar{}
	}
	lo, hi := Wilson(failed, n)
	rate := float64(failed) / float64(n)
	return ciBar{
		Show: true, Failing: failing,
		Lo: f(lo * 100), Width: f(max((hi-lo)*100, 1)), At: f(rate * 100),
		Title: fmt.Sprintf("failure rate %s, 95%% interval %s", pctRate(rate), ciRange(lo, hi)),
	}
}
