package report

import (
	"time"
)

// Schema identifies the JSON report format.
const Schema = "pinprobe.report/v1"

// Report is the pinprobe.report/v1 document (see DESIGN.md).
type Report struct {
	Schema      string            `json:"schema"`
	Version     string            `json:"version"`
	Command     []string          `json:"command"`
	StartedAt   Time              `json:"started_at"`
	EndedAt     Time              `json:"ended_at"`
	DurationS   float64           `json:"duration_s"`
	Interrupted bool              `json:"interrupted"`
	Plan        Plan              `json:"plan"`
	DNS         []DNS             `json:"dns"`
	Totals      Stats             `json:"totals"`
	Families    map[string]*Stats `json:"families"`
	Endpoints   []Endpoint        `json:"endpoints"`
	Verdict     Verdict           `json:"verdict"`
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
}

// DNS is how one target host was resolved.
type DNS struct {
	Host      string   `json:"host"`
	Port      uint16   `json:"port"`
	Source    string   `json:"source"`
	Addresses []string `json:"addresses"`
	Error     string   `json:"error,omitempty"`
}

// Stats are the tallies of one scope: an endpoint, a family or the total.
type Stats struct {
	Requests    int64            `json:"requests"`
	OK          int64            `json:"ok"`
	Failed      int64            `json:"failed"`
	FailureRate float64          `json:"failure_rate"`
	Dropped     int64            `json:"dropped"`
	RPS         float64          `json:"rps"` // requests sent per second of the run
	Bytes       int64            `json:"bytes"`
	Status      map[string]int64 `json:"status"`
	Errors      map[string]int64 `json:"errors"`
	LatencyMS   Latency          `json:"latency_ms"`
	HDR         string           `json:"hdr"`
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
}

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
