package report

import (
	"net/url"
	"strings"
)

// group returns the group named "HEADER: VALUE", nil when none.
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
// without its scheme.
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
