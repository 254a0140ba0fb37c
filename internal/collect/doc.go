// Package collect turns the engine's results into a report: an Aggregator counts
// every probe.Result (Add, from one goroutine) by endpoint, family, instance and
// connection, keeps the evidence with the run's secrets scrubbed, and builds the
// pinprobe.report/v1 document (Close); Live feeds the progress display, SoFar
// each look of --until-verdict. It makes no verdict (package judge does).
//
// It imports probe, report and the leaves; never judge, compare or render.
package collect
