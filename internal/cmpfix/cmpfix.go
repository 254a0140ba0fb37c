// Package cmpfix builds the comparisons the tests of compare and render
// share, from the runs of package fixture. Only tests import it.
package cmpfix

import (
	"bytes"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/fixture"
)

// GoldenComparison is the golden comparison, a gateway change: before, ::1 failed every
// request; after, ::1 is gone, 127.0.0.2 fails 12% and 127.0.0.3 is new.
func GoldenComparison(t *testing.T) *compare.Comparison {
	t.Helper()
	before := fixture.CmpRun(t, fixture.CmpStart,
		fixture.CmpEndpoint{Address: "127.0.0.1", N: 300, Latency: 2 * time.Millisecond},
		fixture.CmpEndpoint{Address: "127.0.0.2", N: 300, Latency: 2 * time.Millisecond},
		fixture.CmpEndpoint{Address: "::1", N: 300, Failed: 300, FailStatus: 502, Latency: 500 * time.Microsecond})
	after := fixture.CmpRun(t, fixture.CmpStart.Add(24*time.Hour),
		fixture.CmpEndpoint{Address: "127.0.0.1", N: 300, Latency: 2 * time.Millisecond},
		fixture.CmpEndpoint{Address: "127.0.0.2", N: 300, Failed: 36, FailStatus: 502, Latency: 3 * time.Millisecond},
		fixture.CmpEndpoint{Address: "127.0.0.3", N: 300, Latency: 2 * time.Millisecond})
	c := compare.Reports(before, after)
	c.Before.File, c.After.File = "before.json", "after.json"
	return c
}

// LatencyComparison is a deploy that made one instance slow, with the
// gateway moved to another port: before, https://sign.example.com:8443/
// on 127.0.0.1 and 127.0.0.2, four instances (X-Served-By gw-1 to gw-4)
// taking turns, every answer in about 2 ms; after, the same on port 9443,
// gw-3 answering 40 ms later, and 127.0.0.3 new, slow on every request.
// Endpoints are matched with --match host.
func LatencyComparison(t *testing.T) *compare.Comparison {
	t.Helper()
	served := []string{"gw-1", "gw-2", "gw-3", "gw-4"}
	base := func(k int) time.Duration { return 2*time.Millisecond + time.Duration(k%10)*50*time.Microsecond }
	slow3 := func(k int) time.Duration {
		if k%4 == 2 {
			return base(k) + 40*time.Millisecond
		}
		return base(k)
	}
	ep := func(target, addr string, lat func(int) time.Duration) fixture.CmpEndpoint {
		return fixture.CmpEndpoint{Target: target, Address: addr, N: 2000, LatencyOf: lat, Served: served}
	}
	before := fixture.CmpRun(t, fixture.CmpStart,
		ep("https://sign.example.com:8443/", "127.0.0.1", base), ep("https://sign.example.com:8443/", "127.0.0.2", base))
	after := fixture.CmpRun(t, fixture.CmpStart.Add(24*time.Hour),
		ep("https://sign.example.com:9443/", "127.0.0.1", slow3), ep("https://sign.example.com:9443/", "127.0.0.2", slow3),
		fixture.CmpEndpoint{Target: "https://sign.example.com:9443/", Address: "127.0.0.3", N: 400,
			LatencyOf: func(k int) time.Duration { return base(k) + 30*time.Millisecond }})
	o := compare.DefaultOptions()
	o.Match = compare.MatchHost
	c := compare.ReportsWith(before, after, o)
	c.Before.File, c.After.File = "before.json", "after.json"
	return c
}

// SlowerComparison is a deploy that made every request 29 ms slower, and
// 127.0.0.2 answer 502 to failed of its n requests where it answered none
// before: before,
// 127.0.0.1 and 127.0.0.2 answer n requests each in 2 ms and 9 µs more
// per request (each its own latency, so no two share a histogram bucket
// by much); after, the same 29 ms later. With 150 requests an address the
// slowest 1% of both runs together is a handful of requests, too few for
// the p99's test to tell anything at the comparison's level.
func SlowerComparison(t *testing.T, n, failed int) *compare.Comparison {
	t.Helper()
	base := func(k int) time.Duration { return 2*time.Millisecond + time.Duration(k)*9*time.Microsecond }
	slow := func(k int) time.Duration { return base(k) + 29*time.Millisecond }
	before := fixture.CmpRun(t, fixture.CmpStart,
		fixture.CmpEndpoint{Address: "127.0.0.1", N: n, LatencyOf: base},
		fixture.CmpEndpoint{Address: "127.0.0.2", N: n, LatencyOf: base})
	after := fixture.CmpRun(t, fixture.CmpStart.Add(time.Hour),
		fixture.CmpEndpoint{Address: "127.0.0.1", N: n, LatencyOf: slow},
		fixture.CmpEndpoint{Address: "127.0.0.2", N: n, LatencyOf: slow, Failed: failed, FailStatus: 502})
	c := compare.Reports(before, after)
	c.Before.File, c.After.File = "before.json", "after.json"
	return c
}

// CompareJSON is c as pinprobe writes it, checked against its schema.
func CompareJSON(t *testing.T, c *compare.Comparison) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := compare.JSON(&buf, c); err != nil {
		t.Fatal(err)
	}
	docfix.CheckSchema(t, docfix.KindCompare, buf.Bytes())
	return buf.Bytes()
}
