// Package join joins a saved run (a pinprobe.report/v1 document) with a
// gateway's access logs (package accesslog) and says, per backend the
// gateway routed to, per gateway instance and per listener, what the run's
// requests got: its document is pinprobe.logs/v1 (Join, written by JSON;
// package render shows it).
//
// Entry points: New starts a join of one report; Joiner.Add reads one log
// (a stream of accesslog.Records, never held whole); Joiner.Finish places
// what it read, estimates the clock offset between pinprobe and the
// gateway, and judges the backends.
//
// A log line belongs to the run when it carries one of the run's request
// IDs, or else when its client address is the run's and its time lies in
// the run's window, shifted by the measured offset. Lines of the run's
// clients in the window are held compactly, at most a bound proportional
// to the run's requests (MaxHeld); what is past it is counted. Every string
// that came from a log is cleaned (words.SafeText) and bounded where it
// enters the document.
//
// It imports report, accesslog and the leaves (stat, words); never the
// engine (probe), collect, judge, compare or render.
package join
