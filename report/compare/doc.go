// Package compare compares two saved reports, before and after a change:
// every endpoint (matched by URL and address), family and the total, by
// failure rate with exact tests, latency and the answers given. Each side
// is judged afresh (package judge), so a saved verdict is never trusted.
// Its document is pinprobe.compare/v1 (JSON); package render shows it.
//
// It imports report, judge and the leaves (stat, phrase); never the engine
// (probe), collect or render.
package compare
