package testserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Each address of a shape gets shapeRequests requests, spread in turn over
// shapeConns keep-alive connections.
const shapeConns, shapeRequests = 4, 40

// shapeWindow shortens the flapping windows so that driving 4.5 of them
// takes about 1.4s.
const shapeWindow = 300 * time.Millisecond

// TestShapesTable pins the table to what the verdict's table test relies
// on: the names, the addresses and the suspects.
func TestShapesTable(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"echo-address":     "127.0.0.1 127.0.0.2 ::1 | endpoint ::1 ipv6 502 | family ipv6 | avoid connections",
		"echo-two-ipv4":    "127.0.0.1 127.0.0.2 127.0.0.3 127.0.0.4 ::1 | endpoint 127.0.0.2 ipv4 503, endpoint 127.0.0.3 ipv4 503 | avoid family connections",
		"shared-pool":      "127.0.0.1 127.0.0.2 ::1 | group X-Served-By: pool-2 502 | avoid endpoint connections family",
		"sticky-instances": "127.0.0.1 127.0.0.2 ::1 | group 127.0.0.2 ipv4 X-Served-By: gw-3 502 on connections | avoid family",
		"sticky-no-header": "127.0.0.1 127.0.0.2 ::1 | connections 127.0.0.2 ipv4 502 | avoid group family",
		"flapping-window":  "127.0.0.1 127.0.0.2 ::1 | endpoint 127.0.0.2 ipv4 window | avoid connections family",
		"reset-and-503":    "127.0.0.1 127.0.0.2 127.0.0.3 | endpoint 127.0.0.2 ipv4 reset, endpoint 127.0.0.3 ipv4 503 | avoid family connections",
		"family-ipv6":      "127.0.0.1 127.0.0.2 ::1 | endpoint ::1 ipv6 502 | family ipv6 | avoid connections",
	}
	shapes := Shapes()
	if len(shapes) != 2*len(want) {
		t.Errorf("Shapes() has %d shapes; want %d (each with its healthy twin)", len(shapes), 2*len(want))
	}
	for i, sh := range shapes {
		base, healthy := strings.CutSuffix(sh.Name, "-healthy")
		if healthy != (i%2 == 1) || (healthy && shapes[i-1].Name != base) {
			t.Errorf("shape %d is %q; want each shape followed by its healthy twin", i, sh.Name)
		}
		w, ok := want[base]
		if !ok {
			t.Errorf("shape %q is not in the table", sh.Name)
			continue
		}
		t.Run(sh.Name, func(t *testing.T) {
			s := sh.Start(t)
			addrs, _, _ := strings.Cut(w, " | ")
			if healthy {
				w = addrs + " | healthy"
			}
			if got := describeShape(s); got != w {
				t.Errorf("got  %s\nwant %s", got, w)
			}
			if s.URL != fmt.Sprintf("http://app.test:%d/", s.Port) || s.Host != DefaultHost {
				t.Errorf("URL %q, Host %q; want http://app.test:%d/", s.URL, s.Host, s.Port)
			}
			if got, want := s.Resolve(), fmt.Sprintf("app.test:%d:%s", s.Port, strings.ReplaceAll(addrs, " ", ",")); got != want {
				t.Errorf("Resolve() = %q; want %q", got, want)
			}
			var window time.Duration
			if base == "flapping-window" && !healthy {
				window = DefaultWindow
			}
			if s.Window != window {
				t.Errorf("Window = %v; want %v", s.Window, window)
			}
		})
	}
}

// describeShape is a shape's addresses and truth in one line.
func describeShape(s *ShapeServer) string {
	var addrs, suspects []string
	for _, a := range s.Addrs {
		addrs = append(addrs, a.String())
	}
	out := strings.Join(addrs, " ")
	if s.Truth.Healthy {
		if len(s.Truth.Suspects) > 0 || s.Truth.Family != "" || len(s.Truth.Avoid) > 0 {
			return out + " | healthy, yet with suspects"
		}
		return out + " | healthy"
	}
	for _, su := range s.Truth.Suspects {
		f := []string{su.Kind}
		for _, v := range []string{su.Address, su.Family, su.Group, su.How} {
			if v != "" {
				f = append(f, v)
			}
		}
		if su.Connections {
			f = append(f, "on connections")
		}
		suspects = append(suspects, strings.Join(f, " "))
	}
	out += " | " + strings.Join(suspects, ", ")
	if s.Truth.Family != "" {
		out += " | family " + s.Truth.Family
	}
	if len(s.Truth.Avoid) > 0 {
		out += " | avoid " + strings.Join(s.Truth.Avoid, " ")
	}
	return out
}

