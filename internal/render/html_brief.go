package render

import (
	"bytes"
	_ "embed" // the brief page's template
	"fmt"
	"html/template"
	"io"

	"github.com/pinprobe/pinprobe/internal/report"
)

//go:embed html_brief.tmpl
var htmlBriefSource string

// htmlBriefTemplate is the brief page: the full page's functions, style
// sheet and small templates (a list of items, an interval bar), and its
// own layout.
var htmlBriefTemplate = template.Must(template.Must(htmlTemplate.Clone()).New("brief").Parse(htmlBriefSource))

// htmlBriefPage is what the brief page shows: the page's rows, and the
// brief view.
type htmlBriefPage struct {
	*htmlPage
	B *BriefView
}

// HTMLBrief writes the brief report (--brief) as one self-contained page,
// one screen of it (see BriefView): the verdict, the release gate, who
// answered, the families and the suspects, one failed request of each
// suspect and the log query. Like HTML, it loads nothing and runs no
// script.
func HTMLBrief(w io.Writer, r *report.Report) error {
	v := NewView(r)
	var buf bytes.Buffer
	if err := htmlBriefTemplate.ExecuteTemplate(&buf, "brief", htmlBriefPage{newHTMLPage(v), v.Brief()}); err != nil {
		return fmt.Errorf("render html report: %w", err)
	}
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}
