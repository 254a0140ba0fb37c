//go:build !unix

package main

// lockDir and inUse without flock: every earlier demo's directory is
// removed, even one still running.
func lockDir(string) func() { return func() {} }

func inUse(string) bool { return false }
