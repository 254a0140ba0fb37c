package report

// Verdict statuses.
const (
	VerdictOK           = "ok"
	VerdictConcentrated = "concentrated"
	VerdictSpread       = "spread"
	VerdictNoData       = "no-data"
)

// Verdict says where failures concentrate, with the evidence: which
// families, addresses, instances (values of an instance header) or
// connections of an address fail, and how sure that is.
type Verdict struct {
	Status string `json:"status"`
	// Headline names every suspect and how it fails, grouped where that is
	// shorter: the line a person reads first ("IPv6 (::1) answers 502;
	// X-Served-By: gw-3 behind 127.0.0.2 answers 502"), then, in a merge
	// of runs from several vantage points, the vantages that see an address
	// fail more than the others ("only eu-west sees ::1 fail"; with no
	// suspect, after "failures not attributable to one address"). An
	// outage, every address failing nearly every request, comes first
	// ("every request to the only address, 127.0.0.1, timed out"). Empty
	// when nothing is blamed and there is no outage.
	Headline string `json:"headline"`
	// Summary says the verdict in sentences: the headline, then the
	// evidence for each suspect.
	Summary  string    `json:"summary"`
	Suspects []Suspect `json:"suspects"`
	// Tests lists every comparison made, suspect or not, so the reader can
	// check the reasoning.
	Tests []Test `json:"tests"`
	// Notes are further findings in plain sentences, shown beside the
	// summary: what was not tested, what the data cannot tell apart.
	Notes []string `json:"notes"`
	// Slow lists the scopes whose latency is significantly and materially
	// higher than the rest's; they never make a run fail.
	Slow []SlowFinding `json:"slow"`
	// Vantages are the significant vantage tests (TestVantage): endpoints
	// that fail more from one vantage point than from the others, which
	// the summary names; absent when none.
	Vantages []Test `json:"vantages,omitempty"`
	// Level is how sure the verdict is: the significance level it was
	// judged at.
	Level Level `json:"level"`
	// Outage is set when every address that got requests failed nearly
	// every one of them (at least 90%): the service is down, on its only
	// address or on every one, rather than one backend failing. The
	// status stays spread (concentrated when some address fails more
	// still), and the headline says the outage first.
	Outage bool `json:"outage,omitempty"`
}

// Level is the significance level of a verdict: every failure test was
// made at Each, Alpha split over the Tests made (Bonferroni), so that the
// chance that any scope is named wrongly is at most Alpha; latency tests
// get Alpha of their own, split over theirs (SlowEach). A run judged once
// has Alpha 0.001; a run judged at every look of --until-verdict spends
// its 0.001 over Looks looks, and Last marks the look made when the run
// ended without having stopped.
type Level struct {
	Alpha    float64 `json:"alpha"`
	Each     float64 `json:"each"`
	Tests    int     `json:"tests"`
	SlowEach float64 `json:"slow_each"`
	Looks    int     `json:"looks,omitempty"`
	Last     bool    `json:"last,omitempty"`
}

// Suspect is what the verdict blames: an address of a URL whose failures
// are significantly above the rest's (Kind "endpoint"), an instance named
// by a response header (Kind "group", Group "X-Served-By: gw-3"), or some
// connections of an address, on which failures repeat while connections
// open at the same moment do not fail (Kind "connections": one or more
// instances behind the address). Each fault is one suspect: an instance
// whose failures are those of its address's failing connections is named
// once, as the instance.
type Suspect struct {
	Kind string `json:"kind"`
	// How says how it fails, as a verb phrase: "answers 502", "resets
	// connections and answers 503", "answers 503 in 3 windows of about
	// 1 s".
	How string `json:"how"`
	// Group is a group suspect's "HEADER: VALUE", Header and Value its
	// parts.
	Group  string `json:"group,omitempty"`
	Header string `json:"header,omitempty"`
	Value  string `json:"value,omitempty"`
	// Agrees names the value of an instance header that coincides with an
	// address suspect: every response of the address carried it, and no
	// other address's did, so the data cannot tell the two apart ("X-Backend:
	// ::1"). The address is what pinprobe pinned, so the address is named.
	Agrees string `json:"agrees,omitempty"`
	// Addresses lists where a group suspect's failed responses came from,
	// most first. A group behind one address has it in Address too.
	Addresses []string `json:"addresses,omitempty"`
	// Connections and FailingConnections count an address's connections
	// and those with a failure, for Kind "connections": among the first
	// MaxConnRecords, kept one by one, when it had more. A group behind
	// one address whose failing connections are the same failed requests
	// as its own (judge.SameShare of each in common) has them too: they
	// are its evidence, not a second suspect.
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

// Test kinds: what a Test compares.
const (
	TestFamily   = "family"   // a family against the other
	TestTarget   = "target"   // a URL against the other URLs
	TestEndpoint = "endpoint" // an address against the other addresses of its URL
	// TestBeyond compares an address, leaving out the responses of the
	// failing instances behind it, with the other addresses likewise.
	TestBeyond = "address-beyond-instances"
	TestGroup  = "group" // an instance against the other values of its header
	// TestGroupWithin compares an instance with the other values of its
	// header on the same addresses (stratified by address).
	TestGroupWithin = "group-within-address"
	// TestConnections: on the connections of an address, requests after a
	// failure on their connection against those after successes only,
	// stratified by stretch of the run.
	TestConnections = "connections"
	// TestMoments: the same, among requests sent at the same moment on
	// different connections.
	TestMoments = "moments"
	// TestTime: whether an address's failures vary over time more than
	// chance would (its timeline buckets).
	TestTime = "time"
	// TestVantage compares an endpoint's requests from one vantage point
	// of a merged report with its requests from the other vantages.
	TestVantage = "vantage"
)

// Test is one exact test of a scope against the rest: a family against the
// other family, a target (URL) against the other targets, an endpoint
// against the other endpoints of its target, an instance against the other
// instances, or what happens on the connections of an address.
type Test struct {
	// Kind is one of the Test* kinds; Scope says the scope in words
	// ("family ipv6", "endpoint ::1 (URL)", "group X-Served-By: gw-3").
	Kind    string `json:"kind"`
	Scope   string `json:"scope"`
	Family  string `json:"family,omitempty"`
	Address string `json:"address,omitempty"`
	Target  string `json:"target,omitempty"`
	Header  string `json:"header,omitempty"`
	Value   string `json:"value,omitempty"`
	// Vantage is a vantage test's vantage point.
	Vantage string `json:"vantage,omitempty"`
	// Requests and Failed count the scope's requests; RestFailed and
	// RestTotal the rest it is compared with. For the connection tests,
	// the scope is the requests after a failure on their connection.
	Requests    int64      `json:"requests"`
	Failed      int64      `json:"failed"`
	FailureRate float64    `json:"failure_rate"`
	CI95        [2]float64 `json:"ci95"`
	RestFailed  int64      `json:"rest_failed"`
	RestTotal   int64      `json:"rest_requests"`
	P           float64    `json:"p"` // one-sided: the scope fails more than the rest
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
	Kind  string `json:"kind"`  // TestEndpoint or TestGroup
	Scope string `json:"scope"` // "endpoint ::1 (URL)" or "group X-Served-By: gw-3"
	// Address and Target name an endpoint; Header and Value a group.
	Address string `json:"address,omitempty"`
	Target  string `json:"target,omitempty"`
	Header  string `json:"header,omitempty"`
	Value   string `json:"value,omitempty"`
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
