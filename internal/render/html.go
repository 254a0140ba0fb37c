package render

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
	"unicode/utf8"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
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
	"text":   func(s string) string { return words.SafeText(s, false) },
	"pre":    func(s string) string { return words.SafeText(s, true) },
	"plural": words.Plural,
	"items":  strings.Fields,
	"upper":  strings.ToUpper,
	"inc":    func(i int) int { return i + 1 },
	"words":  keepWords,
	// snake cuts an error class after its underscores, where a narrow
	// table may break it: connect_<wbr>refused×3.
	"snake": func(s string) []string { return strings.SplitAfter(s, "_") },
}).Parse(htmlSource))

// htmlWord is a word of a sentence (keepWords): Keep when it must not
// break over lines at its hyphens.
type htmlWord struct {
	Text string
	Keep bool
}

// keepWords cuts s into its words and marks those that hold a hyphen and
// are short enough to stay whole on a narrow screen (X-Served-By, gw-3,
// 2026-06-16), which a browser would otherwise break after a hyphen.
func keepWords(s string) []htmlWord {
	fields := strings.Fields(s)
	out := make([]htmlWord, len(fields))
	for i, w := range fields {
		out[i] = htmlWord{Text: w, Keep: strings.Contains(w, "-") && utf8.RuneCountInString(w) <= 32}
	}
	return out
}

// htmlCSP forbids the page every fetch and every script: it is one file that
// works offline, and a body that slipped past the escaping could load or run
// nothing. The style sheet is allowed by its hash.
var htmlCSP = func() string {
	sum := sha256.Sum256([]byte(htmlCSS))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

// HTML writes the report as one self-contained HTML page for a browser or a
// ticket attachment: the verdict first (every suspect, every note, the
// release gate), then what ran, DNS, server-drawn SVG charts (failures
// over time, the answers per family, latency per endpoint, failures per
// instance), the tables of the other formats, the instances and the
// failing connections, who answered the failures, sample requests, the
// release gate and queries for the logs of the gateway that answered. It
// loads nothing and runs no script; it prints readably.
func HTML(w io.Writer, r *report.Report) error {
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
// to it to draw it (charts, interval bars).
type htmlPage struct {
	V         *View
	CSS       template.CSS
	CSP       string
	Title     string
	Heading   string // the headline, capitalised
	Families  []htmlRow
	Targets   []htmlTarget
	Groups    []htmlGroup
	MaxConns  int // connections kept one by one per endpoint
	Timeline  *timelineChart
	Mix       *mixChart
	Latency   *latencyChart
	OverTime  *overTimeCharts
	Notes     []string    // the verdict's notes (they say more than its summary: newNotes)
	FailingQs []htmlQuery // the queries over the failing connections' ports
}

// htmlRow is a table row with its failure-rate interval drawn.
type htmlRow struct {
	StatsRow
	CI ciBar
}

// htmlTarget is one URL's endpoint rows.
type htmlTarget struct {
	TargetView
	Rows []htmlRow
}

// htmlGroup is the instances of one header: their rows and a chart of
// their failure ratios.
type htmlGroup struct {
	Header string
	Rows   []htmlRow
	Chart  *rateChart
}

// htmlQuery is a log query with the gateway it is for.
type htmlQuery struct {
	Gateway string
	LogQuery
}

func newHTMLPage(v *View) *htmlPage {
	p := &htmlPage{
		V: v, CSS: template.CSS(htmlCSS), CSP: htmlCSP,
		Title:    "pinprobe: " + v.Headline + " — " + v.Hosts,
		Heading:  words.Capitalize(v.Headline),
		MaxConns: report.MaxConnRecords,
	}
	rows := func(in []StatsRow) []htmlRow {
		out := make([]htmlRow, len(in))
		for i, row := range in {
			out[i] = htmlRow{row, newCIBar(row.Stats, row.Failing)}
		}
		return out
	}
	p.Families = rows(v.Families)
	for _, tv := range v.Targets {
		p.Targets = append(p.Targets, htmlTarget{tv, rows(tv.Rows)})
	}
	for i, g := range v.Groups {
		p.Groups = append(p.Groups, htmlGroup{Header: g.Header, Rows: rows(g.Rows), Chart: newRateChart(i, g)})
	}
	for _, g := range v.Logs.Gateways {
		for _, q := range g.Queries {
			if q.Failing {
				p.FailingQs = append(p.FailingQs, htmlQuery{g.Name, q})
			}
		}
	}
	p.Notes = v.Verdict.Notes
	p.Timeline = newTimelineChart(v)
	p.Mix = newMixChart(v)
	p.Latency = newLatencyChart(v)
	p.OverTime = newOverTimeCharts(v)
	return p
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

func newCIBar(s *report.Stats, failing bool) ciBar {
	if s == nil || s.Requests <= 0 {
		return ciBar{}
	}
	lo, hi := failureCI(s.Failed, s.Requests)
	rate := float64(s.Failed) / float64(s.Requests)
	return ciBar{
		Show: true, Failing: failing,
		Lo: f(lo * 100), Width: f(max((hi-lo)*100, 1)), At: f(rate * 100),
		Title: fmt.Sprintf("failure rate %s, 95%% interval %s", words.PctRate(rate), words.CIRange(lo, hi)),
	}
}
