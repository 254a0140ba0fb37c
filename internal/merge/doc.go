// Package merge adds saved pinprobe.report/v1 documents up into one, exactly
// where they allow it: several processes of one run or several runs (Merge),
// with the breakdown by vantage (report.VantageStats); SameRun says whether two
// reports are of one run. It never judges: a merged report has no verdict until
// package judge makes one.
//
// It imports report and the leaves; never probe, collect or judge.
package merge
