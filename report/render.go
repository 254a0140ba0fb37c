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

// Text returns the terminal renderer; color adds ANSI colours for failing rows.
func Text(color bool) Renderer {
	return func(w io.Writer, r *Report) error { return writeText(w, r, color) }
}

// Formats lists the --format values available, in help order.
var Formats = []string{"text", "json", "markdown"}

// ForFormat returns the renderer of a --format value.
func ForFormat(name string, color bool) (Renderer, error) {
	switch name {
	case "text":
		return Text(color), nil
	case "json":
		return JSON, nil
	case "markdown":
		return Markdown, nil
	}
	return nil, fmt.Errorf("unknown format %q (want %s)", name, strings.Join(Formats, ", "))
}
