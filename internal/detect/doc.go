// Package detect is the watch's verdict: sequential change detectors made
// for looking at every request, forever.
//
// A run's judge controls its errors over one run; a watch looks at every
// request for weeks, where a test repeated at each look would raise false
// alarms without end. Each scope (an address, a family, an instance) has a
// one-sided Bernoulli CUSUM of its failures against the failure rate of
// the rest of its host (the baseline, decayed with a half-life, floored at
// Params.Floor): it starts a suspect when the log-likelihood ratio of "this
// scope fails at Ratio times the baseline" against "it fails like the
// rest" climbs past H, and dates the start at the request after the
// statistic last stood at zero (the CUSUM's estimate of the change point).
// A second CUSUM, run while a suspect lasts, ends it when "it fails like
// the rest again" beats "it fails at the rate it failed at while suspect"
// by HEnd, dated the same way. An outage is every address of a host
// failing at once: each address also has an absolute CUSUM (Outage0
// against Outage1), and an outage lasts while all of them are raised.
//
// The guarantee is the CUSUM's: its average run length to a false alarm
// grows exponentially with H (Lorden), whatever the number of looks. The
// figures for the default parameters are measured by simulation in
// detect_test.go and written in docs/watch.md. The detector keeps no
// history: its memory is a few numbers per scope. A restart starts it
// afresh.
//
// Entry points: New, Detector.Observe, Detector.Decay, Detector.Forget.
// It imports nothing of ours.
package detect
