package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layers is what each package of the module may import of the module, and
// what it must never depend on, however indirectly: the arrows run one way
// (main → session → collect → report, judge → report, render → compare →
// judge, render → join → accesslog), the document and the judge never
// reach the engine, and the leaves import nothing of ours. Each package's doc.go says the same in words.
var layers = map[string]struct {
	imports []string // the module's packages it may import directly
	never   []string // packages it must not depend on at all
}{
	"github.com/pinprobe/pinprobe/internal/probe":     {never: []string{"github.com/pinprobe/pinprobe/internal/report"}},
	"github.com/pinprobe/pinprobe/internal/accesslog": {},
	"github.com/pinprobe/pinprobe/internal/stat":      {},
	"github.com/pinprobe/pinprobe/internal/words":     {},
	"github.com/pinprobe/pinprobe/internal/report":    {imports: []string{"github.com/pinprobe/pinprobe/internal/stat", "github.com/pinprobe/pinprobe/internal/words"}, never: []string{"github.com/pinprobe/pinprobe/internal/probe"}},
	"github.com/pinprobe/pinprobe/internal/collect":   {imports: []string{"github.com/pinprobe/pinprobe/internal/probe", "github.com/pinprobe/pinprobe/internal/report", "github.com/pinprobe/pinprobe/internal/stat", "github.com/pinprobe/pinprobe/internal/words"}, never: []string{"github.com/pinprobe/pinprobe/internal/judge", "github.com/pinprobe/pinprobe/internal/render", "github.com/pinprobe/pinprobe/internal/compare"}},
	"github.com/pinprobe/pinprobe/internal/judge":     {imports: []string{"github.com/pinprobe/pinprobe/internal/report", "github.com/pinprobe/pinprobe/internal/stat", "github.com/pinprobe/pinprobe/internal/words"}, never: []string{"github.com/pinprobe/pinprobe/internal/probe", "github.com/pinprobe/pinprobe/internal/collect"}},
	"github.com/pinprobe/pinprobe/internal/compare":   {imports: []string{"github.com/pinprobe/pinprobe/internal/report", "github.com/pinprobe/pinprobe/internal/judge", "github.com/pinprobe/pinprobe/internal/stat", "github.com/pinprobe/pinprobe/internal/words"}, never: []string{"github.com/pinprobe/pinprobe/internal/probe", "github.com/pinprobe/pinprobe/internal/collect", "github.com/pinprobe/pinprobe/internal/render"}},
	"github.com/pinprobe/pinprobe/internal/join":      {imports: []string{"github.com/pinprobe/pinprobe/internal/accesslog", "github.com/pinprobe/pinprobe/internal/report", "github.com/pinprobe/pinprobe/internal/stat", "github.com/pinprobe/pinprobe/internal/words"}, never: []string{"github.com/pinprobe/pinprobe/internal/probe", "github.com/pinprobe/pinprobe/internal/collect", "github.com/pinprobe/pinprobe/internal/judge", "github.com/pinprobe/pinprobe/internal/compare", "github.com/pinprobe/pinprobe/internal/render"}},
	"github.com/pinprobe/pinprobe/internal/render":    {imports: []string{"github.com/pinprobe/pinprobe/internal/probe", "github.com/pinprobe/pinprobe/internal/report", "github.com/pinprobe/pinprobe/internal/compare", "github.com/pinprobe/pinprobe/internal/join", "github.com/pinprobe/pinprobe/internal/stat", "github.com/pinprobe/pinprobe/internal/words"}, never: []string{"github.com/pinprobe/pinprobe/internal/collect"}},
	"github.com/pinprobe/pinprobe/internal/demo":      {never: []string{"github.com/pinprobe/pinprobe/internal/report"}},
	"github.com/pinprobe/pinprobe/internal/check":     {},
	"github.com/pinprobe/pinprobe/internal/session":   {imports: []string{"github.com/pinprobe/pinprobe/internal/probe", "github.com/pinprobe/pinprobe/internal/report", "github.com/pinprobe/pinprobe/internal/collect", "github.com/pinprobe/pinprobe/internal/judge", "github.com/pinprobe/pinprobe/internal/words"}, never: []string{"github.com/pinprobe/pinprobe/internal/render"}},
}

// The import graph keeps its layers: a package that reaches past its layer
// fails here, naming the import.
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.Split(line, "|")
		pkg, imports, deps := parts[0], strings.Fields(parts[1]), strings.Fields(parts[2])
		rule, ok := layers[pkg]
		if !ok {
			continue
		}
		seen[pkg] = true
		for _, imp := range imports {
			if strings.HasPrefix(imp, "github.com/pinprobe/pinprobe/") && !slices.Contains(rule.imports, imp) {
				t.Errorf("%s imports %s, outside its layer (may import: %s)", pkg, imp, strings.Join(rule.imports, ", "))
			}
		}
		for _, dep := range deps {
			for _, no := range rule.never {
				if dep == no || strings.HasPrefix(dep, no+"/") {
					t.Errorf("%s depends on %s, which it must never reach", pkg, dep)
				}
			}
		}
	}
	for pkg := range layers {
		if !seen[pkg] {
			t.Errorf("go list did not list %s: the rule names a package that is gone", pkg)
		}
	}
}
