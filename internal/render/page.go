package render

import "slices"

// A Page is one document ready for any writer: the builder of a document
// (comparePage, …) says once what it shows and in which order, and the
// text, Markdown and HTML writers (writePageText, writePageMarkdown,
// writePageHTML) lay out any page. Everything on a page is plain text: each writer escapes it for its
// format. A difference between formats is data: a block's Only, a
// column's Prio or Under.
type Page struct {
	Title string // the document's title: Markdown's "# " line
	// HTML's header box: a small line above the heading (Kicker), the
	// status in a badge, the heading (Title when unset) and the box's
	// tone ("bad", "warn", "good"; "" none).
	Kicker, Badge, Heading, Tone string
	Lead                         Para // what it found, first: its Lead is the status ("REGRESSED")
	Bad                          bool // the lead is bad news (red in a terminal)
	// Top is what follows the lead before the first section: the
	// documents quote it with the lead, a terminal prints it under it.
	Top      []Block
	Sections []Section
	Footer   string // the documents' last line
	// Refresh is how often, in seconds, HTML reloads the page (0: never).
	Refresh int
}

// Section is a heading and what is under it; the same heading in every
// format (a terminal prints it in capitals). A section without a heading
// is a paragraph break.
type Section struct {
	Heading string
	// Aside is a terminal's short gloss beside the heading ("failed/requests
	// before → after"); the documents say it in their prose.
	Aside string
	Bad   bool // its heading is bad news (red on a terminal)
	// ID is the section's anchor in HTML, and Nav its name in the page's
	// table of contents ("": not listed).
	ID, Nav string
	Blocks  []Block
}

// Format is a set of writers.
type Format uint8

const (
	FormatText Format = 1 << iota
	FormatMarkdown
	FormatHTML
)

// shows says whether a block of only (0: every format) is written in f.
func shows(only, f Format) bool { return only == 0 || only&f != 0 }

// Block is a paragraph, a list, a table, code, a line of parts, a chart
// or a figure.
type Block interface{ only() Format }

// Para is a paragraph, after a lead ("after:") when it has one.
type Para struct {
	Title string // a sub-heading above it
	Lead  string
	Text  string
	// Indent is the terminal's indent of the paragraph's lines: under its
	// lead when it has one, the first line too when it has none.
	Indent int
	Tone   Tone // how a terminal styles the lead
	// Note is a remark on what precedes it: " ·" before it on a terminal.
	Note bool
	// Code follows the text (" · "), as code: a command to paste.
	Code string
	Only Format
}

// Tone is how a terminal styles a lead: plain, bold, or bold and red.
type Tone uint8

const (
	TonePlain Tone = iota
	ToneStrong
	ToneBad
)

// Parts are short phrases a terminal joins on a line with " · ",
// breaking lines between them only; the first after Lead, in bold.
type Parts struct {
	Lead  string
	Items []string
	Only  Format
}

// Chart is the failures over time of each endpoint, drawn by each writer
// to its width: sparklines on a terminal and in Markdown, SVG in HTML.
type Chart struct {
	Timeline TimelineView
	Multi    bool // several URLs: each URL's rows under it
	Only     Format
}

// Figure is a chart of the view HTML draws as SVG (the other formats say
// what it shows in their tables and Chart).
type Figure struct {
	Kind  FigureKind
	V     *View
	Group int // the instance header's chart: its index in V.Groups
}

// FigureKind is what a Figure draws.
type FigureKind uint8

const (
	FigureTimeline FigureKind = iota // failures over time, per endpoint
	FigureOverTime                   // requests, failures and latency over time, per family and suspect
	FigureMix                        // the answers of each family
	FigureLatency                    // the latency percentiles of each endpoint
	FigureRates                      // the failure rate of each value of an instance header
)

// List is a list of items; a list with a failing item marks each (✗ or
// blank) instead of bullets.
type List struct {
	Title  string // a sub-heading above it, in HTML
	Items  []Item
	Marked bool // marks (✗ or blank) even when no item fails
	Only   Format
}

// Item is one list item.
type Item struct {
	Lead string // "before", shown first in bold in Markdown
	Text string
	// Spans are the text with code in it, instead of Text: the documents
	// show the code as code.
	Spans []Span
	Subs  []string // its details, each on a line of its own under it on a terminal
	// Tail goes after the text (" · ") when the whole fits a terminal's
	// line, else on a line of its own under it.
	Tail    string
	Failing bool
	// Href makes the item's text a link in HTML.
	Href string
}

// Table is rows in columns, under a title of its own (a target's URL)
// when it has one.
type Table struct {
	Title string
	Intro string // a line under the title, before the rows
	Cols  []Col
	Rows  []Row
	Marks bool     // a first column of ✗ for the failing rows
	Notes []string // prose under the table
	// TextCap is how many rows a terminal shows (0: all); the rest are
	// counted on a line of their own, "… 12 more " and More.
	TextCap int
	More    string
	// Scroll keeps a table of long values (addresses, IDs) whole in
	// HTML: it scrolls sideways in a narrow window rather than break them.
	Scroll bool
	Only   Format
}

