// Package compare compares two saved reports, before and after a change: every
// endpoint (matched by URL and address, or with MatchHost by URL without its
// port), instance, family and the total, by failure rate, latency (p50 and p99,
// beyond Tolerance) and the answers given. Each side is judged afresh (package
// judge); reports with nothing in common are Disjoint, and what one side alone
// probed is never an improvement.
//
// It imports report, judge and the leaves; never probe, collect or render.
package compare
