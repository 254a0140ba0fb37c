package render

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
)

// insideReport builds, from synthetic results, the demo's incident: one
// URL on three addresses; 192.0.2.1 is healthy but slow, 2001:db8::1
// answers Azure Application Gateway 502 pages to everything (an address
// fault), and 192.0.2.2 fronts four instances named by X-Served-By, each
// connection of four requests kept on one, gw-3 answering 502 (an instance
// fault behind one address). The run stopped early (--until-verdict),
// dropped requests, could not send two, and was judged against a release
// gate. Everything is fixed, so the rendering is byte-stable.
func insideReport(t *testing.T) *report.Report {
	t.Helper()
	run := newSignRun(t)
	samples := make([]int, len(run.eps))
	const n = 48 // requests per endpoint
	for i := range n {
		for ep := range run.eps {
			r, conn := run.result(ep, i, time.Duration(i*100+ep*30)*time.Millisecond, func(conn int) int { return 40000 + ep*100 + conn })
			h := http.Header{"Content-Type": {"text/html"}, "Server": {"Microsoft-Azure-Application-Gateway/v2"}}
			switch ep {
			case 0:
				r.Latency = ms(20 + float64(i%5))
			case 1:
				instance := "gw-" + strconv.Itoa((conn-1)%4+1)
				r.Groups = []string{instance}
				h.Set("X-Served-By", instance)
				if instance == "gw-3" {
					r.Status = 502
				}
				r.Latency = ms(1 + float64(i%3)/2)
			case 2:
				r.Status = 502
				r.Latency = ms(1.5 + float64(i%4)/4)
			}
			if samples[ep] < 2 && (r.Status == 502 || i == 0) {
				samples[ep]++
				r.Evidence = &probe.ResponseEvidence{Proto: "HTTP/1.1", Header: h, Body: []byte("<html></html>")}
			}
			run.add(r)
		}
	}
	for range 2 {
		run.add(probe.Result{Endpoint: 0, Start: run.start, Class: probe.ClassClient, Err: errors.New("dial tcp 192.0.2.1:8080: socket: too many open files")})
	}
	run.add(probe.Result{Endpoint: 0, Dropped: 3})
	end := run.start.Add(4900 * time.Millisecond)
	rep := run.report(end, 30, 60, &report.Settled{At: report.Time{Time: end}, Requests: 3 * n, Look: 5, MaxLooks: 60, Alpha: 0.00021},
		"--rate", "30", "--until-verdict", "--max-failure-rate", "1%", "--fail-on-verdict")
	rep.Thresholds = report.CheckLimits(rep, report.Limits{MaxFailureRate: 0.5, MaxP99: 50 * time.Millisecond, FailOnVerdict: true})
	return rep
}

