package report

import (
	"math"
	"time"
)

// Schema identifies the JSON report format.
const Schema = "pinprobe.report/v1"

// Report is the pinprobe.report/v1 document (see DESIGN.md).
type Report struct {
	Schema string `json:"schema"`
	// Revision is the revision of the document within Schema (see
	// Revision): what a reader of it may find. 0 in a report read from a
	// file of revision 1, which has none.
	Revision Rev    `json:"revision,omitempty"`
	Version  string `json:"version"`
	// RunID identifies the run: the random <run> of the request IDs it
	// sent (pinprobe-<run>-<endpoint>-<n>), so Merge can tell one run given
	// twice from two runs. Empty in a merged report (its Inputs carry
	// theirs) and in reports written before it.
	RunID string `json:"run_id,omitempty"`
	// Part says the report counts part of its run's requests: a window of
	// pinprobe watch, whose run goes on in other windows (its endpoints'
	// IDRanges say which requests are its). Parts of one run are apart
	// when their times are.
	Part bool `json:"part,omitempty"`
	// Vantage names where the run was probed from (--vantage; by default
	// the host name): a zone, region or machine. Empty in a merged report
	// (its Inputs and Vantages carry theirs) and in reports written before
	// it.
	Vantage   string   `json:"vantage,omitempty"`
	Command   []string `json:"command"`
	StartedAt Time     `json:"started_at"`
	EndedAt   Time     `json:"ended_at"`
	DurationS float64  `json:"duration_s"`
	// SendS is how long requests were being sent: the run's duration less
	// the final wait for requests in flight. Every rps is over this window.
	SendS       float64     `json:"send_s"`
	Interrupted bool        `json:"interrupted"`
	Plan        Plan        `json:"plan"`
	DNS         []DNS       `json:"dns"`
	Totals      Stats       `json:"totals"`
	Families    FamilyStats `json:"families"`
	Endpoints   []Endpoint  `json:"endpoints"`
	// Fingerprints group the failures by who answered: status or error
	// class, Server header and body hash, with the addresses that gave them.
	Fingerprints []Fingerprint `json:"fingerprints"`
	Timeline     Timeline      `json:"timeline"`
	Client       Client        `json:"client"`
	Verdict      Verdict       `json:"verdict"`
	// Thresholds are the release gate's checks (--max-failure-rate,
	// --max-p99, --fail-on-verdict), each scope judged; [] when none was set.
	Thresholds []Threshold `json:"thresholds"`
	// Groups bucket the responses by who answered, by the value of an
	// instance header (--group-by, and the well-known ones when present).
	Groups []Group `json:"groups"`
	// ClientError is the first error of class "client", to name the cause
	// when some requests could not be sent; "" when none.
	ClientError string `json:"client_error,omitempty"`
	// Settled is set when --until-verdict stopped the run as soon as the
	// verdict was settled.
	Settled *Settled `json:"settled,omitempty"`
	// Pauses are the stretches of the run in which pinprobe itself did
	// not run (the process was stopped, as by Ctrl-Z, or the machine
	// suspended), found when its schedulers woke far behind the schedule:
	// the requests due then were not sent, rather than all at once when it
	// ran again, and are counted here, in no endpoint's requests or
	// drops. Absent when there was none.
	Pauses []Pause `json:"pauses,omitempty"`
	// Preflight lists the check of every endpoint made before the load
	// (one TCP connect, and the TLS handshake for https), in endpoint
	// order; absent when none was made (--no-preflight), from a merged
	// report and from reports written before revision 2.
	Preflight []PreflightCheck `json:"preflight,omitempty"`
	// NotProbed says why the run sent no request, with the fix where one
	// is known ("every address refuses connections on port 8443: nothing
	// listens there; check the URL's port"): no address for any target, or
	// every endpoint failed its preflight. "" for a run that was probed.
	NotProbed string `json:"not_probed,omitempty"`
	// Inputs lists the reports a merged report was made from (see Merge);
	// absent from a single run's report.
	Inputs []Input `json:"inputs,omitempty"`
	// Vantages break a merged report's requests and failures down by the
	// vantage its runs were probed from (see VantageStats); absent when no
	// input named one.
	Vantages []VantageStats `json:"vantages,omitempty"`
	// Notes say where a merged report is less than exact, and why.
	Notes []string `json:"notes,omitempty"`
}

