package judge

import (
	"fmt"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
	"github.com/pinprobe/pinprobe/internal/words"
)

// Tolerance is the failure rate under which --until-verdict takes a scope
// no test named to be clear: before the run stops, every address and
// instance that is not a suspect must be shown, at the look's confidence,
// to fail less often than this.
const Tolerance = 0.05

// SettleReach is the probability with which every address that is not
// itself a suspect must have reached an instance serving one connection in
// four (InstanceShare) before --until-verdict stops: 99%, which takes 17
// connections.
const SettleReach = 0.99

// Settle says whether v, the verdict of a look at r, settles the run
// (--until-verdict): v names suspects proven at the look's level; every other
// address and instance (less what its suspects answered) failed less than
// Tolerance, by the exact upper bound at that level split over them; and every
// address not a suspect carried ReachConnections(SettleReach) connections (an
// instance serving one in four reached with probability SettleReach). It
// returns what was settled; false while anything is open. A healthy run never
// settles.
func Settle(r *report.Report, v report.Verdict) (report.Settled, bool) {
	s := settle(r, v)
	return s.st, s.ok
}

// settling is Settle's reckoning of a verdict: what was settled, and what
// stayed open.
type settling struct {
	st report.Settled
	ok bool
	// scopes are the scopes that must be bounded, each with its bound.
	scopes []settleScope
	// fewConns are the addresses that carried fewer connections than
	// ReachConnections(SettleReach).
	fewConns []fewConn
}

// settleScope is one scope Settle bounds: its name, its failed requests
// of n, and the upper bound of its failure rate at the look's level.
type settleScope struct {
	name      string
	failed, n int64
	upper     float64
}

// fewConn is an address on too few connections to settle, and how many it
// carried.
type fewConn struct {
	name  string
	conns int64
}

func settle(r *report.Report, v report.Verdict) settling {
	out := settling{st: report.Settled{Suspects: len(v.Suspects), Tolerance: Tolerance, MinConnections: -1}}
	st := &out.st
	if v.Status != report.VerdictConcentrated || len(v.Suspects) == 0 {
		return out
	}
	nm := namedBy(v)
	ok := out.addressScopes(r, nm)
	out.groupScopes(r, nm)
	a := v.Level.Alpha / float64(max(len(out.scopes), 1))
	for i := range out.scopes {
		s := &out.scopes[i]
		s.upper = stat.UpperBound(s.failed, s.n, a)
		if s.upper < Tolerance {
			st.Bounded++
		} else {
			ok = false
		}
	}
	if st.MinConnections < 0 {
		st.MinConnections = 0
		st.Reach = 1
	} else {
		st.Reach = stat.Round(ReachProbability(st.MinConnections), 4)
	}
	out.ok = ok
	return out
}

// named is what the verdict's suspects name.
type named struct {
	covered map[string]bool // endpoints ("target address") and addresses named whole
	connsOf map[string]bool // endpoints named by some of their connections
	groups  map[string]bool // instances named ("header: value")
}

func namedBy(v report.Verdict) named {
	nm := named{covered: map[string]bool{}, connsOf: map[string]bool{}, groups: map[string]bool{}}
	for _, s := range v.Suspects {
		switch s.Kind {
		case report.SuspectGroup:
			nm.groups[s.Group] = true
		case report.SuspectEndpoint:
			nm.covered[s.Target+" "+s.Address] = true
			nm.covered[s.Address] = true
		case report.SuspectConnections:
			nm.connsOf[s.Target+" "+s.Address] = true
		}
	}
	return nm
}

// addressScopes adds the scopes of every address still in DNS, all its
// URLs together, less the responses of the suspect instances behind it
// (an instance's counts are the address's); an address with a URL named
// whole is bounded URL by URL, and one named by some of its connections
// by its other connections. It notes the addresses on too few
// connections to settle, and reports whether there were none.
func (out *settling) addressScopes(r *report.Report, nm named) (ok bool) {
	need := ReachConnections(SettleReach)
	st := &out.st
	multiURL := false
	for _, e := range r.Endpoints {
		multiURL = multiURL || e.Target != r.Endpoints[0].Target
	}
	type acc struct {
		f, n  int64
		split bool // some endpoint of it is named: its URLs are bounded apart
	}
	byAddr := map[string]*acc{}
	var order []string
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		if e.RemovedAt != nil {
			continue // it left DNS: no more of its requests will come to clear it
		}
		a := byAddr[e.Address]
		if a == nil {
			a = &acc{}
			byAddr[e.Address] = a
			order = append(order, e.Address)
		}
		key := e.Target + " " + e.Address
		label := e.Address
		if multiURL {
			label += " (" + e.Target + ")"
		}
		switch {
		case nm.covered[key]:
			a.split = true
			continue
		case nm.connsOf[key]:
			// Named by some of its connections: its other connections
			// (requests on connections that had only succeeded so far)
			// must be clear too.
			var f, n int64
			if e.Conns != nil {
				for _, st := range e.Conns.Repeat {
					f, n = f+st.AfterOKFailed, n+st.AfterOK
				}
			}
			out.scopes = append(out.scopes, settleScope{name: "the other connections of " + label, failed: f, n: n})
			a.split = true
		default:
			a.f, a.n = a.f+e.Failed, a.n+e.Requests
		}
		conns := int64(0)
		if e.Conns != nil {
			conns = e.Conns.Connections
		}
		if st.MinConnections < 0 || conns < st.MinConnections {
			st.MinConnections = conns
		}
		if conns < need {
			out.fewConns = append(out.fewConns, fewConn{label, conns})
		}
	}
	for _, addr := range order {
		a := byAddr[addr]
		f, n := a.f, a.n
		name := addr
		if !a.split {
			// One header's suspect instances (two headers may name the
			// same instance): the first that has one behind the address.
			head := ""
			for _, g := range r.Groups {
				if nm.groups[g.Header+": "+g.Value] && g.FailedBy[addr] > 0 && head == "" {
					head = g.Header
				}
			}
			var less []string
			for _, g := range r.Groups {
				if g.Header == head && nm.groups[g.Header+": "+g.Value] {
					f, n = f-g.FailedBy[addr], n-g.Addresses[addr]
					less = append(less, g.Header+": "+g.Value)
				}
			}
			if len(less) > 0 {
				name += " beyond " + words.JoinAnd(less)
			}
		} else if multiURL {
			name += " (its other URLs)"
		}
		if n > 0 {
			out.scopes = append(out.scopes, settleScope{name: name, failed: min(max(f, 0), n), n: n})
		}
	}
	return len(out.fewConns) == 0
}

