package probe

import (
	"net/http"
	"runtime"
	"testing"
	"time"
)

// TestRunClosesItsConnections: once a run's results channel is closed, its
// transports hold no kept-alive connection, so the two goroutines net/http
// runs per connection are gone too (polled, bounded by 2 s).
func TestRunClosesItsConnections(t *testing.T) {
	port := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {})
	eps := endpoints(t, hostURL("http", port), lo4a)
	before := runtime.NumGoroutine()
	o := Options{Rate: 1000, Requests: 200, Concurrency: 20, ConnOptions: ConnOptions{Concurrency: 20}}
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
