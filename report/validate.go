package report

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"strings"
)

// Validate checks the invariants every pinprobe report holds: at every level
// requests == ok + failed (groups too); the endpoints add up to their
// families and to the totals, status by status and error class by error
// class; each latency histogram holds exactly its scope's requests; and each
// timeline series adds up to its endpoint. Reports read back from files (report, compare)
// are refused when they break one; tests use it on everything they render.
func Validate(r *Report) error {
	var errs []string
	more := 0 // past the first few, only counted: a forged report may break thousands
	bad := func(format string, args ...any) {
		if len(errs) < 3 {
			errs = append(errs, fmt.Sprintf(format, args...))
		} else {
			more++
		}
	}
	if r.Schema != Schema {
		bad("schema %q: want %q", r.Schema, Schema)
	}
	check := func(scope string, s *Stats) {
		if s.Requests != s.OK+s.Failed {
			bad("%s: requests %d != ok %d + failed %d", scope, s.Requests, s.OK, s.Failed)
		}
		if s.Requests < 0 || s.OK < 0 || s.Failed < 0 || s.Dropped < 0 {
			bad("%s: negative count", scope)
		}
		var answered int64
		for _, n := range s.Status {
			answered += n
		}
		for _, n := range s.Errors {
			answered += n
		}
		if answered != s.Requests {
			bad("%s: statuses and errors add up to %d, not the %d requests", scope, answered, s.Requests)
		}
		if s.Requests > 0 && math.Abs(s.FailureRate-float64(s.Failed)/float64(s.Requests)) > 1e-5 {
			bad("%s: failure_rate %v is not failed/requests", scope, s.FailureRate)
		}
		if s.HDR != "" {
			n, err := HDRCount(s.HDR)
			switch {
			case err != nil:
				bad("%s: hdr does not decode: %v", scope, err)
			case n != s.Requests:
				bad("%s: hdr holds %d values, not the %d requests", scope, n, s.Requests)
			}
		}
	}
	check("totals", &r.Totals)
	fams := map[string]*Stats{}
	for name, s := range r.Families {
		if s == nil {
			bad("family %s: null", name)
			continue
		}
		check("family "+name, s)
		fams[name] = &Stats{Status: map[string]int64{}, Errors: map[string]int64{}}
	}
	sum := Stats{Status: map[string]int64{}, Errors: map[string]int64{}}
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		scope := "endpoint " + e.Address + " (" + e.Target + ")"
		check(scope, &e.Stats)
		AddCounts(&sum, &e.Stats)
		f, ok := fams[e.Family]
		if !ok {
			if e.Requests > 0 || e.Dropped > 0 {
				bad("%s: family %q is not in families", scope, e.Family)
			}
			continue
		}
		AddCounts(f, &e.Stats)
	}
	same := func(scope string, got, want *Stats) {
		if got.Requests != want.Requests || got.OK != want.OK || got.Failed != want.Failed || got.Dropped != want.Dropped ||
			!maps.Equal(NonZero(got.Status), NonZero(want.Status)) || !maps.Equal(NonZero(got.Errors), NonZero(want.Errors)) {
			bad("%s: %d requests (%d failed, %d dropped, %v %v) but its endpoints add up to %d (%d failed, %d dropped, %v %v)",
				scope, got.Requests, got.Failed, got.Dropped, got.Status, got.Errors,
				want.Requests, want.Failed, want.Dropped, want.Status, want.Errors)
		}
	}
	same("totals", &r.Totals, &sum)
	for name, f := range fams {
		same("family "+name, r.Families[name], f)
	}
	for i := range r.Groups {
		g := &r.Groups[i]
		check("group "+g.Header+": "+g.Value, &g.Stats)
	}
	if n := len(r.Timeline.Series); n > 0 {
		if n != len(r.Endpoints) {
			bad("timeline: %d series for %d endpoints", n, len(r.Endpoints))
		} else {
			for i, s := range r.Timeline.Series {
				e := &r.Endpoints[i]
				if len(s.Requests) != len(s.Failed) {
					bad("timeline %s: %d request buckets, %d failure buckets", s.Address, len(s.Requests), len(s.Failed))
					continue
				}
				var req, failed int64
				for j := range s.Requests {
					req += s.Requests[j]
					failed += s.Failed[j]
				}
				if s.Address != e.Address || req != e.Requests || failed != e.Failed {
					bad("timeline %s: %d requests, %d failed; its endpoint %s has %d, %d", s.Address, req, failed, e.Address, e.Requests, e.Failed)
				}
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	if more > 0 {
		errs = append(errs, fmt.Sprintf("and %d more", more))
	}
	return errors.New(strings.Join(errs, "; "))
}

func AddCounts(dst, src *Stats) {
	dst.Requests += src.Requests
	dst.OK += src.OK
	dst.Failed += src.Failed
	dst.Dropped += src.Dropped
	for k, n := range src.Status {
		dst.Status[k] += n
	}
	for k, n := range src.Errors {
		dst.Errors[k] += n
	}
}

func NonZero(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, n := range m {
		if n != 0 {
			out[k] = n
		}
	}
	return out
}
