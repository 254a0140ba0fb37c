package main

// The documents pinprobe writes against their published schemas in
// schema/: decodeReport checks every JSON report an end-to-end test
// decodes; the tests that write comparisons and preflight documents check
// theirs with checkSchema.

import (
	"os"
	"testing"

	"github.com/pinprobe/pinprobe/internal/docfix"
)

// The kinds of document, each with its schema file
// schema/pinprobe.KIND.v1.json (see docfix).
const (
	kindReport    = docfix.KindReport
	kindCompare   = docfix.KindCompare
	kindPreflight = docfix.KindPreflight
	kindLogs      = docfix.KindLogs
)

// checkSchema fails t unless doc, one JSON document, is valid against the
// schema of its kind.
func checkSchema(t *testing.T, kind string, doc []byte) {
	t.Helper()
	docfix.CheckSchema(t, kind, doc)
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
