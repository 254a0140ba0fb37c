package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Renderer writes a report in one format.
type Renderer func(io.Writer, *Report) error

// JSON writes the pinprobe.report/v1 document, indented.
func JSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // bodies hold HTML; keep them readable
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	return nil
}

// Options tune the renderers for where their output goes.
type Options struct {
	// Color adds ANSI colours to the text report (failing rows in red).
	Color bool
	// Width is the text report's width in columns; 0 means DefaultWidth.
	Width int
	// Brief makes the Markdown report short enough for a ticket.
	Brief bool
}

// Text returns the terminal renderer.
func Text(o Options) Renderer {
	return func(w io.Writer, r *Report) error { return writeText(w, r, o) }
}

// Formats lists the --format values available, in help order.
var Formats = []string{"text", "json", "markdown", "html"}

// ForFormat returns the renderer of a --format value.
func ForFormat(name string, o Options) (Renderer, error) {
	switch name {
	case "text":
		return Text(o), nil
	case "json":
		return JSON, nil
	case "markdown":
		return func(w io.Writer, r *Report) error { return writeMarkdown(w, r, o) }, nil
	case "html":
		return HTML, nil
	}
	return nil, fmt.Errorf("unknown format %q (want %s)", name, strings.Join(Formats, ", "))
}
