package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// JSON writes the pinprobe.report/v1 document, indented, as this
// pinprobe's revision: what it read of a report of another revision is
// written as one of its own.
func JSON(w io.Writer, r *Report) error {
	c := *r
	c.Schema, c.Revision, r = Schema, Revision, &c
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // bodies hold HTML; keep them readable
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	return nil
}
