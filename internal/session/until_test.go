package session

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// synthRun is an engine of synthetic results on the clock of a synctest
// bubble: every endpoint finishes a request each interval, 5 ms off the
// beat so that no result ends as a look is made, five requests to a
// connection, each answered with its endpoint's status, until the run's
// duration or Stop. It stands for the engine where what is tested is the
// session's clock: when --until-verdict looks, judges and stops.
type synthRun struct {
	o      probe.Options
	eps    []*probe.Endpoint
	status map[netip.Addr]int
	every  time.Duration
	start  time.Time

	mu      sync.Mutex
	mail    []probe.Result
	sent    int64
	end     time.Time
	stopped chan struct{}
	once    sync.Once
	ready   chan struct{}
}

func startSynth(status map[netip.Addr]int, every time.Duration) func(ctx context.Context, eps []*probe.Endpoint, o probe.Options) (engine, error) {
	return func(ctx context.Context, eps []*probe.Endpoint, o probe.Options) (engine, error) {
		r := &synthRun{o: o, eps: eps, status: status, every: every, start: time.Now(), stopped: make(chan struct{}), ready: make(chan struct{}, 1)}
		go r.run(ctx)
		return r, nil
	}
}

func (r *synthRun) run(ctx context.Context) {
	defer close(r.ready)
	time.Sleep(5 * time.Millisecond)
	tick := time.NewTicker(r.every)
	defer tick.Stop()
	until := time.NewTimer(r.o.Duration - 5*time.Millisecond)
	defer until.Stop()
	n := 0
	for {
		r.mu.Lock()
		for _, ep := range r.eps {
			r.mail = append(r.mail, probe.Result{Endpoint: ep.ID, Start: time.Now().Add(-5 * time.Millisecond),
				Latency: 5 * time.Millisecond, TTFB: 5 * time.Millisecond, Status: r.status[ep.Addr],
				ConnID: uint64(n/5 + 1), ConnReq: n%5 + 1, Reused: n%5 > 0, Failed: r.status[ep.Addr] >= 500,
				RequestID: fmt.Sprintf("pinprobe-5e5e5e5e-%d-%d", ep.ID, n+1)})
			r.sent++
		}
		r.mu.Unlock()
		n++
		select {
		case r.ready <- struct{}{}:
		default:
		}
		select {
		case <-tick.C:
		case <-until.C:
			r.Stop()
		case <-r.stopped:
		case <-ctx.Done():
			r.Stop()
		}
		select {
		case <-r.stopped:
			return
		default:
		}
	}
}

func (r *synthRun) ID() string             { return "5e5e5e5e" }
func (r *synthRun) Options() probe.Options { return r.o }
func (r *synthRun) Sent() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent
}
func (r *synthRun) Sending() (time.Time, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.start, r.end
}
func (r *synthRun) Ready() <-chan struct{} { return r.ready }
func (r *synthRun) Take() []probe.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.mail
	r.mail = nil
	return out
}
func (r *synthRun) Abandon() []probe.Result { r.Stop(); return r.Take() }
func (r *synthRun) Stop() {
	r.once.Do(func() {
		r.mu.Lock()
		r.end = time.Now()
		r.mu.Unlock()
		close(r.stopped)
	})
}
func (r *synthRun) Add(*probe.Endpoint) error { return probe.ErrRunEnded }
func (r *synthRun) Remove(int)                {}

// TestClockUntilVerdictLooks: --until-verdict on the clock of a synctest
// bubble, on synthetic results (200 a second over two addresses, or 20). It
// looks once a second: a clear fault (every request to one address a 502)
// settles at a whole second, with every result finished by then and none
// after, and the run stops there, long before -d 30s; a healthy run looks
// to the end of -d 3s and says it did not settle; so does one whose fault
// is proven but whose other address has carried too few connections to be
// cleared in -d 2s.
func TestClockUntilVerdictLooks(t *testing.T) {
	a, b := testserver.Lo4a, testserver.Lo4b
	cases := []struct {
		name    string
		status  map[netip.Addr]int
		d       time.Duration
		every   time.Duration // each address finishes a request this often
		settles bool
		note    string // what the verdict says stayed open, when it does not settle
	}{
		{"a clear fault", map[netip.Addr]int{a: http.StatusOK, b: http.StatusBadGateway}, 30 * time.Second, 10 * time.Millisecond, true, ""},
		{"healthy", map[netip.Addr]int{a: http.StatusOK, b: http.StatusOK}, 3 * time.Second, 10 * time.Millisecond, false,
			"The verdict did not settle before -d 3s ended the run (--until-verdict): no request failed, so there was no fault to stop on."},
		{"a fault, too few connections", map[netip.Addr]int{a: http.StatusOK, b: http.StatusBadGateway}, 2 * time.Second, 100 * time.Millisecond, false,
			"its 1 fault is proven, but 127.0.0.1 (0 of 20 failed, possibly up to 32%) is not yet shown to fail less than 5%; 127.0.0.1 carried 4 connections, fewer than the 17"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tg, err := probe.ParseTarget("http://until.test/")
				if err != nil {
					t.Fatal(err)
				}
				var mu sync.Mutex
				var lines []string
				cfg := Config{
					Targets:      []*probe.Target{tg},
					Resolver:     &probe.Resolver{Static: map[string][]netip.Addr{probe.StaticKey("until.test", 80): {a, b}}},
					Engine:       probe.Options{Rate: 200, Duration: c.d},
					Interval:     time.Second,
					UntilVerdict: true,
					Log: func(format string, args ...any) {
						mu.Lock()
						defer mu.Unlock()
						lines = append(lines, fmt.Sprintf(format, args...))
					},
					start: startSynth(c.status, c.every),
				}
				s, err := New(t.Context(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				rep, err := s.Run(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				took := time.Since(start)
				log := strings.Join(lines, "\n")
				st := rep.Settled
				if !c.settles {
					if st != nil || took != c.d || !strings.Contains(log, "did not settle before the run ended") {
						t.Errorf("settled %+v after %v; want the whole %v, not settled, and said so; log:\n%s", st, took, c.d, log)
					}
					if notes := strings.Join(rep.Verdict.Notes, "\n"); !strings.Contains(notes, c.note) {
						t.Errorf("notes:\n%s\nwant one that says %q", notes, c.note)
					}
					return
				}
				if st == nil {
					t.Fatalf("not settled in %v; log:\n%s\nnotes: %q", took, log, rep.Verdict.Notes)
				}
				at := st.At.Sub(rep.StartedAt.Time)
				t.Logf("settled at look %d of %d, %v into the run, after %d requests", st.Look, st.MaxLooks, at, st.Requests)
				if at != time.Duration(st.Look)*time.Second || took != at {
					t.Errorf("settled at look %d %v into the run, stopped after %v; want looks on the second and the run stopped at the look", st.Look, at, took)
				}
				if st.MaxLooks != 30 || st.Look >= 10 {
					t.Errorf("look %d of %d; want a clear fault settled within 10 of the 30 looks of -d 30s", st.Look, st.MaxLooks)
				}
				if want := int64(st.Look) * int64(2*time.Second/c.every); st.Requests != want || rep.Totals.Requests != want {
					t.Errorf("settled after %d requests, %d in the report; want the %d finished by look %d, and none after", st.Requests, rep.Totals.Requests, want, st.Look)
				}
				if !strings.Contains(log, fmt.Sprintf("the verdict is settled after %d requests", st.Requests)) {
					t.Errorf("log does not say the run stopped early:\n%s", log)
				}
			})
		})
	}
}
