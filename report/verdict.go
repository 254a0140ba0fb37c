package report

// Verdict statuses.
const (
	VerdictOK           = "ok"
	VerdictConcentrated = "concentrated"
	VerdictSpread       = "spread"
	VerdictNoData       = "no-data"
)

// Verdict says whether failures concentrate on some addresses or a family.
type Verdict struct {
	Status   string    `json:"status"`
	Summary  string    `json:"summary"`
	Suspects []Suspect `json:"suspects"`
	// Tests lists every comparison made, suspect or not, so the reader can
	// check the reasoning.
	Tests []Test `json:"tests"`
	// Notes are further findings in plain sentences, shown beside the
	// summary: what was not tested, what looks like a second fault.
	Notes []string `json:"notes"`
	// Slow lists the scopes whose latency is significantly and materially
	// higher than the rest's; they never make a run fail.
	Slow []SlowFinding `json:"slow"`
}

// Suspect is what the verdict blames: an endpoint whose failures are
// significantly above the rest's (Kind "endpoint"), an instance named by a
// response header (Kind "group", Group "X-Served-By: gw-3"), or some
// connections of an address, to which failures stick (Kind
// "connections": one or more instances behind the address).
type Suspect struct {
	Kind  string `json:"kind"`
	Group string `json:"group,omitempty"`
	// Connections and FailingConnections count an address's connections
	// and those with a failure, for Kind "connections".
	Connections        int64 `json:"connections,omitempty"`
	FailingConnections int64 `json:"failing_connections,omitempty"`

	Address     string     `json:"address"`
	Family      string     `json:"family"`
	Target      string     `json:"target"`
	Requests    int64      `json:"requests"`
	Failed      int64      `json:"failed"`
	FailureRate float64    `json:"failure_rate"`
	CI95        [2]float64 `json:"ci95"`
	P           float64    `json:"p"`
}

// Test is one exact test of a scope against the rest: a family against the
// other family, a target (URL) against the other targets, or an endpoint
// against the other endpoints of its target.
type Test struct {
	Scope       string     `json:"scope"` // "family ipv6", "target URL" or "endpoint ::1 (URL)"
	Requests    int64      `json:"requests"`
	Failed      int64      `json:"failed"`
	FailureRate float64    `json:"failure_rate"`
	CI95        [2]float64 `json:"ci95"`
	RestFailed  int64      `json:"rest_failed"`
	RestTotal   int64      `json:"rest_requests"`
	P           float64    `json:"p"` // one-sided Fisher exact: the scope fails more than the rest
	Significant bool       `json:"significant"`
}


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

// RepeatCounts is one stratum of an endpoint's reused requests (not the
// first request of a connection), split by whether their connection had
// already failed.
type RepeatCounts struct {
	AfterFailure       int64 `json:"after_failure"` // requests on a connection that had failed before
	AfterFailureFailed int64 `json:"after_failure_failed"`
	AfterOK            int64 `json:"after_ok"` // requests on a connection with only successes so far
	AfterOKFailed      int64 `json:"after_ok_failed"`
}

// SlowResult says whether a scope's latency is higher than the rest's.
type SlowResult struct {
	Requests     int64   `json:"requests"`
	RestRequests int64   `json:"rest_requests"`
	MedianMS     float64 `json:"median_ms"`
	RestMedianMS float64 `json:"rest_median_ms"`
	P90MS        float64 `json:"p90_ms"`
	RestP90MS    float64 `json:"rest_p90_ms"`
	P99MS        float64 `json:"p99_ms"`
	RestP99MS    float64 `json:"rest_p99_ms"`
	// Ratio is the scope's median over the rest's (0 when the rest's is 0).
	Ratio float64 `json:"ratio"`
	// Share is the fraction of the percentiles 0.5, 1.5, …, 99.5 at which
	// the scope is at least SlowRatio times and SlowMinDiff slower than the
	// rest at the same percentile: 0.25 reads "its slowest quarter of
	// requests took 1.5× as long or more".
	Share float64 `json:"share"`
	// Superiority is the probability that a request of the scope is slower
	// than one of the rest (ties count half): U/(n·m), 0.5 when alike.
	Superiority float64 `json:"superiority"`
	// P is the one-sided Mann-Whitney p-value that the scope is slower.
	P           float64 `json:"p"`
	Method      string  `json:"method"` // "exact", "normal" or "none"
	Significant bool    `json:"significant"`
	Slow        bool    `json:"slow"`   // Significant and Share >= SlowMinShare
	Reason      string  `json:"reason"` // why not Slow; empty when Slow
}
