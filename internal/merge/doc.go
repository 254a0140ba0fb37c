// Package merge adds saved pinprobe.report/v1 documents up into one, exactly
// where they allow it: the reports of several processes that shared a run
// (N machines or regions, N pods each sending R/N), or of several runs
// (Merge, with the rules it states), with the breakdown by vantage point
// (report.VantageStats). SameRun says whether two reports are of one run.
//
// Merging adds counts and histograms and never judges: a merged report has
// no verdict until package judge makes one.
//
// It imports report and the leaves (stat, words); never the engine
// (probe), collect or judge.
package merge