// MaxPauses is how many pauses a report keeps one by one; the last of them
// holds every later one too.
const MaxPauses = 64

// Pause is one stretch of a run in which pinprobe did not run.
type Pause struct {
	At        Time    `json:"at"`         // when the first request not sent was due
	DurationS float64 `json:"duration_s"` // from then until pinprobe ran again
	Requests  int64   `json:"requests"`   // due in it, over every endpoint, and not sent
}

// FamilyStats are the tallies of each address family, keyed "ipv4" and
// "ipv6".
type FamilyStats map[string]*Stats

// Settled says when and on what --until-verdict stopped a run: the look
// (one a second, at most MaxLooks) at which the whole verdict was settled
// (see judge.Settle), and the requests counted by then.
type Settled struct {
	At       Time    `json:"at"`
	Requests int64   `json:"requests"`
	Look     int     `json:"look"`
	MaxLooks int     `json:"max_looks"`
	Alpha    float64 `json:"alpha"` // the level of that look, for all its tests
	// Suspects is how many faults were proven at that level.
	Suspects int `json:"suspects"`
	// Bounded is how many other scopes (addresses and instances) were shown
	// to fail less than Tolerance, at the same confidence.
	Bounded   int     `json:"bounded"`
	Tolerance float64 `json:"tolerance"`
	// MinConnections is the fewest connections an address that was not
	// itself blamed had carried; Reach the probability, with that many,
	// that an instance serving one connection in four was reached.
	MinConnections int64   `json:"min_connections"`
	Reach          float64 `json:"reach"`
}

// Client is what the client side of the run looked like: the local
// addresses and ports a gateway's access log shows as the client.
type Client struct {
	LocalAddresses []string `json:"local_addresses"`
	// Ports lists the local ports used (at most maxPorts of them, the lowest);
	// PortMin and PortMax bound all of them.
	Ports      []int `json:"ports"`
	PortsCount int   `json:"ports_count"`
	PortMin    int   `json:"port_min"`
	PortMax    int   `json:"port_max"`
	// PortSet holds every local port used when Ports is cut short, so
	// reports merge their ports exactly (see EncodePortSet).
	PortSet string `json:"port_set,omitempty"`
	// PortsLowerBound is set on a merged report when an input listed only
	// part of its ports and had no port_set: PortsCount is then the least
	// the union holds.
	PortsLowerBound bool `json:"ports_count_lower_bound,omitempty"`
}

// Timeline counts requests and failures per interval and endpoint, and
// latencies per interval (see Latencies): of every family, of the first
// MaxLatencyEndpoints endpoints, and of the first MaxGroupSeries instance
// groups, with their requests and failures. Every series has the same
// buckets.
type Timeline struct {
	IntervalS float64  `json:"interval_s"`
	Start     Time     `json:"start"`
	Series    []Series `json:"series"`
	// Families holds each family's latencies over time, in the order of
	// Report.Families' keys; absent from reports written before it.
	Families []FamilySeries `json:"families,omitempty"`
	// Groups holds instance groups over time, in the order of
	// Report.Groups; absent when no instance header was seen.
	Groups []GroupSeries `json:"groups,omitempty"`
}

// Series is one endpoint's timeline; index i covers
// [start + i*interval, start + (i+1)*interval).
type Series struct {
	Address  string  `json:"address"`
	Target   string  `json:"target"`
	Requests []int64 `json:"requests"`
	Failed   []int64 `json:"failed"`
	// Latency is the endpoint's latencies over time, kept for the first
	// MaxLatencyEndpoints endpoints only; nil for the others.
	Latency *Latencies `json:"latency,omitempty"`
}

