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

// newDemoDir makes this demo's directory under demoBase, locked while the
// demo runs, and removes the directories of the demos before it that no
// longer run: a person finds the last demo's files where it said, and
// demos leave one directory, not one each. release unlocks it.
func newDemoDir() (dir string, release func(), err error) {
	base := demoBase()
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", nil, err
	}
	// Locked before it is named run-…: a demo starting beside it never
	// sees it unlocked.
	tmp, err := os.MkdirTemp(base, ".new-")
	if err != nil {
		return "", nil, err
	}
	release = lockDir(tmp)
	dir = filepath.Join(base, "run-"+strings.TrimPrefix(filepath.Base(tmp), ".new-"))
	if err := os.Rename(tmp, dir); err != nil {
		release()
		return "", nil, err
	}
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		old := filepath.Join(base, e.Name())
		if e.IsDir() && strings.HasPrefix(e.Name(), "run-") && old != dir && !inUse(old) {
			os.RemoveAll(old)
		}
	}
	return dir, release, nil
}
