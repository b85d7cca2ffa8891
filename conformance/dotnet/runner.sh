#!/bin/bash
# runner.sh — //conformance/dotnet:runner: the .NET conformance runner
# (doc/conformance.md's protocol; every argument is passed on). Unpacks the
# built console app once per build into a cache directory and runs it with
# dotnet, loading the plain libzlink.so.1 of the runfiles (ZLINK_LIBRARY).
set -euo pipefail
here=${RUNFILES_DIR:-}
if [ -z "$here" ]; then
    if [ -d "$0.runfiles" ]; then here="$0.runfiles"; else here="$(cd "$(dirname "$0")" && pwd)/$(basename "$0").runfiles"; fi
fi
if [ -d "$here/zlink" ]; then root="$here/zlink"; else root=$(pwd); fi
tarball="$root/conformance/dotnet/runner_app.tar"
lib="$root/core/libzlink.so.1"
[ -f "$tarball" ] || { echo "runner.sh: $tarball missing" >&2; exit 2; }
[ -f "$lib" ] || { echo "runner.sh: $lib missing" >&2; exit 2; }
sum=$(cksum <"$tarball" | cut -d' ' -f1)
base="${TEST_TMPDIR:-${TMPDIR:-/tmp}}"
app="$base/zlink-dotnet-runner-$sum"
if [ ! -f "$app/.complete" ]; then
    # unpack beside it and rename into place: a concurrent runner either wins
    # the rename or finds the complete directory; nobody removes one in use
    tmp=$(mktemp -d "$app.tmp.XXXXXX")
    tar -C "$tmp" -xf "$tarball"
    touch "$tmp/.complete"
    mv -T "$tmp" "$app" 2>/dev/null || rm -rf "$tmp"
fi
export ZLINK_LIBRARY=$(readlink -f "$lib")
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
export HOME="${TEST_TMPDIR:-${HOME:-$base}}" DOTNET_CLI_HOME="${TEST_TMPDIR:-${HOME:-$base}}"
exec dotnet "$app/ZLink.ConformanceRunner.dll" "$@"
