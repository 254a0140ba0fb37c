package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/pinprobe/pinprobe"

// layer is a package's place in the import graph: its rank (a package
// imports only packages of a lower rank), the module's packages it may
// import, and the packages it must never depend on, however indirectly.
type layer struct {
	rank    int
	imports []string // relative to the module
	never   []string
	// testsNever are packages its tests must not import either.
	testsNever []string
	helper     bool // imported by tests only; may import beside it
}

// layers is the table of ARCHITECTURE.md, which says what each rank owns:
// a package imports only packages of a lower rank. The test helpers have a
// rank too: a package's tests import packages below it or beside it (the
// same rank), never above, so the document's tests never drive the engine.
var layers = map[string]layer{
	"internal/stat":       {rank: 0},
	"internal/words":      {rank: 0},
	"internal/loopback":   {rank: 0},
	"internal/detect":     {rank: 0},
	"internal/accesslog":  {rank: 1, imports: []string{"internal/words"}},
	"internal/probe":      {rank: 1, imports: []string{"internal/stat"}, never: []string{"internal/report"}},
	"internal/demo":       {rank: 1, imports: []string{"internal/loopback"}, never: []string{"internal/report"}},
	"internal/check":      {rank: 0, helper: true},
	"internal/testserver": {rank: 1, helper: true, imports: []string{"internal/loopback"}},
	"internal/report": {rank: 2, imports: []string{"internal/stat", "internal/words"}, never: []string{"internal/probe"},
		testsNever: []string{"internal/probe"}},
	"internal/collect": {rank: 3, imports: []string{"internal/probe", "internal/report", "internal/stat", "internal/words"},
		never: []string{"internal/judge", "internal/render", "internal/compare"}},
	"internal/merge": {rank: 3, imports: []string{"internal/report", "internal/stat", "internal/words"},
		never: []string{"internal/probe", "internal/collect", "internal/judge"}},
	"internal/judge": {rank: 3, imports: []string{"internal/report", "internal/stat", "internal/words"},
		never: []string{"internal/probe", "internal/collect"}},
	"internal/compare": {rank: 4, imports: []string{"internal/report", "internal/judge", "internal/stat", "internal/words"},
		never: []string{"internal/probe", "internal/collect", "internal/render"}},
	"internal/join": {rank: 4, imports: []string{"internal/accesslog", "internal/report", "internal/stat", "internal/words"},
		never: []string{"internal/probe", "internal/collect", "internal/judge", "internal/compare", "internal/render"}},
	"internal/docfix":  {rank: 2, helper: true, imports: []string{"internal/report"}},
	"internal/fixture": {rank: 3, helper: true, imports: []string{"internal/probe", "internal/report", "internal/docfix", "internal/collect", "internal/judge", "internal/merge"}},
	"internal/cmpfix":  {rank: 4, helper: true, imports: []string{"internal/report", "internal/docfix", "internal/fixture", "internal/compare"}},
	"internal/render": {rank: 5, imports: []string{"internal/report", "internal/compare", "internal/join", "internal/stat", "internal/words"},
		never: []string{"internal/probe", "internal/collect", "internal/merge"}},
	"internal/watch": {rank: 3, imports: []string{"internal/detect", "internal/probe", "internal/report"},
		never: []string{"internal/collect", "internal/judge", "internal/session", "internal/render"}},
	"internal/session": {rank: 5, imports: []string{"internal/probe", "internal/report", "internal/collect", "internal/judge", "internal/words"},
		never: []string{"internal/render"}},
	"": {rank: 6, imports: []string{"internal/accesslog", "internal/collect", "internal/compare", "internal/demo", "internal/join",
		"internal/judge", "internal/merge", "internal/probe", "internal/render", "internal/report", "internal/session", "internal/words", "internal/detect", "internal/watch"}},
}

// testDebts are test imports that reach above their package, each to be
// moved to the tests of the package it exercises; the test fails when one
// of them is gone, so that the list only shrinks. None is left.
var testDebts = map[string][]string{}

// The import graph keeps its layers: a package that reaches past its layer
// fails here, naming the import; so does a test.
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	ours := func(pkgs []string) []string {
		var out []string
		for _, p := range pkgs {
			if p == module {
				out = append(out, "")
			} else if rel, ok := strings.CutPrefix(p, module+"/"); ok {
				out = append(out, rel)
			}
		}
		return out
	}
	name := func(p string) string { return "./" + p }
	seen := map[string]bool{}
	debts := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.Split(line, "|")
		pkg := ours(parts[:1])[0]
		imports, deps, tests := ours(strings.Fields(parts[1])), ours(strings.Fields(parts[2])), ours(strings.Fields(parts[3]))
		rule, ok := layers[pkg]
		if !ok {
			t.Errorf("%s has no place in the layer table", name(pkg))
			continue
		}
		seen[pkg] = true
		for _, imp := range imports {
			switch {
			case !slices.Contains(rule.imports, imp):
				t.Errorf("%s imports %s, outside its layer (may import: %s)", name(pkg), name(imp), strings.Join(rule.imports, ", "))
			case layers[imp].rank > rule.rank || layers[imp].rank == rule.rank && !rule.helper:
				t.Errorf("%s (rank %d) imports %s (rank %d): the table's arrows must point down", name(pkg), rule.rank, name(imp), layers[imp].rank)
			case layers[imp].helper && !rule.helper:
				t.Errorf("%s imports the test helper %s", name(pkg), name(imp))
			}
		}
		for _, dep := range deps {
			for _, no := range rule.never {
				if dep == no || strings.HasPrefix(dep, no+"/") {
					t.Errorf("%s depends on %s, which it must never reach", name(pkg), name(dep))
				}
			}
		}
		for _, imp := range tests {
			if imp == pkg {
				continue
			}
			above := layers[imp].rank > rule.rank || slices.Contains(rule.testsNever, imp)
			owed := slices.Contains(testDebts[pkg], imp)
			switch {
			case above && owed:
				debts[pkg+" "+imp] = true
			case above:
				t.Errorf("the tests of %s (rank %d) import %s (rank %d): a package's tests import below it or beside it, never above",
					name(pkg), rule.rank, name(imp), layers[imp].rank)
			}
		}
	}
	for pkg := range layers {
		if !seen[pkg] {
			t.Errorf("go list did not list %s: the table names a package that is gone", name(pkg))
		}
	}
	for pkg, imps := range testDebts {
		for _, imp := range imps {
			if !debts[pkg+" "+imp] {
				t.Errorf("the tests of %s no longer import %s: take it off testDebts", name(pkg), name(imp))
			}
		}
	}
}
