package probe

// Stop ends the sending now, as the end of Duration would: no request is
// started after it, and the requests in flight finish and report.
func (r *Run) Stop() { r.stop() }
