package testserver

import "syscall"

// setPdeathsig makes the kernel send SIGTERM to the child when the test
// binary dies without running its cleanups (a go test timeout): nginx's
// master then stops its workers.
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
