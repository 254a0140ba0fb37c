package main

// The documents pinprobe writes against their published schemas in
// schema/: decodeReport checks every JSON report an end-to-end test
// decodes; the tests that write comparisons and preflight documents check
// theirs with checkSchema.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Document kinds, each with its schema file schema/pinprobe.KIND.v1.json.
const (
	kindReport    = "report"
	kindCompare   = "compare"
	kindPreflight = "preflight"
	kindLogs      = "logs"
)

// schemas are compiled once for the whole test binary.
var schemas struct {
	once   sync.Once
	byKind map[string]*jsonschema.Schema
	err    error
}

func schemaFile(kind string) string { return filepath.Join("schema", "pinprobe."+kind+".v1.json") }

// checkSchema fails t unless doc, one JSON document, is valid against the
// schema of its kind.
func checkSchema(t *testing.T, kind string, doc []byte) {
	t.Helper()
	schemas.once.Do(func() {
		c := jsonschema.NewCompiler()
		schemas.byKind = map[string]*jsonschema.Schema{}
		for _, k := range []string{kindReport, kindCompare, kindPreflight, kindLogs} {
			s, err := c.Compile(schemaFile(k))
			if err != nil {
				schemas.err = fmt.Errorf("compile %s: %w", schemaFile(k), err)
				return
			}
			schemas.byKind[k] = s
		}
	})
	if schemas.err != nil {
		t.Fatal(schemas.err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err == nil {
		err = schemas.byKind[kind].Validate(inst)
	}
	if err != nil {
		t.Errorf("the %s document does not match %s:\n%v", kind, schemaFile(kind), err)
	}
}

// checkSchemaFile is checkSchema on the document in a file.
func checkSchemaFile(t *testing.T, kind, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkSchema(t, kind, data)
}