// groupScopes adds the scope of every instance not a suspect, less its
// responses from the addresses named whole. Another header that names a
// suspect instance (the same responses) is that suspect too.
func (out *settling) groupScopes(r *report.Report, nm named) {
	for _, g := range r.Groups {
		for _, o := range r.Groups {
			if nm.groups[o.Header+": "+o.Value] && sameResponses(&g, &o) {
				nm.groups[g.Header+": "+g.Value] = true
			}
		}
	}
	for _, g := range r.Groups {
		if g.Value == report.OtherValues || nm.groups[g.Header+": "+g.Value] {
			continue
		}
		f, n := g.Failed, g.Requests
		for a, c := range g.Addresses {
			if nm.covered[a] {
				f, n = f-g.FailedBy[a], n-c
			}
		}
		if n > 0 {
			out.scopes = append(out.scopes, settleScope{name: g.Header + ": " + g.Value, failed: max(f, 0), n: n})
		}
	}
}

// unsettledNote says, for a run of --until-verdict judged at its last look
// (it ended without the verdict having settled at a look before), what
// kept the verdict from settling: no fault to stop on, the scopes not yet
// shown to fail less than Tolerance (those that fail, not yet proven
// faults either, apart), and the addresses on too few connections. ""
// when no request was sent.
func unsettledNote(r *report.Report, v report.Verdict) string {
	if r.Totals.Requests == 0 {
		return ""
	}
	p := r.Plan
	end := "the run ended"
	switch d := report.SecondsDuration(p.DurationS); {
	case r.Interrupted:
		end = "the run was interrupted"
	case p.Requests > 0 && (p.DurationS == 0 || r.Totals.Requests+r.Totals.Dropped >= p.Requests):
		end = fmt.Sprintf("-n %d ended the run", p.Requests)
	case p.DurationS > 0:
		end = fmt.Sprintf("-d %s ended the run", d)
	}
	lead := "The verdict did not settle before " + end + " (--until-verdict)"
	switch v.Status {
	case report.VerdictOK:
		return lead + ": no request failed, so there was no fault to stop on."
	case report.VerdictSpread:
		return lead + ": no fault is proven (the failures are not attributable to one address or instance), so there was nothing to stop on."
	case report.VerdictConcentrated:
	default:
		return ""
	}
	s := settle(r, v)
	if s.ok {
		return fmt.Sprintf("The verdict settled only at the last look, when %s (--until-verdict), at its level (%s): at the looks before it, it had not.",
			end, words.AlphaValue(v.Level.Alpha))
	}
	var failing, clean []string
	for _, sc := range s.scopes {
		if sc.upper < Tolerance {
			continue
		}
		w := fmt.Sprintf("%s (%d of %d failed, possibly up to %s)", sc.name, sc.failed, sc.n, words.PctCeil(sc.upper))
		if sc.failed > 0 {
			failing = append(failing, w)
		} else {
			clean = append(clean, w)
		}
	}
	faults := fmt.Sprintf("its %d fault%s %s proven", len(v.Suspects), words.Plural(len(v.Suspects)), words.Agree(len(v.Suspects), "is", "are"))
	var open []string
	if len(failing) > 0 {
		open = append(open, fmt.Sprintf("%s fail%s, neither proven a fault nor shown to fail less than %s",
			words.JoinAnd(words.CapItems(failing, 4)), words.Agree(len(failing), "s", ""), words.PctRate(Tolerance)))
	}
	if len(clean) > 0 {
		open = append(open, fmt.Sprintf("%s %s not yet shown to fail less than %s",
			words.JoinAnd(words.CapItems(clean, 4)), words.Agree(len(clean), "is", "are"), words.PctRate(Tolerance)))
	}
	if len(s.fewConns) > 0 {
		need := ReachConnections(SettleReach)
		var few []string
		for _, f := range s.fewConns {
			few = append(few, fmt.Sprintf("%s (%d)", f.name, f.conns))
		}
		few = words.Dedupe(few)
		reach := fmt.Sprintf("the %d that reach an instance taking one connection in four with probability %s", need, words.PctRate(SettleReach))
		if len(few) == 1 {
			f := s.fewConns[0]
			open = append(open, fmt.Sprintf("%s carried %d connection%s, fewer than %s", f.name, f.conns, words.Plural(int(f.conns)), reach))
		} else {
			open = append(open, fmt.Sprintf("%s carried fewer connections than %s", words.JoinAnd(words.CapItems(few, 6)), reach))
		}
	}
	return fmt.Sprintf("%s: %s, but %s (bounds at this look's confidence). A longer -d, or a higher --rate, gives them the requests and connections to settle.",
		lead, faults, strings.Join(open, "; "))
}
