package join

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/accesslog"
)

// combinedLog writes the run's requests as nginx's combined format logs
// them (no request ID, port or backend), shifted by shift, to path.
func combinedLog(reqs []simRequest, shift time.Duration, path string) string {
	var b strings.Builder
	for _, r := range reqs {
		fmt.Fprintf(&b, "%s - - [%s] \"GET %s HTTP/1.1\" %d 12 \"-\" \"pinprobe\"\n",
			r.client(), r.at.Add(shift).Format("02/Jan/2006:15:04:05 -0700"), path, r.status())
	}
	return b.String()
}

// haproxyLog writes the run's requests as HAProxy's default httplog.
func haproxyLog(reqs []simRequest) string {
	var b strings.Builder
	for _, r := range reqs {
		be := "be_v4/s1"
		if r.backend == deadBackend {
			be = "be_v6/s9"
		}
		st, term := "200", "----"
		if r.failed {
			st, term = "503", "SC--"
		}
		fmt.Fprintf(&b, "%s:%d [%s] %s %s 0/0/0/20/20 %s 87 - - %s 1/1/0/0/0 0/0 \"GET /sign HTTP/1.1\"\n",
			r.client(), r.port, r.at.Format("02/Jan/2006:15:04:05.000"), [2]string{"fe_v4", "fe_v6"}[r.ep], be, st, term)
	}
	return b.String()
}

// joinLogs joins the simulated run with several logs.
func joinLogs(t *testing.T, reqs []simRequest, o Options, logs ...string) *Join {
	t.Helper()
	j := New(simReport(reqs), o)
	for i, l := range logs {
		r, err := accesslog.Open(strings.NewReader(l), accesslog.Options{})
		if err != nil {
			t.Fatalf("open log %d: %v", i, err)
		}
		if err := j.Add(fmt.Sprintf("gw%d.log", i), r); err != nil {
			t.Fatal(err)
		}
	}
	out := j.Finish()
	t.Logf("%s %s | offset %s | lines %+v", out.Status, out.Conclusion, out.Offset.Describe(), out.Lines)
	return out
}

var runClients = Options{Clients: []netip.Addr{netip.MustParseAddr("198.51.100.7"), netip.MustParseAddr("2001:db8:77::7")}}

// TestOtherRunsLog: a log written 66 s after the run, by the same client
// address, is no log of the run: the offset its times suggest is past
// --max-offset, nothing is placed and the headline says so. Lines of the
// run's time to a path none of its endpoints has are "no known endpoint".
func TestOtherRunsLog(t *testing.T) {
	reqs := simRun()
	j := joinLogs(t, reqs, Options{MaxOffset: time.Second, Clients: runClients.Clients}, combinedLog(reqs, 66*time.Second, "/sign"))
	if j.Offset.Measured || j.Lines.Run != 0 || j.Status != StatusNothing || !strings.HasPrefix(j.Conclusion, "Nothing of this run") {
		t.Errorf("a log 66 s later with --max-offset 1s: status %s, offset %+v, %d lines placed, %q; want nothing of the run", j.Status, j.Offset, j.Lines.Run, j.Conclusion)
	}
	// The default --max-offset, 2 minutes, takes 66 s as an offset.
	j = joinLogs(t, reqs, runClients, combinedLog(reqs, 66*time.Second, "/sign"))
	if !j.Offset.Measured || j.Lines.Run != int64(len(reqs)) {
		t.Errorf("a log 66 s off within the default --max-offset: offset %+v, %d placed; want measured, all placed", j.Offset, j.Lines.Run)
	}
	// Another listener of the same client at the run's time: path "/".
	j = joinLogs(t, reqs, runClients, combinedLog(reqs, 0, "/"))
	if j.Lines.Run != 0 || j.Lines.NoKnownEndpoint != int64(len(reqs)) || j.Status != StatusNothing || len(j.Lines.NoKnownEndpointAt) == 0 {
		t.Errorf("lines to path /: %+v, status %s; want every one to no known endpoint, nothing placed", j.Lines, j.Status)
	}
	if !strings.Contains(j.Conclusion, fmt.Sprintf("%d to no endpoint of the run", len(reqs))) {
		t.Errorf("conclusion %q; want the lines to no known endpoint named", j.Conclusion)
	}
}

