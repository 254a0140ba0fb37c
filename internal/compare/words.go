package compare

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/pinprobe/pinprobe/internal/words"
)

// rates is "0% → 12%".
func rates(sc *ScopeChange) string {
	b, a := "-", "-"
	if sc.Before != nil {
		b = words.PctRate(sc.Before.FailureRate)
	}
	if sc.After != nil {
		a = words.PctRate(sc.After.FailureRate)
	}
	return b + " → " + a
}

// MSChange is a latency before → after in a sentence: "0.26 → 50.7ms",
// "950ms → 1.20s".
func MSChange(b, a float64) string {
	x, y := words.Latency(b, 1), words.Latency(a, 1)
	if strings.HasSuffix(x, "ms") && strings.HasSuffix(y, "ms") {
		return strings.TrimSuffix(x, "ms") + " → " + y
	}
	if !strings.HasSuffix(x, "ms") && !strings.HasSuffix(y, "ms") {
		return strings.TrimSuffix(x, "s") + " → " + y
	}
	return x + " → " + y
}

// regressionLead starts the conclusion of a regression.
const regressionLead = "regression: "

// Headline is the conclusion as it reads after the status in a headline
// ("REGRESSED 127.0.0.2 0% → 12%, p<1e-9"): without the "regression: "
// that would say the status twice.
func (c *Comparison) Headline() string {
	if c.Status == Regressed {
		return strings.TrimPrefix(c.Conclusion, regressionLead)
	}
	return c.Conclusion
}

// conclude writes the one-line conclusion: regressions first (failures,
// then latency), then what got better, then what stayed; then new kinds
// of failure that no test found significant, beside a latency or an
// improvement that leads (a verdict on one must not hide the other), and
// the total's percentiles that moved but that too few requests could test.
func (c *Comparison) conclude() string {
	if c.Before.Requests == 0 || c.After.Requests == 0 {
		which := "before"
		if c.Before.Requests > 0 {
			which = "after"
		} else if c.After.Requests == 0 {
			which = "either report"
		}
		return "nothing to compare: no request in " + which
	}
	if c.disjoint {
		return c.disjointConclusion()
	}
	s := c.concludedScopes()
	if len(s.worse)+len(s.slow) > 0 {
		return c.withPartial(c.regressionConclusion(s))
	}
	return c.withPartial(c.quietConclusion(s))
}

// disjointConclusion is the conclusion of two runs with no endpoint in
// common: what each probed, and the endpoints that fail or answer slower
// than the others of their run.
func (c *Comparison) disjointConclusion() string {
	nothing := "no endpoint in common: " + c.probedWords()
	if c.hint != "" {
		nothing += "; " + c.hint
	}
	var worse []string
	for i := range c.Endpoints {
		if sc := &c.Endpoints[i]; sc.Change == ChangeWorse {
			worse = append(worse, c.worseWords(sc))
		}
	}
	for i := range c.Endpoints {
		if sc := &c.Endpoints[i]; sc.Latency.Change == LatencySlower {
			worse = append(worse, c.latencyWords(sc, LatencySlower))
		}
	}
	if len(worse) > 0 {
		return regressionLead + limitItems(worse, 3, "; ") + "; " + nothing
	}
	return nothing
}

// concluded are the scopes the conclusion names, by what changed.
type concluded struct {
	worse, slow, better, fast, gone, same, added, removed []*ScopeChange
	// everySlow: every endpoint tested is slower, said once by the total.
	everySlow bool
}

