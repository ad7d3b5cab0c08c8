#!/bin/sh
# stac-mcp launcher inside the MCP Bundle (server/stac-mcp): the host runs
# it on macOS and Linux, and it starts the binary built for this machine.
# MCPB chooses an entry point by operating system only, not by CPU.
dir=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd) || exit 1
os=$(uname -s)
arch=$(uname -m)
case "$os/$arch" in
Darwin/arm64) target=darwin-arm64 ;;
Darwin/x86_64) target=darwin-amd64 ;;
Linux/x86_64 | Linux/amd64) target=linux-amd64 ;;
Linux/aarch64 | Linux/arm64) target=linux-arm64 ;;
*)
	echo "stac-mcp: this bundle has no binary for $os/$arch; install a release archive or build with 'go install'" >&2
	exit 1
	;;
esac
exec "$dir/$target/stac-mcp" "$@"
