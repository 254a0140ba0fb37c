//go:build unix

package main

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// heldLocks keeps the lock files of this process's demos open: a file no
// longer referenced is closed by the collector, and its lock with it.
var heldLocks struct {
	sync.Mutex
	files []*os.File
}

// lockDir takes the lock that says a demo is using dir (a flock on its
// .lock file, which the kernel drops when the process ends); the func
// returned drops it sooner.
func lockDir(dir string) func() {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return func() {}
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return func() {}
	}
	heldLocks.Lock()
	heldLocks.files = append(heldLocks.files, f)
	heldLocks.Unlock()
	return func() { f.Close() }
}

// inUse reports whether a demo holds dir's lock.
func inUse(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR, 0)
	if err != nil {
		return false // no lock file: a demo that never took it, or not a demo's
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return true
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