// Fingerprint is one kind of failure and where it came from.
type Fingerprint struct {
	Status    int              `json:"status,omitempty"`
	Error     string           `json:"error,omitempty"` // error class, for failures without a status
	Server    string           `json:"server,omitempty"`
	BodyHash  string           `json:"body_hash,omitempty"`
	Producer  string           `json:"producer,omitempty"` // a recognised gateway, e.g. "Azure Application Gateway"
	Count     int64            `json:"count"`
	Fresh     int64            `json:"fresh"`  // on a new connection
	Reused    int64            `json:"reused"` // on a kept-alive connection
	Addresses map[string]int64 `json:"addresses"`
	Body      string           `json:"body,omitempty"` // first bytes of one such body
	// Merged marks the one group that counts every kind of failure past the
	// first 64, which pinprobe does not keep apart.
	Merged bool `json:"merged,omitempty"`
}

// Sample is one request kept as evidence.
type Sample struct {
	At        Time              `json:"at"`
	Failed    bool              `json:"failed"`
	RequestID string            `json:"request_id,omitempty"`
	Status    int               `json:"status"`
	Error     string            `json:"error"`
	Class     string            `json:"class,omitempty"`
	LatencyMS float64           `json:"latency_ms"`
	TTFBMS    float64           `json:"ttfb_ms"`
	Local     string            `json:"local,omitempty"`
	Remote    string            `json:"remote,omitempty"`
	Reused    bool              `json:"reused"`
	Proto     string            `json:"proto,omitempty"`
	Headers   map[string]string `json:"headers"`
	Body      string            `json:"body"`
	// Truncated says some headers were left out or cut (see
	// probe.MaxEvidenceHeaders).
	Truncated bool `json:"truncated,omitempty"`
}

// Phase summarises one phase of the requests, in milliseconds.
type Phase struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
	// HDR is the phase's histogram (µs, 2 significant digits), encoded like
	// Stats.HDR, so reports merge it exactly; empty when Count is 0.
	HDR string `json:"hdr,omitempty"`
}

// Phases are the connect, TLS handshake and time-to-first-byte phases.
// Connect and TLS count only requests that opened a connection.
type Phases struct {
	Connect Phase `json:"connect"`
	TLS     Phase `json:"tls"`
	TTFB    Phase `json:"ttfb"`
}

// ConnStats splits requests by the connection they used.
type ConnStats struct {
	Requests int64 `json:"requests"`
	Failed   int64 `json:"failed"`
}

// DNSEvent is an endpoint's address leaving DNS ("removed") or coming
// back ("returned") during the run.
type DNSEvent struct {
	At    Time   `json:"at"`
	Event string `json:"event"`
}

// DNSChange is one change of a host's addresses seen by --re-resolve.
type DNSChange struct {
	At      Time     `json:"at"`
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
}

// MomentCounts is one shape of stratum of requests sent at the same
// moment, and how many strata of the run had it.
type MomentCounts struct {
	RepeatCounts
	Strata int64 `json:"strata"`
}

// MomentSize is one size of stratum of requests sent at the same moment:
// its requests, how many of them failed, and how many strata had both.
type MomentSize struct {
	Requests int64 `json:"requests"`
	Failed   int64 `json:"failed"`
	Strata   int64 `json:"strata"`
}

// MaxMoment is the most requests a stratum of requests sent at the same
// moment holds.
const MaxMoment = 16

// MaxWindows is how many failure windows of an endpoint are kept one by one.
const MaxWindows = 64

// Window is a stretch of an endpoint's run in which every request failed,
// on every connection open then: From is the start of its first request, To
// of its last.
type Window struct {
	From        Time  `json:"from"`
	To          Time  `json:"to"`
	Requests    int64 `json:"requests"`
	Connections int64 `json:"connections"`
	// Crossing counts the window's connections that also succeeded
	// outside it, before or after: the same connection, so the same
	// instance behind a layer-4 balancer, failed only while the window
	// lasted, which a failing instance cannot do.
	Crossing int64 `json:"crossing"`
}

