package render

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// overTimeReport is a two-minute run whose faults start and stop: every
// endpoint sends 5 requests a second; 2001:db8::1 answers 502 to three
// requests in five from 0:40 on; on 192.0.2.2, instance gw-3 (one
// connection in four) answers 502 from 0:30 on; 192.0.2.1 is slow from
// 1:10 to 1:35 (80 to 200 ms instead of about 20).
func overTimeReport(t *testing.T) *report.Report {
	t.Helper()
	run := newSignRun(t)
	const n = 600 // requests per endpoint
	for i := range n {
		at := time.Duration(i) * 200 * time.Millisecond
		for ep := range run.eps {
			r, conn := run.result(ep, i, at+time.Duration(ep*40)*time.Millisecond, func(conn int) int { return 40000 + ep*1000 + conn%900 })
			switch ep {
			case 0:
				r.Latency = ms(18 + float64(i%7))
				if at >= 70*time.Second && at < 95*time.Second {
					r.Latency = ms(80 + float64(i%13)*10)
				}
			case 1:
				instance := "gw-" + strconv.Itoa((conn-1)%4+1)
				r.Groups = []string{instance}
				if instance == "gw-3" && at >= 30*time.Second {
					r.Status = 502
				}
				r.Latency = ms(15 + float64(i%5))
			case 2:
				if at >= 40*time.Second && i%5 < 3 {
					r.Status = 502
				}
				r.Latency = ms(16 + float64(i%4))
			}
			if i < 2 {
				r.Evidence = &probe.ResponseEvidence{Proto: "HTTP/1.1", Header: http.Header{"Server": {"gw"}}, Body: []byte("<html></html>")}
			}
			run.add(r)
		}
	}
	return run.report(run.start.Add(n*200*time.Millisecond), 15, 120, nil, "--rate", "15", "-d", "2m")
}

// TestViewOverTime: the families and the suspects over time, each once (a
// suspect that is its family's only address is its family's chart),
// counting every request, their failures where they happened, and p50
// and p99 per slice close to the latencies sent.
func TestViewOverTime(t *testing.T) {
	r := overTimeReport(t)
	if err := report.Validate(r); err != nil {
		t.Fatal(err)
	}
	v := NewView(r)
	o := v.OverTime
	if o.Columns != 120 || o.Step != 1 {
		t.Fatalf("%d slices of %v s; want 120 of 1 s", o.Columns, o.Step)
	}
	var scopes []string
	for _, s := range o.Scopes {
		scopes = append(scopes, s.What+" "+s.Label+" ["+s.Tag+"]")
	}
	want := []string{"family IPv4 (192.0.2.1, 192.0.2.2) []", "family IPv6 (2001:db8::1) [suspect]",
		"instance X-Served-By: gw-3 behind 192.0.2.2 [suspect]", "connections connections of 192.0.2.2 [failing connections]"}
	if !slices.Equal(scopes, want) {
		t.Fatalf("scopes\n%q; want\n%q", scopes, want)
	}
	sum := func(s []int64) (n int64) {
		for _, x := range s {
			n += x
		}
		return n
	}
	ipv4, ipv6, gw3 := o.Scopes[0], o.Scopes[1], o.Scopes[2]
	if got := sum(ipv4.Requests); got != r.Families["ipv4"].Requests {
		t.Errorf("IPv4 over time: %d requests; want %d", got, r.Families["ipv4"].Requests)
	}
	if got := sum(gw3.Requests); got != r.FindGroup("X-Served-By: gw-3").Requests {
		t.Errorf("gw-3 over time: %d responses; want its %d", got, r.FindGroup("X-Served-By: gw-3").Requests)
	}
	// IPv6 fails from 0:40 on, three requests in five; gw-3 from 0:30.
	for c := range o.Columns {
		if want := c >= 40; (ipv6.Failed[c] > 0) != want {
			t.Errorf("IPv6 slice %d: %d failed; want failures: %v", c, ipv6.Failed[c], want)
		}
		if gw3.Requests[c] > 0 && (gw3.Failed[c] == gw3.Requests[c]) != (c >= 30) {
			t.Errorf("gw-3 slice %d: %d of %d failed; want all from 0:30, none before", c, gw3.Failed[c], gw3.Requests[c])
		}
	}
	if want := "failed from 20:43:40 to 20:45:00 UTC, in 80 of 120 slices"; !strings.HasPrefix(ipv6.Summary, want) {
		t.Errorf("IPv6 summary %q; want it to start %q", ipv6.Summary, want)
	}
	// IPv4's p99 is 192.0.2.1's slowness from 1:10 to 1:35: 80 to 200 ms
	// in place of at most 24 ms; its p50 stays with the healthy half.
	near := func(got, want float64) bool { return got >= want*0.955 && got <= want*1.045 }
	for c := range o.Columns {
		slow := c >= 70 && c < 95
		if slow && ipv4.P99[c] < 80 || !slow && ipv4.P99[c] > 24*1.045 {
			t.Errorf("IPv4 slice %d: p99 %v ms; want %v", c, ipv4.P99[c], map[bool]string{true: "80 ms or more", false: "at most 24 ms"}[slow])
		}
		if ipv4.P50[c] < 15*0.955 || ipv4.P50[c] > 24*1.045 {
			t.Errorf("IPv4 slice %d: p50 %v ms; want 15 to 24 ms", c, ipv4.P50[c])
		}
	}
	if want := "p99 at most 18.7ms"; !strings.HasSuffix(ipv6.Summary, want) {
		t.Errorf("IPv6 summary %q; want it to end %q", ipv6.Summary, want)
	}
	if !strings.Contains(ipv4.Summary, "p99 highest at 20:44:") || !ipv4.Latency {
		t.Errorf("IPv4 summary %q; want its p99 highest in the slow stretch", ipv4.Summary)
	}
	// 2001:db8::1 sent 16, 17, 18, 19 ms in turn: a slice's p50 is 17 or
	// 18 ms, its p99 19 ms, each within the bins' 4.5%.
	for c := range o.Columns {
		if p50, p99 := ipv6.P50[c], ipv6.P99[c]; !(near(p50, 17) || near(p50, 18)) || !near(p99, 19) {
			t.Errorf("IPv6 slice %d: p50 %v, p99 %v ms; want 17 or 18, and 19", c, p50, p99)
			break
		}
	}
	if o.Note != "" {
		t.Errorf("note %q; want none: every scope kept its latencies", o.Note)
	}
}

