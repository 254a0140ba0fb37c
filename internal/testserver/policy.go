package testserver

import (
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// Answer is what a server answers to one request.
type Answer struct {
	// Status is the HTTP status; 200 when 0.
	Status int
	// Delay waits before answering. The wait ends early when the request is
	// cancelled or the test ends.
	Delay time.Duration
	// Hold waits before answering until the server's Release is called (or
	// the request is cancelled, or the test ends).
	Hold bool
	// Header is set on the response, on top of the server's own headers.
	Header map[string]string
	// Body is the response body; when empty, the server writes a line
	// naming itself and the status ("127.0.0.1 answers 502").
	Body string
}

// Policy decides a server's answer to its n-th request (from 1, counted per
// address of a Fleet, per instance of a Sticky). It is called from several
// goroutines at once.
type Policy func(n int64, r *http.Request) Answer

// OK answers 200 to every request.
func OK(n int64, r *http.Request) Answer { return Answer{Status: http.StatusOK} }

// Status answers status to every request.
func Status(status int) Policy {
	return func(n int64, r *http.Request) Answer { return Answer{Status: status} }
}

// Delayed answers 200 to every request after d.
func Delayed(d time.Duration) Policy {
	return func(n int64, r *http.Request) Answer { return Answer{Status: http.StatusOK, Delay: d} }
}

// Every answers fail to every k-th request (k, 2k, …) and 200 to the others.
func Every(k int64, fail Answer) Policy {
	return func(n int64, r *http.Request) Answer {
		if k > 0 && n%k == 0 {
			return fail
		}
		return Answer{Status: http.StatusOK}
	}
}

// Random answers fail with probability p and 200 otherwise, drawing from a
// PRNG seeded with seed: the same sequence of requests gets the same
// answers on every run.
func Random(p float64, seed uint64, fail Answer) Policy {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return func(n int64, r *http.Request) Answer {
		mu.Lock()
		hit := rng.Float64() < p
		mu.Unlock()
		if hit {
			return fail
		}
		return Answer{Status: http.StatusOK}
	}
}

// Nginx502 answers nginx's own "502 Bad Gateway" page, as nginx sends it
// when its upstream is unreachable. The page names the request's
// X-Request-Id and the time, so it differs on every request as real pages
// that embed a request ID do.
func Nginx502(n int64, r *http.Request) Answer {
	return errorPage(http.StatusBadGateway, "502 Bad Gateway", "nginx/1.22.1",
		"<!-- request "+r.Header.Get("X-Request-Id")+" at "+time.Now().UTC().Format(time.RFC3339Nano)+" -->\r\n")
}

// Azure502 answers the "502 Bad Gateway" page Azure Application Gateway v2
// serves when it cannot reach a backend: the incident's answer. Unlike
// Nginx502 the page is the same on every request.
func Azure502(n int64, r *http.Request) Answer {
	return errorPage(http.StatusBadGateway, "502 Bad Gateway", "Microsoft-Azure-Application-Gateway/v2", "")
}

// errorPage is the HTML error page nginx and its like send: title as
// title and heading, server named under a rule and in the Server header,
// then extra lines.
func errorPage(status int, title, server, extra string) Answer {
	return Answer{
		Status: status,
		Header: map[string]string{"Server": server, "Content-Type": "text/html"},
		Body: "<html>\r\n<head><title>" + title + "</title></head>\r\n<body>\r\n<center><h1>" + title + "</h1></center>\r\n" +
			"<hr><center>" + server + "</center>\r\n" + extra + "</body>\r\n</html>\r\n",
	}
}
