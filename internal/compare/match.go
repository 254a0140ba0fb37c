package compare

import (
	"net/url"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// How endpoints are matched (Options.Match).
const (
	// MatchEndpoint matches an endpoint with the one of the same URL and
	// address in the other report; reports with no such pair compare
	// nothing (Disjoint).
	MatchEndpoint = "endpoint"
	// MatchHost matches URLs that differ only in their port (a test server or a
	// service moved to another port), even when no address is common to both: each
	// address probed in both is matched, the others added or removed. A URL
	// without a port has its scheme's; two URLs of one report that differ only in
	// their port stay apart.
	MatchHost = "host"
)

// Options are how ReportsWith matches endpoints and what latency change it
// counts.
type Options struct {
	// Match is MatchEndpoint ("" too) or MatchHost.
	Match string
	// MaxLatencyIncrease is the practical minimum of a latency change (see
	// Tolerance); the zero Tolerance counts every significant change.
	MaxLatencyIncrease Tolerance
	// alpha, when set, replaces judge.Alpha (the simulation tests').
	alpha float64
}

// DefaultOptions are MatchEndpoint and DefaultTolerance.
func DefaultOptions() Options {
	return Options{Match: MatchEndpoint, MaxLatencyIncrease: DefaultTolerance}
}

// urlKeys says, for each target of both reports, what it is matched by:
// itself, or with MatchHost the URL without its port, unless two targets
// of one report differ only in their port (they keep their exact URL).
func urlKeys(match string, before, after *report.Report) map[string]string {
	keys := map[string]string{}
	shared := map[string]bool{} // portless URLs two targets of one report share
	for _, r := range []*report.Report{before, after} {
		first := map[string]string{}
		for i := range r.Endpoints {
			tg := r.Endpoints[i].Target
			keys[tg] = tg
			k := portless(tg)
			if f, ok := first[k]; !ok {
				first[k] = tg
			} else if f != tg {
				shared[k] = true
			}
		}
	}
	if match != MatchHost {
		return keys
	}
	for tg := range keys {
		if k := portless(tg); shared[k] {
			keys[tg] = "=" + tg
		} else {
			keys[tg] = "~" + k
		}
	}
	return keys
}

// portless is a URL without its port ("http://h:8080/x" → "http://h/x");
// the URL itself when it does not parse.
func portless(target string) string {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return target
	}
	host := u.Hostname()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	u.Host = host
	return u.String()
}

// endpoints matches the endpoints (see Options.Match) and compares each
// pair; an endpoint without requests on one side counts as not probed
// there. It decides whether anything was compared (disjoint), whether the
// reports probed the same URLs and families (Partial), and which removed
// endpoints count as fixed.
func (c *Comparison) endpoints(before, after *report.Report, latency bool) {
	keys := urlKeys(c.Match, before, after)
	pg := pairEndpoints(before, after, keys)
	beforeEndpoints := 0
	for _, p := range pg.pairs {
		if p.b != nil {
			beforeEndpoints++
		}
		if p.b != nil && p.a != nil {
			c.Common++
		}
	}
	commonURL := false
	for uk := range pg.urls[0] {
		commonURL = commonURL || pg.urls[1][uk]
	}
	c.disjoint = c.Common == 0 && (c.Match != MatchHost || !commonURL)
	c.mostGone = 2*(beforeEndpoints-c.Common) > beforeEndpoints
	if c.disjoint {
		c.hint = disjointHint(before, after)
	} else {
		c.partialWords(before, after, keys, pg.urls, pg.probedFamily)
	}
	// Group by target (before's where the URL was probed before), in the
	// order the targets first appear.
	var targets []string
	for _, k := range pg.order {
		targets = append(targets, pg.shown(k))
	}
	for _, tg := range words.Dedupe(targets) {
		for _, k := range pg.order {
			if pg.shown(k) == tg {
				c.Endpoints = append(c.Endpoints, c.endpointScope(before, after, &pg, k, tg, latency))
			}
		}
	}
}

// pairKey is an endpoint by its URL's key (see urlKeys) and address.
type pairKey struct{ url, address string }

