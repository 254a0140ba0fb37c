package report

// Suspect kinds: what a suspect is.
const (
	SuspectEndpoint    = "endpoint"    // an address of a URL fails more than the others
	SuspectGroup       = "group"       // an instance, named by a response header, fails more than the others
	SuspectConnections = "connections" // failures stick to some connections of an address: an instance behind it
)

// SlowFinding is a scope whose latency is significantly and materially
// higher than the rest's (see SlowerTest). It is named beside the verdict
// and never makes a run fail.
type SlowFinding struct {
	Scope string `json:"scope"` // "endpoint ::1 (URL)" or "group X-Served-By: gw-3"
	SlowResult
}
