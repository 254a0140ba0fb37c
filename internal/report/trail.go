package report

import (
	"fmt"
	"slices"
	"strconv"
)

// Bounds of an endpoint's trail: what a report keeps of single requests so
// that a gateway's access log can be joined with it later (pinprobe logs).
const (
	// MaxTrailFailed is how many failed requests of an endpoint the trail
	// lists: every one while there are at most that many, past that an
	// even sample of that many over the run.
	MaxTrailFailed = 512
	// MaxTrailOK is how many successful requests of an endpoint the trail
	// lists: an even sample over the run.
	MaxTrailOK = 128
	// MaxTrailID is the longest request ID the trail keeps; a longer one
	// (given with -H X-Request-Id) is left out of it.
	MaxTrailID = 128
)

// Trail lists single requests of an endpoint, so that `pinprobe logs` can
// find each in a gateway's access log, on any machine and long after the
// run: every failed request while there are at most MaxTrailFailed of
// them (past that an even sample of MaxTrailFailed over the run), and an
// even sample of MaxTrailOK successes, in the order they started. Each
// says the request ID it carried, its client port and connection, when it
// started and what it got. Requests lists the failed ones completely
// exactly when it holds as many as the endpoint's Failed.
type Trail struct {
	Requests []TrailRequest `json:"requests"`
}

// TrailRequest is one request of a trail.
type TrailRequest struct {
	At Time `json:"at"` // when the request started
	// RequestID is the X-Request-Id it carried; absent with
	// --no-request-id, or when one given with -H was longer than
	// MaxTrailID bytes.
	RequestID string `json:"request_id,omitempty"`
	// Port is the client port of its connection (what a gateway logs as
	// the client's port) and Conn the connection's ID among the
	// endpoint's (ConnRecord.ID); both absent when it got no connection.
	Port      uint16  `json:"port,omitempty"`
	Conn      uint64  `json:"conn,omitempty"`
	Failed    bool    `json:"failed"`
	Status    int     `json:"status,omitempty"` // the HTTP status; absent without a response
	Class     string  `json:"class,omitempty"`  // the error class when no response came
	LatencyMS float64 `json:"latency_ms"`
}

// TrailSampler keeps an endpoint's trail as its requests are counted:
// every failed request up to MaxTrailFailed, and past that every k-th,
// k doubling each time the list fills (it then keeps every other one of
// those it holds), so the list stays an even sample over the whole run;
// successes likewise within MaxTrailOK. Its zero value is ready; one
// goroutine adds.
type TrailSampler struct {
	failed, ok thinned
}

// Add offers one request.
func (s *TrailSampler) Add(r TrailRequest) {
	if len(r.RequestID) > MaxTrailID {
		r.RequestID = ""
	}
	if r.Failed {
		s.failed.add(r, MaxTrailFailed)
	} else {
		s.ok.add(r, MaxTrailOK)
	}
}

// Trail returns what was kept, in the order the requests started; nil
// when no request was offered.
func (s *TrailSampler) Trail() *Trail {
	if s.failed.seen == 0 && s.ok.seen == 0 {
		return nil
	}
	t := &Trail{Requests: make([]TrailRequest, 0, len(s.failed.list)+len(s.ok.list))}
	t.Requests = append(append(t.Requests, s.failed.list...), s.ok.list...)
	sortTrail(t.Requests)
	return t
}

// thinned is a systematic sample of at most n items: the list holds the
// items offered at positions 0, step, 2·step, …
type thinned struct {
	step int64
	seen int64
	list []TrailRequest
}

func (t *thinned) add(r TrailRequest, n int) {
	if t.step == 0 {
		t.step = 1
	}
	i := t.seen
	t.seen++
	if i%t.step != 0 {
		return
	}
	if len(t.list) >= n {
		keep := t.list[:0]
		for j := 0; j < len(t.list); j += 2 {
			keep = append(keep, t.list[j])
		}
		clear(t.list[len(keep):])
		t.list = keep
		t.step *= 2
		if i%t.step != 0 {
			return
		}
	}
	t.list = append(t.list, r)
}

func sortTrail(rs []TrailRequest) {
	slices.SortStableFunc(rs, func(a, b TrailRequest) int { return a.At.Compare(b.At.Time) })
}

// MergeTrails joins the trails of one endpoint in several reports: every
// request of each, in time order, then, past MaxTrailFailed failed or
// MaxTrailOK successful ones, an even sample of that many of them. nil
// when no input had a trail.
func MergeTrails(ts []*Trail) *Trail {
	var failed, ok []TrailRequest
	seen := false
	for _, t := range ts {
		if t == nil {
			continue
		}
		seen = true
		for _, r := range t.Requests {
			if r.Failed {
				failed = append(failed, r)
			} else {
				ok = append(ok, r)
			}
		}
	}
	if !seen {
		return nil
	}
	sortTrail(failed)
	sortTrail(ok)
	out := append(evenSample(failed, MaxTrailFailed), evenSample(ok, MaxTrailOK)...)
	sortTrail(out)
	return &Trail{Requests: out}
}

// evenSample keeps n of rs spread evenly over them, first and last
// included; all of them when there are at most n.
func evenSample(rs []TrailRequest, n int) []TrailRequest {
	if len(rs) <= n {
		return rs
	}
	out := make([]TrailRequest, 0, n)
	for i := range n {
		out = append(out, rs[int(int64(i)*int64(len(rs)-1)/int64(n-1))])
	}
	return out
}

// checkTrail says what is wrong with a saved endpoint's trail, "" when
// nothing is: more requests listed than the bounds or than the endpoint
// counted, a status that is none, an error class pinprobe does not have,
// a request ID longer than MaxTrailID.
func checkTrail(e *Endpoint) string {
	t := e.Trail
	if t == nil {
		return ""
	}
	var failed, ok int64
	for i := range t.Requests {
		r := &t.Requests[i]
		where := "trail.requests[" + strconv.Itoa(i) + "]"
		switch {
		case r.Status < 0 || r.Status > 999:
			return fmt.Sprintf("%s: status %d is not an HTTP status", where, r.Status)
		case r.Class != "" && !errorClasses[r.Class]:
			return fmt.Sprintf("%s: %q is not an error class", where, Shown(r.Class))
		case len(r.RequestID) > MaxTrailID:
			return fmt.Sprintf("%s: a request ID of %d bytes (pinprobe keeps at most %d)", where, len(r.RequestID), MaxTrailID)
		}
		if r.Failed {
			failed++
		} else {
			ok++
		}
	}
	switch {
	case failed > MaxTrailFailed || ok > MaxTrailOK:
		return fmt.Sprintf("trail: %d failed and %d successful requests listed (at most %d and %d)", failed, ok, MaxTrailFailed, MaxTrailOK)
	case failed > e.Failed || ok > e.OK:
		return fmt.Sprintf("trail: %d failed and %d successful requests listed, of %d failed and %d ok counted", failed, ok, e.Failed, e.OK)
	}
	return ""
}

// errorClasses are the error classes of the schema (probe.ErrorClass).
var errorClasses = map[string]bool{
	"dns": true, "connect_refused": true, "connect_timeout": true, "network_unreachable": true, "tls": true,
	"reset": true, "eof": true, "timeout": true, "protocol": true, "client": true, "other": true,
}
