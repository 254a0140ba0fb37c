package judge

import (
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/report"
)

// groupByNote is the note of v that speaks of --group-by, or "".
func groupByNote(v report.Verdict) string {
	for _, n := range v.Notes {
		if strings.Contains(n, "(--group-by)") {
			return n
		}
	}
	return ""
}

// A header asked for with --group-by that no response carried is said,
// not taken for "no instance stands out"; nor is one that no failed
// response carried.
func TestGroupByHeaderNoResponseCarried(t *testing.T) {
	r := otReport(otEndpoint{"127.0.0.1", 0, 100, ""}, otEndpoint{"127.0.0.2", 20, 100, "502"}, otEndpoint{"::1", 0, 100, ""})
	rvGroup(r, "X-Served-By", "gw-1", map[string][2]int64{"127.0.0.2": {10, 50}})
	rvGroup(r, "X-Served-By", "gw-2", map[string][2]int64{"127.0.0.2": {10, 50}})
	r.Plan.GroupBy = []string{"X-Nope"}
	want := "No response carried X-Nope (--group-by): none of the 300 responses could be put to an instance by it, so no instance could stand out by it. Check the name, and that the gateway adds the header to every response: nginx's add_header skips error responses unless given always"
	if n := groupByNote(Judge(r, Once())); !strings.HasPrefix(n, want) {
		t.Errorf("note %q; want it to start %q", n, want)
	}
	// A healthy run says it too: no instance was seen there either.
	ok := otReport(otEndpoint{"127.0.0.1", 0, 100, ""}, otEndpoint{"::1", 0, 100, ""})
	ok.Plan.GroupBy = []string{"X-Nope", "X-Node"}
	if n := groupByNote(Judge(ok, Once())); !strings.HasPrefix(n, "No response carried X-Nope and X-Node (--group-by): none of the 200 responses could be put to an instance by them") {
		t.Errorf("two headers, healthy run: note %q", n)
	}
	// Every request timed out: there was no response to carry it.
	down := otReport(otEndpoint{"127.0.0.1", 30, 30, "timeout"})
	down.Plan.GroupBy = []string{"X-Nope"}
	if n := groupByNote(Judge(down, Once())); n != "No request got a response, so none carried X-Nope (--group-by) and no instance could be named by it." {
		t.Errorf("no response at all: note %q", n)
	}
	// On the successes only: the failures cannot be put to an instance.
	succ := otReport(otEndpoint{"127.0.0.1", 0, 100, ""}, otEndpoint{"127.0.0.2", 20, 100, "502"})
	rvGroup(succ, "X-Node", "a", map[string][2]int64{"127.0.0.1": {0, 100}, "127.0.0.2": {0, 40}})
	rvGroup(succ, "X-Node", "b", map[string][2]int64{"127.0.0.2": {0, 40}})
	succ.Plan.GroupBy = []string{"X-Node"}
	if n := groupByNote(Judge(succ, Once())); !strings.HasPrefix(n, "X-Node (--group-by) named an instance on 180 of the 200 responses but on none of the 20 failed ones") {
		t.Errorf("header on the successes only: note %q", n)
	}
	// Carried, failures included, or not asked for: nothing to say.
	r.Plan.GroupBy = []string{"x-served-by"}
	if n := groupByNote(Judge(r, Once())); n != "" {
		t.Errorf("a header the responses carried: note %q", n)
	}
	r.Plan.GroupBy = nil
	if v := Judge(r, Once()); hasNote(v, "group-by") {
		t.Errorf("no --group-by: notes %q", v.Notes)
	}
}
