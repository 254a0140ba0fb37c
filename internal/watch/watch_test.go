package watch

import (
	"fmt"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/pinprobe/pinprobe/internal/detect"
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
)

// fleetOf is hosts × addrs endpoints, numbered in order.
func fleetOf(t testing.TB, hosts, addrs int) []*probe.Endpoint {
	t.Helper()
	var eps []*probe.Endpoint
	for h := range hosts {
		tg, err := probe.ParseTarget(fmt.Sprintf("https://u:pw@h%d.test/?token=x", h))
		if err != nil {
			t.Fatal(err)
		}
		for a := range addrs {
			eps = append(eps, &probe.Endpoint{ID: len(eps), Target: tg, Addr: netip.AddrFrom4([4]byte{10, 0, byte(h), byte(a + 1)})})
		}
	}
	return eps
}

// series counts the pinprobe_ series of w's registry, a histogram's
// buckets, sum and count each one.
func series(t testing.TB, w *Watch) int {
	t.Helper()
	mfs, err := w.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "pinprobe_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			if mf.GetType() == dto.MetricType_HISTOGRAM {
				n += len(m.GetHistogram().GetBucket()) + 3 // +Inf, sum, count
				continue
			}
			n++
		}
	}
	return n
}

// feed sends k requests to every endpoint, each answered by one of
// values instance names, failing by fail.
func feed(w *Watch, eps []*probe.Endpoint, k int, at time.Time, values int, fail func(ep, i int) (int, bool)) {
	rs := make([]probe.Result, 0, len(eps))
	for i := range k {
		rs = rs[:0]
		for _, ep := range eps {
			status, failed := fail(ep.ID, i)
			r := probe.Result{Endpoint: ep.ID, Start: at.Add(time.Duration(i) * time.Second), Latency: 20 * time.Millisecond,
				Status: status, Failed: failed, RequestID: fmt.Sprintf("id-%d-%d", ep.ID, i), TTFB: 10 * time.Millisecond,
				Groups: []string{fmt.Sprintf("pod-%d", i%values)}}
			if status == 0 {
				r.Class, r.Err = probe.ClassTimeout, fmt.Errorf("timeout")
			}
			rs = append(rs, r)
		}
		w.Results(rs)
	}
}

// TestSeriesBound: 2 hosts × 5 addresses, 50 instance values, three
// outcomes: the series stay within docs/watch.md's bound, the instance
// values past --max-backends are "other", and no label holds the URL's
// secrets.
func TestSeriesBound(t *testing.T) {
	const hosts, addrs, values, k = 2, 5, 50, 200
	w := New(Options{GroupBy: []string{"X-Pod"}, Retire: time.Minute, Detector: detect.Default})
	eps := fleetOf(t, hosts, addrs)
	at := time.Unix(1e9, 0)
	for _, ep := range eps {
		w.Started(ep, at)
	}
	feed(w, eps, k, at, values, func(ep, i int) (int, bool) {
		switch {
		case ep == 1 && i%2 == 0:
			return 502, true
		case ep == 2 && i%7 == 0:
			return 0, true
		}
		return 200, false
	})
	got := series(t, w)
	// docs/watch.md: N·U·M·(O+1) + N·M (dropped, none here) + N·M·4·14
	// + DNS (none fed) + N·M probed + N·H·(K+1)·2 + suspects
	// N·(2M+2+K+1)·2 + N·11.
	const n, m, o, kb = hosts, addrs, 3, DefaultMaxBackends
	bound := n*m*(o+1) + n*m*4*14 + n*m + n*1*(kb+1)*2 + n*(2*m+2+kb+1)*2 + n*11
	t.Logf("%d series; the bound %d", got, bound)
	if got > bound {
		t.Errorf("%d series; want at most %d", got, bound)
	}
	text := gatherText(t, w)
	if !strings.Contains(text, `backend="other"`) {
		t.Errorf("no backend=other past %d values", kb)
	}
	for _, s := range []string{"pw", "token=x"} {
		if strings.Contains(text, s) {
			t.Errorf("a label holds %q", s)
		}
	}
	if !strings.Contains(text, `scope="address"`) || !strings.Contains(text, `address="10.0.0.2"`) {
		t.Errorf("the address failing half its requests is no suspect")
	}
}

// TestRetire: an address that left DNS keeps its series for Retire, then
// loses every one; an instance value unseen for Retire frees its place.
func TestRetire(t *testing.T) {
	w := New(Options{GroupBy: []string{"X-Pod"}, Retire: time.Minute, MaxBackends: 2, Detector: detect.Default})
	eps := fleetOf(t, 1, 3)
	at := time.Unix(1e9, 0)
	for _, ep := range eps {
		w.Started(ep, at)
	}
	w.Answers([]report.DNS{{Host: "h0.test", Addresses: []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}}}, at)
	feed(w, eps, 20, at, 2, func(ep, i int) (int, bool) { return 200, false })
	at = at.Add(20 * time.Second)
	w.Stopped(eps[2], at)
	w.Answers([]report.DNS{{Host: "h0.test", Addresses: []string{"10.0.0.1", "10.0.0.2"}, Changes: []report.DNSChange{{}}}}, at)
	w.Tick(at.Add(30 * time.Second))
	if !strings.Contains(gatherText(t, w), `address="10.0.0.3"`) {
		t.Errorf("10.0.0.3's series gone before --retire-after")
	}
	w.Tick(at.Add(61 * time.Second))
	text := gatherText(t, w)
	if strings.Contains(text, `address="10.0.0.3"`) {
		t.Errorf("10.0.0.3's series still there after --retire-after:\n%s", text)
	}
	if strings.Contains(text, `backend="pod-0"`) {
		t.Errorf("pod-0, unseen for a minute, keeps its series")
	}
}

// gatherText is the registry's pinprobe_ series as "name{labels}" lines.
func gatherText(t testing.TB, w *Watch) string {
	t.Helper()
	mfs, err := w.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			b.WriteString(mf.GetName() + "{")
			for _, l := range m.GetLabel() {
				fmt.Fprintf(&b, "%s=%q,", l.GetName(), l.GetValue())
			}
			b.WriteString("}\n")
		}
	}
	return b.String()
}

// BenchmarkResults is the watch's cost per request (metrics and detector)
// over 10 addresses, and its heap after 10⁶ requests against after 10⁵:
// flat, as nothing is kept per request.
//
//	go test -run NONE -bench Results -benchmem ./internal/watch
func BenchmarkResults(b *testing.B) {
	w := New(Options{GroupBy: []string{"X-Pod"}, Retire: time.Minute, Detector: detect.Default})
	eps := fleetOf(b, 1, 10)
	at := time.Unix(1e9, 0)
	for _, ep := range eps {
		w.Started(ep, at)
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	fail := func(ep, i int) (int, bool) {
		if ep == 3 && i%20 == 0 {
			return 502, true
		}
		return 200, false
	}
	feed(w, eps, 10_000, at, 4, fail) // 10⁵ requests
	h5 := heap()
	b.ResetTimer()
	for range b.N {
		feed(w, eps, 1, at, 4, fail)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(eps)), "ns/request")
	if b.N*len(eps) >= 900_000 {
		b.ReportMetric(float64(heap())/float64(h5), "heap-after/heap-at-1e5")
	}
}
