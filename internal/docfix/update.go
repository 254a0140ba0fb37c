package docfix

import "flag"

// Update is the -update flag: the golden tests rewrite their files.
var Update = flag.Bool("update", false, "rewrite the golden files in testdata")
