package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// shapeWindow is the flapping shape's window in these runs: short, so two
// seconds hold several windows.
const shapeWindow = 300 * time.Millisecond

// TestVerdictShapes runs pinprobe against every shape of fault of
// testserver.Shapes, each on loopback with its ground truth, and each
// healthy twin. The verdict must name every true suspect (kind, address,
// family, instance) and nothing else, say each one in its headline and
// summary with how it fails, frame a failing family as that family, and
// claim nothing the truth rules out (the connections of a flapping
// address, an address for a shared pool, a family for one address of it).
func TestVerdictShapes(t *testing.T) {
	t.Parallel()
	check.Long(t, "a run of live traffic for every shape of fault")
	slots := make(chan struct{}, 4) // four runs at a time: each is light, and the machine has other tests to run
	for _, sh := range testserver.ShapesWith(testserver.ShapeOptions{Window: shapeWindow}) {
		t.Run(sh.Name, func(t *testing.T) {
			t.Parallel()
			slots <- struct{}{}
			defer func() { <-slots }()
			s := sh.Start(t)
			rep, _ := runReport(t, reportOpts{samples: 5}, "-r", "300", "-d", "2s", "--resolve", s.Resolve(), s.URL)
			checkShapeVerdict(t, s.Truth, rep)
			t.Logf("%s: %s — %s", sh.Name, rep.Verdict.Status, rep.Verdict.Headline)
			if t.Failed() {
				t.Logf("summary: %s", rep.Verdict.Summary)
				for _, n := range rep.Verdict.Notes {
					t.Logf("note: %s", n)
				}
			}
		})
	}
}

// checkShapeVerdict checks a report's verdict against a shape's truth.
func checkShapeVerdict(t *testing.T, truth testserver.Truth, rep *report.Report) {
	t.Helper()
	v := rep.Verdict
	if truth.Healthy {
		if v.Status != "ok" || len(v.Suspects) != 0 {
			t.Errorf("healthy: verdict %s with suspects %v; want ok", v.Status, suspectWords(v.Suspects))
		}
		return
	}
	if v.Status != "concentrated" {
		t.Fatalf("verdict %s; want concentrated on %v", v.Status, truthWords(truth.Suspects))
	}
	got, want := suspectWords(v.Suspects), truthWords(truth.Suspects)
	if !slices.Equal(got, want) {
		t.Errorf("suspects %v; want %v", got, want)
	}
	for _, ts := range truth.Suspects {
		s := findSuspect(v.Suspects, ts)
		if s == nil {
			continue
		}
		if !strings.Contains(s.How, howWord(ts.How)) {
			t.Errorf("%s: how %q; want it to say %q", shapeKey(ts.Kind, ts.Address, ts.Group), s.How, howWord(ts.How))
		}
		if ts.Connections && (s.Connections == 0 || s.FailingConnections == 0 || s.FailingConnections >= s.Connections) {
			t.Errorf("%s: connections %d, failing %d; want its address's failing connections as its evidence",
				shapeKey(ts.Kind, ts.Address, ts.Group), s.Connections, s.FailingConnections)
		}
		if ts.Family != "" && s.Family != ts.Family {
			t.Errorf("%s: family %q; want %q", shapeKey(ts.Kind, ts.Address, ts.Group), s.Family, ts.Family)
		}
		name := ts.Address
		if ts.Kind == testserver.KindGroup {
			name = ts.Group
		}
		for what, text := range map[string]string{"headline": v.Headline, "summary": v.Summary} {
			if !strings.Contains(text, name) {
				t.Errorf("the %s does not name %s: %q", what, name, text)
			}
		}
	}
	if f := truth.Family; f != "" {
		lead := map[string]string{"ipv4": "IPv4 (", "ipv6": "IPv6 ("}[f]
		if !strings.HasPrefix(v.Headline, lead) {
			t.Errorf("headline %q; want it to frame the fault as %s", v.Headline, lead)
		}
	}
	for _, avoid := range truth.Avoid {
		switch avoid {
		case testserver.KindFamily:
			if strings.Contains(v.Headline, "IPv4 (") || strings.Contains(v.Headline, "IPv6 (") {
				t.Errorf("headline %q blames a family", v.Headline)
			}
		default:
			for _, s := range v.Suspects {
				if s.Kind == avoid {
					t.Errorf("a %s suspect %s, which the truth rules out", avoid, shapeKey(s.Kind, s.Address, s.Group))
				}
			}
		}
	}
	for _, n := range v.Notes {
		if strings.Contains(n, "the instance is the cause, not the address") {
			t.Errorf("a note claims what the data cannot separate: %s", n)
		}
	}
}

