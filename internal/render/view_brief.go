package render

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
)

// briefSamples is how many failed requests a brief report shows when no
// suspect is named.
const briefSamples = 3

// briefSample is one failed request, and the suspects it stands for.
type briefSample struct {
	// For names the suspects, "::1"; "" when the verdict names none.
	For string
	// Label names the endpoint it was sent to, as SampleGroup.Label.
	Label string
	Row   *SampleRow
}

// BriefLogs finds every suspect's failures in the gateways' logs: a query
// of each gateway that answered them, or what to filter any log on.
type BriefLogs struct {
	Queries []BriefQuery
	// PortFilter is LogsView.PortFilter, when the queries filter on ports.
	PortFilter bool
	Filters    []LogFilter
}

// BriefQuery is one gateway's query in a brief report.
type BriefQuery struct {
	Gateway string
	Query   *LogQuery
}

// briefSampleRows are one failed request of each suspect, or of each
// failing address (at most briefSamples) when the verdict names none.
func (v *View) briefSampleRows() []briefSample {
	var out []briefSample
	taken := map[*SampleRow]int{} // the sample's index in out
	for i, row := range v.Verdict.Suspects {
		label, sample := v.suspectSample(&v.r.Verdict.Suspects[i])
		if sample == nil {
			continue
		}
		name := row.Label
		if row.Kind == report.SuspectEndpoint && row.URL != "" {
			name += " " + row.URL
		}
		if j, ok := taken[sample]; ok { // one request shows two suspects
			out[j].For += "; " + name
			continue
		}
		taken[sample] = len(out)
		out = append(out, briefSample{For: name, Label: label, Row: sample})
	}
	if len(v.Verdict.Suspects) > 0 {
		return out
	}
	for gi := range v.Samples {
		g := &v.Samples[gi]
		if i := slices.IndexFunc(g.Rows, func(s SampleRow) bool { return s.Failed }); i >= 0 && len(out) < briefSamples {
			out = append(out, briefSample{Label: g.Label, Row: &g.Rows[i]})
		}
	}
	return out
}

// suspectSample finds a failed request of s (sent to its address,
// answered by its instance, on one of its failing connections), and its
// endpoint's label; nil when none was kept.
func (v *View) suspectSample(s *report.Suspect) (string, *SampleRow) {
	var ports map[uint16]bool
	if s.Kind == report.SuspectConnections {
		ports = map[uint16]bool{}
		for _, c := range v.Conns {
			if c.Address == s.Address && (s.Target == "" || c.Target == s.Target) {
				for _, r := range c.Rows {
					ports[r.LocalPort] = true
				}
			}
		}
	}
	for gi := range v.Samples {
		g := &v.Samples[gi]
		switch s.Kind {
		case report.SuspectGroup:
			if s.Address != "" && g.Address != s.Address || s.Address == "" && len(s.Addresses) > 0 && !slices.Contains(s.Addresses, g.Address) {
				continue
			}
		default:
			if g.Address != s.Address || s.Target != "" && g.Target != s.Target {
				continue
			}
		}
		for i := range g.Rows {
			row := &g.Rows[i]
			if !row.Failed {
				continue
			}
			switch s.Kind {
			case report.SuspectGroup:
				if !slices.ContainsFunc(row.HeaderLines, func(h string) bool {
					n, val, ok := strings.Cut(h, ": ")
					return ok && strings.EqualFold(n, s.Header) && val == s.Value
				}) {
					continue
				}
			case report.SuspectConnections:
				ap, err := netip.ParseAddrPort(row.Local)
				if err != nil || !ports[ap.Port()] {
					continue
				}
			}
			return g.Label, row
		}
	}
	return "", nil
}

// suspectGateways are the indexes in v.Logs.Gateways of the gateways
// whose failure pages came from a suspect's address; else the first.
func (v *View) suspectGateways() []int {
	addrs := map[string]bool{}
	for _, s := range v.r.Verdict.Suspects {
		addrs[s.Address] = s.Address != ""
		for _, a := range s.Addresses {
			addrs[a] = true
		}
	}
	var out []int
	for i, g := range v.Logs.Gateways {
	fingerprints:
		for _, f := range v.r.Fingerprints {
			if f.Producer != g.Name {
				continue
			}
			for a := range f.Addresses {
				if addrs[a] {
					out = append(out, i)
					break fingerprints
				}
			}
		}
	}
	if len(out) == 0 {
		out = []int{0}
	}
	return out
}

// portsCoverSuspects reports whether the connection records put every
// failed request of each suspect's endpoints on one of ports: a query
// over those ports then finds each suspect.
func (v *View) portsCoverSuspects(ports []int) bool {
	in := map[uint16]bool{}
	for _, p := range ports {
		in[uint16(p)] = true
	}
	covers := func(e *report.Endpoint) bool {
		if e.Failed == 0 {
			return true
		}
		if e.Conns == nil {
			return false
		}
		var n int64
		for _, c := range e.Conns.Records {
			if in[c.LocalPort] {
				n += c.Failed
			}
		}
		return n == e.Failed
	}
	for _, s := range v.r.Verdict.Suspects {
		addrs := s.Addresses
		if len(addrs) == 0 && s.Address != "" {
			addrs = []string{s.Address}
		}
		for i := range v.r.Endpoints {
			e := &v.r.Endpoints[i]
			if len(addrs) > 0 && !slices.Contains(addrs, e.Address) || s.Target != "" && s.Kind != report.SuspectGroup && e.Target != s.Target {
				continue
			}
			if !covers(e) {
				return false
			}
		}
	}
	return true
}

// briefPorts is the most failing connections whose client ports a brief
// report's query lists: more take a screen of their own.
const briefPorts = 24

// briefLogs picks a query of each gateway that answered the suspects:
// the one over the failing connections when it finds them all and their
// ports fit (briefPorts), else its first, over the run's requests.
// Without a gateway, the filters that fit in a few lines.
func (v *View) briefLogs() BriefLogs {
	l := &v.Logs
	if v.r.Totals.Failed == 0 {
		return BriefLogs{}
	}
	if l.Known && len(l.Gateways) > 0 {
		out := BriefLogs{PortFilter: l.PortFilter}
		failing := len(l.FailingPorts) <= briefPorts && v.portsCoverSuspects(l.FailingPorts)
		for _, gi := range v.suspectGateways() {
			g := &l.Gateways[gi]
			q := &g.Queries[0]
			if i := slices.IndexFunc(g.Queries, func(q LogQuery) bool { return q.Failing }); i >= 0 && failing {
				q = &g.Queries[i]
			}
			out.Queries = append(out.Queries, BriefQuery{Gateway: g.Name, Query: q})
		}
		return out
	}
	var out BriefLogs
	for _, f := range l.Filters {
		switch f.Name {
		case "Time (UTC)", "Host header", "Request path", "Status":
			out.Filters = append(out.Filters, f)
		case "X-Request-Id": // the prefix, not every sample's ID
			end := slices.IndexFunc(f.Value, func(s Span) bool { return strings.HasPrefix(s.Text, ". ") })
			if end < 0 {
				end = len(f.Value)
			}
			out.Filters = append(out.Filters, LogFilter{Name: f.Name, Value: f.Value[:end]})
		}
	}
	return out
}
