package collect

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pinprobe/pinprobe/internal/report"
)

// TestIDRanges: sequence numbers counted in any order make the fewest
// ranges in order and apart; past MaxIDRanges the closest join, so that
// every number counted stays in a range.
func TestIDRanges(t *testing.T) {
	var rs idRanges
	nums := []int64{5, 3, 4, 10, 1, 12, 11, 2, 7, 7}
	for _, n := range nums {
		rs.add(n)
	}
	want := idRanges{{First: 1, Last: 5}, {First: 7, Last: 7}, {First: 10, Last: 12}}
	if !slices.Equal(rs, want) {
		t.Errorf("ranges %v; want %v", rs, want)
	}
	rs = nil
	r := rand.New(rand.NewPCG(1, 2))
	var seen []int64
	for range 2000 {
		n := r.Int64N(10000) + 1
		seen = append(seen, n)
		rs.add(n)
	}
	if len(rs) > report.MaxIDRanges {
		t.Errorf("%d ranges; want at most %d", len(rs), report.MaxIDRanges)
	}
	for i := 1; i < len(rs); i++ {
		if rs[i].First <= rs[i-1].Last+1 {
			t.Fatalf("ranges %v and %v touch or are out of order", rs[i-1], rs[i])
		}
	}
	for _, n := range seen {
		if !slices.ContainsFunc(rs, func(x report.IDRange) bool { return x.First <= n && n <= x.Last }) {
			t.Fatalf("%d counted but in no range", n)
		}
	}
	for _, id := range []string{"", "x-1-2-3", "pinprobe-ab12-0-x", "pinprobe-ab12-0-0"} {
		if n := seqOf(id); n != 0 {
			t.Errorf("seqOf(%q) = %d; want 0", id, n)
		}
	}
	if n := seqOf("pinprobe-0a1b2c3d-1-42"); n != 42 {
		t.Errorf("seqOf = %d; want 42", n)
	}
}
