package loopback

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRecorder: a body without a status is 200, the first status written
// is the one sent, and the body's bytes are counted.
func TestRecorder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		serve  func(http.ResponseWriter)
		status int
		bytes  int64
	}{
		{"nothing written", func(http.ResponseWriter) {}, 0, 0},
		{"body alone", func(w http.ResponseWriter) { w.Write([]byte("hello")) }, 200, 5},
		{"first status wins", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadGateway)
			w.WriteHeader(http.StatusOK)
			w.Write([]byte("bad"))
			w.Write([]byte(" gateway"))
		}, 502, 11},
		{"status after body", func(w http.ResponseWriter) {
			w.Write([]byte("x"))
			w.WriteHeader(http.StatusNotFound)
		}, 200, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			rec := &Recorder{ResponseWriter: w}
			tc.serve(rec)
			if rec.Status != tc.status || rec.Bytes != tc.bytes {
				t.Errorf("got status %d, %d bytes; want %d, %d", rec.Status, rec.Bytes, tc.status, tc.bytes)
			}
			if tc.status != 0 && w.Code != tc.status {
				t.Errorf("the writer sent %d; the recorder says %d", w.Code, tc.status)
			}
		})
	}
}
