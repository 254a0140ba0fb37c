// Package report is the pinprobe.report/v1 document: its types (Report and
// everything in it, the verdict's and the vantage breakdown's among them;
// the vantage names, CheckVantage and HostVantage), reading a saved one
// (Read, CheckSaved), its invariants (Validate), the tallies every
// scope's counts roll up into (Tally for the aggregator, StatsSum for a
// merge of saved ones), the histograms it keeps (Hist: hdr's layout,
// quantiles and encoding, only the buckets in use), the timeline's latency
// bins (LatencyTally, Latencies: p50 and p99 over time), the release
// gate's checks (CheckLimits), and a report framed as lines of a log
// (WriteFrames, ReadFrames: the way out of a Kubernetes pod).
//
// It imports only the leaves stat and words: no engine (probe), and none
// of the layers built on it — collect (the aggregator), merge, judge (the
// verdict), compare and render. A test over the import graph
// (layers_test.go at the root) keeps it so.
package report
