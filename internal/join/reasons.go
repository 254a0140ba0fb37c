package join

import "github.com/pinprobe/pinprobe/internal/accesslog"

// ReasonWords says a reason of the join's scopes (Scope.Reasons: an Envoy
// response flag, a HAProxy termination state) in words, by the kinds of
// the logs read (accesslog.ReasonWords); "" when none has words for it.
func (j *Join) ReasonWords(code string) string {
	seen := map[string]bool{}
	for _, l := range j.Logs {
		if seen[l.Kind] {
			continue
		}
		seen[l.Kind] = true
		if w := accesslog.ReasonWords(accesslog.Kind(l.Kind), code); w != "" {
			return w
		}
	}
	return ""
}
