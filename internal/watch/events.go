package watch

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/detect"
)

// event sets the gauges of a suspect that starts or ends, and writes its
// line.
func (w *Watch) event(ev detect.Event) {
	sc := ev.Scope
	name := "end"
	if ev.Start {
		name = "start"
		w.m.suspect.WithLabelValues(suspectValues(sc)...).Set(1)
		w.m.since.WithLabelValues(suspectValues(sc)...).Set(float64(ev.At.UnixMilli()) / 1000)
		w.suspects[sc] = true
		w.mu.Lock()
		w.hist.started(ev)
		w.mu.Unlock()
	} else {
		w.m.suspect.WithLabelValues(suspectValues(sc)...).Set(0)
		w.m.since.DeleteLabelValues(suspectValues(sc)...)
		delete(w.suspects, sc)
		w.mu.Lock()
		w.hist.ended(sc, ev.At, false)
		w.mu.Unlock()
	}
	if sc.Kind == "outage" {
		v := 0.0
		if ev.Start {
			v = 1
		}
		w.m.outage.WithLabelValues(sc.Host).Set(v)
	}
	w.m.events.WithLabelValues(sc.Host, sc.Kind, name).Inc()
	if w.o.Events == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.o.JSON {
		b, _ := json.Marshal(eventJSON(ev, name))
		fmt.Fprintf(w.o.Events, "%s\n", b)
		return
	}
	fmt.Fprintln(w.o.Events, EventLine(ev))
}

// jsonEvent is an event's JSON line.
type jsonEvent struct {
	Event    string  `json:"event"` // "suspect_start" or "suspect_end"
	Time     string  `json:"time"`  // when it was detected
	At       string  `json:"at"`    // when its failures started, or stopped
	Host     string  `json:"host"`
	Scope    string  `json:"scope"`
	Address  string  `json:"address,omitempty"`
	Family   string  `json:"family,omitempty"`
	Backend  string  `json:"backend,omitempty"`
	Requests int64   `json:"requests"`
	Failures int64   `json:"failures"`
	Baseline float64 `json:"baseline_failure_ratio"`
	// RestRequests and RestFailures are the rest's (decayed) counts.
	RestRequests float64  `json:"rest_requests"`
	RestFailures float64  `json:"rest_failures"`
	RequestIDs   []string `json:"request_ids"`
}

func eventJSON(ev detect.Event, name string) jsonEvent {
	ids := ev.IDs
	if ids == nil {
		ids = []string{}
	}
	return jsonEvent{Event: "suspect_" + name, Time: rfc3339(ev.DetectedAt), At: rfc3339(ev.At),
		Host: ev.Scope.Host, Scope: ev.Scope.Kind, Address: ev.Scope.Address, Family: ev.Scope.Family, Backend: ev.Scope.Instance,
		Requests: ev.Requests, Failures: ev.Failures, Baseline: ev.Baseline, RestRequests: round1(ev.RestRequests), RestFailures: round1(ev.RestFailures), RequestIDs: ids}
}

// EventLine is an event as one line for people: "suspect: address
// 127.0.0.2 (ipv4) of sign.example.com failing since 17:02:03Z, 8 of 8
// requests failed against 0 of 7 for the rest (tested against 6.3%);
// request IDs a, b".
func EventLine(ev detect.Event) string {
	sc := ev.Scope
	what := scopeWords(sc)
	at := ev.At.UTC().Format("2006-01-02T15:04:05Z")
	if !ev.Start {
		s := fmt.Sprintf("suspect ended: %s fails like the rest again since %s", what, at)
		if ev.Requests > 0 {
			s += fmt.Sprintf(", %d of %d requests failed since", ev.Failures, ev.Requests)
		}
		return s
	}
	s := fmt.Sprintf("suspect: %s failing since %s, %d of %d requests failed", what, at, ev.Failures, ev.Requests)
	if sc.Kind != "outage" {
		// The rest's own counts, then the rate tested against (smoothed,
		// at least the floor: with few requests it is above the counts').
		s += fmt.Sprintf(" against %s of %s for the rest (tested against %.2g%%)",
			strconv.FormatFloat(round1(ev.RestFailures), 'f', -1, 64), strconv.FormatFloat(round1(ev.RestRequests), 'f', -1, 64), ev.Baseline*100)
	}
	if len(ev.IDs) > 0 {
		s += "; request IDs " + strings.Join(ev.IDs, ", ")
	}
	return s
}

// round1 is x to a tenth: the rest's counts decay, so they are seldom whole.
func round1(x float64) float64 { return math.Round(x*10) / 10 }

// scopeWords names a suspect's scope: "address 127.0.0.2 (ipv4) of
// sign.example.com".
func scopeWords(sc detect.Scope) string {
	switch sc.Kind {
	case "address":
		return fmt.Sprintf("address %s (%s) of %s", sc.Address, sc.Family, sc.Host)
	case "family":
		return fmt.Sprintf("%s of %s", sc.Family, sc.Host)
	case "instance":
		return fmt.Sprintf("backend %q of %s", sc.Instance, sc.Host)
	case "connections":
		return fmt.Sprintf("connections of %s (%s) of %s, failures repeating on their connection (an instance behind it?)", sc.Address, sc.Family, sc.Host)
	case "outage":
		return "every address of " + sc.Host + " (an outage)"
	}
	return sc.Kind + " of " + sc.Host
}