// concludedScopes sorts the endpoints by what changed, says every
// endpoint slower (or faster) once by the total, and names the instances
// that changed beside the endpoints, or, with no endpoint to name, a
// family or the total.
func (c *Comparison) concludedScopes() concluded {
	var s concluded
	tested, slowTested, fastTested := 0, 0, 0
	for i := range c.Endpoints {
		sc := &c.Endpoints[i]
		if sc.Latency.Tested && sc.Baseline == nil {
			tested++
		}
		switch sc.Latency.Change {
		case LatencySlower:
			s.slow = append(s.slow, sc)
			if sc.Baseline == nil {
				slowTested++
			}
		case LatencyFaster:
			s.fast = append(s.fast, sc)
			if sc.Baseline == nil {
				fastTested++
			}
		}
		switch {
		case sc.Change == ChangeWorse:
			s.worse = append(s.worse, sc)
		case sc.Change == ChangeBetter:
			s.better = append(s.better, sc)
		case sc.gone:
			s.gone = append(s.gone, sc)
		case sc.Change == ChangeRemoved:
			s.removed = append(s.removed, sc)
		case sc.Change == ChangeAdded:
			s.added = append(s.added, sc)
		case sc.Latency.Change == LatencySame:
			s.same = append(s.same, sc)
		}
	}
	s.everySlow = tested > 1 && slowTested == tested && c.Totals.Latency.Change == LatencySlower
	if s.everySlow {
		every := []*ScopeChange{&c.Totals}
		for _, sc := range s.slow {
			if sc.Baseline != nil {
				every = append(every, sc)
			}
		}
		s.slow = every
	}
	if tested > 1 && fastTested == tested && c.Totals.Latency.Change == LatencyFaster {
		s.fast = []*ScopeChange{&c.Totals}
	}
	s.worse = c.widen(s.worse, func(sc *ScopeChange) bool { return sc.Change == ChangeWorse })
	s.slow = c.widen(s.slow, func(sc *ScopeChange) bool { return sc.Latency.Change == LatencySlower })
	s.fast = c.widen(s.fast, func(sc *ScopeChange) bool { return sc.Latency.Change == LatencyFaster })
	if len(s.better) == 0 && len(s.gone) == 0 {
		s.better = c.widen(nil, func(sc *ScopeChange) bool { return sc.Change == ChangeBetter || sc.gone })
	}
	return s
}

// widen adds to the endpoints of list the instances of which has holds;
// with no endpoint in list, it is the instances, else the families, else
// the total, of which has holds.
func (c *Comparison) widen(list []*ScopeChange, has func(*ScopeChange) bool) []*ScopeChange {
	if len(list) > 0 {
		for i := range c.Groups {
			if has(&c.Groups[i]) {
				list = append(list, &c.Groups[i])
			}
		}
		return list
	}
	for _, scopes := range [][]*ScopeChange{pointers(c.Groups), pointers(c.Families), {&c.Totals}} {
		for _, sc := range scopes {
			if has(sc) {
				list = append(list, sc)
			}
		}
		if len(list) > 0 {
			return list
		}
	}
	return nil
}

// regressionConclusion leads with what got worse (failures, then
// latency), then what got better, the new failures no test found
// significant and the percentiles too few requests could test.
func (c *Comparison) regressionConclusion(s concluded) string {
	var items []string
	for _, sc := range s.worse {
		items = append(items, c.worseWords(sc))
	}
	clauses := []string{regressionLead + joinSome(limitItems(items, 3, "; "), c.latencyItems(s.slow, LatencySlower, s.everySlow))}
	if len(s.gone)+len(s.better)+len(s.fast) > 0 {
		clauses = append(clauses, "also "+c.betterWords(s.gone, s.better, s.fast))
	}
	clauses = append(clauses, c.newFailureWords()...)
	clauses = append(clauses, c.untoldWords()...)
	return strings.Join(clauses, "; ")
}

// quietConclusion is the conclusion with nothing worse: what got better,
// or that nothing changed significantly; then what stayed, what was
// removed and added, and the percentiles too few requests could test.
func (c *Comparison) quietConclusion(s concluded) string {
	var clauses []string
	if len(s.gone)+len(s.better)+len(s.fast) > 0 {
		clauses = append(clauses, c.improvementLead(s.gone, s.better)+": "+c.betterWords(s.gone, s.better, s.fast))
		clauses = append(clauses, c.newFailureWords()...)
	} else {
		lead := "no significant change"
		if c.Totals.Tested {
			lead += fmt.Sprintf(" (total %s, %s", rates(&c.Totals), words.PValue(c.Totals.P))
			if l := &c.Totals.Latency; l.Tested && len(c.untoldWords()) == 0 {
				lead += "; p50 " + MSChange(l.P50.BeforeMS, l.P50.AfterMS)
			}
			lead += ")"
		}
		clauses = append(clauses, lead)
	}
	if len(s.same) > 0 {
		clauses = append(clauses, c.groupWords(s.same))
	}
	if len(s.removed) > 0 {
		clauses = append(clauses, c.listWords(s.removed)+" removed")
	}
	if len(s.added) > 0 {
		clauses = append(clauses, c.listWords(s.added)+" added ("+afterRates(s.added)+")")
	}
	out := strings.Join(clauses, "; ")
	if len(clauses) > 1 && !strings.Contains(clauses[0], ": ") {
		out = clauses[0] + ": " + strings.Join(clauses[1:], "; ")
	}
	if untold := c.untoldWords(); len(untold) > 0 {
		out += "; " + strings.Join(untold, "; ")
	}
	return out
}

