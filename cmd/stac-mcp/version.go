package main

import "runtime/debug"

// buildVersion is set at link time: -ldflags "-X main.buildVersion=v1.2.3".
var buildVersion = ""

// version is the link-time version, else the module version of a `go
// install`ed binary, else "dev".
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