// Col is one column of a table.
type Col struct {
	Head  string
	Short string // the head a terminal shows, when shorter than Head
	Right bool
	// Prio orders the columns a narrow terminal drops: lowest first; 0 is
	// never dropped.
	Prio int
	// Under puts the column's cells on a line under their row, on a
	// terminal too narrow for the tables of the page with them beside.
	Under bool
	// Label is a column of the row's name: Markdown makes a failing row's
	// bold, and when it is the first column a terminal still too narrow
	// puts a long one on its own line above its row.
	Label bool
	// List marks a column of space-separated items ("200×40 502×20") a
	// narrow terminal may cut short ("200×40 +1") when nothing else can go.
	List bool
	// DropZero lets a terminal leave the column out when every cell is
	// "0" (and it has a Prio).
	DropZero bool
	// Fit lets a terminal cut each cell's words after its first, in their
	// middle, to the width the other columns leave (an address stays
	// whole, its URL as short as fits).
	Fit bool
	// Interval is the column where HTML draws the row's Interval.
	Interval bool
	Only     Format
}

// Interval is a failure rate and its 95% interval, all from 0 to 1.
type Interval struct {
	Rate, Lo, Hi float64
	Failing      bool
}

// Row is one row of a table.
type Row struct {
	Cells   []string
	Failing bool
	Suspect bool // named by the verdict: HTML marks it
	// Interval is the failure rate and its 95% interval, which HTML draws
	// in the column marked Interval.
	Interval *Interval
	Code     bool   // its cells but the first are code (a file, a command): Markdown writes them so
	Note     string // a terminal's line under the row ("127.0.0.3 appeared in DNS at …")
}

// Code is text kept as it is: a log query, the first bytes of a body.
type Code struct {
	Title string // under its own sub-heading when set
	Fold  bool   // HTML folds it under its title, shut
	Info  string // the language, for Markdown's fence: "text", "kusto"
	Text  string
	Only  Format
}

func (p Para) only() Format  { return p.Only }
func (c Code) only() Format  { return c.Only }
func (l List) only() Format  { return l.Only }
func (t Table) only() Format { return t.Only }
func (p Parts) only() Format { return p.Only }
func (c Chart) only() Format { return c.Only }
func (Figure) only() Format  { return FormatHTML }

// in is the page as format f shows it: only the blocks and table columns
// of f, and only the sections with something to say in f (a heading with
// its aside does, but HTML has no asides). Each writer walks its own.
func (p *Page) in(f Format) *Page {
	q := *p
	q.Top = blocksIn(p.Top, f)
	q.Sections = nil
	for _, s := range p.Sections {
		s.Blocks = blocksIn(s.Blocks, f)
		if len(s.Blocks) > 0 || s.Aside != "" && f != FormatHTML {
			q.Sections = append(q.Sections, s)
		}
	}
	return &q
}

// blocksIn is the blocks of bs shown in f, each table with only its
// columns of f.
func blocksIn(bs []Block, f Format) []Block {
	var out []Block
	for _, b := range bs {
		if tb, ok := b.(Table); ok {
			b = tb.in(f)
		}
		if shows(b.only(), f) {
			out = append(out, b)
		}
	}
	return out
}

// in is the table with only its columns shown in f (itself when that is
// all of them).
func (t Table) in(f Format) Table {
	var keep []int
	for i, c := range t.Cols {
		if shows(c.Only, f) {
			keep = append(keep, i)
		}
	}
	if len(keep) == len(t.Cols) || !shows(t.Only, f) {
		return t
	}
	cols := make([]Col, len(keep))
	for j, i := range keep {
		cols[j] = t.Cols[i]
	}
	rows := slices.Clone(t.Rows)
	cells := make([]string, len(rows)*len(keep)) // one allocation for every cell
	for r := range rows {
		rows[r].Cells = cells[:len(keep):len(keep)]
		cells = cells[len(keep):]
		for j, i := range keep {
			rows[r].Cells[j] = t.Rows[r].Cells[i]
		}
	}
	t.Cols, t.Rows = cols, rows
	return t
}

// cells is each row's cells after lead more, the first its mark (✗ when
// it fails) in a table with marks: a copy the writer may change.
func (t *Table) cells(lead int) [][]string {
	rows := make([][]string, len(t.Rows))
	for r, row := range t.Rows {
		rows[r] = append(make([]string, lead, lead+len(row.Cells)), row.Cells...)
		if lead > 0 && t.Marks {
			rows[r][0] = markOf(row.Failing)
		}
	}
	return rows
}
