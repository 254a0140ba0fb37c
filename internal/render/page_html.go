package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"

	"github.com/pinprobe/pinprobe/internal/words"
)

// pageCSS is the style of a page written as HTML.
const pageCSS = `body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:90em;padding:0 1em;color:#222}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}h3{font-size:1em}table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:.2em .35em;text-align:left;vertical-align:top}table{font-size:.9em}th{background:#f3f3f3}td.r,th.r{text-align:right}
.fail td{color:#a00}.lead{border-left:4px solid #a00;padding-left:.6em}.ok{border-color:#080}
.table{overflow-x:auto}pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f6f6;padding:.5em}table.scroll td,td.r{white-space:nowrap}`

// pageHTMLTemplate walks a page's sections; html/template escapes every
// value for where it lands, and text shows control characters as escapes.
var pageHTMLTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"text": func(s string) string { return words.SafeText(s, false) },
	"code": func(s string) string { return words.SafeText(s, true) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<title>{{text .P.Title}}</title><style>{{.CSS}}</style></head><body>
<h1>{{text .P.Title}}</h1>
<div class="lead{{if not .P.Bad}} ok{{end}}">{{if or .P.Lead.Lead .P.Lead.Text}}<p><strong>{{text .P.Lead.Lead}}</strong> {{text .P.Lead.Text}}</p>{{end}}
{{range .Top}}{{template "para" .}}{{end}}</div>
{{range .Sections}}{{if .Heading}}<h2>{{text .Heading}}</h2>
{{end}}{{range .Blocks}}{{with .Para}}{{template "para" .}}{{end}}{{with .Code}}{{if .Title}}<h3>{{text .Title}}</h3>
{{end}}<pre><code>{{code .Text}}</code></pre>
{{end}}{{with .List}}<ul>{{range .Items}}<li{{if .Failing}} class="fail"{{end}}>{{if .Failing}}✗ {{end}}{{if .Lead}}<strong>{{text .Lead}}:</strong> {{end}}{{text .Text}}{{with .Tail}} · {{text .}}{{end}}{{range .Subs}} · {{text .}}{{end}}</li>{{end}}</ul>
{{end}}{{with .Table}}{{if .Title}}<h3>{{text .Title}}</h3>
{{end}}{{if .Intro}}<p>{{text .Intro}}</p>
{{end}}<div class="table"><table{{if .Scroll}} class="scroll"{{end}}><tr>{{if .Marks}}<th></th>{{end}}{{range .Cols}}<th{{if .Right}} class="r"{{end}}>{{text .Head}}</th>{{end}}</tr>
{{range .Rows}}<tr{{if .Failing}} class="fail"{{end}}>{{range .Cells}}<td{{if .Right}} class="r"{{end}}>{{if .Code}}<code>{{text .Text}}</code>{{else}}{{text .Text}}{{end}}</td>{{end}}</tr>
{{end}}</table></div>
{{range .Notes}}<p>{{text .}}</p>
{{end}}{{end}}{{end}}{{end}}{{with .P.Footer}}<p><em>{{text .}}</em></p>
{{end}}</body></html>
{{define "para"}}<p>{{if .Lead}}<strong>{{text .Lead}}</strong> {{end}}{{text .Text}}{{with .Code}} · <code>{{text .}}</code>{{end}}</p>
{{end}}`))

// htmlBlock is one block of a page as the template reads it: one of its
// fields is set.
type htmlBlock struct {
	Para  *Para
	List  *List
	Table *htmlTable
	Code  *Code
}

type htmlTable struct {
	Title, Intro  string
	Marks, Scroll bool
	Cols          []Col
	Rows          []pageRow
	Notes         []string
}

type pageRow struct {
	Failing bool
	Cells   []pageCell
}

type pageCell struct {
	Text        string
	Right, Code bool
}

// writePageHTML writes p as one self-contained HTML page: it loads
// nothing and runs no script.
func writePageHTML(w io.Writer, p *Page) error {
	sum := sha256.Sum256([]byte(pageCSS))
	type section struct {
		Heading string
		Blocks  []htmlBlock
	}
	data := struct {
		P        *Page
		Top      []Para
		Sections []section
		CSS      template.CSS
		CSP      string
	}{P: p, CSS: template.CSS(pageCSS),
		CSP: "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"}
	for _, b := range p.Top {
		if b, ok := b.(Para); ok && shows(b.Only, FormatHTML) {
			data.Top = append(data.Top, b)
		}
	}
	for _, s := range p.Sections {
		hs := section{Heading: s.Heading}
		for _, b := range s.Blocks {
			if !shows(b.only(), FormatHTML) {
				continue
			}
			switch b := b.(type) {
			case Para:
				hs.Blocks = append(hs.Blocks, htmlBlock{Para: &b})
			case List:
				hs.Blocks = append(hs.Blocks, htmlBlock{List: &b})
			case Table:
				hs.Blocks = append(hs.Blocks, htmlBlock{Table: newHTMLTable(&b)})
			case Code:
				hs.Blocks = append(hs.Blocks, htmlBlock{Code: &b})
			}
		}
		if len(hs.Blocks) > 0 {
			data.Sections = append(data.Sections, hs)
		}
	}
	var buf bytes.Buffer
	if err := pageHTMLTemplate.Execute(&buf, data); err != nil {
		return fmt.Errorf("render html: %w", err)
	}
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	return nil
}

func newHTMLTable(tb *Table) *htmlTable {
	cols, keep := tb.shown(FormatHTML)
	ht := &htmlTable{Title: tb.Title, Intro: tb.Intro, Marks: tb.Marks, Scroll: tb.Scroll, Cols: cols, Notes: tb.Notes, Rows: make([]pageRow, len(tb.Rows))}
	lead := 0
	if tb.Marks {
		lead = 1
	}
	cells := make([]pageCell, len(tb.Rows)*(lead+len(keep))) // one allocation for every cell
	for r := range tb.Rows {
		src := &tb.Rows[r]
		row := cells[: lead+len(keep) : lead+len(keep)]
		cells = cells[lead+len(keep):]
		if tb.Marks {
			row[0] = pageCell{Text: markOf(src.Failing)}
		}
		for j, i := range keep {
			row[lead+j] = pageCell{Text: src.Cells[i], Right: cols[j].Right, Code: src.Code && j > 0}
		}
		ht.Rows[r] = pageRow{Failing: src.Failing, Cells: row}
	}
	return ht
}
