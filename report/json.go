package report

import (
	"encoding/json"
	"fmt"
	"io"
)

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
