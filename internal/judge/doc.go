// Package judge makes the verdict: Judge is the one function that says which
// scopes of a report fail (families, URLs, addresses, instances, connections)
// and how sure it is, from the counts alone, for every run, look, merge and side
// of a comparison. It owns every statistical test the verdict makes, the level
// of repeated looks (LookAlpha) and the verdict's sentences.
//
// It imports report and the leaves; never probe, collect, compare or render.
package judge
