package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// Live is what a watch's live page shows above a window's report: the
// window, the watch, and the suspects since it began.
type Live struct {
	Since   time.Time     // when the watch began
	Window  time.Duration // the windows' length
	Ended   bool          // the report is of the last window that ended, not the one in progress
	Vantage string
	// Refresh is how often, in seconds, the HTML page reloads itself (0:
	// never).
	Refresh  int
	Suspects []LiveSuspect
	Now      time.Time
}

// LiveSuspect is a suspect the watch named: since its failures started
// (Since), when it was detected, and when they stopped (Ended, zero
// while it lasts; Retired when its address or instance went away).
type LiveSuspect struct {
	What                   string
	Since, Detected, Ended time.Time
	Retired                bool
	Failures, Requests     int64 // at its detection, since Since
	IDs                    []string
}

// LiveForFormat returns the writer of a watch's live page in a --format
// value: text, markdown or html (the JSON of a window is its report).
func LiveForFormat(name string, o Options) (func(io.Writer, *report.Report, *Live) error, error) {
	write, err := forFormat(name, o, func(d liveDoc) *Page { return livePage(d.r, d.l) }, nil)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer, r *report.Report, l *Live) error { return write(w, liveDoc{r, l}) }, nil
}

// liveDoc is a live page's report and watch.
type liveDoc struct {
	r *report.Report
	l *Live
}

// livePage is the window's report under the watch's own sections: the
// window and the watch, and the suspects since it began.
func livePage(r *report.Report, l *Live) *Page {
	v := NewView(r)
	if !l.Ended {
		v.Run.Ended = "in progress"
	}
	p := reportPage(v, false)
	p.Title = "pinprobe watch: " + v.Headline + " — " + v.Hosts
	p.Kicker = "pinprobe watch · " + v.Hosts + " · " + windowWords(r, l)
	p.Refresh = l.Refresh
	p.Sections = append([]Section{watchSection(r, l), watchSuspectsSection(l)}, p.Sections...)
	if lasting := lastingWords(l); lasting != "" {
		// Under the window's verdict in each format: a young window may
		// not share it yet.
		for _, f := range []Format{FormatText, FormatMarkdown, FormatHTML} {
			at := slices.IndexFunc(p.Top, func(b Block) bool { return shows(b.only(), f) }) + 1
			p.Top = slices.Insert(p.Top, at, Block(Para{Lead: "Still failing:", Text: lasting, Indent: 2, Tone: ToneBad, Only: f}))
		}
	}
	return p
}

// lastingWords names the suspects that last: "address ::1 (ipv6) of
// app.test since 18:58:42 UTC; …"; "" when none does.
func lastingWords(l *Live) string {
	var parts []string
	for _, s := range l.Suspects {
		if s.Ended.IsZero() {
			parts = append(parts, s.What+" since "+clock(s.Since)+" UTC")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + ", as the watch's detector sees it (the suspects below)."
}

// windowWords says which window the page shows: "18:50:00 – 18:52:13
// UTC, 2m13s of 5m so far".
func windowWords(r *report.Report, l *Live) string {
	s := clock(r.StartedAt.Time) + " – " + clock(r.EndedAt.Time) + " UTC, "
	if l.Ended {
		return s + "the last window that ended"
	}
	return s + r.EndedAt.Sub(r.StartedAt.Time).Round(time.Second).String() + " of " + words.RunLength(l.Window) + " so far"
}

// watchSection says which window the page shows, since when the watch
// runs, and where the rest is.
func watchSection(r *report.Report, l *Live) Section {
	watching := "since " + stamp(l.Since) + " UTC (" + l.Now.Sub(l.Since).Round(time.Second).String() +
		"), in windows of " + words.RunLength(l.Window)
	if l.Vantage != "" {
		watching += ", from vantage " + l.Vantage
	}
	this, other, otherName := "", "window=last", "The last window that ended"
	if l.Ended {
		this, other, otherName = "window=last", "", "The window in progress"
	}
	link := func(lead, tail string, params ...string) Item {
		u := "/" + query(params...)
		return Item{Lead: lead, Text: u, Href: u, Tail: tail}
	}
	list := List{Items: []Item{{Lead: "Window", Text: windowWords(r, l)}, {Lead: "Watching", Text: watching},
		link(otherName, "", other), link("Markdown", "", this, "format=markdown"),
		link("JSON", "the window's saved report, for pinprobe report and logs", this, "format=json"),
		{Lead: "Suspects", Text: "/suspects", Href: "/suspects", Tail: "those below, as JSON"},
		{Lead: "Metrics", Text: "/metrics", Href: "/metrics"}}}
	s := Section{Heading: "Watch", ID: "watch", Nav: "Watch", Blocks: []Block{list}}
	if l.Refresh > 0 {
		s.Blocks = append(s.Blocks, Para{Text: fmt.Sprintf("This page reloads itself every %d s.", l.Refresh), Only: FormatHTML})
	}
	return s
}

// query joins a page's query parameters.
func query(params ...string) string {
	kept := slices.DeleteFunc(params, func(p string) bool { return p == "" })
	if len(kept) == 0 {
		return ""
	}
	return "?" + strings.Join(kept, "&")
}

// maxLiveIDs is how many request IDs of a suspect its row shows: the
// latest, enough to look up in a log.
const maxLiveIDs = 3

// watchSuspectsSection lists the suspects since the watch began, the latest
// first; those that last are marked failing.
func watchSuspectsSection(l *Live) Section {
	s := Section{Heading: "Suspects since the watch began", ID: "suspects", Nav: "Suspects"}
	if len(l.Suspects) == 0 {
		s.Blocks = []Block{Para{Text: "None: no address, family or instance has failed more than the rest since " + clock(l.Since) + " UTC."}}
		return s
	}
	tb := Table{Marks: true, TextCap: 20, More: "suspects: the page in Markdown or HTML lists every one", Cols: []Col{
		{Head: "Suspect", Label: true, Fit: true}, {Head: "Failing since"}, {Head: "Detected", Prio: 1},
		{Head: "Ended"}, {Head: "Failed at detection", Short: "Failed", Right: true, Prio: 2},
		{Head: "Request IDs of its failures", Short: "Request IDs", Prio: 3, Under: true, List: true},
	}}
	for i := len(l.Suspects) - 1; i >= 0; i-- {
		su := l.Suspects[i]
		ended := "still failing"
		if !su.Ended.IsZero() {
			ended = clock(su.Ended)
			if su.Retired {
				ended += " (retired)"
			}
		}
		tb.Rows = append(tb.Rows, Row{Failing: su.Ended.IsZero(), Cells: []string{su.What, clock(su.Since), clock(su.Detected), ended,
			fmt.Sprintf("%d of %d", su.Failures, su.Requests), strings.Join(su.IDs[max(len(su.IDs)-maxLiveIDs, 0):], " ")}})
	}
	tb.Notes = []string{"Times are UTC. A suspect fails more than the rest of its host; pinprobe logs joins its request IDs with the gateway's log."}
	s.Blocks = []Block{tb}
	return s
}
