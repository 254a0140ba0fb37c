// Package report is the pinprobe.report/v1 document: its types, reading a saved
// one (Read, CheckSaved), its invariants (Validate), the tallies its scopes
// roll up into (Tally, StatsSum), its histograms (Hist), the timeline's latency
// bins (LatencyTally), the release gate's checks (CheckLimits), and a report
// framed as lines of a log (WriteFrames, ReadFrames: the way out of a pod).
//
// It imports only stat and words: no engine and none of the layers built on it
// (collect, merge, judge, compare, render); layers_test.go keeps it so.
package report
