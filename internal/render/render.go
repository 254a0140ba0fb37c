package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
)

// Renderer writes a report in one format.
type Renderer func(io.Writer, *report.Report) error

// Options tune the renderers for where their output goes.
type Options struct {
	// Color adds ANSI colours to the text report (failing rows in red).
	Color bool
	// Width is the text report's width in columns; 0 means DefaultWidth.
	Width int
	// Brief makes the text, Markdown and HTML reports one screen long
	// (see briefPage); JSON is always whole.
	Brief bool
	// Detail makes the text report whole: the verdict's statistics and
	// every block (see reportPage); the other formats always are.
	Detail bool
}

// Text returns the terminal renderer: what ran, how each family and
// endpoint fared, failing rows marked ✗ (red with o.Color), narrow layouts
// dropping the least useful columns; one screen of it with o.Brief.
func Text(o Options) Renderer {
	return func(w io.Writer, r *report.Report) error { return writePageText(w, pageOf(r, o.Brief, !o.Detail), o) }
}

// pageOf is r's page: the whole report (terse: a terminal's default, see
// reportPage), or its brief form (briefPage).
func pageOf(r *report.Report, brief, terse bool) *Page {
	if brief {
		return briefPage(NewView(r))
	}
	return reportPage(NewView(r), terse)
}

// Formats lists the --format values available, in help order.
var Formats = []string{"text", "json", "markdown", "html", "log-lines"}

// ForFormat returns the renderer of a --format value.
func ForFormat(name string, o Options) (Renderer, error) {
	switch {
	case name == "text":
		return Text(o), nil
	case name == "html" && !o.Brief:
		return HTML, nil // its errors name the page
	case name == "log-lines": // the JSON, framed for a container's log
		return report.WriteFrames, nil
	}
	return forFormat(name, o, func(r *report.Report) *Page { return pageOf(r, o.Brief, false) }, report.JSON)
}

// forFormat returns the writer of a document in a --format value: its page
// (made by page) as text, Markdown or HTML, or json (nil: no such format).
func forFormat[T any](name string, o Options, page func(T) *Page, json func(io.Writer, T) error) (func(io.Writer, T) error, error) {
	switch name {
	case "text":
		return func(w io.Writer, x T) error { return writePageText(w, page(x), o) }, nil
	case "markdown":
		return func(w io.Writer, x T) error { return writePageMarkdown(w, page(x)) }, nil
	case "html":
		return func(w io.Writer, x T) error { return writePageHTML(w, page(x)) }, nil
	case "json":
		if json != nil {
			return json, nil
		}
	}
	return nil, fmt.Errorf("unknown format %q (want %s)", name, strings.Join(Formats, ", "))
}
