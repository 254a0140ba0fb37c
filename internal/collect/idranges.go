package collect

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
)

// idRanges are the sequence numbers of an endpoint's request IDs counted,
// as ranges in order and apart, at most report.MaxIDRanges.
type idRanges []report.IDRange

// seqOf is the sequence number of a request ID pinprobe-RUN-EP-N; 0 when
// it is none of pinprobe's.
func seqOf(id string) int64 {
	i := strings.LastIndexByte(id, '-')
	if !strings.HasPrefix(id, "pinprobe-") || i < 0 {
		return 0
	}
	n, err := strconv.ParseInt(id[i+1:], 10, 64)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// add counts n: it extends or joins the ranges beside it, or starts one;
// past MaxIDRanges the two closest ranges join.
func (rs *idRanges) add(n int64) {
	s := *rs
	i, _ := slices.BinarySearchFunc(s, n, func(r report.IDRange, n int64) int {
		switch {
		case r.Last < n:
			return -1
		case r.First > n:
			return 1
		}
		return 0
	})
	switch {
	case i < len(s) && s[i].First <= n: // within s[i]
		return
	case i > 0 && s[i-1].Last == n-1 && i < len(s) && s[i].First == n+1:
		s[i-1].Last = s[i].Last
		s = slices.Delete(s, i, i+1)
	case i > 0 && s[i-1].Last == n-1:
		s[i-1].Last = n
	case i < len(s) && s[i].First == n+1:
		s[i].First = n
	default:
		s = slices.Insert(s, i, report.IDRange{First: n, Last: n})
	}
	if len(s) > report.MaxIDRanges {
		s = report.MergeIDRanges(s)
	}
	*rs = s
}
