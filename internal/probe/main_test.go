package probe

import (
	"os"
	"testing"

	"github.com/pinprobe/pinprobe/internal/check"
)

// TestMain runs the engine's parallel tests four at a time (see
// check.WideParallel): each mostly waits on its loopback servers' delays
// and its own pacing.
func TestMain(m *testing.M) {
	check.WideParallel(4)
	os.Exit(m.Run())
}