// TestViewInside: the view of a run with faults of both kinds names each
// suspect by its kind, notes the endpoint whose connections fail, lists
// the instances and the failing connections, and offers queries over the
// failing connections' ports.
func TestViewInside(t *testing.T) {
	r := insideReport(t)
	v := NewView(r)
	if want := "IPv6 (2001:db8::1) answers 502; X-Served-By: gw-3 behind 192.0.2.2 answers 502 (on 3 of 12 connections)"; v.Headline != want {
		t.Errorf("headline %q; want %q", v.Headline, want)
	}
	var kinds []string
	for _, s := range v.Verdict.Suspects {
		kinds = append(kinds, s.What+" "+s.Label+" — "+s.How)
	}
	// gw-3 and the failing connections of 192.0.2.2 are the same 12
	// failures: one suspect, the instance, with the connections as its
	// evidence.
	want := []string{"address 2001:db8::1 — answers 502",
		"instance X-Served-By: gw-3 behind 192.0.2.2 — answers 502; on 192.0.2.2 ×12; 3 of 12 connections failed"}
	if !slices.Equal(kinds, want) {
		t.Errorf("suspects\n%q; want\n%q", kinds, want)
	}
	if v.Verdict.Tone != "bad" || v.Verdict.Status != report.VerdictConcentrated {
		t.Errorf("verdict %s, tone %s; want concentrated, bad", v.Verdict.Status, v.Verdict.Tone)
	}
	if slow := r.Verdict.Slow; len(slow) != 1 {
		t.Errorf("slow %+v; want 192.0.2.1, an address", slow)
	} else if what, label, _, _ := v.slowScope(&slow[0]); label != "192.0.2.1" || what != "address" {
		t.Errorf("slow %s %s; want 192.0.2.1, an address", what, label)
	}
	for _, note := range []string{"could not be sent by this machine", "fell due but were not sent", "is slow against"} {
		if !slices.ContainsFunc(v.Verdict.Notes, func(n string) bool { return strings.Contains(n, note) }) {
			t.Errorf("no verdict note says %q: %q", note, v.Verdict.Notes)
		}
	}
	var tags []string
	for _, row := range v.Targets[0].Rows {
		tags = append(tags, row.Label+":"+row.Tag)
	}
	if got, want := strings.Join(tags, " "), "192.0.2.1: 192.0.2.2:failing connections 2001:db8::1:suspect"; got != want {
		t.Errorf("endpoint tags %q; want %q", got, want)
	}
	if n := v.Targets[0].Rows[1].Note; n != "failures stick to some of its connections (3 of 12 failed), those of X-Served-By: gw-3" {
		t.Errorf("192.0.2.2's note %q; want its connections", n)
	}
	if len(v.Groups) != 1 || len(v.Groups[0].Rows) != 4 {
		t.Fatalf("groups %+v; want one header with four values", v.Groups)
	}
	for _, row := range v.Groups[0].Rows {
		if row.Suspect != (row.Label == "gw-3") || row.Where != "192.0.2.2 ×12" || row.Stats == nil {
			t.Errorf("instance %s: suspect %v, where %q, stats %v; want only gw-3 a suspect, all on 192.0.2.2 ×12", row.Label, row.Suspect, row.Where, row.Stats)
		}
	}
	if len(v.Conns) != 1 || len(v.Conns[0].Rows) != 3 {
		t.Fatalf("failing connections %+v; want 3 of 192.0.2.2", v.Conns)
	}
	if got, want := v.Logs.FailingPorts, []int{40103, 40107, 40111}; !slices.Equal(got, want) {
		t.Errorf("failing ports %v; want %v (gw-3's connections 3, 7 and 11)", got, want)
	}
	if !v.Logs.Known || len(v.Logs.Gateways) != 1 || v.Logs.Gateways[0].Name != GatewayAzure {
		t.Fatalf("log gateways %+v; want Azure, recognised", v.Logs.Gateways)
	}
	if q := v.Logs.Gateways[0].Query(LogAGWFailing); q == nil || !q.Failing || !strings.Contains(q.Text, "Port in (40103, 40107, 40111)") {
		t.Errorf("failing-connections query %+v; want one over ports 40103, 40107, 40111", q)
	}
	if !strings.Contains(v.Run.Settled, "after 144 requests (look 5 of 60") || !strings.Contains(v.Run.Sent, "; 3 more were due but not sent") ||
		!strings.Contains(v.Run.Sent, "; 2 could not be sent by this machine (client errors)") {
		t.Errorf("run: settled %q, sent %q", v.Run.Settled, v.Run.Sent)
	}
	var order []bool
	for _, c := range gateRows(v) {
		order = append(order, !c.Failing)
	}
	if i := slices.Index(order, true); i <= 0 || slices.Contains(order[i:], false) {
		t.Errorf("gate checks OK in order %v; want the failing ones first", order)
	}
	if how := testsHow(v); !strings.Contains(how, "each instance") || !strings.Contains(how, "connections of an address") {
		t.Errorf("TestsHow %q; want the instance and connection tests said", how)
	}
}

// TestFormatsSayTheSame: text, Markdown and HTML show every suspect, every
// verdict note, every instance, every failing connection's port and the
// release gate of the same report: they are views of one model.
func TestFormatsSayTheSame(t *testing.T) {
	r := insideReport(t)
	v := NewView(r)
	formats := wordsOf(t, r)
	var want []string
	want = append(want, v.Verdict.Notes...)
	want = append(want, v.Gate.Summary)
	for _, g := range v.Groups {
		for _, row := range g.Rows {
			want = append(want, row.Label)
		}
	}
	for _, c := range v.Conns {
		want = append(want, c.Summary)
		for _, row := range c.Rows {
			want = append(want, strconv.Itoa(int(row.LocalPort)))
		}
	}
	for name, doc := range formats {
		for _, w := range want {
			if !strings.Contains(doc, norm(w)) {
				t.Errorf("the %s report lacks %q", name, w)
			}
		}
	}
	for _, s := range v.Verdict.Suspects {
		if !strings.Contains(formats["html"], s.What+" "+strings.TrimPrefix(s.Label, "connections of ")) || !strings.Contains(formats["html"], s.How) {
			t.Errorf("the HTML report lacks suspect %s %q (%s)", s.What, s.Label, s.How)
		}
	}
}

