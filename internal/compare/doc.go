// Package compare compares two saved reports, before and after a change:
// every endpoint (matched by URL and address, or with MatchHost by URL
// without its port), instance, family and the total, by failure rate with
// exact tests, by latency at the median and the 99th percentile (exact
// tests of the histograms, beyond a practical minimum, Tolerance), and by
// the answers given. Reports with nothing in common are said to be
// (Disjoint), and what one side alone probed is never an
// improvement. Each side is judged afresh (package judge), so a saved
// verdict is never trusted. Its document is pinprobe.compare/v1 (JSON);
// package render shows it.
//
// It imports report, judge and the leaves (stat, words); never the engine
// (probe), collect or render.
package compare
