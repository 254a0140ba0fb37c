package docfix

import "flag"

var Update = flag.Bool("update", false, "rewrite the golden files in testdata")
