package join

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/pinprobe/pinprobe/internal/report"
)

// Schema names the document Join is.
const Schema = "pinprobe.logs/v1"

// Revision is the revision of pinprobe.logs/v1 written, in its "version"
// field, by the rule of report.Revision: "2" added logs[].unmatched; "3"
// the kinds traefik and gcp, logs[].partial and logs[].cannot_tell,
// missing.sampled, reason_words and logs[].placed.
const Revision = "3"

// Join statuses.
const (
	// StatusTraced: lines of the run failed, and the logs name the
	// backends they were routed to.
	StatusTraced = "traced"
	// StatusUntraced: lines of the run failed, and the logs name no
	// backend to trace them to.
	StatusUntraced = "untraced"
	// StatusNoFailure: lines of the run were found, none failed.
	StatusNoFailure = "no-failure"
	// StatusNothing: no line of the run was found.
	StatusNothing = "nothing-joined"
)

// Join is what a gateway's access logs say of one run: the
// pinprobe.logs/v1 document.
type Join struct {
	Schema  string `json:"schema"`
	Version string `json:"version"`
	// Status is the join in a word: StatusTraced, StatusUntraced,
	// StatusNoFailure or StatusNothing.
	Status string `json:"status"`
	// Conclusion is the first finding, in one sentence.
	Conclusion string `json:"conclusion"`
	Run        Run    `json:"run"`
	Logs       []Log  `json:"logs"`
	// Offset is the gateway's clock less pinprobe's, as measured.
	Offset Offset `json:"offset"`
	// Clients are the client addresses the gateway logged the run's
	// requests from.
	Clients []string `json:"clients"`
	Lines   Lines    `json:"lines"`
	// Backends, Instances and Listeners are the run's lines by where the
	// gateway sent them, took them and which gateway served them; each
	// sorted by failures, then requests, then name.
	Backends  []Scope `json:"backends"`
	Instances []Scope `json:"instances"`
	Listeners []Scope `json:"listeners"`
	// Endpoints are pinprobe's endpoints: what the run sent, and what the
	// log holds of it.
	Endpoints []Endpoint `json:"endpoints"`
	// Missing is what of the run the log does not hold.
	Missing Missing `json:"missing"`
	// Findings are the conclusions of the backend tests, strongest first.
	Findings []Finding `json:"findings"`
	// Alpha is the level every test of Findings was made at, split over
	// the tests.
	Alpha float64 `json:"alpha"`
	// ReasonWords says the reason codes of Scopes' Reasons in words,
	// where pinprobe knows the gateway's code
	// ("failed_to_connect_to_backend": "the load balancer could not
	// connect to the backend").
	ReasonWords map[string]string `json:"reason_words,omitempty"`
}

// Run names the run joined.
type Run struct {
	File      string      `json:"file,omitempty"`
	RunID     string      `json:"run_id,omitempty"`
	StartedAt report.Time `json:"started_at"`
	EndedAt   report.Time `json:"ended_at"`
	Requests  int64       `json:"requests"`
	Failed    int64       `json:"failed"`
}

