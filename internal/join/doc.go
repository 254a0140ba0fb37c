// Package join joins a saved run (pinprobe.report/v1) with a gateway's access
// logs (accesslog) and says, per backend, gateway instance and listener, what
// the run's requests got: pinprobe.logs/v1. New starts a join, Joiner.Add reads
// a log as a stream, Joiner.Finish places the lines, estimates the clock offset
// and judges the backends. A line is the run's by its request ID, or by client
// address and time in the run's window; held lines are bounded (MaxHeld), and
// strings from a log are cleaned and bounded where they enter.
//
// It imports report, accesslog, stat, words; never probe, collect, judge, compare, render.
package join
