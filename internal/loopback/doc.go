// Package loopback binds one TCP port on several local addresses, as a
// fleet of loopback servers needs: the demo's gateway and the tests'
// servers. It owns the retry when the port is taken on one of them, and
// the Recorder those servers log a response's status and size with; it
// imports nothing of ours.
package loopback
