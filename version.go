package main

import (
	"regexp"
	"runtime/debug"
	"strings"
)

// release is the version this source is of: the base of a development
// build's version, and what a release tag (v0.1.0) names.
const release = "0.1.0"

// buildVersion names a build that carries no information of its own (an
// image built without .git, a build with -buildvcs=false):
//
//	go build -ldflags "-X main.buildVersion=0.1.0+3f2a1b9c0d4e" .
var buildVersion string

// version is pinprobe's version, in --version, the User-Agent and every
// report's "version".
var version = versionOf(buildVersion, buildInfo)

// built is what --version adds after the version: the commit's time and
// the Go that built it.
var built = builtOf(buildInfo)

// buildInfo is the binary's build information, nil when it has none.
var buildInfo, _ = debug.ReadBuildInfo()

// versionOf is the version of a build: named (buildVersion) when given;
// the module's own version when it was built as a released module
// (go install …@v0.1.0: "0.1.0"); else release-dev, then the commit it
// was built from, and ".dirty" when the tree had changes
// ("0.1.0-dev+3f2a1b9c0d4e.dirty"); plain "0.1.0-dev" when the build
// recorded no commit (go run, -buildvcs=false).
func versionOf(named string, bi *debug.BuildInfo) string {
	if named != "" {
		return named
	}
	if bi == nil {
		return release + "-dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" && !pseudoVersion.MatchString(v) {
		return strings.TrimPrefix(v, "v")
	}
	v := release + "-dev"
	if rev := setting(bi, "vcs.revision"); rev != "" {
		v += "+" + rev[:min(len(rev), 12)]
		if setting(bi, "vcs.modified") == "true" {
			v += ".dirty"
		}
	}
	return v
}

// builtOf says when the build's commit was made and which Go built it:
// "(commit 2026-12-05T14:51:08Z, go1.26.8)", or the Go alone.
func builtOf(bi *debug.BuildInfo) string {
	if bi == nil {
		return ""
	}
	if t := setting(bi, "vcs.time"); t != "" {
		return "(commit " + t + ", " + bi.GoVersion + ")"
	}
	return "(" + bi.GoVersion + ")"
}

// pseudoVersion matches the version Go gives a module built from a commit
// no release tag names (v0.0.0-20261205150639-2f4b0be3736a+dirty): the
// commit is said as release-dev+commit instead.
var pseudoVersion = regexp.MustCompile(`-(0\.)?\d{14}-[0-9a-f]{12}(\+dirty)?$`)

// setting is the build setting key of bi, "" when it has none.
func setting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
