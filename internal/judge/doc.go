// Package judge makes the verdict: Judge is the one function that says
// which scopes of a report fail — families, URLs, addresses, instances
// named by a response header, connections of an address — and how sure it
// is, from the report's counts alone. The run's own report, every look of
// --until-verdict, a merge of saved reports and each side of a comparison
// are judged by it and nothing else.
//
// It owns every statistical test the verdict makes (Fisher and Zelen exact
// tests, the cluster, repeat and burst tests, Mann-Whitney for latency),
// the level of repeated looks (LookAlpha), and the sentences the verdict
// says.
//
// It imports report and the leaves (stat, words): never the engine
// (probe), collect, compare or render.
package judge
