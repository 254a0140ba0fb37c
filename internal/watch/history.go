package watch

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/pinprobe/pinprobe/internal/detect"
)

// Suspect is one suspect the watch has named since it began: its start
// event and, once it ended, when.
type Suspect struct {
	Scope detect.Scope
	What  string // the scope in words: "address 127.0.0.2 (ipv4) of app.test"
	// Start is the event that named it (its change point, counts and
	// request IDs).
	Start detect.Event
	// Ended is when its failures stopped (the end event's change point),
	// zero while it lasts; Retired says it ended because its series were
	// retired (the address left DNS, the instance value went quiet).
	Ended   time.Time
	Retired bool
}

// maxEnded is how many ended suspects the history keeps (the latest):
// with the ones that last, it bounds the history's memory.
const maxEnded = 100

// history is the suspects since the watch began, guarded by Watch.mu: the
// live page reads it while the watch runs.
type history struct {
	list []Suspect // in the order they started
}

// started adds the suspect ev names.
func (h *history) started(ev detect.Event) {
	h.list = append(h.list, Suspect{Scope: ev.Scope, What: scopeWords(ev.Scope), Start: ev})
	h.trim()
}

// ended closes sc's open suspect at at.
func (h *history) ended(sc detect.Scope, at time.Time, retired bool) {
	for i := len(h.list) - 1; i >= 0; i-- {
		s := &h.list[i]
		if s.Scope == sc && s.Ended.IsZero() {
			s.Ended, s.Retired = at, retired
			h.trim()
			return
		}
	}
}

// trim drops the oldest ended suspects past maxEnded.
func (h *history) trim() {
	ended := 0
	for _, s := range h.list {
		if !s.Ended.IsZero() {
			ended++
		}
	}
	if ended <= maxEnded {
		return
	}
	drop := ended - maxEnded
	h.list = slices.DeleteFunc(h.list, func(s Suspect) bool {
		if drop > 0 && !s.Ended.IsZero() {
			drop--
			return true
		}
		return false
	})
}

// Suspects are the suspects since the watch began, in the order they
// started: every one that lasts, and the latest ended ones (at most
// 100). Safe to call while the watch runs.
func (w *Watch) Suspects() []Suspect {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := slices.Clone(w.hist.list)
	for i := range out {
		out[i].Start.IDs = slices.Clone(out[i].Start.IDs)
	}
	return out
}

// forget ends sc's suspect because its series were retired.
func (w *Watch) forget(sc detect.Scope, at time.Time) {
	if !w.suspects[sc] {
		return
	}
	delete(w.suspects, sc)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.hist.ended(sc, at, true)
}

// suspectJSON is a suspect of Suspects as GET /suspects writes it.
type suspectJSON struct {
	Host       string   `json:"host"`
	Scope      string   `json:"scope"`
	Address    string   `json:"address,omitempty"`
	Family     string   `json:"family,omitempty"`
	Backend    string   `json:"backend,omitempty"`
	What       string   `json:"what"`
	Since      string   `json:"since"`       // when its failures started
	DetectedAt string   `json:"detected_at"` // when the detector named it
	EndedAt    *string  `json:"ended_at"`    // null while it lasts
	Retired    bool     `json:"retired"`     // ended because its series were retired
	Requests   int64    `json:"requests"`    // since Since, at detection
	Failures   int64    `json:"failures"`
	RequestIDs []string `json:"request_ids"`
}

// SuspectsHandler serves Suspects as a JSON array, the latest last.
func (w *Watch) SuspectsHandler() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		out := []suspectJSON{}
		for _, s := range w.Suspects() {
			j := suspectJSON{Host: s.Scope.Host, Scope: s.Scope.Kind, Address: s.Scope.Address, Family: s.Scope.Family, Backend: s.Scope.Instance,
				What: s.What, Since: rfc3339(s.Start.At), DetectedAt: rfc3339(s.Start.DetectedAt), Retired: s.Retired,
				Requests: s.Start.Requests, Failures: s.Start.Failures, RequestIDs: s.Start.IDs}
			if !s.Ended.IsZero() {
				at := rfc3339(s.Ended)
				j.EndedAt = &at
			}
			if j.RequestIDs == nil {
				j.RequestIDs = []string{}
			}
			out = append(out, j)
		}
		rw.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(rw)
		enc.SetIndent("", "  ")
		enc.Encode(out)
	})
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
