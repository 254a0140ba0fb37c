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
	// (see BriefView); JSON is always whole.
	Brief bool
	// Detail makes the text report whole: the verdict's statistics and
	// every block (see reportPage); the other formats always are.
	Detail bool
}

// Text returns the terminal renderer.
func Text(o Options) Renderer {
	return func(w io.Writer, r *report.Report) error { return writeText(w, r, o) }
}

// Formats lists the --format values available, in help order.
var Formats = []string{"text", "json", "markdown", "html", "log-lines"}

// ForFormat returns the renderer of a --format value.
func ForFormat(name string, o Options) (Renderer, error) {
	switch name {
	case "text":
		return Text(o), nil
	case "json":
		return report.JSON, nil
	case "log-lines": // the JSON, framed for a container's log
		return report.WriteFrames, nil
	case "markdown":
		return func(w io.Writer, r *report.Report) error { return writeMarkdown(w, r, o) }, nil
	case "html":
		if o.Brief {
			return HTMLBrief, nil
		}
		return HTML, nil
	}
	return nil, fmt.Errorf("unknown format %q (want %s)", name, strings.Join(Formats, ", "))
}
