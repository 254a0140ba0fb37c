package probe

import (
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestRunClosesItsConnections: once a run's results channel is closed, its
// senders hold no kept-alive connection: the two goroutines net/http runs
// per connection are gone, and so is the test server's goroutine of every
// connection, which outlives a connection the fast path left open (polled,
// bounded by 2 s). The paths run one after the other: the test counts
// goroutines.
func TestRunClosesItsConnections(t *testing.T) {
	for _, client := range clients {
		t.Run(string(client), func(t *testing.T) { testRunClosesItsConnections(t, client) })
	}
}

func testRunClosesItsConnections(t *testing.T, client ClientKind) {
	port := testserver.ServeSamePort(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), nil, testserver.Lo4a)
	eps := endpoints(t, hostURL("http", port), testserver.Lo4a)
	before := runtime.NumGoroutine()
	o := Options{Rate: 1000, Requests: 200, Concurrency: 20, Client: client, ConnOptions: ConnOptions{Concurrency: 20}}
	attack(t, eps, o, 10*time.Second)
	deadline := time.Now().Add(2 * time.Second)
	after := runtime.NumGoroutine()
	for after > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // polling the goroutine count, not synchronising
		after = runtime.NumGoroutine()
	}
	if after > before+2 {
		t.Errorf("goroutines: %d before the run, %d after it ended; want its connections closed", before, after)
	}
}
