package report

import (
	"net/url"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/words"
)

// FailStatusOf is the report's --fail-status: DefaultFailStatus when the
// plan names none (a report built by hand). A saved report with one that
// does not parse is refused when read (CheckSaved), so no other fallback
// is needed.
func FailStatusOf(r *Report) FailStatus {
	spec := r.Plan.FailStatus
	if spec == "" {
		spec = DefaultFailStatus
	}
	f, err := ParseFailStatus(spec)
	if err != nil {
		f, _ = ParseFailStatus(DefaultFailStatus)
	}
	return f
}

// SecondsDuration is s seconds.
func SecondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// TargetsOf lists the endpoints' targets in the order they first appear.
func TargetsOf(r *Report) []string {
	var targets []string
	for _, e := range r.Endpoints {
		targets = append(targets, e.Target)
	}
	return words.Dedupe(targets)
}

// FindGroup returns the group named "HEADER: VALUE", nil when none.
func (r *Report) FindGroup(name string) *Group {
	for i := range r.Groups {
		if g := &r.Groups[i]; g.Header+": "+g.Value == name {
			return g
		}
	}
	return nil
}

// ShortURL shortens target to what tells it apart from the report's other
// targets: its path when they all share scheme, host and port, else the URL
// without its scheme. To shorten every target, ShortURLs does it once.
func ShortURL(r *Report, target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	same := true
	for _, t := range TargetsOf(r) {
		o, err := url.Parse(t)
		same = same && err == nil && o.Scheme == u.Scheme && o.Host == u.Host
	}
	if same {
		return u.RequestURI()
	}
	return strings.TrimPrefix(strings.TrimPrefix(target, "https://"), "http://")
}

// ShortURLs is ShortURL of every target of r, each URL parsed once (a
// report of thousands of endpoints shortened each in a loop over all).
func ShortURLs(r *Report) map[string]string {
	targets := TargetsOf(r)
	parsed := make([]*url.URL, len(targets))
	same := true
	for i, t := range targets {
		u, err := url.Parse(t)
		parsed[i] = u
		same = same && err == nil && (i == 0 || u.Scheme == parsed[0].Scheme && u.Host == parsed[0].Host)
	}
	out := make(map[string]string, len(targets))
	for i, t := range targets {
		switch {
		case parsed[i] == nil:
			out[t] = t
		case same:
			out[t] = parsed[i].RequestURI()
		default:
			out[t] = strings.TrimPrefix(strings.TrimPrefix(t, "https://"), "http://")
		}
	}
	return out
}

// FindEndpoint returns the endpoint of target at address, nil when none.
func (r *Report) FindEndpoint(target, address string) *Endpoint {
	for i := range r.Endpoints {
		if e := &r.Endpoints[i]; e.Target == target && e.Address == address {
			return e
		}
	}
	return nil
}