// Plan is what the run was asked to do.
type Plan struct {
	Rate        float64 `json:"rate"` // total requests/s; 0 with Max
	Max         bool    `json:"max"`  // closed model (--rate max)
	DurationS   float64 `json:"duration_s"`
	Requests    int64   `json:"requests"`
	Concurrency int     `json:"concurrency"`
	Timeout     float64 `json:"timeout_s"`
	HTTP        string  `json:"http"`
	NewConn     bool    `json:"new_conn"`
	FailStatus  string  `json:"fail_status"`
	// Only is the one family probed (-4: "ipv4", -6: "ipv6"); "" for both.
	Only string `json:"only,omitempty"`
	// ConnRequests is the most requests a connection carried (1 with
	// --new-conn; 0 = unlimited).
	ConnRequests int `json:"conn_requests"`
	// BusyWorkers is the most workers an endpoint grows to while the
	// machine has no CPU to spare (0 in reports written before it).
	BusyWorkers int `json:"busy_workers,omitempty"`
	// PaceGrainS is --pace-grain in seconds: the requests due within each
	// grain were sent together at its start (0 = each at its own time).
	PaceGrainS float64 `json:"pace_grain_s,omitempty"`
	// GroupBy lists the response headers asked for with --group-by, in
	// canonical form (not the well-known instance headers grouped when
	// present), at most MaxGroupBy: the verdict says of each when no
	// response, or no failed one, carried it.
	GroupBy []string `json:"group_by,omitempty"`
}

// MaxGroupBy is the most --group-by headers a run takes and a saved
// report's plan may list; MaxHeaderName the longest name of one.
const (
	MaxGroupBy    = 64
	MaxHeaderName = 256
)

// DNS is how one target host was resolved.
type DNS struct {
	Host      string      `json:"host"`
	Port      uint16      `json:"port"`
	Source    string      `json:"source"`
	Addresses []string    `json:"addresses"`
	Error     string      `json:"error,omitempty"`
	Changes   []DNSChange `json:"changes"`
	// Input names the input a merged report's entry comes from (see
	// Report.Inputs); empty in a single run's report.
	Input string `json:"input,omitempty"`
	// Looks counts the times --re-resolve asked for the host's addresses
	// during the run; Missed says how many of them got none within the
	// interval (nil when none missed).
	Looks  int64      `json:"looks,omitempty"`
	Missed *DNSMissed `json:"missed,omitempty"`
}

// DNSMissed is the looks of --re-resolve that got no addresses for a host
// within the interval (the lookup timed out or failed): a change of its
// addresses then went unseen until a later look.
type DNSMissed struct {
	Looks int64  `json:"looks"`
	First Time   `json:"first"` // when the first of them began
	Last  Time   `json:"last"`  // when the last of them began
	Error string `json:"error"` // why the last got none: "timed out", "server answered SERVFAIL"
}

// Stats are the tallies of one scope: an endpoint, a family or the total.
type Stats struct {
	Requests    int64   `json:"requests"`
	OK          int64   `json:"ok"`
	Failed      int64   `json:"failed"`
	FailureRate float64 `json:"failure_rate"`
	Dropped     int64   `json:"dropped"`
	// ClientErrors counts the requests this machine could not send for
	// its own reasons (out of file descriptors or ephemeral ports: error
	// class "client"); they are not in Requests and never count against a
	// backend.
	ClientErrors int64 `json:"client_errors,omitempty"`
	// Abandoned counts the requests sent and not waited for: still in
	// flight when a second interrupt (Ctrl-C, SIGTERM or SIGHUP) ended the
	// wait for them. How they ended is unknown, so they are not in
	// Requests, OK or Failed: Requests, ClientErrors and Abandoned together
	// are every request pinprobe started. Absent when 0.
	Abandoned int64            `json:"abandoned,omitempty"`
	RPS       float64          `json:"rps"` // requests sent per second of the run, Abandoned included
	Bytes     int64            `json:"bytes"`
	Status    map[string]int64 `json:"status"`
	Errors    map[string]int64 `json:"errors"`
	LatencyMS Latency          `json:"latency_ms"`
	HDR       string           `json:"hdr"`
}

