// Package docfix holds what the tests of the saved documents share and
// what needs nothing above the document: editing a saved document as JSON
// (EditJSON, At, Obj, Arr, NewerFields), the JSON Schema check (CheckSchema,
// ReportJSON), a round trip through JSON and the reader (RoundTrip), the
// golden report as saved (SavedGolden) and the -update flag of every
// golden file. Only tests import it; it imports report alone, so the
// document's own tests can use it (package fixture, which builds reports
// through the aggregator and the judge, is for the layers above).
package docfix
