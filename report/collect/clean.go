package collect

import (
	"pinprobe/report"
	"pinprobe/report/phrase"
	"sort"
	"strings"
)

// SetSecrets gives the aggregator the secret values the run sends (see
// probe.Secrets): wherever one comes back — a gateway that echoes the
// request into its error page, a header that reflects it — the report shows
// REDACTED instead.
func (a *Aggregator) SetSecrets(values []string) {
	// Longest first, so a secret that contains another goes whole.
	vs := append([]string(nil), values...)
	sort.Slice(vs, func(i, j int) bool { return len(vs[i]) > len(vs[j]) })
	var pairs []string
	for _, v := range vs {
		if v != "" {
			pairs = append(pairs, v, Redacted)
		}
	}
	if len(pairs) > 0 {
		a.scrub = strings.NewReplacer(pairs...)
	}
}

// clean makes text that came from the network safe to keep and show in any
// format: the run's own secrets replaced, control characters and the
// invisible characters that reorder text written out as \xNN or \u{NNNN}
// (newlines and tabs kept when multiline).
func (a *Aggregator) clean(s string, multiline bool) string {
	if a.scrub != nil {
		s = a.scrub.Replace(s)
	}
	return phrase.SafeText(s, multiline)
}

// cleanEvidence applies clean to everything of r that a server wrote or
// could have echoed: samples (headers, body, error) and failure
// fingerprints (Server header, body).
func (a *Aggregator) cleanEvidence(r *report.Report) {
	for i := range r.Endpoints {
		for j := range r.Endpoints[i].Samples {
			s := &r.Endpoints[i].Samples[j]
			s.Error = a.clean(s.Error, false)
			s.Body = a.clean(s.Body, true)
			for k, v := range s.Headers {
				s.Headers[k] = a.clean(v, false)
			}
		}
	}
	for i := range r.Fingerprints {
		f := &r.Fingerprints[i]
		f.Server = a.clean(f.Server, false)
		f.Body = a.clean(f.Body, true)
	}
}