// pair is an endpoint before and after (nil where it got no request).
type pair struct{ b, a *report.Endpoint }

// pairing is the endpoints of two reports paired by URL key and address.
type pairing struct {
	order        []pairKey
	pairs        map[pairKey]*pair
	urls         [2]map[string]bool // URL keys probed before, after
	beforeTarget map[string]string  // URL key -> before's target
	beforeByURL  map[string][]int   // URL key -> before's endpoints of it
	probedFamily [2]map[string]bool // families probed before, after
}

func pairEndpoints(before, after *report.Report, keys map[string]string) pairing {
	pg := pairing{pairs: map[pairKey]*pair{}, urls: [2]map[string]bool{{}, {}}, beforeTarget: map[string]string{},
		beforeByURL: map[string][]int{}, probedFamily: [2]map[string]bool{{}, {}}}
	for side, r := range []*report.Report{before, after} {
		for i := range r.Endpoints {
			e := &r.Endpoints[i]
			uk := keys[e.Target]
			if side == 0 {
				pg.beforeByURL[uk] = append(pg.beforeByURL[uk], i)
				if _, ok := pg.beforeTarget[uk]; !ok {
					pg.beforeTarget[uk] = e.Target
				}
			}
			if e.Requests == 0 {
				continue
			}
			pg.urls[side][uk] = true
			pg.probedFamily[side][e.Family] = true
			k := pairKey{uk, e.Address}
			p := pg.pairs[k]
			if p == nil {
				p = &pair{}
				pg.pairs[k] = p
				pg.order = append(pg.order, k)
			}
			if side == 0 {
				p.b = e
			} else {
				p.a = e
			}
		}
	}
	return pg
}

// shown is the target an endpoint is shown under: before's where the URL
// was probed before.
func (pg *pairing) shown(k pairKey) string {
	p := pg.pairs[k]
	if p.b != nil {
		return p.b.Target
	}
	if tg, ok := pg.beforeTarget[k.url]; ok {
		return tg
	}
	return p.a.Target
}

// endpointScope is the change of endpoint k, shown under target tg: an
// added one tested against its URL's endpoints before (or all requests
// before), a removed one fixed when its URL and family were probed again.
func (c *Comparison) endpointScope(before, after *report.Report, pg *pairing, k pairKey, tg string, latency bool) ScopeChange {
	p := pg.pairs[k]
	var b, a *report.Stats
	id := EndpointID{Target: tg, Address: k.address}
	if p.b != nil {
		b, id.Family = &p.b.Stats, p.b.Family
	}
	if p.a != nil {
		a, id.Family = &p.a.Stats, p.a.Family
	}
	sc := c.scope("endpoint "+k.address+" ("+tg+")", b, a, true, latency)
	sc.Family, sc.Target, sc.Address = id.Family, tg, k.address
	if p.a != nil && p.a.Target != tg {
		sc.AfterTarget = p.a.Target
	}
	switch sc.Change {
	case ChangeAdded:
		id.Target = p.a.Target
		c.Added = append(c.Added, id)
		if base := c.urlBaseline(before, k.url, pg.beforeByURL[k.url]); base != nil {
			c.addBaseline(&sc, "the endpoints of "+tg+" before", base, "\x00url "+k.url, latency)
		} else if !c.disjoint {
			c.addBaseline(&sc, "all requests before", &before.Totals, "", latency)
		}
	case ChangeRemoved:
		c.Removed = append(c.Removed, id)
		// A failing endpoint gone from a URL still probed, in a family
		// still probed, is fixed (the address left DNS); one that was not
		// probed again is not.
		sc.gone = !c.disjoint && !c.mostGone && sc.Before.Failed > 0 && pg.urls[1][k.url] && !excludes(after, id.Family)
	}
	return sc
}

