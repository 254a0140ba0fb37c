package judge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
)

// olRun is the demo's shape: three addresses at 10 requests/s each for a
// minute, 4 requests a connection; behind the first, 4 instances that
// name themselves in X-Served-By (gw-0 … gw-3), each connection kept on
// one. fail says how instance inst fails: "" not at all, "502" with its
// header, "reset" with no response (so no header). The other addresses
// answer 200 with one value of their own each.
func olRun(t *testing.T, seed uint64, fail map[int]string) *report.Report {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 23))
	bad := func(_ time.Duration, inst int) float64 {
		if fail[inst] != "" {
			return 1
		}
		return 0
	}
	var eps []report.Endpoint
	var byInst []map[int][2]int64 // per address: instance -> {failed, responses}
	for a := range 3 {
		f := steady(0)
		if a == 0 {
			f = bad
		}
		rs := simulate(simConfig{requests: 600, rate: 10, perConn: 4, fail: f, instances: 4, latency: 5 * time.Millisecond}, rng)
		e := rvEndpoint(fmt.Sprintf("192.0.2.%d", a+1), "https://app.example.com/", rs)
		counts := map[int][2]int64{}
		for _, r := range rs {
			if a == 0 && r.failed && fail[r.inst] == "reset" {
				e.Status["502"]--
				if e.Errors == nil {
					e.Errors = map[string]int64{}
				}
				e.Errors["reset"]++
				continue // no response: no header
			}
			c := counts[r.inst]
			if r.failed {
				c[0]++
			}
			c[1]++
			counts[r.inst] = c
		}
		eps = append(eps, e)
		byInst = append(byInst, counts)
	}
	r := rvAssemble(eps, 30)
	for inst := range 4 {
		c := byInst[0][inst]
		rvGroup(r, "X-Served-By", fmt.Sprintf("gw-%d", inst), map[string][2]int64{"192.0.2.1": c})
	}
	for a := 1; a < 3; a++ {
		var n int64
		for _, c := range byInst[a] {
			n += c[1]
		}
		addr := fmt.Sprintf("192.0.2.%d", a+1)
		rvGroup(r, "X-Served-By", "gw-x"+addr, map[string][2]int64{addr: {0, n}})
	}
	return r
}

// The demo's second fault: instance gw-0 behind 192.0.2.1 fails every
// request, and so do the connections it holds. The instance and the
// failing connections are the same failed requests seen two ways: one
// suspect, the instance, with the connections as its evidence.
func TestOverlapSameFailuresSaidOnce(t *testing.T) {
	r := olRun(t, 1, map[int]string{0: "502"})
	v := Judge(r, Once())
	if got, want := kinds(v), []string{"group 192.0.2.1 X-Served-By: gw-0"}; !slices.Equal(got, want) {
		t.Fatalf("suspects %v; want %v (one fault)\n%s", got, want, v.Summary)
	}
	s := v.Suspects[0]
	g := r.FindGroup("X-Served-By: gw-0")
	if s.Connections == 0 || s.FailingConnections == 0 || s.FailingConnections >= s.Connections {
		t.Errorf("suspect %+v; want the failing connections as its evidence", s)
	}
	want := fmt.Sprintf("its %d failures are all the failures of %d of the %d connections of 192.0.2.1, which kept failing",
		g.Failed, s.FailingConnections, s.Connections)
	if !strings.Contains(v.Summary, want) || !strings.Contains(v.Summary, "one fault, seen by its header and by its connections") {
		t.Errorf("summary does not say the two are one fault (%q):\n%s", want, v.Summary)
	}
	if strings.Contains(v.Headline, "some connections") || strings.Count(v.Headline, ";") != 0 {
		t.Errorf("headline %q; want the instance alone", v.Headline)
	}
}

// Two instances behind 192.0.2.1 fail: gw-0 answers 502 with its header,
// the other resets its connections and so names itself nowhere. The
// failing connections hold both; gw-0's failures are only part of theirs:
// both are said, with the failures they share.
func TestOverlapInPartSaysBoth(t *testing.T) {
	r := olRun(t, 2, map[int]string{0: "502", 1: "reset"})
	v := Judge(r, Once())
	got := kinds(v)
	if !slices.Contains(got, "group 192.0.2.1 X-Served-By: gw-0") || !slices.Contains(got, "connections 192.0.2.1") {
		t.Fatalf("suspects %v; want gw-0 and the connections of 192.0.2.1\n%s", got, v.Summary)
	}
	g := r.FindGroup("X-Served-By: gw-0")
	e := &r.Endpoints[0]
	conn := e.Conns.Failed - e.Conns.Unconnected.Failed
	want := fmt.Sprintf("the two findings overlap only in part: of the %d failures on these connections, %d are X-Served-By: gw-0's (named above), and %d are not",
		conn, g.Failed, conn-g.Failed)
	if !strings.Contains(v.Summary, want) {
		t.Errorf("summary lacks %q:\n%s", want, v.Summary)
	}
	if h := fmt.Sprintf("%d of their %d failures are gw-0's)", g.Failed, conn); !strings.Contains(v.Headline, h) {
		t.Errorf("headline %q; want it to say %q", v.Headline, h)
	}
}
