package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// Build facts set at link time by the release builds (.goreleaser.yaml and
// scripts/release, which pass the same flags):
//
//	-ldflags "-X main.buildVersion=1.2.3 -X main.buildCommit=<sha> -X main.buildDate=<RFC 3339>"
var buildVersion, buildCommit, buildDate string

// unknown stands for a build fact nobody recorded (a plain `go build`
// without VCS stamping).
const unknown = "unknown"

// buildFacts identify the binary: --version prints them, the MCP
// serverInfo.version carries Version, and stac_mcp_build_info exports
// them all.
type buildFacts struct {
	Version, Commit, Date, GoVersion string
}

// build returns the link-time facts; a fact not set at link time comes
// from the module and VCS information the Go toolchain embeds: the module
// version of a `go install …@v1.2.3` binary, the revision and commit time of
// a build from a checkout.
func build() buildFacts {
	f := buildFacts{Version: buildVersion, Commit: buildCommit, Date: buildDate, GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if f.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			f.Version = bi.Main.Version
		}
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if f.Commit == "" && settings["vcs.revision"] != "" {
			f.Commit = settings["vcs.revision"]
			if settings["vcs.modified"] == "true" {
				f.Commit += "-dirty"
			}
		}
		if f.Date == "" {
			f.Date = settings["vcs.time"]
		}
	}
	// One spelling everywhere (manifest, registry entry, serverInfo): the
	// semantic version without the tag's "v", as goreleaser's .Version.
	if len(f.Version) > 1 && f.Version[0] == 'v' && f.Version[1] >= '0' && f.Version[1] <= '9' {
		f.Version = f.Version[1:]
	}
	if f.Version == "" {
		f.Version = "dev"
	}
	if f.Commit == "" {
		f.Commit = unknown
	}
	if f.Date == "" {
		f.Date = unknown
	}
	return f
}

// version is the string every interface reports: --version, the MCP
// serverInfo.version, the User-Agent and the start-up log line.
func version() string { return build().Version }

// String is the --version line.
func (f buildFacts) String() string {
	return fmt.Sprintf("stac-mcp %s (commit %s, built %s, %s %s/%s)",
		f.Version, f.Commit, f.Date, f.GoVersion, runtime.GOOS, runtime.GOARCH)
}

// collector is the stac_mcp_build_info gauge: always 1, the facts in its
// labels, the Prometheus convention for joining them to any other series.
func (f buildFacts) collector() prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "stac_mcp_build_info",
		Help: "Build of the running stac-mcp: version, commit, build date and Go version (value always 1).",
		ConstLabels: prometheus.Labels{
			"version": f.Version, "commit": f.Commit, "date": f.Date, "go_version": f.GoVersion,
		},
	})
	g.Set(1)
	return g
}

// writeVersion prints the --version line.
func writeVersion(w io.Writer) error {
	_, err := fmt.Fprintln(w, build())
	return err
}