// newFailureWords says the endpoints that failed with new kinds of
// failure that no test found significant (see NewFailures): "new failures
// too, not significant: 127.0.0.2 0% → 7.3% (502), p=4.0e-4". A family's
// or the total's new failures are their endpoints', said here or worse.
func (c *Comparison) newFailureWords() []string {
	var scs []*ScopeChange
	for i := range c.Endpoints {
		if sc := &c.Endpoints[i]; sc.Change != ChangeWorse {
			if n, _ := sc.NewFailures(); n > 0 {
				scs = append(scs, sc)
			}
		}
	}
	if len(scs) == 0 {
		return nil
	}
	var items []string
	for _, sc := range scs {
		_, kinds := sc.NewFailures()
		what := ""
		if len(kinds) > 0 {
			what = " (" + limitItems(kinds, 3, ", ") + ")"
		}
		items = append(items, fmt.Sprintf("%s %s%s, %s", c.Label(sc), rates(sc), what, words.PValue(sc.PWorse)))
	}
	return []string{"new failures too, not significant: " + limitItems(items, 3, "; ")}
}

// untoldWords says each percentile of the total that moved by more than
// the tolerance but that its test, with so few requests, could not have
// found changed: "total p99 3.45 → 74.0ms: too few requests to tell
// (about 760 requests a side would)".
func (c *Comparison) untoldWords() []string {
	l := &c.Totals.Latency
	var out []string
	for _, q := range l.quantiles() {
		if q.q.Change != LatencySame || !l.CannotTell(q.q, c.AlphaEach) || max(q.q.ChangeMS, -q.q.ChangeMS) <= q.q.ToleranceMS {
			continue
		}
		s := "total " + q.name + " " + MSChange(q.q.BeforeMS, q.q.AfterMS) + ": too few requests to tell"
		if q.q.RequestsToTell > 0 {
			s += fmt.Sprintf(" (about %d requests a side would)", q.q.RequestsToTell)
		}
		out = append(out, s)
	}
	return out
}

// everyEndpoint reports whether every endpoint tested for latency (two
// or more, against themselves before) changed so.
func (c *Comparison) everyEndpoint(change string) bool {
	tested := 0
	for i := range c.Endpoints {
		if sc := &c.Endpoints[i]; sc.Latency.Tested && sc.Baseline == nil {
			if sc.Latency.Change != change {
				return false
			}
			tested++
		}
	}
	return tested > 1
}

func pointers(scs []ScopeChange) []*ScopeChange {
	out := make([]*ScopeChange, len(scs))
	for i := range scs {
		out[i] = &scs[i]
	}
	return out
}

// withPartial ends a conclusion with what one report probed and the other
// did not, when it did.
func (c *Comparison) withPartial(s string) string {
	if !c.Partial {
		return s
	}
	return s + "; partial: " + limitItems(c.notProbed, 3, "; ")
}

// probedWords says what each report probed, for reports with no endpoint
// in common: "BEFORE probed 127.0.0.1, 127.0.0.2 at https://a.example/;
// AFTER probed 192.0.2.7 at https://b.example/".
func (c *Comparison) probedWords() string {
	side := func(name string, before bool) string {
		var targets []string
		addrs := map[string][]string{}
		for _, sc := range c.Endpoints {
			if before && sc.Before == nil || !before && sc.After == nil {
				continue
			}
			tg := sc.Target
			if !before && sc.AfterTarget != "" {
				tg = sc.AfterTarget
			}
			if !before && sc.Change == ChangeAdded {
				tg = cmp.Or(sc.AfterTarget, sc.Target)
			}
			if _, ok := addrs[tg]; !ok {
				targets = append(targets, tg)
			}
			addrs[tg] = append(addrs[tg], sc.Address)
		}
		var items []string
		for _, tg := range targets {
			items = append(items, limitItems(addrs[tg], 4, ", ")+" at "+tg)
		}
		if len(items) == 0 {
			return name + " probed nothing"
		}
		return name + " probed " + limitItems(items, 3, " and ")
	}
	return side("BEFORE", true) + "; " + side("AFTER", false)
}

// improvementLead says what got better in a few words: "IPv6 failures
// gone" when every failure before was in a family that has none now,
// "failures gone" when none is left, "faster" when only latency improved.
func (c *Comparison) improvementLead(gone, better []*ScopeChange) string {
	if len(gone)+len(better) == 0 {
		return "improvement"
	}
	failing := map[string]bool{}
	for _, f := range c.Families {
		if f.Before != nil && f.Before.Failed > 0 {
			failing[f.Family] = true
		}
	}
	if len(failing) == 1 && len(c.Families) > 1 {
		for fam := range failing {
			for _, f := range c.Families {
				if f.Family == fam && (f.After == nil || f.After.Failed == 0) {
					return words.FamilyName(fam) + " failures gone"
				}
			}
		}
	}
	if c.After.Failed == 0 {
		return "failures gone"
	}
	return "improvement"
}

