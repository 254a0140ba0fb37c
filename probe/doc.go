// Package probe resolves targets to every address they have, pins one HTTP
// transport to each address, and drives rate-limited request streams at them.
//
// It produces typed Results on a channel and never prints: aggregation and
// rendering live in package report, wiring and exit codes in package main.
package probe