// wordsOf is r's text report (200 columns), Markdown (without its escapes)
// and HTML (its text), each as the words it holds, one space apart.
func wordsOf(t *testing.T, r *report.Report) map[string]string {
	return map[string]string{"text": norm(Written(t, Text(Options{Width: 200}), r)),
		"markdown": norm(strings.ReplaceAll(renderMarkdown(t, r), `\`, "")), "html": norm(textOf(parseHTML(t, renderHTML(t, r))))}
}

// TestFormatsSayMissedLooks: the looks of --re-resolve that got no
// addresses in time are said, the same words in every format, under their
// host.
func TestFormatsSayMissedLooks(t *testing.T) {
	r := insideReport(t)
	first := r.StartedAt.Add(2 * time.Second)
	r.DNS[0].Looks = 30
	r.DNS[0].Missed = &report.DNSMissed{Looks: 3, First: report.Time{Time: first}, Last: report.Time{Time: first.Add(2 * time.Second)}, Error: "timed out"}
	v := NewView(r)
	want := "3 of 30 looks of --re-resolve got no addresses in time, 20:43:02–20:43:04 UTC (timed out): a change then went unseen"
	if got := v.DNS[0].Missed; got != want {
		t.Fatalf("missed looks %q; want %q", got, want)
	}
	for name, doc := range wordsOf(t, r) {
		if !strings.Contains(doc, want) {
			t.Errorf("the %s report lacks %q", name, want)
		}
	}
}

// TestFormatsSayPauses: a stretch in which pinprobe did not run is said
// near the top, the same words in every format.
func TestFormatsSayPauses(t *testing.T) {
	r := insideReport(t)
	r.Pauses = []report.Pause{{At: report.Time{Time: r.StartedAt.Add(5 * time.Second)}, DurationS: 3.002, Requests: 6000}}
	v := NewView(r)
	want := "3.0s at 20:43:05 UTC: 6000 requests due then not sent (pinprobe itself did not run: the process was stopped, as by Ctrl-Z, or the machine suspended)"
	if len(v.Run.Pauses) != 1 || v.Run.Pauses[0] != want {
		t.Fatalf("pauses %q; want [%q]", v.Run.Pauses, want)
	}
	text, md := Written(t, Text(Options{Width: 200}), r), renderMarkdown(t, r)
	lines := strings.Split(text, "\n")
	if i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "PAUSED "+want) }); i < 0 || i > 3 {
		t.Errorf("text report: PAUSED line at %d; want one of the first lines:\n%s", i, strings.Join(lines[:min(8, len(lines))], "\n"))
	}
	for name, doc := range map[string]string{"markdown": strings.ReplaceAll(md, `**`, ""), "html": textOf(parseHTML(t, renderHTML(t, r)))} {
		if !strings.Contains(norm(doc), "Paused "+want) {
			t.Errorf("the %s report lacks %q", name, want)
		}
	}
}

// TestLevelAndPortWords: the level of a verdict of --until-verdict says
// the looks' share of 0.001 beside the share it is split from, in one
// parenthesis (not "(Bonferroni) (0.001 spent …)"); a list of every client
// port, too many to print, says the JSON lists each (not "the lowest N" of
// N).
func TestLevelAndPortWords(t *testing.T) {
	got := levelWords(report.Level{Alpha: 0.000017, Each: 0.000001, Tests: 16, Looks: 30})
	want := "a difference counts as significant when p is below 0.000001: 0.000017 (0.001 spent over up to 30 looks of --until-verdict) split over the 16 findings the verdict could make (Bonferroni)"
	if got != want {
		t.Errorf("levelWords:\n got %q\nwant %q", got, want)
	}
	c := report.Client{PortsCount: 756, PortMin: 40000, PortMax: 41510}
	for p := range 756 {
		c.Ports = append(c.Ports, 40000+2*p)
	}
	if got := portWords(c); got != "756 ports from 40000 to 41510 (the JSON report lists each)" {
		t.Errorf("portWords of 756 ports, all kept: %q", got)
	}
	c.PortsCount = 900
	if got := portWords(c); got != "900 ports from 40000 to 41510 (the JSON report lists the lowest 756)" {
		t.Errorf("portWords of 900 ports, 756 kept: %q", got)
	}
}

// queryPorts is the set of client ports a query filters on ("Port in
// (…)"), nil when it filters on none.
func queryPorts(text string) map[int]bool {
	_, list, ok := strings.Cut(text, "Port in (")
	if !ok {
		return nil
	}
	list, _, _ = strings.Cut(list, ")")
	ports := map[int]bool{}
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
		if p, err := strconv.Atoi(f); err == nil {
			ports[p] = true
		}
	}
	return ports
}

// missed counts, over the suspects' endpoints, the failed requests (their
// connections, as the report records them) that no query of b finds,
// and all of them.
func missed(r *report.Report, b BriefLogs) (missed, all int64) {
	for _, s := range r.Verdict.Suspects {
		addrs := append([]string{s.Address}, s.Addresses...)
		for _, e := range r.Endpoints {
			if !slices.Contains(addrs, e.Address) || e.Conns == nil {
				continue
			}
			for _, c := range e.Conns.Records {
				all += c.Failed
				found := false
				for _, q := range b.Queries {
					ports := queryPorts(q.Query.Text)
					found = found || ports == nil || ports[int(c.LocalPort)]
				}
				if !found {
					missed += c.Failed
				}
			}
		}
	}
	return missed, all
}

// TestBriefLogsCoverEverySuspect: the brief's queries find every
// suspect's failed requests: the failing connections' query when it does
// (and its ports fit, briefPorts at most), the query of the run's requests
// otherwise (a run whose IPv6 address fails too), and one of each gateway
// that answered a suspect.
func TestBriefLogsCoverEverySuspect(t *testing.T) {
	check := func(name string, r *report.Report, b BriefLogs, failing bool, gateways ...string) {
		t.Helper()
		var got []string
		for _, q := range b.Queries {
			got = append(got, q.Gateway)
			if q.Query.Failing != failing {
				t.Errorf("%s: the %s query is over the failing connections: %v; want %v", name, q.Gateway, q.Query.Failing, failing)
			}
		}
		if !slices.Equal(got, gateways) {
			t.Errorf("%s: queries of %q; want %q", name, got, gateways)
		}
		if n, all := missed(r, b); n > 0 || all == 0 {
			t.Errorf("%s: the brief's queries miss %d of the suspects' %d failed requests", name, n, all)
		}
	}
	// 2001:db8::1 fails every request, gw-3 behind 192.0.2.2 on
	// connections 40103, 40107 and 40111.
	r := insideReport(t)
	check("IPv6 and an instance", r, NewView(r).briefLogs(), false, GatewayAzure)

	// The instance alone: the failing connections' query finds it.
	one := insideReport(t)
	one.Verdict.Suspects = slices.DeleteFunc(one.Verdict.Suspects, func(s report.Suspect) bool { return s.Address == "2001:db8::1" })
	v := NewView(one)
	check("an instance alone", one, v.briefLogs(), true, GatewayAzure)
	// … while its ports fit in a few lines.
	for p := range briefPorts + 1 - len(v.Logs.FailingPorts) {
		v.Logs.FailingPorts = append(v.Logs.FailingPorts, 45000+p)
	}
	check("an instance on 25 connections", one, v.briefLogs(), false, GatewayAzure)

	// IPv6 answered by an nginx: a query of each gateway.
	two := insideReport(t)
	for i := range two.Fingerprints {
		if f := &two.Fingerprints[i]; f.Addresses["2001:db8::1"] > 0 {
			n := f.Addresses["2001:db8::1"]
			v6 := *f
			v6.Producer, v6.Count, v6.Addresses = GatewayNginx, n, map[string]int64{"2001:db8::1": n}
			f.Count -= n
			delete(f.Addresses, "2001:db8::1")
			two.Fingerprints = append(two.Fingerprints, v6)
			break
		}
	}
	check("two gateways", two, NewView(two).briefLogs(), false, GatewayAzure, GatewayNginx)
}
