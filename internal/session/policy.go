package session

import (
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/probe"
)

// Load is the load a run plans, what its defaults are sized from: -r
// (Rate, or Max for --rate max), -d, -n, --timeout and --until-verdict.
type Load struct {
	Rate         float64
	Max          bool
	Duration     time.Duration
	Requests     int64
	Timeout      time.Duration
	UntilVerdict bool
}

// ConnRequests is --conn-requests auto: how many requests a connection
// carries, at least 4 and enough for about 32 connections per endpoint
// over the planned run, so the run samples many connections (an address
// may front several instances, and each connection stays on one) while
// most requests still go over reused connections.
func (l Load) ConnRequests(endpoints int) int {
	switch {
	case l.Max:
		return 100
	case l.UntilVerdict:
		// The verdict settles only once every address carried enough
		// connections to reach its instances (judge.Settle): cycle them
		// as fast as the floor allows.
		return 4
	}
	var per float64
	switch {
	case l.Duration > 0 && l.Requests > 0:
		per = min(l.Rate*l.Duration.Seconds(), float64(l.Requests)) / float64(endpoints)
	case l.Duration > 0:
		per = l.Rate * l.Duration.Seconds() / float64(endpoints)
	case l.Requests > 0:
		per = float64(l.Requests) / float64(endpoints)
	default:
		per = l.Rate * 60 / float64(endpoints) // until Ctrl-C: as for a minute
	}
	return max(4, int(math.Ceil(per/32)))
}

// Concurrency is the default of -c: the most requests in flight per
// endpoint, enough for every planned request to be sent even if each takes
// the whole --timeout, within the descriptor limit (probe.AutoConcurrency).
func (l Load) Concurrency(endpoints int) int {
	soft, _, err := probe.DescriptorLimit()
	if err != nil {
		soft = 1024
	}
	if l.Max {
		return min(10, probe.AutoConcurrency(0, l.Timeout, endpoints, soft))
	}
	return probe.AutoConcurrency(l.Rate/float64(endpoints), l.Timeout, endpoints, soft)
}

// TimelineInterval is the timeline's automatic width (--interval 0): 1s,
// or wider so a run of duration d fits in about 300 buckets.
func TimelineInterval(d time.Duration) time.Duration {
	iv := time.Second
	for d > 0 && d/iv > 300 {
		iv *= 2
	}
	return iv
}

// WellKnownInstanceHeaders are response headers that name the instance or
// backend that answered; they are grouped whenever a response carries one.
var WellKnownInstanceHeaders = []string{
	"X-Served-By", "X-Backend-Server", "X-Backend", "X-Upstream", "X-Upstream-Addr",
	"X-Server", "X-Server-Name", "X-Instance", "X-Instance-Id", "X-Node", "X-Pod", "X-Hostname",
}

// GroupHeaders is the headers a run groups responses by: groupBy
// (--group-by) and the well-known instance headers, each once.
func GroupHeaders(groupBy []string) []string {
	return CanonicalHeaders(append(append([]string{}, groupBy...), WellKnownInstanceHeaders...))
}

// CanonicalHeaders is the header names hs in canonical form, each once, in
// order; nil when there is none.
func CanonicalHeaders(hs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, h := range hs {
		k := http.CanonicalHeaderKey(strings.TrimSpace(h))
		if k != "" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// Spec is one target as the command line or a targets file's block gives
// it; what it leaves out comes from Defaults.
type Spec struct {
	URL     string
	Method  string // "" = Defaults.Method
	Header  [][2]string
	Body    []byte
	HasBody bool // Body is the block's own, even when empty
}

// Defaults are the request the flags give every target (-X, -H, --body).
type Defaults struct {
	Method string
	Header [][2]string
	Body   []byte
}

// Targets builds the request of every target: each spec with the
// defaults' method, headers and body where it gives none of its own (a
// spec's header replaces a default one of the same name).
func Targets(specs []Spec, d Defaults) ([]*probe.Target, error) {
	var out []*probe.Target
	for _, sp := range specs {
		t, err := probe.ParseTarget(sp.URL)
		if err != nil {
			return nil, err
		}
		t.Method = strings.ToUpper(d.Method)
		if sp.Method != "" {
			t.Method = sp.Method
		}
		t.Header = http.Header{}
		for _, h := range d.Header {
			t.Header.Add(h[0], h[1])
		}
		own := http.Header{}
		for _, h := range sp.Header {
			own.Add(h[0], h[1])
		}
		for k, vs := range own {
			t.Header[k] = vs
		}
		t.Body = d.Body
		if sp.HasBody {
			t.Body = sp.Body
		}
		out = append(out, t)
	}
	return out, nil
}

// ResolveMismatches warns of --resolve entries that name a target's host
// with another port: curl's syntax matches host and port, so such an entry
// is not used and the host goes to DNS, which is rarely what was meant.
func ResolveMismatches(entries map[string][]netip.Addr, targets []*probe.Target) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range targets {
		key := probe.StaticKey(t.Host(), t.Port())
		if _, ok := entries[key]; ok || seen[key] {
			continue
		}
		seen[key] = true
		host := key[:strings.LastIndex(key, ":")] // keys are StaticKey(host, port)
		var other []string
		for k := range entries {
			if k[:strings.LastIndex(k, ":")] == host {
				other = append(other, k)
			}
		}
		if len(other) > 0 {
			sort.Strings(other)
			out = append(out, fmt.Sprintf("warning: --resolve %s is not used: the URL's port is %d, so %s is resolved by DNS (give --resolve %s:ADDR)",
				strings.Join(other, ", "), t.Port(), t.Host(), key))
		}
	}
	return out
}
