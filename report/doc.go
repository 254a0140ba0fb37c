// Package report tallies probe results by endpoint, address family and in
// total, and renders the pinprobe.report/v1 document as text or JSON.
//
// An Aggregator has one writer: the goroutine that calls Add for every
// result and Close once at the end. Renderers are func(io.Writer, *Report)
// error and sort everything they print, so output is stable.
package report