// urlBaseline sums the endpoints idx of before, a URL's, into the stats an
// added endpoint of that URL is tested against, their histograms into
// c.hbase (kept for the URL's next added endpoint); nil when they have no
// request.
func (c *Comparison) urlBaseline(before *report.Report, key string, idx []int) *report.Stats {
	s := &report.Stats{Status: map[string]int64{}, Errors: map[string]int64{}}
	for _, i := range idx {
		report.AddCounts(s, &before.Endpoints[i].Stats)
	}
	if s.Requests == 0 {
		return nil
	}
	if c.baseKey != "\x00url "+key {
		c.hbase.reset()
		for _, i := range idx {
			if e := &before.Endpoints[i]; e.Requests > 0 && !c.hbase.add(e.HDR) {
				break
			}
		}
		c.baseKey = "\x00url " + key
	}
	// Its percentiles, for the words: the merged histogram's.
	if h := c.hbase; h.n == s.Requests {
		var v [4]int64
		h.atRanks([]int64{1, rank(0.5, h.n), rank(0.99, h.n), h.n}, v[:])
		first := 0
		for first < len(h.sc.Counts) && h.sc.Counts[first] == 0 {
			first++
		}
		least, _ := h.sc.Bucket(first)
		s.LatencyMS.Min, s.LatencyMS.Max = report.MicrosToMillis(least), report.MicrosToMillis(v[3])
		s.LatencyMS.P50, s.LatencyMS.P99 = report.MicrosToMillis(v[1]), report.MicrosToMillis(v[2])
	}
	return s
}

// excludes reports whether r left family out by -4 or -6.
func excludes(r *report.Report, family string) bool {
	return r.Plan.Only != "" && r.Plan.Only != family
}

// partialWords finds what one report probed and the other did not, for a
// comparison that has something in common: a URL probed on one side only,
// a family that -4 or -6 left out of one side. Any of them makes it
// Partial.
func (c *Comparison) partialWords(before, after *report.Report, keys map[string]string, urls [2]map[string]bool, fams [2]map[string]bool) {
	names := [2]string{"BEFORE", "AFTER"}
	reps := [2]*report.Report{before, after}
	for side, r := range reps {
		var only []string
		seen := map[string]bool{}
		for i := range r.Endpoints {
			e := &r.Endpoints[i]
			if uk := keys[e.Target]; e.Requests > 0 && !urls[1-side][uk] && !seen[uk] {
				seen[uk] = true
				only = append(only, e.Target)
			}
		}
		if len(only) > 0 {
			c.notProbed = append(c.notProbed, names[side]+" alone probed "+limitItems(only, 3, ", "))
		}
	}
	for side, r := range reps {
		for _, fam := range []string{"ipv4", "ipv6"} {
			if !fams[side][fam] && fams[1-side][fam] && excludes(r, fam) {
				flag := map[string]string{"ipv4": "-4", "ipv6": "-6"}[r.Plan.Only]
				c.notProbed = append(c.notProbed, names[side]+" probed "+words.FamilyName(r.Plan.Only)+" only ("+flag+")")
			}
		}
	}
	c.Partial = len(c.notProbed) > 0
}

// disjointHint says, of two reports with nothing in common, how their
// URLs differ, and what --match host would find in common: "only the port
// differs: --match host compares them", "the same URL on other addresses:
// …"; else "the paths differ" (of one host) or "the hosts differ", which
// nothing matches.
func disjointHint(before, after *report.Report) string {
	exact, loose, host := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i := range before.Endpoints {
		if e := &before.Endpoints[i]; e.Requests > 0 {
			exact[e.Target], loose[portless(e.Target)], host[hostOf(e.Target)] = true, true, true
		}
	}
	var sameURL, samePortless, sameHost bool
	for i := range after.Endpoints {
		if e := &after.Endpoints[i]; e.Requests > 0 {
			sameURL = sameURL || exact[e.Target]
			samePortless = samePortless || loose[portless(e.Target)]
			sameHost = sameHost || host[hostOf(e.Target)]
		}
	}
	switch {
	case sameURL:
		return "the same URL on other addresses: --match host compares them"
	case samePortless:
		return "only the port differs: --match host compares them"
	case sameHost:
		return "the paths differ"
	}
	return "the hosts differ"
}

// hostOf is a URL's host name ("sign.example.com"), the URL itself when
// it does not parse.
func hostOf(target string) string {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return target
	}
	return strings.ToLower(u.Hostname())
}
