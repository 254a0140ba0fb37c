// Package collect turns the engine's results into a report: an Aggregator
// counts every probe.Result (Add, from one goroutine) by endpoint, family,
// instance header and connection, keeps the evidence (samples, fingerprints,
// phases, timeline, client ports), scrubs the run's secrets out of what
// came back, and builds the pinprobe.report/v1 document (Close). Live gives
// running counts, and the rate and latency of the last seconds, to the
// progress display, and SoFar what a look of
// --until-verdict judges.
//
// It makes no verdict: the caller judges the closed report with package
// judge. It imports probe, report and the leaves (stat, words); never
// judge, compare or render.
package collect
