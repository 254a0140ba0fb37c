package probe

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestAbandon: a run interrupted while requests hang in flight, then
// abandoned, returns at once; every request it started is counted once,
// by its result or as abandoned, on its own endpoint; and nothing is taken
// after it.
func TestAbandon(t *testing.T) {
	t.Parallel()
	eachClient(t, func(t *testing.T, client ClientKind) {
		fast, slow := testserver.Lo4a, testserver.Lo6
		// The slow address answers after a minute, or when the client
		// goes: its requests are in flight when the run is abandoned.
		ls, eps := startLoad(t, map[netip.Addr]time.Duration{slow: time.Minute}, fast, slow)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		run, err := Start(ctx, eps, Options{Rate: 200, Duration: time.Minute, Concurrency: 50, Client: client,
			ConnOptions: ConnOptions{Timeout: 3 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		var got []Result
		deadline := time.After(10 * time.Second)
		for slowServed := 0; slowServed < 5; {
			select {
			case <-run.Ready():
				got = append(got, run.Take()...)
			case <-deadline:
				t.Fatalf("the slow address got %d requests in 10s; want 5", slowServed)
			}
			served, _ := ls.hits.Snapshot()
			slowServed = served[slow]
		}
		cancel() // the first Ctrl-C: sending stops
		at := time.Now()
		got = append(got, run.Abandon()...) // the second: the report now
		if took := time.Since(at); took > time.Second {
			t.Errorf("Abandon took %v; want it at once", took)
		}
		if rs := run.Take(); len(rs) != 0 {
			t.Errorf("Take after Abandon returned %d results; want none", len(rs))
		}
		requests := map[int]int{}
		abandoned := map[int]int{}
		for _, r := range got {
			switch {
			case r.Request():
				requests[r.Endpoint]++
			case r.Abandoned > 0:
				abandoned[r.Endpoint] += r.Abandoned
			}
		}
		if abandoned[1] < 5 {
			t.Errorf("%d requests to %s abandoned; want at least the 5 it holds", abandoned[1], slow)
		}
		if requests[1] != 0 {
			t.Errorf("%d results of %s, which answers none; want 0", requests[1], slow)
		}
		// Once the abandoned requests have ended (their timeout), every
		// request started is counted once.
		select {
		case <-drained(run.Ready()):
		case <-time.After(10 * time.Second):
			t.Fatal("the abandoned requests did not end within 10s")
		}
		if rs := run.Take(); len(rs) != 0 {
			t.Errorf("Take after Abandon returned %d results; want none", len(rs))
		}
		sent := run.Sent()
		counted := int64(requests[0] + requests[1] + abandoned[0] + abandoned[1])
		if sent != counted {
			t.Errorf("%d requests sent; %d counted (results %v, abandoned %v)", sent, counted, requests, abandoned)
		}
		served, _ := ls.hits.Snapshot()
		for id, a := range []netip.Addr{fast, slow} {
			if n := requests[id] + abandoned[id]; served[a] > n || requests[id] > served[a] {
				t.Errorf("%s: the server saw %d requests; pinprobe counted %d results and %d abandoned", a, served[a], requests[id], abandoned[id])
			}
		}
		t.Logf("%s: %d sent: results %v, abandoned %v, served %v", client, sent, requests, abandoned, served)
	})
}

// drained returns a channel closed once c is, reading what c delivers
// until then.
func drained(c <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for range c {
		}
		close(done)
	}()
	return done
}