// howWord is what the verdict says for a way of failing.
func howWord(how string) string {
	switch how {
	case testserver.HowReset:
		return "connections" // resets connections, or closes them without an answer
	case testserver.HowWindow:
		return "window"
	}
	return how
}

func shapeKey(kind, address, group string) string {
	switch kind {
	case testserver.KindGroup:
		if address != "" {
			return fmt.Sprintf("group %s behind %s", group, address)
		}
		return "group " + group
	}
	return kind + " " + address
}

func suspectWords(ss []report.Suspect) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, shapeKey(s.Kind, s.Address, s.Group))
	}
	slices.Sort(out)
	return out
}

func truthWords(ts []testserver.TruthSuspect) []string {
	out := []string{}
	for _, s := range ts {
		out = append(out, shapeKey(s.Kind, s.Address, s.Group))
	}
	slices.Sort(out)
	return out
}

func findSuspect(ss []report.Suspect, ts testserver.TruthSuspect) *report.Suspect {
	for i := range ss {
		if shapeKey(ss[i].Kind, ss[i].Address, ss[i].Group) == shapeKey(ts.Kind, ts.Address, ts.Group) {
			return &ss[i]
		}
	}
	return nil
}

// TestInstanceAddedWhileFailuresRise: a pool of pods behind two addresses
// fails more in the second half of the run, every pod alike, and a third
// pod joins it then (an autoscaler's answer to the incident). Over the
// whole run the new pod fails more than the others, only because it did
// not answer while all was well: compared at the same times, it is no
// worse, and it must not be named. The pool's failures are spread.
func TestInstanceAddedWhileFailuresRise(t *testing.T) {
	check.Long(t, "seconds of live traffic")
	t.Parallel()
	var mu sync.Mutex
	var n uint64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		// The second half begins at a count, not a time: a busy machine
		// that sends late would shorten the healthy half, and with it the
		// contrast this test needs over the whole run.
		n++
		late := n > 500             // of about 1200
		k := n * 0x9e3779b97f4a7c15 // a fixed pseudo-random draw per request
		mu.Unlock()
		pods := uint64(2)
		if late {
			pods = 3
		}
		w.Header().Set("X-Pod", "pod-"+string(rune('a'+(k>>40)%pods)))
		if late && (k>>20)%5 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	port := testserver.ServeSamePort(t, h, nil, testserver.Lo4a, testserver.Lo4b)
	host := fmt.Sprintf("pool.test:%d", port)
	_, raw := runReport(t, reportOpts{samples: 5}, "-r", "400", "-d", "3s", "--resolve", host+":127.0.0.1,127.0.0.2", "http://"+host+"/")
	var rep report.Report
	if err := json.Unmarshal([]byte(raw), &rep); err != nil {
		t.Fatal(err)
	}
	v := rep.Verdict
	t.Logf("%s: %s", v.Status, v.Summary)
	for _, g := range rep.Groups {
		t.Logf("group %s: %s: %d of %d failed", g.Header, g.Value, g.Failed, g.Requests)
	}
	if len(v.Suspects) != 0 {
		t.Errorf("suspects %+v; want none: every pod failed alike at the same times", v.Suspects)
	}
	var overall *report.Test
	for i, ts := range v.Tests {
		if ts.Kind == report.TestGroup && ts.Value == "pod-c" {
			overall = &v.Tests[i]
		}
	}
	if overall == nil || overall.P > 1e-3 {
		t.Errorf("pod-c against the other pods over the whole run: %+v; want it to stand out there (else this test shows nothing)", overall)
	}
}
