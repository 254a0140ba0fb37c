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

// endpoint returns the endpoint of target at address, nil when none.
func (r *Report) FindEndpoint(target, address string) *Endpoint {
	for i := range r.Endpoints {
		if e := &r.Endpoints[i]; e.Target == target && e.Address == address {
			return e
		}
	}
	return nil
}
