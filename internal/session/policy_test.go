package session

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/probe"
)

// TestLoadDefaults: the defaults sized from the planned load.
func TestLoadDefaults(t *testing.T) {
	for _, tt := range []struct {
		name  string
		l     Load
		eps   int
		conns int
	}{
		{"30 s at 10 req/s over 3", Load{Rate: 10, Duration: 30 * time.Second}, 3, 4},
		{"10 min at 100 req/s over 2", Load{Rate: 100, Duration: 10 * time.Minute}, 2, 938},
		{"-n 6400 over 2", Load{Rate: 10, Requests: 6400}, 2, 100},
		{"-d and -n: the smaller", Load{Rate: 100, Duration: time.Hour, Requests: 3200}, 1, 100},
		{"until Ctrl-C: a minute", Load{Rate: 64}, 1, 120},
		{"--rate max", Load{Max: true, Duration: time.Hour}, 1, 100},
		{"--until-verdict", Load{Rate: 1000, Duration: time.Hour, UntilVerdict: true}, 1, 4},
	} {
		if got := tt.l.ConnRequests(tt.eps); got != tt.conns {
			t.Errorf("%s: %d requests a connection; want %d", tt.name, got, tt.conns)
		}
	}
	if c := (Load{Max: true, Timeout: 10 * time.Second}).Concurrency(3); c < 1 || c > 10 {
		t.Errorf("--rate max: -c %d; want 1 to 10", c)
	}
	for d, want := range map[time.Duration]time.Duration{0: time.Second, 5 * time.Minute: time.Second, 10 * time.Minute: 2 * time.Second, time.Hour: 16 * time.Second} {
		if got := TimelineInterval(d); got != want {
			t.Errorf("-d %v: interval %v; want %v", d, got, want)
		}
	}
}

// TestTargetsTakeTheFlagsWhereABlockIsSilent: a block's method, body and
// headers win over the flags', header by header (by canonical name); the
// rest come from the flags.
func TestTargetsTakeTheFlagsWhereABlockIsSilent(t *testing.T) {
	d := Defaults{Method: "post", Header: [][2]string{{"X-Env", "prod"}, {"Authorization", "Bearer a"}}, Body: []byte("flag")}
	tgs, err := Targets([]Spec{
		{URL: "https://a.test/"},
		{URL: "https://b.test/", Method: "PUT", Header: [][2]string{{"authorization", "Bearer b"}}, HasBody: true},
	}, d)
	if err != nil {
		t.Fatal(err)
	}
	a, b := tgs[0], tgs[1]
	if a.Method != "POST" || string(a.Body) != "flag" || a.Header.Get("Authorization") != "Bearer a" || a.Header.Get("X-Env") != "prod" {
		t.Errorf("a: %s %q %v; want the flags' POST, body and headers", a.Method, a.Body, a.Header)
	}
	if b.Method != "PUT" || len(b.Body) != 0 || b.Header.Values("Authorization")[0] != "Bearer b" || len(b.Header.Values("Authorization")) != 1 || b.Header.Get("X-Env") != "prod" {
		t.Errorf("b: %s %q %v; want its own PUT, empty body and Authorization, the flags' X-Env", b.Method, b.Body, b.Header)
	}
	if _, err := Targets([]Spec{{URL: "ftp://x/"}}, d); err == nil {
		t.Error("an ftp URL: no error")
	}
	if got := GroupHeaders([]string{"x-served-by", " X-Shard "}); !slices.Equal(got[:2], []string{"X-Served-By", "X-Shard"}) || len(got) != len(WellKnownInstanceHeaders)+1 {
		t.Errorf("GroupHeaders: %v; want --group-by's first, canonical, each once, then the well-known ones", got)
	}
	if CanonicalHeaders(nil) != nil {
		t.Error("CanonicalHeaders(nil) is not nil")
	}
}

// TestResolveMismatches: a --resolve entry for the host on another port is
// said, once, with the entry to give instead.
func TestResolveMismatches(t *testing.T) {
	tg, err := probe.ParseTarget("https://a.test:8443/")
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string][]netip.Addr{probe.StaticKey("a.test", 443): {netip.MustParseAddr("127.0.0.1")}}
	got := ResolveMismatches(entries, []*probe.Target{tg, tg})
	if len(got) != 1 || !strings.Contains(got[0], "--resolve a.test:443 is not used: the URL's port is 8443") || !strings.Contains(got[0], "give --resolve a.test:8443:ADDR") {
		t.Errorf("warnings %q; want one naming a.test:443 and the entry a.test:8443:ADDR", got)
	}
	entries[probe.StaticKey("a.test", 8443)] = entries[probe.StaticKey("a.test", 443)]
	if got := ResolveMismatches(entries, []*probe.Target{tg}); len(got) != 0 {
		t.Errorf("warnings %q with an entry for the URL's port; want none", got)
	}
}
