package probe

// Options returns the options the run goes by, as Start normalised them
// (defaults filled, limits applied): what a report's plan says was asked.
func (r *Run) Options() Options { return r.opts }
