package check

import "testing"

// Long skips t under -short: a test of seconds of live traffic, a
// simulation of many runs, a real program (nginx, HAProxy, tmux,
// Chromium) or a pinprobe started as a process. `go test -short ./...` is
// the minute-long loop a developer runs while working; CI runs every test.
func Long(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short leaves out " + what + "; go test without -short runs it")
	}
}
