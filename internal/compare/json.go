package compare

import (
	"encoding/json"
	"fmt"
	"io"
)

// JSON writes the pinprobe.compare/v1 document, indented.
func JSON(w io.Writer, c *Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("write json comparison: %w", err)
	}
	return nil
}
