package probe

import (
	"net/http"
	"runtime"
	"testing"
	"time"
)

// TestH1IdleConnHoldsNoReadBuffer: a connection kept for its next request
// holds no read buffer, and one closed after its last request neither, so
// the buffers live are those of the exchanges in flight, not of every
// connection open.
func TestH1IdleConnHoldsNoReadBuffer(t *testing.T) {
	ap := cannedServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
	tmpl, d := h1Target(t, hostURL("http", ap.Port()), ap.Addr(), http.MethodGet, nil, ConnOptions{Timeout: 10 * time.Second}, nil)
	c, err := d.dial(t.Context(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	resp := newH1Response(BodyPrefix)
	for i, last := range []bool{false, false, true} {
		if err := c.roundTrip(tmpl, "", last, time.Now().Add(5*time.Second), resp); err != nil || resp.status != 200 {
			t.Fatalf("request %d: status %d, err %v", i+1, resp.status, err)
		}
		if string(resp.body) != "ok\n" {
			t.Fatalf("request %d: body %q", i+1, resp.body)
		}
		if c.rbuf != nil {
			t.Fatalf("request %d: the connection (reusable %v) still holds a %d-byte read buffer", i+1, c.reusable(), cap(c.rbuf))
		}
		if c.reusable() == last {
			t.Fatalf("request %d: reusable %v after last=%v", i+1, c.reusable(), last)
		}
	}
}

// TestH1NewConnAllocatesNoReadBuffer: a connection per request (what
// --conn-requests sampling and a low rate per endpoint make) allocates far
// less than a read buffer per connection.
func TestH1NewConnAllocatesNoReadBuffer(t *testing.T) {
	ap := cannedServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
	tmpl, d := h1Target(t, hostURL("http", ap.Port()), ap.Addr(), http.MethodGet, nil, ConnOptions{Timeout: 10 * time.Second}, nil)
	resp := newH1Response(BodyPrefix)
	one := func() {
		c, err := d.dial(t.Context(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.roundTrip(tmpl, "", true, time.Now().Add(5*time.Second), resp); err != nil || resp.status != 200 {
			t.Fatalf("status %d, err %v", resp.status, err)
		}
		if c.reusable() {
			t.Fatal("a connection asked to close is still reusable")
		}
	}
	for range 20 {
		one() // warm up: the pool, the runtime's caches
	}
	const n = 200
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		one()
	}
	runtime.ReadMemStats(&after)
	// The process's bytes: the client's connection and the test server's
	// accept and goroutine (more under -race). A read buffer of its own
	// would add h1BufSize to that: the bound is one buffer.
	perConn := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes allocated per connection (client and server)", perConn)
	if perConn >= h1BufSize {
		t.Errorf("%d bytes allocated per new connection, want < %d (no read buffer of its own)", perConn, h1BufSize)
	}
}
