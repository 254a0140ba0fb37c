package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/pinprobe/pinprobe/internal/join"
	"github.com/pinprobe/pinprobe/internal/words"
)

const joinCSS = `body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#222}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}th{background:#f3f3f3}
.fail td{color:#a00}.conclusion{font-weight:bold;border-left:4px solid #a00;padding-left:.6em}.ok{border-color:#080}`

// joinHTMLTemplate is the join's page; html/template escapes every value
// for where it lands, and text shows control characters as escapes.
var joinHTMLTemplate = template.Must(template.New("join").Funcs(template.FuncMap{
	"text":  func(s string) string { return words.SafeText(s, false) },
	"title": func(s string) string { return words.Capitalize(strings.ToLower(s)) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<title>pinprobe logs</title><style>{{.CSS}}</style></head><body>
<h1>pinprobe logs</h1>
<p class="conclusion{{if not .Failing}} ok{{end}}"><strong>{{text .Status}}</strong> {{text .Conclusion}}</p>
<h2>The run and the logs</h2>
<table>
<tr><th>Run</th><td>{{text .Run}}</td></tr>
{{range .Logs}}<tr><th>Log</th><td>{{text .}}</td></tr>
{{end}}<tr><th>Clock offset</th><td>{{text .Offset}}</td></tr>
<tr><th>Clients</th><td>{{text .Clients}}</td></tr>
<tr><th>Placed</th><td>{{text .Placed}}</td></tr>
{{range .NotPlaced}}<tr><th>Not placed</th><td>{{text .}}</td></tr>
{{end}}</table>
{{range .Sections}}<h2>{{title .title}}</h2>
<table><tr>{{range .head}}<th>{{.}}</th>{{end}}</tr>
{{$s := .}}{{range $i, $r := .rows}}<tr{{if index $s.failing $i}} class="fail"{{end}}>{{range $r}}<td>{{text .}}</td>{{end}}</tr>
{{end}}</table>
{{end}}{{if .Missing}}<h2>Not in the logs</h2><ul>{{range .Missing}}<li>{{text .}}</li>{{end}}</ul>{{end}}
<h2>Findings</h2><ul>{{range .Findings}}<li>{{text .}}</li>{{end}}</ul>
<p>Each backend, instance and listener tested against the rest of its kind with Fisher's exact test, at α = {{.Alpha}} split over the tests.</p>
</body></html>
`))

// JoinHTML writes a join as one self-contained HTML page: it loads
// nothing and runs no script.
func JoinHTML(w io.Writer, j *join.Join) error {
	v := newJoinView(j)
	sum := sha256.Sum256([]byte(joinCSS))
	page := struct {
		Failing                                          bool
		Status, Conclusion, Run, Offset, Clients, Placed string
		Logs, NotPlaced, Missing, Findings               []string
		Sections                                         []map[string]any
		CSS                                              template.CSS
		CSP                                              string
		Alpha                                            string
	}{Failing: j.Status == join.StatusTraced || j.Status == join.StatusUntraced, Status: joinStatusWord(j), Conclusion: v.conclusion, Run: v.run, Offset: v.offset, Clients: v.clients, Placed: v.placed,
		Logs: v.logs, NotPlaced: v.notPlaced, Missing: v.missing, Findings: v.findings,
		CSS: template.CSS(joinCSS), Alpha: words.AlphaValue(j.Alpha),
		CSP: "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"}
	for _, s := range append(append([]joinSection{}, v.sections...), v.endpoints) {
		page.Sections = append(page.Sections, map[string]any{"title": s.title, "head": s.head, "rows": s.rows, "failing": s.failing})
	}
	var buf bytes.Buffer
	if err := joinHTMLTemplate.Execute(&buf, page); err != nil {
		return fmt.Errorf("render html join: %w", err)
	}
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("write html join: %w", err)
	}
	return nil
}
