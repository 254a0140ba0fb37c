// Package report is the pinprobe.report/v1 document: its types (Report and
// everything in it, the verdict's among them), reading a saved one
// (ReadReport, CheckSaved), its invariants (Validate), the exact merge of
// several (Merge) with its breakdown by vantage point (VantageStats; the
// vantage names, CheckVantage and HostVantage), the tally every scope's
// counts roll up into (shared by the aggregator and Merge), the histograms
// it keeps (Hist: hdr's layout, quantiles and encoding, only the buckets in
// use), the timeline's latency bins (LatencyTally, Latencies: p50 and p99
// over time, added up exactly by Merge), and the release gate's checks
// (CheckLimits).
//
// Merging adds counts and histograms and never judges: a merged report has
// no verdict until package judge makes one.
//
// It imports only the leaves stat and words: no engine
// (probe), and none of the layers built on it — collect (the aggregator),
// judge (the verdict), compare and render. A test over the import graph
// (layers_test.go at the root) keeps it so.
package report