// TestShapes drives every shape with plain net/http clients pinned to each
// address and checks, client and server side, that it behaves as its
// Truth says.
func TestShapes(t *testing.T) {
	t.Parallel()
	for _, sh := range ShapesWith(ShapeOptions{Window: shapeWindow}) {
		t.Run(sh.Name, func(t *testing.T) {
			t.Parallel()
			s := sh.Start(t)
			obs := driveShape(t, s)
			checkCounts(t, s, obs)
			checkInstances(t, s, obs)
			checkTruth(t, s, obs)
			checkAvoid(t, s, obs)
		})
	}
}

// shapeReply is what the client saw of one request.
type shapeReply struct {
	conn      int            // which of the address's clients sent it
	local     netip.AddrPort // the client's end of the connection
	peer      netip.AddrPort // the server's end
	fresh     bool           // the request opened its connection
	status    int            // 0 on error
	header    http.Header
	body      string
	err       error
	sent, got time.Time
}

// failed says whether the request failed: an error or an answer of 500
// and above.
func (r shapeReply) failed() bool { return r.err != nil || r.status >= 500 }

// driveShape sends shapeRequests requests to every address at once, each
// address's in turn over shapeConns clients of one connection each; for a
// flapping shape it spreads them over 4.5 windows.
func driveShape(t *testing.T, s *ShapeServer) map[netip.Addr][]shapeReply {
	t.Helper()
	var every time.Duration
	if s.Window > 0 {
		every = (4*s.Window + s.Window/2) / shapeRequests
	}
	obs := map[netip.Addr][]shapeReply{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, a := range s.Addrs {
		var clients []*http.Client
		for range shapeConns {
			clients = append(clients, shapeClient(t, netip.AddrPortFrom(a, s.Port)))
		}
		wg.Go(func() {
			var tick <-chan time.Time
			if every > 0 {
				tk := time.NewTicker(every)
				defer tk.Stop()
				tick = tk.C
			}
			var rs []shapeReply
			for i := range shapeRequests {
				if tick != nil {
					select {
					case <-tick:
					case <-t.Context().Done():
						return
					}
				}
				r := shapeGet(t.Context(), clients[i%shapeConns], s.URL)
				r.conn = i % shapeConns
				rs = append(rs, r)
			}
			mu.Lock()
			obs[a] = rs
			mu.Unlock()
		})
	}
	wg.Wait()
	return obs
}

// shapeClient sends every request to addr over HTTP/1.1, on one keep-alive
// connection at a time.
func shapeClient(t *testing.T, addr netip.AddrPort) *http.Client {
	c := pinnedClient(t, addr, nil, true)
	c.Transport.(*http.Transport).MaxConnsPerHost = 1
	return c
}

// shapeGet sends GET url and records what came back and over which
// connection (httptrace's GotConn, not the dialer's word).
func shapeGet(ctx context.Context, c *http.Client, url string) shapeReply {
	var r shapeReply
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		r.local, r.peer, r.fresh = addrPortOf(info.Conn.LocalAddr()), addrPortOf(info.Conn.RemoteAddr()), !info.Reused
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, url, nil)
	if err != nil {
		r.err = err
		return r
	}
	r.sent = time.Now()
	resp, err := c.Do(req)
	if err != nil {
		r.err, r.got = err, time.Now()
		return r
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	r.got = time.Now()
	if err != nil {
		r.err = err
		return r
	}
	r.status, r.header, r.body = resp.StatusCode, resp.Header, string(body)
	return r
}

// isReset says whether err can be the server resetting the connection
// under net/http: Linux reports a reset once, so when the transport's
// writer sees ECONNRESET (or EPIPE) its reader sees EOF, and the client may
// be told either. rawReset tells a reset from a close.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) ||
		// net/http's transport, seeing the reset on its write first,
		// closes the connection itself, and its read then says so.
		errors.Is(err, net.ErrClosed)
}

