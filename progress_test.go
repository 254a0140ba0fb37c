package main

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pinprobe/probe"
	"pinprobe/report/collect"
)

// TestDescribeFitsTheWidth: the bar's text keeps every failure figure
// whole within the width it is given (at 80 columns, beside a bar of 10
// cells): it drops the counts, then the in-flight count, rather than cut
// "ipv6 34 failed (100%)" to "ipv6 34 fai" as an 80-column terminal did.
func TestDescribeFitsTheWidth(t *testing.T) {
	live := &collect.Live{
		FamilyRequests: map[probe.Family]*atomic.Int64{probe.IPv4: {}, probe.IPv6: {}},
		FamilyFailed:   map[probe.Family]*atomic.Int64{probe.IPv4: {}, probe.IPv6: {}},
	}
	live.Requests.Store(103)
	live.FamilyRequests[probe.IPv4].Store(69)
	live.FamilyFailed[probe.IPv4].Store(8)
	live.FamilyRequests[probe.IPv6].Store(34)
	live.FamilyFailed[probe.IPv6].Store(34)
	c := &config{duration: 8 * time.Second, timeout: 10 * time.Second}
	for _, tt := range []struct {
		width int
		want  string // without colour tags
	}{
		{120, "3.4s/8s  103 req  ipv4 8 failed (12%)  ipv6 34 failed (100%)  2 in flight"},
		{80 - 1 - barPrefix(10), "3.4s/8s  103 req  ipv4 12% failed  ipv6 100% failed"},
		{65, "3.4s/8s  103 req  ipv4 12% failed  ipv6 100% failed  2 in flight"},
	} {
		got := describe(3400*time.Millisecond, c, live, 105, false, tt.width)
		plain := strings.NewReplacer("[red]", "", "[reset]", "").Replace(got)
		if plain != tt.want {
			t.Errorf("width %d:\n got %q\nwant %q", tt.width, plain, tt.want)
		}
		if tt.width < 100 && visibleLen(got) > tt.width {
			t.Errorf("width %d: %d columns", tt.width, visibleLen(got))
		}
	}
}