// Latency summarises a latency distribution in milliseconds.
type Latency struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// Endpoint is the Stats of one target pinned to one address.
type Endpoint struct {
	Stats
	Target  string `json:"target"`
	Host    string `json:"host"`
	Address string `json:"address"`
	Port    uint16 `json:"port"`
	Family  string `json:"family"`
	// AddedAt is set when the address appeared during the run (--re-resolve);
	// RemovedAt when it vanished from DNS, after which it was not probed.
	AddedAt   *Time `json:"added_at,omitempty"`
	RemovedAt *Time `json:"removed_at,omitempty"`
	// DNSHistory lists when the address left DNS and came back, in order.
	DNSHistory  []DNSEvent           `json:"dns_history,omitempty"`
	Phases      Phases               `json:"phases_ms"`
	Connections map[string]ConnStats `json:"connections"` // "fresh" and "reused"
	// Conns is what the requests did on each connection: the first
	// MaxConnRecords connections one by one, the rest counted together.
	Conns *Conns `json:"conns,omitempty"`
	// AfterFailure counts, by error class, the failures without a response
	// that came on a connection right after a failed response on it.
	AfterFailure map[string]int64 `json:"after_failure,omitempty"`
	Samples      []Sample         `json:"samples"`
	// Trail lists single requests (every failed one, within
	// MaxTrailFailed, and a sample of successes) for joining the run with
	// a gateway's access log; absent when the endpoint had no request.
	Trail *Trail `json:"trail,omitempty"`
	// IDRanges are the sequence numbers (the last part of the request ID,
	// pinprobe-RUN-ENDPOINT-N) of the requests the report counts, when it
	// counts only some of its run's: a watch's window, whose run goes on
	// in other windows. Absent: every request of the run is the report's.
	IDRanges []IDRange `json:"id_ranges,omitempty"`
}

// IDRange is the sequence numbers First to Last of an endpoint's request
// IDs, both counted (see Endpoint.IDRanges).
type IDRange struct {
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

// MaxIDRanges is how many ranges an endpoint's IDRanges holds: enough
// for the requests a window's neighbours leave in flight at its edges.
// Past it the two closest join, and a few requests of the run that are
// not the report's count as its own.
const MaxIDRanges = 1024

// Time is a UTC timestamp written with millisecond precision.
type Time struct{ time.Time }

const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON writes t as "2026-06-16T20:43:00.000Z".
func (t Time) MarshalJSON() ([]byte, error) {
	return []byte(`"` + t.UTC().Format(timeLayout) + `"`), nil
}

// UnmarshalJSON reads any RFC 3339 timestamp.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	p, err := time.Parse(`"`+time.RFC3339Nano+`"`, string(b))
	if err != nil {
		return err
	}
	t.Time = p
	return nil
}

// MaxConnRecords is how many connections of one endpoint are kept one by
// one; the connections after them are counted together in Conns.Overflow,
// so an endpoint's memory stays flat however long the run. 256 connections
// of 4 requests are about 1000 requests: enough for BurstTest's stretches
// and for a reader to see which connections failed, small enough to print.
const MaxConnRecords = 256

// ConnRecord is one TCP connection of an endpoint, as its requests saw it.
type ConnRecord struct {
	ID        uint64 `json:"id"`
	LocalPort uint16 `json:"local_port"`
	First     Time   `json:"first"` // start of its earliest request
	Last      Time   `json:"last"`  // start of its latest request
	Requests  int64  `json:"requests"`
	Failed    int64  `json:"failed"`
	// Fresh says the request that opened the connection is among
	// Requests; false when only reused requests were seen, which means
	// the connection's first request was not recorded here.
	Fresh bool `json:"fresh"`
}