// TestDuplicateLines: the same log given twice, or rotated logs that
// overlap, hold each request once: the copies are counted and named, not
// placed. Lines alike within one file stay (requests in one second).
func TestDuplicateLines(t *testing.T) {
	reqs := simRun()
	n := int64(len(reqs))
	hap := haproxyLog(reqs)
	j := joinLogs(t, reqs, Options{}, hap, hap)
	if j.Lines.Run != n || j.Lines.Duplicates != n || j.Lines.Failed != 50 || len(j.Lines.DuplicatesAt) == 0 || !strings.HasPrefix(j.Lines.DuplicatesAt[0], "gw1.log:") {
		t.Errorf("HAProxy log twice: %+v; want %d placed once each, %d duplicates named in gw1.log", j.Lines, n, n)
	}
	// Overlapping rotation: the first two thirds, then the last two.
	lines := strings.SplitAfter(hap, "\n")
	a, b := strings.Join(lines[:200], ""), strings.Join(lines[100:], "")
	j = joinLogs(t, reqs, Options{}, a, b)
	if j.Lines.Run != n || j.Lines.Duplicates != 100 {
		t.Errorf("overlapping rotated logs: %+v; want %d placed, 100 duplicates", j.Lines, n)
	}
	// A log of to-the-second times holds identical lines of different
	// requests: one file is read whole, its copy is not.
	comb := combinedLog(reqs, 0, "/sign")
	j = joinLogs(t, reqs, runClients, comb, comb, comb)
	if j.Lines.Run != n || j.Lines.Duplicates != 2*n {
		t.Errorf("combined log three times: %+v; want %d placed, %d duplicates", j.Lines, n, 2*n)
	}
	// Request IDs: one ID is one request, however often it is logged.
	var ids strings.Builder
	for _, r := range reqs {
		fmt.Fprintf(&ids, "%s [%s] \"GET /sign HTTP/1.1\" %d up=%s rid=%s\n", r.client(), r.at.Format("02/Jan/2006:15:04:05 -0700"), r.status(), r.backend, r.id())
	}
	idLog := ids.String()
	f := `$remote_addr [$time_local] "$request" $status up=$upstream_addr rid=$http_x_request_id`
	jo := New(simReport(reqs), Options{})
	for _, l := range []string{idLog, idLog + idLog} {
		r, err := accesslog.Open(strings.NewReader(l), accesslog.Options{Format: f})
		if err != nil {
			t.Fatal(err)
		}
		if err := jo.Add("ids.log", r); err != nil {
			t.Fatal(err)
		}
	}
	out := jo.Finish()
	if out.Lines.Run != n || out.Lines.ByRequestID != n || out.Lines.Duplicates != 2*n || out.Backends[0].Failed != 50 {
		t.Errorf("request IDs logged three times: %+v, backends %+v; want %d placed, %d duplicates, 50 failed", out.Lines, out.Backends, n, 2*n)
	}
}

// TestUntraced: a log of the run's failures that names no backend is
// "untraced", never "no failure".
func TestUntraced(t *testing.T) {
	reqs := simRun()
	j := joinLogs(t, reqs, runClients, combinedLog(reqs, 0, "/sign"))
	if j.Status != StatusUntraced || j.Lines.Failed != 50 || !strings.HasPrefix(j.Conclusion, "The logs name no backend: 50 of the run's 300") {
		t.Errorf("status %q, %d failed, %q; want untraced, 50 failed", j.Status, j.Lines.Failed, j.Conclusion)
	}
	j = joinLogs(t, reqs, Options{}, haproxyLog(reqs))
	if j.Status != StatusTraced {
		t.Errorf("HAProxy log naming backends: status %q; want traced", j.Status)
	}
}

// TestHAProxyPreflight: pinprobe's preflight opens a connection to each
// endpoint and closes it; HAProxy logs it as a <BADREQ> 400 from the
// run's client just before the run. It is the run's preflight, not
// another client's.
func TestHAProxyPreflight(t *testing.T) {
	reqs := simRun()
	pre := fmt.Sprintf("198.51.100.7:39001 [%s] fe_v4 fe_v4/<NOSRV> -1/-1/-1/-1/0 400 0 - - CR-- 1/1/0/0/0 0/0 \"<BADREQ>\"\n",
		runStart.Add(-300*time.Millisecond).Format("02/Jan/2006:15:04:05.000"))
	j := joinLogs(t, reqs, Options{}, pre+haproxyLog(reqs))
	if j.Lines.Records != int64(len(reqs))+1 {
		t.Fatalf("%d records; want the <BADREQ> line read too", j.Lines.Records)
	}
	if j.Lines.Preflight != 1 || j.Lines.OtherClients != 0 || j.Lines.Run != int64(len(reqs)) {
		t.Errorf("lines %+v; want 1 preflight, none of other clients, every request placed", j.Lines)
	}
}

// TestOtherListener: where the log names the address and port each line
// came to, and the run's lines came to its endpoints', a line of the
// run's client to another port is another listener's: no known endpoint.
func TestOtherListener(t *testing.T) {
	reqs := simRun()
	var b strings.Builder
	var mine int64
	for _, r := range reqs {
		if r.ep != 0 {
			continue
		}
		mine++
		at := r.at.Format("02/Jan/2006:15:04:05 -0700")
		fmt.Fprintf(&b, "%s:%d [%s] \"GET /sign HTTP/1.1\" 200 srv=203.0.113.10:443 up=%s\n", r.client(), r.port, at, r.backend)
		fmt.Fprintf(&b, "%s:%d [%s] \"GET /sign HTTP/1.1\" 502 srv=203.0.113.10:8443 up=10.9.9.9:80\n", r.client(), r.port+1000, at)
	}
	f := `$remote_addr:$remote_port [$time_local] "$request" $status srv=$server_addr:$server_port up=$upstream_addr`
	r, err := accesslog.Open(strings.NewReader(b.String()), accesslog.Options{Format: f})
	if err != nil {
		t.Fatal(err)
	}
	j := New(simReport(reqs), runClients)
	if err := j.Add("gw.log", r); err != nil {
		t.Fatal(err)
	}
	out := j.Finish()
	t.Logf("%s | lines %+v", out.Conclusion, out.Lines)
	if out.Lines.Run != mine || out.Lines.NoKnownEndpoint != mine || out.Lines.Failed != 0 || out.Status != StatusNoFailure {
		t.Errorf("lines %+v, status %s; want %d of the run, %d to another listener, none failed", out.Lines, out.Status, mine, mine)
	}
}