// TestViewOverTimeSlices: a long timeline is drawn in at most
// maxColumns slices, each the sum of its buckets; a suspect whose
// latencies were not kept (past the first MaxLatencyEndpoints) is drawn
// without them, and the view says so.
func TestViewOverTimeSlices(t *testing.T) {
	r := overTimeReport(t)
	tl := &r.Timeline
	// 240 buckets of half a second: the same requests, twice as many
	// buckets (each second's split evenly between its halves does not
	// matter: only sums are compared).
	half := func(s []int64) []int64 {
		out := make([]int64, 2*len(s))
		for i, n := range s {
			out[2*i], out[2*i+1] = n-n/2, n/2
		}
		return out
	}
	for i := range tl.Series {
		tl.Series[i].Requests, tl.Series[i].Failed = half(tl.Series[i].Requests), half(tl.Series[i].Failed)
		tl.Series[i].Latency = nil
	}
	tl.IntervalS, tl.Families, tl.Groups = 0.5, nil, nil
	v := NewView(r)
	o := v.OverTime
	if o.Columns != 120 || o.Step != 1 {
		t.Fatalf("%d slices of %v s; want 120 of 1 s (240 buckets, 2 a slice)", o.Columns, o.Step)
	}
	var labels []string
	for _, s := range o.Scopes {
		labels = append(labels, s.Label)
		if s.Latency {
			t.Errorf("%s: latencies drawn; the report kept none", s.Label)
		}
	}
	// The instance has no series: it is left out, and said.
	if want := []string{"IPv4 (192.0.2.1, 192.0.2.2)", "IPv6 (2001:db8::1)", "connections of 192.0.2.2"}; !slices.Equal(labels, want) {
		t.Errorf("scopes %q; want %q", labels, want)
	}
	if !strings.HasPrefix(o.Note, "This report holds no latency over time") {
		t.Errorf("note %q; want it to say the report holds no latency over time", o.Note)
	}
	// A report with its families' latencies but not an instance's names
	// the instance.
	r = overTimeReport(t)
	r.Timeline.Groups = nil
	if note := NewView(r).OverTime.Note; !strings.Contains(note, "X-Served-By: gw-3 behind 192.0.2.2") {
		t.Errorf("note %q; want it to name the instance without latencies over time", note)
	}
	var got int64
	for _, n := range o.Scopes[0].Requests {
		got += n
	}
	if got != r.Families["ipv4"].Requests {
		t.Errorf("IPv4: %d requests over the slices; want %d", got, r.Families["ipv4"].Requests)
	}
}

