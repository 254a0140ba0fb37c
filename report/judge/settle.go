package judge

import (
	"github.com/pinprobe/pinprobe/report"
	"github.com/pinprobe/pinprobe/report/stat"
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
// (--until-verdict). It does when:
//   - v names at least one suspect, each proven at the look's level (v was
//     judged at it);
//   - every other scope that could still become a suspect is bounded:
//     each address that is not a suspect (less the responses of the
//     suspect instances behind it) and each instance that is not one (less
//     its responses through suspect addresses) failed less than Tolerance,
//     by the exact upper bound at the look's level split over those scopes;
//   - every address that is not itself a suspect carried at least
//     ReachConnections(SettleReach) connections, so that an instance
//     behind it serving one connection in four was reached with
//     probability SettleReach.
//
// It returns what was settled, for the report; false while anything is
// open. A healthy run never settles: there is no fault to stop on.
func Settle(r *report.Report, v report.Verdict) (report.Settled, bool) {
	need := ReachConnections(SettleReach)
	st := report.Settled{Suspects: len(v.Suspects), Tolerance: Tolerance, MinConnections: -1}
	if v.Status != report.VerdictConcentrated || len(v.Suspects) == 0 {
		return st, false
	}
	covered := map[string]bool{}  // endpoints ("target address") and addresses named whole
	connsOf := map[string]bool{}  // endpoints named by some of their connections
	suspectG := map[string]bool{} // instances named
	for _, s := range v.Suspects {
		switch s.Kind {
		case report.SuspectGroup:
			suspectG[s.Group] = true
		case report.SuspectEndpoint:
			covered[s.Target+" "+s.Address] = true
			covered[s.Address] = true
		case report.SuspectConnections:
			connsOf[s.Target+" "+s.Address] = true
		}
	}
	type scope struct{ failed, n int64 }
	var scopes []scope
	ok := true
	// Every address, all its URLs together, less the responses of the
	// suspect instances behind it (an instance's counts are the
	// address's); an address with a URL named whole is bounded URL by URL.
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
		switch {
		case covered[key]:
			a.split = true
			continue
		case connsOf[key]:
			// Named by some of its connections: its other connections
			// (requests on connections that had only succeeded so far)
			// must be clear too.
			var f, n int64
			if e.Conns != nil {
				for _, st := range e.Conns.Repeat {
					f, n = f+st.AfterOKFailed, n+st.AfterOK
				}
			}
			scopes = append(scopes, scope{f, n})
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
			ok = false
		}
	}
	for _, addr := range order {
		a := byAddr[addr]
		f, n := a.f, a.n
		if !a.split {
			// One header's suspect instances (two headers may name the
			// same instance): the first that has one behind the address.
			head := ""
			for _, g := range r.Groups {
				if suspectG[g.Header+": "+g.Value] && g.FailedBy[addr] > 0 && head == "" {
					head = g.Header
				}
			}
			for _, g := range r.Groups {
				if g.Header == head && suspectG[g.Header+": "+g.Value] {
					f, n = f-g.FailedBy[addr], n-g.Addresses[addr]
				}
			}
		}
		if n > 0 {
			scopes = append(scopes, scope{min(max(f, 0), n), n})
		}
	}
	// Another header that names a suspect instance (the same responses)
	// is that suspect too.
	for _, g := range r.Groups {
		for _, o := range r.Groups {
			if suspectG[o.Header+": "+o.Value] && sameResponses(&g, &o) {
				suspectG[g.Header+": "+g.Value] = true
			}
		}
	}
	for _, g := range r.Groups {
		if g.Value == report.OtherValues || suspectG[g.Header+": "+g.Value] {
			continue
		}
		f, n := g.Failed, g.Requests
		for a, c := range g.Addresses {
			if covered[a] {
				f, n = f-g.FailedBy[a], n-c
			}
		}
		if n > 0 {
			scopes = append(scopes, scope{max(f, 0), n})
		}
	}
	a := v.Level.Alpha / float64(max(len(scopes), 1))
	for _, s := range scopes {
		if stat.UpperBound(s.failed, s.n, a) < Tolerance {
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
	return st, ok
}
