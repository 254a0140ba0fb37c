package loopback

import "net/http"

// Recorder is an http.ResponseWriter that notes what a handler answered,
// for a server that logs its requests (the demo's gateway, the tests'
// logging proxy): wrap the writer, serve, then read Status and Bytes.
type Recorder struct {
	http.ResponseWriter
	Status int   // the first status written; 200 once the body starts without one; 0 if nothing was written
	Bytes  int64 // the body's bytes written
}

// WriteHeader notes the first status, as net/http sends only that one.
func (r *Recorder) WriteHeader(code int) {
	if r.Status == 0 {
		r.Status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write counts the body's bytes; a body written without a status is 200.
func (r *Recorder) Write(b []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.Bytes += int64(n)
	return n, err
}