// TestOverTimeScales: the latency lane's labels never crowd (a log lane
// from 0.2 to 17 ms labelled 20 ms a few units over 10 ms), each lane's
// top is near its highest value, and slices are said to the second.
func TestOverTimeScales(t *testing.T) {
	for _, tc := range []struct{ lo, hi float64 }{{0.2, 17}, {0.26, 9.1}, {1, 900}, {0.01, 20000}, {15, 19}, {0.4, 5.2}} {
		y, ticks := latencyScale(tc.lo, tc.hi)
		if len(ticks) < 2 {
			t.Errorf("%v to %v ms: ticks %v; want two or more", tc.lo, tc.hi, ticks)
		}
		for i := 1; i < len(ticks); i++ {
			if gap := y(ticks[i-1]) - y(ticks[i]); gap < tsTickGap {
				t.Errorf("%v to %v ms: ticks %v and %v %.1f units apart; want %v or more", tc.lo, tc.hi, ticks[i-1], ticks[i], gap, tsTickGap)
			}
		}
		if top := y(tc.hi); top < tsLatY-0.01 || top > tsLatY+tsLatH/3 {
			t.Errorf("%v to %v ms: the highest at y %.1f; want in the lane's top third (%v to %v)", tc.lo, tc.hi, top, tsLatY, tsLatY+tsLatH/3)
		}
	}
	for _, tc := range []struct{ x, want float64 }{{22, 25}, {20, 20}, {0.7, 0.8}, {9.2, 10}, {31, 40}, {101, 150}} {
		if got := rateCeil(tc.x); got != tc.want {
			t.Errorf("rateCeil(%v) = %v; want %v", tc.x, got, tc.want)
		}
	}
	// A slice's time is rounded to the second, but never past the run's
	// end as the text says it (truncated): a run of 19:03:33.955 –
	// 19:03:38.400 ends at 19:03:38, its sixth slice with it.
	from := time.Date(2026, 12, 1, 19, 3, 33, 955e6, time.UTC)
	o := &OverTimeView{From: report.Time{Time: from}, To: report.Time{Time: from.Add(4445 * time.Millisecond)}, Step: 1, Columns: 60}
	for i, want := range []string{"19:03:34", "19:03:35", "19:03:36", "19:03:37", "19:03:38", "19:03:38", "19:03:38"} {
		if got := o.Clock(i); got != want {
			t.Errorf("slice %d of a run of 19:03:33.955 – 19:03:38.400 starts at %q; want %s", i, got, want)
		}
	}
}

// TestOverTimeLatencyWithinTheMax: no slice's p50 or p99 lies above its
// scope's own maximum, as the tables give it: a slice's latency bin is
// read at its middle, which lay above every latency of the bin (IPv6's p99
// over time 3.02 ms against the tables' max of 2.92 ms).
func TestOverTimeLatencyWithinTheMax(t *testing.T) {
	for _, r := range []*report.Report{overTimeReport(t), fixture.GoldenReport(t)} {
		v := NewView(r)
		checked := 0
		for _, s := range v.OverTime.Scopes {
			most := 0.0
			for fam, st := range r.Families {
				if s.Kind == "family" && strings.HasPrefix(s.Label, words.FamilyName(fam)+" ") {
					most = st.LatencyMS.Max
				}
			}
			if most == 0 {
				continue
			}
			checked++
			for c := range s.P99 {
				if s.P99[c] > most || s.P50[c] > most {
					t.Errorf("%s, slice %d: p50 %v, p99 %v above the scope's max %v", s.Label, c, s.P50[c], s.P99[c], most)
				}
			}
		}
		if checked == 0 {
			t.Errorf("no family scope over time to check")
		}
	}
}
