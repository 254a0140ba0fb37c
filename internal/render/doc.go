// Package render shows documents to people: reports, comparisons (compare),
// logs joins (join) and the preflight's checks. NewView prepares one view of a
// report (rows, labels and sentences, said once); each document is built once
// as a Page (page.go) that writePageText, writePageMarkdown and writePageHTML
// lay out. Writers return every write error, escape what came from outside for
// their format and sort what they print; nothing here computes statistics.
//
// It imports report, compare, join and the leaves; never probe, collect, merge
// or judge (compare judges for it).
package render
