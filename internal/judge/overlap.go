package judge

import (
	"fmt"
	"strings"

	"github.com/pinprobe/pinprobe/internal/words"
)

// SameShare is the share of each of two findings' failed requests that
// they must have in common to be one fault: an instance behind an address
// and the failing connections of that address are said once, as the
// instance with the connections as its evidence, when at least this share
// of the instance's failures and of the connections' failures are the
// same requests.
const SameShare = 0.9

// overlap is what a suspect instance behind one address and the failing
// connections of that address have in common.
//
// Every failed response of the instance came on a connection of its
// address, and that connection, having failed, is a failing one: so when
// the address serves one URL the failures they share are exactly the
// instance's failures through it. When it serves several and only some of
// them have failing connections, the instance's failures on the others are
// not told apart from its failures on these, and the share is a range.
type overlap struct {
	gf *groupFinding
	// inst is the instance's failures through the address; conn the
	// failures on the connections of its endpoints with a connection
	// finding (every failure that got a connection); lo and hi bound the
	// failures both are made of.
	inst, conn, lo, hi int64
	// those endpoints' connections
	connCount
	// best is the endpoint whose connection finding is the strongest.
	best int
}

// overlapOf weighs instance gf against the connection findings of the
// endpoints eps of its address.
func (j *judgement) overlapOf(gf *groupFinding, eps []int) overlap {
	o := overlap{gf: gf, inst: gf.g.FailedBy[gf.behind], best: eps[0]}
	in := map[int]bool{}
	for _, i := range eps {
		in[i] = true
		f := j.connFind[i]
		o.conn += connectedFailures(j, i)
		o.failing, o.all, o.first = o.failing+f.failing, o.all+f.all, o.first || f.first
		if f.moment.P < j.connFind[o.best].moment.P {
			o.best = i
		}
	}
	other, _ := j.sumEndpoints(j.byAddr[gf.behind], func(k int) bool { return !in[k] }) // the address's failures on its other endpoints
	o.lo, o.hi = sharedRange(o.inst, o.conn, other)
	return o
}

// connectedFailures counts endpoint i's failures that got a connection:
// those on its connections, failing ones by definition.
func connectedFailures(j *judgement, i int) int64 {
	e := &j.r.Endpoints[i]
	if e.Conns == nil {
		return e.Failed
	}
	return max(e.Conns.Failed-e.Conns.Unconnected.Failed, 0)
}

// sharedRange bounds the failures an instance with inst failures through
// an address shares with mine failures on some of its connections, when
// others of the address's failures are elsewhere.
func sharedRange(inst, mine, others int64) (lo, hi int64) {
	hi = min(inst, mine)
	return min(max(inst-others, 0), hi), hi
}

// same reports whether the instance and the connections are one fault:
// nearly all of the failures of each are the other's (SameShare).
func (o overlap) same() bool {
	lo := float64(o.lo)
	return o.conn > 0 && o.inst > 0 && lo >= SameShare*float64(o.conn) && lo >= SameShare*float64(o.inst)
}

// countRange says lo..hi: "12", or "10 to 12" when the data cannot tell.
func countRange(lo, hi int64) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

// isAre is the verb that agrees with a count of lo to hi: "is" for
// exactly one.
func isAre(lo, hi int64) string {
	if lo == 1 && hi == 1 {
		return "is"
	}
	return "are"
}

// sameWords says that an instance's failures are its address's failing
// connections', with the test that the connections stick: "its 13
// failures are all the failures of 4 of the 14 connections of 127.0.0.2,
// which kept failing while connections open at the same moments did not
// (…): one fault, seen by its header and by its connections".
func (j *judgement) sameWords(o overlap) string {
	conns := fmt.Sprintf("%d of the %d connections of %s", o.failing, o.all, o.gf.behind)
	if o.first {
		conns = fmt.Sprintf("%d of the first %d connections of %s", o.failing, o.all, o.gf.behind)
	}
	var which string
	switch {
	case o.lo == o.hi && o.hi == o.inst && o.hi == o.conn:
		which = fmt.Sprintf("its %d failure%s %s all the failures of %s", o.inst, words.Plural(int(o.inst)),
			words.Agree(int(o.inst), "is", "are"), conns)
	default:
		which = fmt.Sprintf("%s of its %d failures are among the %d failures of %s", countRange(o.lo, o.hi), o.inst, o.conn, conns)
	}
	m := j.connFind[o.best].moment
	return fmt.Sprintf("%s, which kept failing while connections open at the same moments did not (%d of %d requests after a failure on the same connection failed, %d of %d on the other connections, %s): one fault, seen by its header and by its connections",
		which, m.AfterFailureFailed, m.AfterFailure, m.AfterOKFailed, m.AfterOK, words.PValue(m.P))
}

// sharedWords adds to the clause of endpoint i's failing connections what
// they share with the suspect instances os behind its address, which they
// are not one with: after the headline's subject "(5 of 14 connections; 12
// of their 20 failures are gw-3's)", and in the evidence whose they are
// and how many are not.
func (j *judgement) sharedWords(i int, os []overlap, extra, evidence string) (string, string) {
	e := &j.r.Endpoints[i]
	mine := connectedFailures(j, i)
	others, _ := j.sumEndpoints(j.byAddr[e.Address], func(k int) bool { return k != i }) // the address's failures on its other endpoints
	var values, parts []string
	var lo, hi int64
	for k, o := range os {
		l, h := sharedRange(o.inst, mine, others)
		lo, hi = lo+l, hi+h
		values = append(values, o.gf.g.Value+"'s")
		verb := " " + isAre(l, h) + " "
		if k > 0 {
			verb = " "
		}
		parts = append(parts, countRange(l, h)+verb+o.gf.name+"'s")
	}
	hi = min(hi, mine)
	lo = min(lo, hi)
	extra = strings.TrimSuffix(extra, ")") + fmt.Sprintf("; %s of their %d failures %s %s)",
		countRange(lo, hi), mine, isAre(lo, hi), strings.Join(values, " or "))
	evidence += fmt.Sprintf("; the two findings overlap only in part: of the %d failures on these connections, %s (named above), and %s %s not",
		mine, words.JoinAnd(parts), countRange(mine-hi, mine-lo), isAre(mine-hi, mine-lo))
	return extra, evidence
}
