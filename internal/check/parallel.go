package check

import (
	"flag"
	"runtime"
	"strconv"
)

// WideParallel raises -test.parallel to n, unless the command line sets
// it. Call it from TestMain before m.Run. The tests marked parallel in the
// packages that call it mostly wait: on live traffic paced at a rate, a
// server's delay, a subprocess, a browser. The default, GOMAXPROCS (2 on
// the CI machine), would run two of them at a time with the CPU idle, and
// the whole suite would take as long as their durations added up.
func WideParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(max(n, runtime.GOMAXPROCS(0))))
	}
}
