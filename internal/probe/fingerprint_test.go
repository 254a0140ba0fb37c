package probe

import "testing"

func TestNormalizeBody(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<html>\n<head><title>502 Bad Gateway</title></head>", "<html> <head><title># bad gateway</title></head>"},
		{"Request ID: 3f2a9c1e-77b0-4d2e-9a61-0c9d8e7f6a5b at 2026-06-16T20:43:00Z", "request id: # at #"},
		{"  upstream   connect error\tor disconnect/reset before headers. reset reason: connection failure ", "upstream connect error or disconnect/reset before headers. reset reason: connection failure"},
		{"", ""},
		{"Ray ID: 8a1b2c3d4e5f6789 • 10.0.0.7", "ray id: # • #"},
	}
	for _, tt := range tests {
		if got := NormalizeBody([]byte(tt.in)); got != tt.want {
			t.Errorf("NormalizeBody(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestBodyHashIgnoresVaryingParts(t *testing.T) {
	a := BodyHash([]byte("<h1>502</h1> request 7f3a2b1c at 20:43:00.123"))
	b := BodyHash([]byte("<h1>502</h1>\n  request 00ffee99 at 21:07:59.999"))
	c := BodyHash([]byte("<h1>503</h1> service unavailable"))
	if a != b {
		t.Errorf("hashes of two answers differing only in IDs and times: %x != %x", a, b)
	}
	if a == c {
		t.Errorf("different pages hash alike: %x", a)
	}
	if BodyHash(nil) != 0 {
		t.Errorf("BodyHash(nil) = %x; want 0", BodyHash(nil))
	}
}
