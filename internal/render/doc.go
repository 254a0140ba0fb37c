// Package render shows reports to people. NewView prepares one view of a
// report — rows, labels and sentences, said once — and the text, Markdown
// and HTML renderers are views of it: they read its fields, never re-parse
// its strings, and compute no statistics. View.Brief picks what a brief
// report (--brief) shows in each of them, one screen of it. It also
// renders comparisons (package compare), joins of a run with access logs
// (package join) and the preflight's checks (report.PreflightCheck).
//
// A comparison, a logs join and the preflight's checks are built once as
// a Page (page.go), which writePageText, writePageMarkdown and
// writePageHTML lay out; so are most of the report's sections
// (report_page.go), and the rest move there in turn.
//
// Renderers are func(io.Writer, *report.Report) error; each returns every
// write error, escapes everything that came from outside for its own format
// and sorts what it prints, so output is stable.
//
// It imports report, compare, join and the leaves (stat, words); never the
// engine (probe), collect, merge or judge (compare judges for it).
package render
