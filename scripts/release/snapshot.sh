#!/usr/bin/env bash
# The release archives as CI checks them (adr/0012-release-packaging.md): builds the goreleaser pinned
# by scripts/release/goreleaser/go.mod into bin/ (once per pin), validates .goreleaser.yaml, and makes a
# snapshot release in dist/goreleaser: archives for the five targets and checksums, nothing uploaded,
# the Docker image skipped where no Docker engine runs. Then starts the linux/amd64 binary (on such a
# machine) to check that the version and commit were linked in.
set -euo pipefail
cd "$(dirname "$0")/../.."

gr=bin/goreleaser
pinned="$(go list -C scripts/release/goreleaser -m -f '{{.Version}}' github.com/goreleaser/goreleaser/v2)"
if ! [ -x "$gr" ] || ! "$gr" --version 2>/dev/null | grep -Eq "GitVersion: +$pinned\$"; then
  echo "building goreleaser $pinned from the Go module (first run on a machine: several minutes)"
  go build -C scripts/release/goreleaser -o "$PWD/$gr" github.com/goreleaser/goreleaser/v2
fi

"$gr" check

skip=()
if ! docker info >/dev/null 2>&1; then
  echo "no Docker engine: the image (Dockerfile) is not built"
  skip=(--skip=docker)
fi
# goreleaser stops reading the commit from git when the clone has no remote (it asks for the remote's
# URL first); name the project's for this command only, the clone's config is left alone.
if [ -z "$(git remote)" ]; then
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/stacmcp/stac-mcp.git
fi
"$gr" release --snapshot --clean "${skip[@]}"

if [ "$(go env GOHOSTOS)/$(go env GOHOSTARCH)" = linux/amd64 ]; then
  commit="$(git rev-parse HEAD)"
  line="$(dist/goreleaser/stac-mcp_linux_amd64_v1/stac-mcp --version)"
  echo "$line"
  case "$line" in
  *"(commit $commit, built "*) ;;
  *) echo "the snapshot binary does not report commit $commit" >&2; exit 1 ;;
  esac
  # Built from the same commit and version with the bundle's flags (go run ./scripts/release twins: the
  # bundle's builds without its build tags, adr/0043), the binaries must be these, byte for byte: one set
  # of flags, reproducible builds.
  version="${line#stac-mcp }"
  version="${version%% *}"
  if [ -f "dist/stac-mcp-$version.mcpb" ] && grep -q "\"version\": \"$version\"" dist/mcpb/manifest.json; then
    go run ./scripts/release twins
    n=0
    for d in dist/goreleaser/stac-mcp_*_*/; do
      platform="$(basename "$d")"   # stac-mcp_linux_arm64_v8.0
      platform="${platform#stac-mcp_}"
      platform="${platform%_v*}"     # linux_arm64
      for exe in "$d"stac-mcp "$d"stac-mcp.exe; do
        [ -f "$exe" ] || continue
        cmp "$exe" "dist/twins/server/${platform/_/-}/$(basename "$exe")"
        n=$((n + 1))
      done
    done
    [ "$n" = 5 ] || { echo "compared $n binaries with the bundle's builds, want 5" >&2; exit 1; }
    echo "the $n binaries built with the bundle's flags (less its tags) are the archives' ones, byte for byte"
  fi
fi
ls -l dist/goreleaser/*.tar.gz dist/goreleaser/*.zip dist/goreleaser/*_checksums.txt
