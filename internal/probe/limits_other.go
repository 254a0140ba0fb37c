//go:build !unix

package probe

import "errors"

// DescriptorLimit returns this process's soft and hard limits on open file
// descriptors. There is no such limit to read on this system: it returns an
// error.
func DescriptorLimit() (soft, hard uint64, err error) {
	return 0, 0, errors.New("descriptor limit: not known on this system")
}
