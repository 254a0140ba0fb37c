//go:build !linux

package testserver

import "syscall"

func setPdeathsig(*syscall.SysProcAttr) {}
