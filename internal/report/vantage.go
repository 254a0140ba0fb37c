package report

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MaxVantageLen is the longest vantage name: a DNS label's length, which
// every zone, region and host name pinprobe is given fits in.
const MaxVantageLen = 63

// VantageStats is what one vantage point — the place a run was probed
// from, Report.Vantage — saw in a merged report: its runs, requests and
// failures, per family and per endpoint. The vantages of a merged report
// add up to its totals, families and endpoints exactly.
type VantageStats struct {
	// Name is the vantage's name; "" for the runs that named none (reports
	// written before runs recorded their vantage).
	Name     string `json:"name"`
	Runs     int    `json:"runs"`
	Requests int64  `json:"requests"`
	Failed   int64  `json:"failed"`
	Dropped  int64  `json:"dropped"`
	// Families counts the requests and failures of each family ("ipv4",
	// "ipv6") from this vantage.
	Families map[string]ConnStats `json:"families"`
	// Endpoints are the endpoints it probed, in the merged report's order.
	Endpoints []VantageEndpoint `json:"endpoints"`
}

// VantageEndpoint is one endpoint's requests and failures from one
// vantage point.
type VantageEndpoint struct {
	Target   string `json:"target"`
	Address  string `json:"address"`
	Family   string `json:"family"`
	Requests int64  `json:"requests"`
	Failed   int64  `json:"failed"`
	Dropped  int64  `json:"dropped"`
	// Timeline is when they were sent: their requests and failures in the
	// buckets of the report's timeline, so that vantages are compared only
	// over the time they share. nil in a report merged before it was kept
	// and when the report has no timeline.
	Timeline *VantageSeries `json:"timeline,omitempty"`
}

// VantageSeries is one endpoint's requests and failures from one vantage
// over time: Requests[i] and Failed[i] are those of bucket First+i of the
// report's timeline (Report.Timeline); the buckets before First and after
// the last hold none of them. Over every vantage, they add up to the
// endpoint's series, bucket by bucket.
type VantageSeries struct {
	First    int     `json:"first"`
	Requests []int64 `json:"requests"`
	Failed   []int64 `json:"failed"`
}