// rawReset connects to addr and reads, returning the error: ECONNRESET,
// from the connect or the read, when the server resets the connection;
// EOF when it closes it.
func rawReset(addr netip.AddrPort) error {
	c, err := net.DialTimeout("tcp", addr.String(), 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Read(make([]byte, 1))
	return err
}

// suspectsAt returns the truth's suspects that concern a: those on a, and
// groups that span every address.
func suspectsAt(s *ShapeServer, a netip.Addr) []TruthSuspect {
	var out []TruthSuspect
	for _, su := range s.Truth.Suspects {
		if su.Address == a.String() || su.Kind == KindGroup && su.Address == "" {
			out = append(out, su)
		}
	}
	return out
}

// resets says whether the truth has a reset every connection.
func resets(s *ShapeServer, a netip.Addr) bool {
	return slices.ContainsFunc(suspectsAt(s, a), func(su TruthSuspect) bool { return su.How == HowReset })
}

// checkCounts checks that every request went where it was pinned, that
// each client kept its one connection (keep-alive honoured) unless its
// address resets, and that the server counted what the client saw.
func checkCounts(t *testing.T, s *ShapeServer, obs map[netip.Addr][]shapeReply) {
	t.Helper()
	counts := s.Counts()
	for _, a := range s.Addrs {
		rs := obs[a]
		if len(rs) != shapeRequests {
			t.Fatalf("%s: %d replies; want %d", a, len(rs), shapeRequests)
		}
		var want AddrCounts
		locals := map[int][]netip.AddrPort{}
		for i, r := range rs {
			// A reset can beat the end of the client's connect, which then
			// fails before GotConn.
			dialReset := resets(s, a) && !r.peer.IsValid() && isReset(r.err)
			if r.peer != netip.AddrPortFrom(a, s.Port) && !dialReset {
				t.Errorf("%s request %d: went to %s; want %s (%v)", a, i, r.peer, netip.AddrPortFrom(a, s.Port), r.err)
			}
			if s.Header == "X-Backend" && r.err == nil && r.header.Get("X-Backend") != a.String() {
				t.Errorf("%s request %d: X-Backend %q; want the address that answered", a, i, r.header.Get("X-Backend"))
			}
			if r.fresh || dialReset {
				want.Conns++
			}
			if r.status != 0 {
				want.Requests++
			}
			if r.status >= 500 {
				want.Failures++
			}
			if !slices.Contains(locals[r.conn], r.local) {
				locals[r.conn] = append(locals[r.conn], r.local)
			}
		}
		if resets(s, a) {
			want.Resets = want.Conns
			if want.Conns != shapeRequests {
				t.Errorf("%s: %d connections; want a new one for each of %d requests", a, want.Conns, shapeRequests)
			}
		} else {
			for c, l := range locals {
				if len(l) != 1 {
					t.Errorf("%s client %d: %d connections (%v); want one, kept alive", a, c, len(l), l)
				}
			}
		}
		if got := counts[a.String()]; got != want {
			t.Errorf("%s: server counted %+v; the client saw %+v", a, got, want)
		}
	}
	if len(counts) != len(s.Addrs) {
		t.Errorf("Counts() has %d addresses; want %d", len(counts), len(s.Addrs))
	}
}

// checkInstances checks the server's counts of its instances against what
// the client saw: by the instance header for a pool (routed per request),
// by connection for sticky instances, whose header, if any, never changes
// on a connection.
func checkInstances(t *testing.T, s *ShapeServer, obs map[netip.Addr][]shapeReply) {
	t.Helper()
	insts := s.Instances()
	byConn := map[netip.AddrPort]ConnStats{}
	for _, cs := range s.Conns() {
		if cs.Instance != "" {
			byConn[cs.Remote] = cs
		}
	}
	want := map[string]InstanceStats{}
	for name := range insts {
		want[name] = InstanceStats{}
	}
	conns := map[netip.AddrPort]bool{}
	for _, a := range s.Addrs {
		for i, r := range obs[a] {
			name := ""
			cs, sticky := byConn[r.local]
			switch {
			case sticky:
				name = cs.Instance
				if s.Header != "" && r.header.Get(s.Header) != name {
					t.Errorf("%s request %d: %s %q on a connection kept on %s", a, i, s.Header, r.header.Get(s.Header), name)
				}
				if !conns[r.local] {
					conns[r.local] = true
					st := want[name]
					st.Conns++
					want[name] = st
				}
			case len(insts) > 0 && s.Header != "":
				name = r.header.Get(s.Header)
			}
			if name == "" {
				continue
			}
			st, ok := want[name]
			if !ok {
				t.Errorf("%s request %d: answered by %q, which Instances() lacks", a, i, name)
			}
			st.Requests++
			if r.status >= 500 {
				st.Failures++
			}
			want[name] = st
		}
	}
	for name, w := range want {
		if insts[name] != w {
			t.Errorf("Instances()[%s] = %+v; the client saw %+v", name, insts[name], w)
		}
		if w.Requests == 0 {
			t.Errorf("instance %s answered no request", name)
		}
	}
}

// checkTruth checks every reply against the truth: a suspect address fails
// as its How says, a group's header value marks exactly the failing
// answers, a connections suspect's failures stick to whole connections,
// and everything no suspect explains answers 200.
func checkTruth(t *testing.T, s *ShapeServer, obs map[netip.Addr][]shapeReply) {
	t.Helper()
	tr := s.Truth
	if tr.Healthy != (len(tr.Suspects) == 0) || tr.Healthy && (tr.Family != "" || len(tr.Avoid) > 0) {
		t.Errorf("Truth %+v: healthy exactly when it has no suspect, family or avoid", tr)
	}
	for _, su := range tr.Suspects {
		if su.Address != "" {
			if a, err := netip.ParseAddr(su.Address); err != nil || !slices.Contains(s.Addrs, a) || su.Family != familyOf(a) {
				t.Errorf("suspect %+v: address not of the shape, or family not its own", su)
			}
		}
		if (su.Kind == KindGroup) != (su.Group != "") || (su.Kind == KindEndpoint || su.Kind == KindConnections) && su.Address == "" {
			t.Errorf("suspect %+v: a group names its header, an endpoint or connections its address", su)
		}
	}
	for _, a := range s.Addrs {
		rs := obs[a]
		var endpoint, conns *TruthSuspect
		var groups []TruthSuspect
		for _, su := range suspectsAt(s, a) {
			switch su.Kind {
			case KindEndpoint:
				endpoint = &su
			case KindConnections:
				conns = &su
			case KindGroup:
				groups = append(groups, su)
				if su.Connections {
					conns = &su
				}
			}
		}
		var windowFails, windowOKs [shapeConns]int
		for i, r := range rs {
			want, ok := 200, true
			switch {
			case endpoint != nil && endpoint.How == HowReset:
				if r.status != 0 || !isReset(r.err) {
					t.Errorf("%s request %d: %d, %v; want the connection reset", a, i, r.status, r.err)
				}
				continue
			case endpoint != nil && endpoint.How == HowWindow:
				failing := s.FailsAt(r.sent)
				if failing != s.FailsAt(r.got) {
					continue // crossed a window's edge
				}
				if failing {
					want = 503
					windowFails[r.conn]++
				} else {
					windowOKs[r.conn]++
				}
			case endpoint != nil:
				want = howStatus(t, endpoint.How)
			case len(groups) > 0:
				for _, g := range groups {
					h, v, _ := strings.Cut(g.Group, ": ")
					if r.header.Get(h) == v {
						want = howStatus(t, g.How)
					}
				}
			case conns != nil: // checkSticks checks which
				want, ok = 0, r.status == 200 || r.status == howStatus(t, conns.How)
			}
			if r.err != nil || !ok || want != 0 && r.status != want {
				t.Errorf("%s request %d (client %d): %d, %v; want %d", a, i, r.conn, r.status, r.err, want)
			}
		}
		if endpoint != nil && endpoint.How == HowWindow {
			for c := range shapeConns {
				if windowFails[c] == 0 || windowOKs[c] == 0 {
					t.Errorf("%s client %d: %d failures in failing windows, %d answers in healthy ones; want both on every connection",
						a, c, windowFails[c], windowOKs[c])
				}
			}
		}
		for _, g := range groups {
			h, v, _ := strings.Cut(g.Group, ": ")
			if !slices.ContainsFunc(rs, func(r shapeReply) bool { return r.header.Get(h) == v }) {
				t.Errorf("%s: no answer from %s; the group is behind this address", a, g.Group)
			}
		}
		if conns != nil {
			checkSticks(t, s, a, rs, howStatus(t, conns.How))
		}
		if endpoint != nil && endpoint.How == HowReset {
			for i := range 5 {
				if err := rawReset(netip.AddrPortFrom(a, s.Port)); !errors.Is(err, syscall.ECONNRESET) {
					t.Errorf("%s raw connection %d: %v; want ECONNRESET", a, i, err)
				}
			}
		}
	}
	// A group behind one address is seen nowhere else.
	for _, g := range tr.Suspects {
		if g.Kind != KindGroup || g.Address == "" {
			continue
		}
		h, v, _ := strings.Cut(g.Group, ": ")
		for _, a := range s.Addrs {
			if a.String() != g.Address && slices.ContainsFunc(obs[a], func(r shapeReply) bool { return r.header.Get(h) == v }) {
				t.Errorf("%s: answers from %s, which is behind %s only", a, g.Group, g.Address)
			}
		}
	}
	if tr.Family != "" {
		for _, a := range s.Addrs {
			for i, r := range obs[a] {
				if r.failed() != (familyOf(a) == tr.Family) {
					t.Errorf("%s request %d: failed %v; want every request of %s to fail, and only those", a, i, r.failed(), tr.Family)
				}
			}
		}
	}
}

// checkSticks checks that the failures of a stick to whole connections,
// each kept on one instance: a connection answers status every time or
// never, as its instance (server side) does, and some connections fail
// while others do not.
func checkSticks(t *testing.T, s *ShapeServer, a netip.Addr, rs []shapeReply, status int) {
	t.Helper()
	server := map[netip.AddrPort]ConnStats{}
	for _, cs := range s.Conns() {
		server[cs.Remote] = cs
	}
	var failing, healthy int
	for c := range shapeConns {
		var n, fails int64
		var local netip.AddrPort
		for _, r := range rs {
			if r.conn == c {
				n++
				local = r.local
				if r.status == status {
					fails++
				}
			}
		}
		cs := server[local]
		if fails != 0 && fails != n || cs.Instance == "" || cs.Requests != n || cs.Failures != fails {
			t.Errorf("%s client %d: %d of %d failed; server: %+v; want all or none, as its instance", a, c, fails, n, cs)
		}
		if fails == n {
			failing++
		} else {
			healthy++
		}
	}
	if failing == 0 || healthy == 0 {
		t.Errorf("%s: %d connections failed, %d did not; want some of each", a, failing, healthy)
	}
}

// howStatus is the status a How answers.
func howStatus(t *testing.T, how string) int {
	t.Helper()
	switch how {
	case How502:
		return 502
	case How503:
		return 503
	}
	t.Fatalf("How %q answers no status", how)
	return 0
}

// checkAvoid checks that what the truth says a verdict must not claim is
// false of the replies.
func checkAvoid(t *testing.T, s *ShapeServer, obs map[netip.Addr][]shapeReply) {
	t.Helper()
	for _, avoid := range s.Truth.Avoid {
		switch avoid {
		case KindConnections:
			// No address has both a connection that always failed and one
			// that never did.
			for _, a := range s.Addrs {
				var allFail, noneFail bool
				for c := range shapeConns {
					var n, fails int
					for _, r := range obs[a] {
						if r.conn == c {
							n++
							if r.failed() {
								fails++
							}
						}
					}
					allFail = allFail || fails == n
					noneFail = noneFail || fails == 0
				}
				if allFail && noneFail {
					t.Errorf("%s: failures stick to some connections; the truth avoids %q", a, avoid)
				}
			}
		case KindEndpoint:
			// The fault spans every address: each fails some and answers
			// some.
			for _, a := range s.Addrs {
				fails := 0
				for _, r := range obs[a] {
					if r.failed() {
						fails++
					}
				}
				if fails == 0 || fails == len(obs[a]) {
					t.Errorf("%s: %d of %d failed; the truth avoids %q, so every address must fail some", a, fails, len(obs[a]), avoid)
				}
			}
		case KindFamily:
			// No family fails on every address while the other fails on
			// none.
			failing := map[string]int{}
			total := map[string]int{}
			for _, a := range s.Addrs {
				total[familyOf(a)]++
				if slices.ContainsFunc(obs[a], shapeReply.failed) {
					failing[familyOf(a)]++
				}
			}
			for f, n := range failing {
				if n == total[f] && len(failing) == 1 {
					t.Errorf("every %s address fails and no other does; the truth avoids %q", f, avoid)
				}
			}
		case KindGroup:
			// No header nor body names an instance.
			for name := range s.Instances() {
				for _, a := range s.Addrs {
					for i, r := range obs[a] {
						for h, vs := range r.header {
							if slices.Contains(vs, name) {
								t.Errorf("%s request %d: %s names instance %s; the truth avoids %q", a, i, h, name, avoid)
							}
						}
						if strings.Contains(r.body, name) {
							t.Errorf("%s request %d: the body names instance %s; the truth avoids %q", a, i, name, avoid)
						}
					}
				}
			}
		default:
			t.Errorf("Avoid %q: not a word the verdict's tests know", avoid)
		}
	}
}
