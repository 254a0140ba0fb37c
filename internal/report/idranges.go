package report

import (
	"cmp"
	"slices"
)

// MergeIDRanges is the ranges of sets together, in order and apart: what
// two ranges share or touch is one range; past MaxIDRanges the two
// closest join (the numbers between them then count too).
func MergeIDRanges(sets ...[]IDRange) []IDRange {
	var all []IDRange
	for _, s := range sets {
		all = append(all, s...)
	}
	slices.SortFunc(all, func(a, b IDRange) int { return cmp.Compare(a.First, b.First) })
	var out []IDRange
	for _, r := range all {
		if n := len(out); n > 0 && r.First <= out[n-1].Last+1 {
			out[n-1].Last = max(out[n-1].Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	for len(out) > MaxIDRanges {
		out = joinClosest(out)
	}
	return out
}

// joinClosest joins the two ranges of s with the smallest gap between
// them.
func joinClosest(s []IDRange) []IDRange {
	best := 1
	for i := 2; i < len(s); i++ {
		if s[i].First-s[i-1].Last < s[best].First-s[best-1].Last {
			best = i
		}
	}
	s[best-1].Last = s[best].Last
	return slices.Delete(s, best, best+1)
}