// Log is one access-log file read.
type Log struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`   // nginx, haproxy, azure, alb, envoy, traefik, gcp
	Format string `json:"format"` // in words: "nginx log_format", "Azure AGWAccessLogs (CSV)"
	Gzip   bool   `json:"gzip"`
	// Logs is what the format logs of what the join reads: "client
	// port", "request ID", "backend", …
	Logs    []string `json:"logs"`
	Lines   int64    `json:"lines"`
	Records int64    `json:"records"`
	// Skipped lines did not parse as the format; SkippedAt are the first
	// of their numbers. TooLong lines were longer than accesslog.MaxLine.
	Skipped   int64   `json:"skipped"`
	SkippedAt []int64 `json:"skipped_at"`
	// Unmatched says where the first line that did not parse as a custom
	// --log-format leaves it; absent when every line parsed, or the
	// format is one pinprobe knows.
	Unmatched *Unmatched `json:"unmatched,omitempty"`
	TooLong   int64      `json:"too_long"`
	// Other counts records of the gateway's other logs (firewall,
	// performance) in the same file.
	Other int64 `json:"other"`
	// Error says why the file was not read to its end; "" when it was.
	Error string `json:"error,omitempty"`
	// Partial says why the log may hold only a sample of the requests
	// the gateway served (Google Cloud's logConfig.sampleRate); absent
	// when it holds every one.
	Partial string `json:"partial,omitempty"`
	// CannotTell says what the format cannot tell: which single request
	// a line is, when it logs neither a request ID nor the client's
	// port (its lines are placed by client address and time); the
	// instance behind a backend service; absent when nothing.
	CannotTell []string `json:"cannot_tell,omitempty"`
	// Placed counts the log's lines placed on the run, by how: the run's
	// request ID, the client port and time, the client address and time.
	Placed Placed `json:"placed"`
}

// Placed counts lines placed on the run by each means.
type Placed struct {
	ByRequestID     int64 `json:"by_request_id"`
	ByClientPort    int64 `json:"by_client_port"`
	ByClientAddress int64 `json:"by_client_address"`
}

// Unmatched is where a line of a log leaves the custom format it did not
// parse as (see accesslog.Unmatched).
type Unmatched struct {
	Line int64 `json:"line"`
	// Column is the character (from 1) where the line leaves the format;
	// FormatHas what the format has there: a literal, a variable, or a
	// variable of any text and the literal after it that the rest of the
	// line lacks; LineHas the line from there, at most 24 characters.
	// FormatHas is absent where the format ends and the line goes on, and
	// where the line follows the format to its end but a value in it (a
	// time) does not parse (LineHas absent too).
	Column    int    `json:"column"`
	FormatHas string `json:"format_has,omitempty"`
	LineHas   string `json:"line_has,omitempty"`
	// ReadsAs names the format pinprobe knows that the line reads as
	// ("nginx combined"); absent when none.
	ReadsAs string `json:"reads_as,omitempty"`
}

// Offset is the gateway's clock less pinprobe's, measured from the lines
// matched to single requests of the run.
type Offset struct {
	Measured bool `json:"measured"`
	// MS is the offset in milliseconds (gateway − pinprobe); 0 when not
	// measured.
	MS float64 `json:"ms"`
	// SpreadMS is how far the matched pairs lie from it (their
	// interquartile range, at least the log's time resolution).
	SpreadMS float64 `json:"spread_ms"`
	// Pairs is how many lines it was measured from, and By how they were
	// matched: "request ID" or "client port".
	Pairs int64  `json:"pairs"`
	By    string `json:"by,omitempty"`
	// ResolutionMS is the coarsest time resolution of the logs.
	ResolutionMS float64 `json:"resolution_ms"`
	// NoZone says a log wrote its times without a zone: read as UTC, the
	// offset holds the gateway's zone.
	NoZone bool `json:"no_zone,omitempty"`
	// Why says why it was not measured.
	Why string `json:"why,omitempty"`
}

// Lines counts the logs' requests by what the join made of them.
type Lines struct {
	// Records are the requests the logs hold; Run those placed in the
	// run, by how: ByRequestID (one of its request IDs), ByPort (client
	// port and time matched a single request of the run), ByWindow (the
	// run's client address within its window).
	Records     int64 `json:"records"`
	Run         int64 `json:"run"`
	ByRequestID int64 `json:"by_request_id"`
	ByPort      int64 `json:"by_port"`
	ByWindow    int64 `json:"by_window"`
	// Failed are the lines of the run that failed, as the log says: a
	// status of the run's --fail-status, or none.
	Failed int64 `json:"failed"`
	// NoEndpoint are lines of the run that could not be placed on one of
	// its endpoints; NoEndpointAt the first of them, "file:line".
	NoEndpoint   int64    `json:"no_endpoint"`
	NoEndpointAt []string `json:"no_endpoint_at"`
	// OtherClients are lines of other client addresses; OtherRuns carry
	// another run's request ID; Outside are of the run's clients but
	// outside its window.
	OtherClients int64 `json:"other_clients"`
	OtherRuns    int64 `json:"other_runs"`
	Outside      int64 `json:"outside"`
	// NoKnownEndpoint are lines of the run's clients whose path, host or
	// listener (the address and port they came to, once other lines came
	// to the run's) is none of the run's endpoints' (another site):
	// not placed; NoKnownEndpointAt the first of them, "file:line".
	NoKnownEndpoint   int64    `json:"no_known_endpoint"`
	NoKnownEndpointAt []string `json:"no_known_endpoint_at"`
	// Duplicates are lines logged twice: a request ID read before, or a
	// line like one of an earlier file (the same log given twice, rotated
	// files that overlap); counted once, the copies not placed.
	// DuplicatesAt are the first copies, "file:line".
	Duplicates   int64    `json:"duplicates"`
	DuplicatesAt []string `json:"duplicates_at"`
	// Preflight are lines without a request from the run's clients just
	// before it: pinprobe's preflight connection check, logged by a
	// gateway that logs connections closed before a request (HAProxy's
	// <BADREQ>). Not placed.
	Preflight int64 `json:"preflight"`
	// NotHeld are lines of the run's clients in its window past the
	// bound the join holds (MaxHeld): counted, not placed.
	NotHeld int64 `json:"not_held"`
}

// Scope is the run's lines at one backend, instance or listener.
type Scope struct {
	Name string `json:"name"`
	// Family is the backend's address family (ipv4, ipv6); "" when the
	// log names it without an address.
	Family      string  `json:"family,omitempty"`
	Requests    int64   `json:"requests"`
	Failed      int64   `json:"failed"`
	FailureRate float64 `json:"failure_rate"`
	// Status counts the statuses the gateway sent the client; "none"
	// for a request it answered with none.
	Status map[string]int64 `json:"status"`
	// BackendStatus counts what the backend answered, as logged.
	BackendStatus map[string]int64 `json:"backend_status,omitempty"`
	// Reasons counts why the gateway failed requests (ALB's
	// error_reason, Azure's ErrorInfo, HAProxy's termination state).
	Reasons map[string]int64 `json:"reasons,omitempty"`
	// Endpoints counts the lines by the pinprobe endpoint they came
	// through (its address; "?" when not known).
	Endpoints map[string]int64 `json:"endpoints"`
	// RunFailed is how many of pinprobe's failed requests were matched
	// to a line here.
	RunFailed int64 `json:"run_failed"`
	// P is the exact test of this scope's failures against the rest of
	// its kind's; 1 when not tested.
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
}

// Endpoint is one of pinprobe's endpoints and what the log holds of it.
type Endpoint struct {
	Target   string `json:"target"`
	Address  string `json:"address"`
	Family   string `json:"family"`
	Requests int64  `json:"requests"` // sent in the run
	Failed   int64  `json:"failed"`   // failed in the run
	Logged   int64  `json:"logged"`   // lines of the log placed on it
	// LoggedFailed are those of Logged that failed, as the log says.
	LoggedFailed int64 `json:"logged_failed"`
	// Missing is Requests less Logged, when more were sent than logged.
	Missing int64 `json:"missing"`
	// TrailFailed are its failed requests the report lists one by one;
	// FailedMatched those matched to their line.
	TrailFailed   int64 `json:"trail_failed"`
	FailedMatched int64 `json:"failed_matched"`
	// Backends counts its lines by backend.
	Backends map[string]int64 `json:"backends"`
}

// Missing is what of the run the logs do not hold.
type Missing struct {
	// Requests is the run's requests less the lines placed in it.
	Requests int64 `json:"requests"`
	// Trail counts the single requests the report lists that no line
	// matched, when the log logs request IDs or client ports; IDs names
	// the first of them.
	Trail int64    `json:"trail"`
	IDs   []string `json:"ids"`
	// Gaps are stretches of the run with requests sent and no line
	// logged: a log rotated away, a gateway that did not log. None is
	// listed from a sampled log.
	Gaps []Gap `json:"gaps"`
	// Sampled says a log may hold only a sample of the requests the
	// gateway served (Log.Partial): the requests it lacks are not said to
	// be missing from the gateway.
	Sampled bool `json:"sampled,omitempty"`
}

// Gap is a stretch of the run the log holds nothing of.
type Gap struct {
	From     report.Time `json:"from"`
	To       report.Time `json:"to"`
	Requests int64       `json:"requests"`
}

// Finding is one conclusion of the join.
type Finding struct {
	// Kind is "backend", "family", "instance", "unrouted", "absent".
	Kind string `json:"kind"`
	// Scope names what it is about: a backend, a family, an instance.
	Scope string `json:"scope"`
	Text  string `json:"text"`
	// P is the test's p-value; absent when the finding is a count.
	P *float64 `json:"p,omitempty"`
}

// JSON writes the pinprobe.logs/v1 document, indented.
func JSON(w io.Writer, j *Join) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(j); err != nil {
		return fmt.Errorf("write json join: %w", err)
	}
	return nil
}