// CheckVantage reports whether name is a vantage name: 1 to MaxVantageLen
// letters, digits, '.', '_' and '-', starting with a letter or digit (a
// zone, region or host name: "eu-west-1a", "laptop.corp").
func CheckVantage(name string) error {
	switch {
	case name == "":
		return errors.New("empty: want a name such as eu-west-1a")
	case len(name) > MaxVantageLen:
		return fmt.Errorf("%d characters: at most %d", len(name), MaxVantageLen)
	case !alnum(name[0]):
		return errors.New("must start with a letter or digit")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !alnum(c) && c != '.' && c != '_' && c != '-' {
			return fmt.Errorf("character %q at %d: want letters, digits, '.', '_' and '-'", c, i+1)
		}
	}
	return nil
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// HostVantage makes a vantage name of a host name (the default of
// --vantage): characters a vantage name cannot hold become '-', leading
// ones are dropped, and it is cut to MaxVantageLen; "" when nothing is
// left.
func HostVantage(host string) string {
	var b strings.Builder
	for i := 0; i < len(host) && b.Len() < MaxVantageLen; i++ {
		c := host[i]
		switch {
		case alnum(c):
			b.WriteByte(c)
		case b.Len() == 0:
		case c == '.' || c == '_' || c == '-':
			b.WriteByte(c)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// checkVantageSeries says what is wrong with a vantage endpoint's
// timeline of requests and failed, on a report timeline of buckets
// buckets; "" when nothing is.
func checkVantageSeries(tl *VantageSeries, buckets int, requests, failed int64) string {
	switch {
	case len(tl.Requests) != len(tl.Failed):
		return fmt.Sprintf("%d request buckets, %d failure buckets", len(tl.Requests), len(tl.Failed))
	case tl.First < 0 || tl.First > buckets || len(tl.Requests) > buckets-tl.First:
		return fmt.Sprintf("buckets %d to %d of a timeline of %d", tl.First, tl.First+len(tl.Requests), buckets)
	}
	var req, fail int64
	for k := range tl.Requests {
		if tl.Requests[k] < 0 || tl.Failed[k] < 0 || tl.Failed[k] > tl.Requests[k] {
			return fmt.Sprintf("bucket %d: %d failed of %d", tl.First+k, tl.Failed[k], tl.Requests[k])
		}
		req += tl.Requests[k]
		fail += tl.Failed[k]
	}
	if req != requests || fail != failed {
		return fmt.Sprintf("%d requests, %d failed; the endpoint has %d, %d", req, fail, requests, failed)
	}
	return ""
}

func VantageEndpointOf(e *Endpoint) VantageEndpoint {
	return VantageEndpoint{Target: e.Target, Address: e.Address, Family: e.Family,
		Requests: e.Requests, Failed: e.Failed, Dropped: e.Dropped}
}

// checkVantages checks a saved report's vantage names and breakdown: every
// name a vantage name; each vantage once, its endpoints the report's, each
// once, its families and totals their sums, no count impossible; and the
// vantages adding up to the report's endpoints and runs. It returns the
// faults found, at most 3.
func checkVantages(r *Report) []string {
	var errs []string
	bad := func(format string, args ...any) bool {
		errs = append(errs, fmt.Sprintf(format, args...))
		return len(errs) >= 3
	}
	if r.Vantage != "" {
		if err := CheckVantage(r.Vantage); err != nil {
			bad("vantage %q: %v", Shown(r.Vantage), err)
		}
	}
	for _, in := range r.Inputs {
		if in.Vantage != "" {
			if err := CheckVantage(in.Vantage); err != nil && bad("inputs: %s: vantage %q: %v", Shown(in.File), Shown(in.Vantage), err) {
				return errs
			}
		}
	}
	if len(r.Vantages) == 0 {
		return errs
	}
	if len(r.Inputs) == 0 {
		return append(errs, "vantages: a breakdown by vantage in a report with no inputs")
	}
	if len(r.Vantages) > len(r.Inputs) {
		return append(errs, fmt.Sprintf("vantages: %d of them for %d inputs", len(r.Vantages), len(r.Inputs)))
	}
	index := map[EpKey]int{}
	for i := range r.Endpoints {
		index[KeyOf(&r.Endpoints[i])] = i
	}
	sum := make([][3]int64, len(r.Endpoints))
	// The vantages' timelines of each endpoint, added up bucket by bucket,
	// and whether every vantage that probed it kept one.
	buckets := 0
	if len(r.Timeline.Series) > 0 {
		buckets = len(r.Timeline.Series[0].Requests)
	}
	tlSum := make([][2][]int64, len(r.Endpoints))
	tlPart := make([]bool, len(r.Endpoints))
	names := map[string]bool{}
	runs := 0
	for _, v := range r.Vantages {
		name := "vantage " + fmt.Sprintf("%q", Shown(v.Name))
		if v.Name != "" {
			if err := CheckVantage(v.Name); err != nil && bad("vantages: %q: %v", Shown(v.Name), err) {
				return errs
			}
		}
		if names[v.Name] && bad("vantages: %s listed twice", name) {
			return errs
		}
		names[v.Name] = true
		runs += v.Runs
		if v.Runs <= 0 && bad("vantages: %s: %d runs", name, v.Runs) {
			return errs
		}
		var tot [3]int64
		fam := map[string]ConnStats{}
		seen := map[EpKey]bool{}
		for _, e := range v.Endpoints {
			k := EpKey{e.Target, e.Address}
			i, ok := index[k]
			switch {
			case !ok:
				bad("vantages: %s: endpoint %s (%s) is not among the report's", name, Shown(e.Address), Shown(e.Target))
			case seen[k]:
				bad("vantages: %s: endpoint %s (%s) listed twice", name, Shown(e.Address), Shown(e.Target))
			case e.Family != r.Endpoints[i].Family:
				bad("vantages: %s: endpoint %s (%s) of family %q, not %q", name, Shown(e.Address), Shown(e.Target), Shown(e.Family), Shown(r.Endpoints[i].Family))
			case e.Requests < 0 || e.Failed < 0 || e.Dropped < 0 || e.Failed > e.Requests:
				bad("vantages: %s: endpoint %s (%s): %d failed of %d requests, %d dropped", name, Shown(e.Address), Shown(e.Target), e.Failed, e.Requests, e.Dropped)
			case e.Timeline != nil && checkVantageSeries(e.Timeline, buckets, e.Requests, e.Failed) != "":
				bad("vantages: %s: endpoint %s (%s): timeline: %s", name, Shown(e.Address), Shown(e.Target), checkVantageSeries(e.Timeline, buckets, e.Requests, e.Failed))
			default:
				if tl := e.Timeline; tl == nil {
					tlPart[i] = tlPart[i] || e.Requests > 0
				} else if len(tl.Requests) > 0 {
					if tlSum[i][0] == nil {
						tlSum[i] = [2][]int64{make([]int64, buckets), make([]int64, buckets)}
					}
					for k := range tl.Requests {
						tlSum[i][0][tl.First+k] += tl.Requests[k]
						tlSum[i][1][tl.First+k] += tl.Failed[k]
					}
				}
				seen[k] = true
				sum[i][0] += e.Requests
				sum[i][1] += e.Failed
				sum[i][2] += e.Dropped
				tot[0] += e.Requests
				tot[1] += e.Failed
				tot[2] += e.Dropped
				f := fam[e.Family]
				f.Requests += e.Requests
				f.Failed += e.Failed
				fam[e.Family] = f
				continue
			}
			return errs
		}
		if tot != [3]int64{v.Requests, v.Failed, v.Dropped} && bad("vantages: %s: %d requests, %d failed, %d dropped, but its endpoints add up to %d, %d, %d",
			name, v.Requests, v.Failed, v.Dropped, tot[0], tot[1], tot[2]) {
			return errs
		}
		for f, c := range v.Families {
			if fam[f] != c && bad("vantages: %s: family %s: %d failed of %d, but its endpoints add up to %d of %d", name, Shown(f), c.Failed, c.Requests, fam[f].Failed, fam[f].Requests) {
				return errs
			}
			delete(fam, f)
		}
		for f := range fam {
			if bad("vantages: %s: family %s missing", name, Shown(f)) {
				return errs
			}
		}
	}
	if runs != len(r.Inputs) {
		bad("vantages: %d runs for %d inputs", runs, len(r.Inputs))
	}
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		if sum[i] != [3]int64{e.Requests, e.Failed, e.Dropped} {
			bad("vantages: endpoint %s (%s): the vantages add up to %d requests, %d failed, %d dropped; it has %d, %d, %d",
				Shown(e.Address), Shown(e.Target), sum[i][0], sum[i][1], sum[i][2], e.Requests, e.Failed, e.Dropped)
			break
		}
		if tlSum[i][0] == nil || tlPart[i] || i >= len(r.Timeline.Series) {
			continue
		}
		ser := &r.Timeline.Series[i]
		if !slices.Equal(tlSum[i][0], ser.Requests) || !slices.Equal(tlSum[i][1], ser.Failed) {
			bad("vantages: endpoint %s (%s): the vantages' timelines do not add up to its timeline", Shown(e.Address), Shown(e.Target))
			break
		}
	}
	if len(errs) > 3 {
		errs = errs[:3]
	}
	return errs
}
