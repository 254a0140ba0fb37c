package render

import (
	"io"

	"github.com/pinprobe/pinprobe/internal/report"
)

// HTMLBrief writes the brief report (--brief) as one self-contained page,
// one screen of it (see briefPage). Like HTML, it loads nothing and runs
// no script.
func HTMLBrief(w io.Writer, r *report.Report) error {
	return writePageHTML(w, briefPage(NewView(r)))
}