// ConnOverflow counts the connections past the first MaxConnRecords.
type ConnOverflow struct {
	Connections int64 `json:"connections"`
	Requests    int64 `json:"requests"`
	Failed      int64 `json:"failed"`
}

// Conns is what an endpoint's requests did on each connection.
type Conns struct {
	Connections int64        `json:"connections"` // every connection seen: Records plus Overflow
	Requests    int64        `json:"requests"`    // every request, with Unconnected
	Failed      int64        `json:"failed"`
	Records     []ConnRecord `json:"records"` // the first MaxConnRecords connections, in the order first seen
	Overflow    ConnOverflow `json:"overflow"`
	// Unconnected counts the requests that never got a connection (the
	// dial or the TLS handshake failed): connection ID 0.
	Unconnected ConnStats `json:"unconnected"`
	// Repeat splits the reused requests of every connection, recorded or
	// not, by whether their connection had failed before, in consecutive
	// strata of the run: RepeatTest's input.
	Repeat []RepeatCounts `json:"repeat"`
	// Moments splits them the same way in strata of requests sent at the
	// same moment, at most one per connection: the strata that hold both
	// classes and both outcomes, counted by shape. A failing instance makes
	// the connections that failed before fail again while the others, open
	// at the same moment, do not; a failing moment fails them all.
	Moments []MomentCounts `json:"moments"`
	// Sizes counts the same strata, every one of them, by how many
	// requests they held and how many of those failed: whether failures
	// cluster by moment (a failing moment fails every connection open then;
	// a failing instance does not).
	Sizes []MomentSize `json:"sizes"`
	// Windows are the stretches of the run in which every request, on every
	// connection open then, failed (the first MaxWindows of them);
	// WindowsCount counts them all.
	Windows      []Window `json:"windows"`
	WindowsCount int64    `json:"windows_count"`
}

// Failing counts the connections with a failure among those kept one by
// one (the first MaxConnRecords), and those connections: the ones past
// them are counted together, and which of them failed is not known.
func (c *Conns) Failing() (failing, all int64) {
	for _, r := range c.Records {
		if r.Failed > 0 {
			failing++
		}
	}
	if c.Overflow.Connections > 0 {
		return failing, int64(len(c.Records))
	}
	return failing, c.Connections
}

// Input is one report a merged report was made from: a run, or (when a
// merged report is merged again) one input of it, named "outer:inner".
type Input struct {
	File    string `json:"file"`
	Version string `json:"version"`
	// Revision is the revision of the input's document (1 when it said
	// none); absent from reports written before revision 2.
	Revision int `json:"revision,omitempty"`
	// RunID is the run's Report.RunID; empty for a report written before
	// reports carried one.
	RunID string `json:"run_id,omitempty"`
	// Vantage is the run's Report.Vantage.
	Vantage     string   `json:"vantage,omitempty"`
	Command     []string `json:"command"`
	StartedAt   Time     `json:"started_at"`
	EndedAt     Time     `json:"ended_at"`
	SendS       float64  `json:"send_s"`
	Interrupted bool     `json:"interrupted"`
	Requests    int64    `json:"requests"`
	Failed      int64    `json:"failed"`
	Dropped     int64    `json:"dropped"`
	// Part says the input counts part of its run's requests (see
	// Report.Part): a watch's window.
	Part bool `json:"part,omitempty"`
}

// EpKey identifies an endpoint across reports: its target and address.
type EpKey struct{ Target, Address string }

// KeyOf is e's EpKey.
func KeyOf(e *Endpoint) EpKey { return EpKey{e.Target, e.Address} }

// TimelineMinInterval is the narrowest timeline bucket an aggregator makes.
const TimelineMinInterval = time.Millisecond

// Interval is a timeline's interval_s as a Duration.
func Interval(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }
