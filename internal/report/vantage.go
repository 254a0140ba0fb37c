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
	req, fail, k := bucketSums(tl.Requests, tl.Failed)
	if k >= 0 {
		return fmt.Sprintf("bucket %d: %d failed of %d", tl.First+k, tl.Failed[k], tl.Requests[k])
	}
	if req != requests || fail != failed {
		return fmt.Sprintf("%d requests, %d failed; the endpoint has %d, %d", req, fail, requests, failed)
	}
	return ""
}

// VantageEndpointOf is e's counts as a vantage's endpoint.
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
	c := &vantageCheck{r: r}
	if !c.names() || len(r.Vantages) == 0 {
		return c.errs
	}
	if len(r.Inputs) == 0 {
		return append(c.errs, "vantages: a breakdown by vantage in a report with no inputs")
	}
	if len(r.Vantages) > len(r.Inputs) {
		return append(c.errs, fmt.Sprintf("vantages: %d of them for %d inputs", len(r.Vantages), len(r.Inputs)))
	}
	c.index = map[EpKey]int{}
	for i := range r.Endpoints {
		c.index[KeyOf(&r.Endpoints[i])] = i
	}
	c.sum = make([][3]int64, len(r.Endpoints))
	if len(r.Timeline.Series) > 0 {
		c.buckets = len(r.Timeline.Series[0].Requests)
	}
	c.tlSum = make([][2][]int64, len(r.Endpoints))
	c.tlPart = make([]bool, len(r.Endpoints))
	c.seen = map[string]bool{}
	for i := range r.Vantages {
		if !c.vantage(&r.Vantages[i]) {
			return c.errs
		}
	}
	if c.runs != len(r.Inputs) {
		c.bad("vantages: %d runs for %d inputs", c.runs, len(r.Inputs))
	}
	c.sums()
	return c.errs[:min(len(c.errs), 3)]
}

// vantageCheck is checkVantages' state: the faults found, the report's
// endpoints by key, the vantages seen and their runs, and what the
// vantages add up to for each endpoint: requests, failed and dropped, the
// timelines bucket by bucket (buckets of the report's), and whether some
// vantage that probed it kept none.
type vantageCheck struct {
	r       *Report
	errs    []string
	index   map[EpKey]int
	seen    map[string]bool
	runs    int
	sum     [][3]int64
	buckets int
	tlSum   [][2][]int64
	tlPart  []bool
}

// bad notes a fault and reports whether that makes 3.
func (c *vantageCheck) bad(format string, args ...any) bool {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
	return len(c.errs) >= 3
}

// names checks the report's and its inputs' vantage names; false when
// that found 3 faults.
func (c *vantageCheck) names() bool {
	if c.r.Vantage != "" {
		if err := CheckVantage(c.r.Vantage); err != nil {
			c.bad("vantage %q: %v", Shown(c.r.Vantage), err)
		}
	}
	for _, in := range c.r.Inputs {
		if in.Vantage != "" {
			if err := CheckVantage(in.Vantage); err != nil && c.bad("inputs: %s: vantage %q: %v", Shown(in.File), Shown(in.Vantage), err) {
				return false
			}
		}
	}
	return true
}

// vantage checks one vantage and adds its endpoints to the sums; false
// when the check must stop.
func (c *vantageCheck) vantage(v *VantageStats) bool {
	name := "vantage " + fmt.Sprintf("%q", Shown(v.Name))
	if v.Name != "" {
		if err := CheckVantage(v.Name); err != nil && c.bad("vantages: %q: %v", Shown(v.Name), err) {
			return false
		}
	}
	if c.seen[v.Name] && c.bad("vantages: %s listed twice", name) {
		return false
	}
	c.seen[v.Name] = true
	c.runs += v.Runs
	if v.Runs <= 0 && c.bad("vantages: %s: %d runs", name, v.Runs) {
		return false
	}
	var tot [3]int64
	fam := map[string]ConnStats{}
	seen := map[EpKey]bool{}
	for _, e := range v.Endpoints {
		k := EpKey{e.Target, e.Address}
		i, ok := c.index[k]
		switch {
		case !ok:
			c.bad("vantages: %s: endpoint %s (%s) is not among the report's", name, Shown(e.Address), Shown(e.Target))
		case seen[k]:
			c.bad("vantages: %s: endpoint %s (%s) listed twice", name, Shown(e.Address), Shown(e.Target))
		case e.Family != c.r.Endpoints[i].Family:
			c.bad("vantages: %s: endpoint %s (%s) of family %q, not %q", name, Shown(e.Address), Shown(e.Target), Shown(e.Family), Shown(c.r.Endpoints[i].Family))
		case e.Requests < 0 || e.Failed < 0 || e.Dropped < 0 || e.Failed > e.Requests:
			c.bad("vantages: %s: endpoint %s (%s): %d failed of %d requests, %d dropped", name, Shown(e.Address), Shown(e.Target), e.Failed, e.Requests, e.Dropped)
		case e.Timeline != nil && checkVantageSeries(e.Timeline, c.buckets, e.Requests, e.Failed) != "":
			c.bad("vantages: %s: endpoint %s (%s): timeline: %s", name, Shown(e.Address), Shown(e.Target), checkVantageSeries(e.Timeline, c.buckets, e.Requests, e.Failed))
		default:
			c.add(i, &e)
			seen[k] = true
			tot[0] += e.Requests
			tot[1] += e.Failed
			tot[2] += e.Dropped
			f := fam[e.Family]
			f.Requests += e.Requests
			f.Failed += e.Failed
			fam[e.Family] = f
			continue
		}
		return false
	}
	if tot != [3]int64{v.Requests, v.Failed, v.Dropped} && c.bad("vantages: %s: %d requests, %d failed, %d dropped, but its endpoints add up to %d, %d, %d",
		name, v.Requests, v.Failed, v.Dropped, tot[0], tot[1], tot[2]) {
		return false
	}
	for f, s := range v.Families {
		if fam[f] != s && c.bad("vantages: %s: family %s: %d failed of %d, but its endpoints add up to %d of %d", name, Shown(f), s.Failed, s.Requests, fam[f].Failed, fam[f].Requests) {
			return false
		}
		delete(fam, f)
	}
	for f := range fam {
		if c.bad("vantages: %s: family %s missing", name, Shown(f)) {
			return false
		}
	}
	return true
}

// add adds a vantage's endpoint e to the sums of the report's endpoint i.
func (c *vantageCheck) add(i int, e *VantageEndpoint) {
	if tl := e.Timeline; tl == nil {
		c.tlPart[i] = c.tlPart[i] || e.Requests > 0
	} else if len(tl.Requests) > 0 {
		if c.tlSum[i][0] == nil {
			c.tlSum[i] = [2][]int64{make([]int64, c.buckets), make([]int64, c.buckets)}
		}
		for k := range tl.Requests {
			c.tlSum[i][0][tl.First+k] += tl.Requests[k]
			c.tlSum[i][1][tl.First+k] += tl.Failed[k]
		}
	}
	c.sum[i][0] += e.Requests
	c.sum[i][1] += e.Failed
	c.sum[i][2] += e.Dropped
}

// sums checks that the vantages add up to each endpoint of the report:
// its counts and, where every vantage that probed it kept one, its
// timeline.
func (c *vantageCheck) sums() {
	for i := range c.r.Endpoints {
		e := &c.r.Endpoints[i]
		if c.sum[i] != [3]int64{e.Requests, e.Failed, e.Dropped} {
			c.bad("vantages: endpoint %s (%s): the vantages add up to %d requests, %d failed, %d dropped; it has %d, %d, %d",
				Shown(e.Address), Shown(e.Target), c.sum[i][0], c.sum[i][1], c.sum[i][2], e.Requests, e.Failed, e.Dropped)
			return
		}
		if c.tlSum[i][0] == nil || c.tlPart[i] || i >= len(c.r.Timeline.Series) {
			continue
		}
		ser := &c.r.Timeline.Series[i]
		if !slices.Equal(c.tlSum[i][0], ser.Requests) || !slices.Equal(c.tlSum[i][1], ser.Failed) {
			c.bad("vantages: endpoint %s (%s): the vantages' timelines do not add up to its timeline", Shown(e.Address), Shown(e.Target))
			return
		}
	}
}
