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

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

//go:embed page.tmpl
var pageSource string

//go:embed html.css
var htmlCSS string

// pageTemplate writes any page. html/template escapes every value for
// where it lands (text, attribute, <pre>), so nothing from the network or
// the command line can become markup; text and pre also show control
// characters and the invisible ones that reorder text as escapes, as the
// other formats do.
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"text":  func(s string) string { return words.SafeText(s, false) },
	"pre":   func(s string) string { return words.SafeText(s, true) },
	"items": strings.Fields,
	"words": func(s string) []htmlWord { return keepWords(s, 32) },
	// A cell keeps only its short words whole (p<1e-9, gw-3): a table of
	// counts still fits a narrow window.
	"cellWords": func(s string) []htmlWord { return keepWords(s, 16) },
	// snake cuts an error class after its underscores, where a narrow
	// table may break it: connect_<wbr>refused×3.
	"snake": func(s string) []string { return strings.SplitAfter(s, "_") },
}).Parse(pageSource))

// htmlWord is a word of a sentence (keepWords): Keep when it must not
// break over lines at its hyphens.
type htmlWord struct {
	Text string
	Keep bool
}

// keepWords cuts s into its words and marks those that hold a hyphen and
// are no longer than most runes, short enough to stay whole on a narrow
// screen (X-Served-By, gw-3, 2026-06-16), which a browser would otherwise
// break after a hyphen.
func keepWords(s string, most int) []htmlWord {
	fields := strings.Fields(s)
	out := make([]htmlWord, len(fields))
	for i, w := range fields {
		out[i] = htmlWord{Text: w, Keep: strings.Contains(w, "-") && runes(w) <= most}
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

// htmlBlock is one block of a page as the template reads it: one of its
// fields is set.
type htmlBlock struct {
	Para  *Para
	Parts *Parts
	List  *List
	Table *htmlTable
	Code  *Code
	Fig   *htmlFigure
}

// htmlFigure is a Figure's chart, drawn: one of its fields is set (none
// when the view has nothing to draw).
type htmlFigure struct {
	Timeline *timelineChart
	OverTime *overTimeCharts
	Mix      *mixChart
	Latency  *latencyChart
	Rates    *rateChart
}

type htmlTable struct {
	Title, Intro  string
	Marks, Scroll bool
	Heads         []pageCell
	Rows          []pageRow
	Notes         []string
}

type pageRow struct {
	Failing bool
	Class   string // "fail" (a failing row of a marked table), "significant" (of another), "suspect"
	Cells   []pageCell
}

type pageCell struct {
	Text  string
	Class string // "num" (right-aligned), "name" (the row's label), "rate"
	Code  bool
	Items bool // space-separated items, each kept whole but after its underscores
	CI    *ciBar
}

type htmlSection struct {
	Heading, ID, Nav string
	Blocks           []htmlBlock
}

// minNav is how many sections a page's table of contents lists at least.
const minNav = 4

// writePageHTML writes p as one self-contained HTML page: it loads
// nothing and runs no script.
func writePageHTML(w io.Writer, p *Page) error {
	data := struct {
		P        *Page
		Heading  string
		Tone     string
		Top      []htmlBlock
		Nav      []htmlSection
		Sections []htmlSection
		CSS      template.CSS
		CSP      string
	}{P: p, Heading: p.Heading, CSS: template.CSS(htmlCSS), CSP: htmlCSP}
	if data.Heading == "" {
		data.Heading = p.Title
	}
	if data.Tone = p.Tone; data.Tone == "" && p.Bad {
		data.Tone = "bad"
	}
	p = p.in(FormatHTML)
	data.Top = htmlBlocks(p.Top)
	for _, s := range p.Sections {
		hs := htmlSection{Heading: s.Heading, ID: s.ID, Nav: s.Nav, Blocks: htmlBlocks(s.Blocks)}
		data.Sections = append(data.Sections, hs)
		if hs.Nav != "" && hs.ID != "" {
			data.Nav = append(data.Nav, hs)
		}
	}
	if len(data.Nav) < minNav {
		data.Nav = nil // a short page needs no table of contents
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, data); err != nil {
		return fmt.Errorf("render html: %w", err)
	}
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	return nil
}

// htmlBlocks are a page's blocks as the template reads them.
func htmlBlocks(blocks []Block) []htmlBlock {
	var out []htmlBlock
	for _, b := range blocks {
		switch b := b.(type) {
		case Para:
			out = append(out, htmlBlock{Para: &b})
		case Parts:
			out = append(out, htmlBlock{Parts: &b})
		case List:
			out = append(out, htmlBlock{List: &b})
		case Table:
			out = append(out, htmlBlock{Table: newHTMLTable(&b)})
		case Code:
			out = append(out, htmlBlock{Code: &b})
		case Figure:
			out = append(out, htmlBlock{Fig: newHTMLFigure(&b)})
		}
	}
	return out
}

// newHTMLFigure draws f's chart.
func newHTMLFigure(f *Figure) *htmlFigure {
	switch f.Kind {
	case FigureTimeline:
		return &htmlFigure{Timeline: newTimelineChart(f.V)}
	case FigureOverTime:
		return &htmlFigure{OverTime: newOverTimeCharts(f.V)}
	case FigureMix:
		return &htmlFigure{Mix: newMixChart(f.V)}
	case FigureLatency:
		return &htmlFigure{Latency: newLatencyChart(f.V)}
	}
	return &htmlFigure{Rates: newRateChart(f.Group, f.V.Groups[f.Group])}
}

func newHTMLTable(tb *Table) *htmlTable {
	cols := tb.Cols
	ht := &htmlTable{Title: tb.Title, Intro: tb.Intro, Marks: tb.Marks, Scroll: tb.Scroll, Notes: tb.Notes, Rows: make([]pageRow, len(tb.Rows))}
	// A column a terminal drops first a narrow window hides too ("p1").
	class := make([]string, len(cols))
	for j, c := range cols {
		var cl []string
		if c.Right {
			cl = append(cl, "num")
		}
		if c.Prio == 1 {
			cl = append(cl, "p1")
		}
		class[j] = strings.Join(cl, " ")
		ht.Heads = append(ht.Heads, pageCell{Text: c.Head, Class: class[j]})
	}
	cells := make([]pageCell, len(tb.Rows)*len(cols)) // one allocation for every cell
	for r := range tb.Rows {
		src := &tb.Rows[r]
		row := cells[:len(cols):len(cols)]
		cells = cells[len(cols):]
		for j, text := range src.Cells {
			c := pageCell{Text: text, Code: src.Code && j > 0, Class: class[j], Items: cols[j].List}
			switch col := &cols[j]; {
			case col.Interval && src.Interval != nil:
				c.Class, c.CI = "rate", newCIBar(src.Interval)
			case col.Label:
				c.Class = strings.TrimSpace("name " + c.Class)
			}
			row[j] = c
		}
		var cl []string
		switch {
		case src.Failing && tb.Marks:
			cl = append(cl, "fail")
		case src.Failing:
			cl = append(cl, "significant")
		}
		if src.Suspect {
			cl = append(cl, "suspect")
		}
		ht.Rows[r] = pageRow{Failing: src.Failing, Class: strings.Join(cl, " "), Cells: row}
	}
	return ht
}

// HTML writes the report as one self-contained HTML page for a browser or a
// ticket attachment: the report's page (reportPage), with the charts only
// a browser draws (failures over time, requests and latency over time,
// the answers per family, latency per endpoint, failures per instance). It
// loads nothing and runs no script; it prints readably.
func HTML(w io.Writer, r *report.Report) error {
	if err := writePageHTML(w, pageOf(r, false, false)); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
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
	Failing       bool
	Lo, Width, At string
	Title         string
}

func newCIBar(iv *Interval) *ciBar {
	return &ciBar{
		Failing: iv.Failing,
		Lo:      f(iv.Lo * 100), Width: f(max((iv.Hi-iv.Lo)*100, 1)), At: f(iv.Rate * 100),
		Title: fmt.Sprintf("failure rate %s, 95%% interval %s", words.PctRate(iv.Rate), words.CIRange(iv.Lo, iv.Hi)),
	}
}

// intervalOf is s's failure rate and its interval, for HTML to draw; nil
// when nothing was sent.
func intervalOf(s *report.Stats, failing bool) *Interval {
	if s == nil || s.Requests <= 0 {
		return nil
	}
	lo, hi := failureCI(s.Failed, s.Requests)
	return &Interval{Rate: float64(s.Failed) / float64(s.Requests), Lo: lo, Hi: hi, Failing: failing}
}
