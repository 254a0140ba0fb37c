//go:build unix

package probe

import (
	"fmt"
	"syscall"
)

// DescriptorLimit returns this process's soft and hard limits on open file
// descriptors (RLIMIT_NOFILE): every connection takes one.
//
// On Linux (and the BSDs and macOS) Go's os package raises the soft limit
// to the hard limit when the program starts, so the soft limit returned
// here is normally the hard one, not what `ulimit -n` showed the shell; Go
// restores the original soft limit in the processes it starts, unless the
// program has set RLIMIT_NOFILE itself through syscall.Setrlimit. To run
// with fewer descriptors a program must lower the hard limit too.
func DescriptorLimit() (soft, hard uint64, err error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, fmt.Errorf("getrlimit RLIMIT_NOFILE: %w", err)
	}
	return uint64(rl.Cur), uint64(rl.Max), nil
}