// worseWords is "127.0.0.2 0% → 12%, p<1e-9", or for a new endpoint
// "127.0.0.3 (new) 30% against 0% before, p<1e-9".
func (c *Comparison) worseWords(sc *ScopeChange) string {
	if sc.Baseline != nil {
		return fmt.Sprintf("%s (new) %s against %s before, %s", c.Label(sc), words.PctRate(sc.After.FailureRate),
			words.PctRate(sc.Baseline.FailureRate), words.PValue(sc.PWorse))
	}
	return fmt.Sprintf("%s %s, %s", c.Label(sc), rates(sc), words.PValue(sc.PWorse))
}

// latencyWords is "127.0.0.1 slower: p50 0.26 → 50.7ms, p<1e-9", or for a
// new endpoint "127.0.0.3 (new) slower: p50 50.7ms against 0.26ms before,
// p<1e-9"; faster alike.
func (c *Comparison) latencyWords(sc *ScopeChange, change string) string {
	l := &sc.Latency
	var parts []string
	p := 1.0
	for _, q := range l.quantiles() {
		if q.q.Change != change {
			continue
		}
		if sc.Baseline != nil {
			parts = append(parts, fmt.Sprintf("%s %s against %s before", q.name, words.Latency(q.q.AfterMS, 1), words.Latency(q.q.BeforeMS, 1)))
		} else {
			parts = append(parts, q.name+" "+MSChange(q.q.BeforeMS, q.q.AfterMS))
		}
		pq := q.q.PSlower
		if change == LatencyFaster {
			pq = q.q.PFaster
		}
		p = min(p, pq)
	}
	label := c.Label(sc)
	if sc.Baseline != nil {
		label += " (new)"
	}
	return fmt.Sprintf("%s %s: %s, %s", label, change, strings.Join(parts, ", "), words.PValue(p))
}

// betterWords is "::1 removed; 127.0.0.3 100% → 0%, p<1e-9; 127.0.0.1
// faster: p50 50.7 → 0.26ms, p<1e-9".
func (c *Comparison) betterWords(gone, better, fast []*ScopeChange) string {
	var items []string
	if len(gone) > 0 {
		items = append(items, c.listWords(gone)+" removed")
	}
	for _, sc := range better {
		if sc.Change == ChangeRemoved {
			items = append(items, c.Label(sc)+" removed")
			continue
		}
		items = append(items, fmt.Sprintf("%s %s, %s", c.Label(sc), rates(sc), words.PValue(sc.PBetter)))
	}
	return joinSome(limitItems(items, 3, "; "), c.latencyItems(fast, LatencyFaster, c.everyEndpoint(LatencyFaster)))
}

// latencyItems says each of scs changed so (latencyWords), at most 3; the
// total as "every endpoint slower, in total p50 …" when every is set.
func (c *Comparison) latencyItems(scs []*ScopeChange, change string, every bool) string {
	var items []string
	for _, sc := range scs {
		w := c.latencyWords(sc, change)
		if sc == &c.Totals && every {
			w = "every endpoint " + change + ", in total " + strings.TrimPrefix(w, "total "+change+": ")
		}
		items = append(items, w)
	}
	return limitItems(items, 3, "; ")
}

// joinSome joins the parts that are not empty with "; ".
func joinSome(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}

// groupWords lists unchanged endpoints grouped by their rates:
// "127.0.0.1, 127.0.0.2 0% → 0%; ::1 4.5% → 5%".
func (c *Comparison) groupWords(scs []*ScopeChange) string {
	var keys []string
	groups := map[string][]*ScopeChange{}
	for _, sc := range scs {
		k := rates(sc)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], sc)
	}
	var items []string
	for _, k := range keys {
		items = append(items, c.listWords(groups[k])+" "+k)
	}
	return limitItems(items, 3, "; ")
}

func (c *Comparison) listWords(scs []*ScopeChange) string {
	var names []string
	for _, sc := range scs {
		names = append(names, c.Label(sc))
	}
	return limitItems(names, 4, ", ")
}

func afterRates(scs []*ScopeChange) string {
	var r []string
	for _, sc := range scs {
		r = append(r, words.PctRate(sc.After.FailureRate))
	}
	return strings.Join(words.Dedupe(r), ", ")
}

// limitItems joins at most n items and says how many more there are.
func limitItems(items []string, n int, sep string) string {
	if len(items) <= n {
		return strings.Join(items, sep)
	}
	return strings.Join(items[:n], sep) + fmt.Sprintf(" and %d more", len(items)-n)
}
