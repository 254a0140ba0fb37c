package main

import (
	"os"
	"path/filepath"
	"strings"
)

// demoBase is where the demo keeps its files: one directory under the
// user's cache directory, each demo's run in a directory of its own there
// that the next demo replaces (see newDemoDir).
func demoBase() string {
	if cache, err := os.UserCacheDir(); err == nil {
		return filepath.Join(cache, "pinprobe", "demo")
	}
	return filepath.Join(os.TempDir(), "pinprobe-demo")
}

// newDemoDir makes this demo's directory under demoBase, locked for as
// long as the process runs (the kernel drops the lock when it ends; a
// process that runs several demos, as the tests do, keeps each one's
// files), and removes the directories of the demos before it whose
// process has ended: a person finds the last demo's files where it said,
// and demos leave one directory, not one each.
func newDemoDir() (dir string, err error) {
	base := demoBase()
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	// Locked before it is named run-…: a demo starting beside it never
	// sees it unlocked.
	tmp, err := os.MkdirTemp(base, ".new-")
	if err != nil {
		return "", err
	}
	release := lockDir(tmp)
	dir = filepath.Join(base, "run-"+strings.TrimPrefix(filepath.Base(tmp), ".new-"))
	if err := os.Rename(tmp, dir); err != nil {
		release()
		return "", err
	}
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		old := filepath.Join(base, e.Name())
		if e.IsDir() && strings.HasPrefix(e.Name(), "run-") && old != dir && !inUse(old) {
			os.RemoveAll(old)
		}
	}
	return dir, nil
}
