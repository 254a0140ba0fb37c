package main

import (
	"net/netip"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pinprobe/pinprobe/internal/collect"
	"github.com/pinprobe/pinprobe/internal/probe"
)

// TestDescribeFitsTheWidth: the bar's text keeps every failure figure
// whole within the width it is given (at 80 columns, beside a bar of 10
// cells): it drops the counts, then the in-flight count, rather than cut
// "ipv6 34 failed (100%)" to "ipv6 34 fai" as an 80-column terminal did.
// With one family failing and the other ok, a narrow view drops the
// family that is ok before the one that fails.
func TestDescribeFitsTheWidth(t *testing.T) {
	c := &config{duration: 8 * time.Second, timeout: 10 * time.Second}
	for _, tt := range []struct {
		v4Failed, started int64 // of 69 IPv4 requests; 34 IPv6 fail of 34; 103 ended
		width             int
		want              string // without colour tags
	}{
		{8, 105, 120, "3.4s/8s  103 req  ipv4 8 failed (12%)  ipv6 34 failed (100%)  2 in flight"},
		{8, 105, 80 - 1 - barPrefix(10), "3.4s/8s  103 req  ipv4 12% failed  ipv6 100% failed"},
		{8, 105, 65, "3.4s/8s  103 req  ipv4 12% failed  ipv6 100% failed  2 in flight"},
		// 60 columns beside a bar of 10 cells, and 40 without one: the
		// requests and the planned duration give way to the figures.
		{8, 105, 60 - 1 - barPrefix(10), "3.4s  ipv4 12% failed  ipv6 100% failed"},
		{8, 105, 40 - 1, "3.4s  ipv4 12% failed  ipv6 100% failed"},
		{8, 105, 30, "ipv4 12% failed  ipv6 100% failed"},
		{0, 103, 80 - 1 - barPrefix(10), "3.4s/8s  103 req  ipv4 ok  ipv6 34 failed (100%)"},
		{0, 103, 39, "3.4s/8s  103 req  ipv6 100% failed"},
		{0, 103, 20, "ipv6 100% failed"},
	} {
		live := &collect.Live{
			FamilyRequests: map[probe.Family]*atomic.Int64{probe.IPv4: {}, probe.IPv6: {}},
			FamilyFailed:   map[probe.Family]*atomic.Int64{probe.IPv4: {}, probe.IPv6: {}},
		}
		live.Requests.Store(103)
		live.FamilyRequests[probe.IPv4].Store(69)
		live.FamilyFailed[probe.IPv4].Store(tt.v4Failed)
		live.FamilyRequests[probe.IPv6].Store(34)
		live.FamilyFailed[probe.IPv6].Store(34)
		got := describe(3400*time.Millisecond, c, live, tt.started, false, tt.width)
		plain := strings.NewReplacer("[red]", "", "[reset]", "").Replace(got)
		if plain != tt.want {
			t.Errorf("ipv4 %d failed, width %d:\n got %q\nwant %q", tt.v4Failed, tt.width, plain, tt.want)
		}
		if tt.width < 100 && tt.width >= 33 && visibleLen(got) > tt.width {
			t.Errorf("ipv4 %d failed, width %d: %d columns", tt.v4Failed, tt.width, visibleLen(got))
		}
	}
}

// TestWorstShortensTheURL: with --targets and long URLs at 80 columns, a
// row of the live view keeps the address and its figures whole and
// shortens the URL (the scheme, then its middle): it printed
// "✗ 127.0.0.3 http://sign.example.com:40080/api/documents/demo/sign       19 re".
func TestWorstShortensTheURL(t *testing.T) {
	var eps []*collect.LiveEndpoint
	for i, raw := range []string{
		"http://sign.example.com:40080/api/documents/demo/sign",
		"http://sign.example.com:40080/api/documents/demo/sign",
		"https://archive.example.com/api/v2/tenants/acme-corporation/documents/demo/verify?tenant=acme",
	} {
		target, err := probe.ParseTarget(raw)
		if err != nil {
			t.Fatal(err)
		}
		e := &collect.LiveEndpoint{Endpoint: &probe.Endpoint{ID: i, Target: target, Addr: netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 2)})}}
		e.Requests.Store(int64(1234 * (i + 1)))
		e.Failed.Store(int64(19 * (i + 1)))
		eps = append(eps, e)
	}
	for _, width := range []int{79, 119} {
		rows := worst(eps, 5, width)
		if len(rows) != 3 {
			t.Fatalf("width %d: %d rows; want 3:\n%s", width, len(rows), strings.Join(rows, "\n"))
		}
		for i, r := range rows {
			plain := strings.NewReplacer("\x1b[31m", "", "\x1b[0m", "").Replace(r)
			if n := utf8.RuneCountInString(plain); n > width {
				t.Errorf("width %d: row %d is %d columns: %q", width, i, n, plain)
			}
			if !regexp.MustCompile(`✗ 127\.0\.0\.[234] \S.* +\d+ req +1\.5% failed$`).MatchString(plain) {
				t.Errorf("width %d: row %d lacks its address, URL or figures: %q", width, i, plain)
			}
			if strings.Contains(plain, "://") {
				t.Errorf("width %d: row %d keeps the scheme: %q", width, i, plain)
			}
		}
		// Sorted by failure ratio, then failures: the longest URL first.
		if !strings.Contains(rows[0], "✗ 127.0.0.4 archive.example.co") || !strings.Contains(rows[0], "…") ||
			!strings.Contains(rows[0], "/verify?tenant=acme  3702 req") {
			t.Errorf("width %d: the long URL is not cut in its middle: %q", width, rows[0])
		}
		if width == 119 && !strings.Contains(rows[2], "127.0.0.2 sign.example.com:40080/api/documents/demo/sign  ") {
			t.Errorf("width %d: a URL that fits is cut: %q", width, rows[2])
		}
	}
}

// TestPace: the line under the bar says the rate achieved and the current
// p50/p99, words dropped before figures when the terminal is narrow.
func TestPace(t *testing.T) {
	c := &config{rate: rateValue{rate: 30}}
	w := collect.LiveWindow{Seconds: 5, Requests: 150, Rate: 29.8, P50: 430 * time.Microsecond, P99: 52 * time.Millisecond}
	for _, tt := range []struct {
		width int
		want  string
	}{
		{119, "  29.8 req/s of 30 planned · p50 0.43ms · p99 52.0ms  (last 5s)"},
		{54, "  29.8 req/s of 30 planned · p50 0.43ms · p99 52.0ms"},
		{40, "  29.8 req/s · p50 0.43ms · p99 52.0ms"},
	} {
		if got := pace(c, w, tt.width); got != tt.want {
			t.Errorf("width %d:\n got %q\nwant %q", tt.width, got, tt.want)
		}
	}
	if got := pace(c, collect.LiveWindow{Seconds: 5}, 79); got != "  no request ended in the last 5s" {
		t.Errorf("no request: %q", got)
	}
}
