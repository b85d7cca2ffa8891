#!/bin/bash
# run_app.sh TAR DLL ARGS... — runs a console app built by build_app.sh: the
# tar is unpacked once per build into a cache directory (by an atomic
# rename, so concurrent runs never remove a directory in use) and the DLL is
# started with dotnet, loading the plain libzlink.so.1 (ZLINK_LIBRARY, set
# by the caller or found beside the tar's runfiles root).
set -euo pipefail
tarball=$1 dll=$2
shift 2
sum=$(cksum <"$tarball" | cut -d' ' -f1)
base="${TEST_TMPDIR:-${TMPDIR:-/tmp}}"
app="$base/zlink-dotnet-app-$sum"
if [ ! -f "$app/.complete" ]; then
    tmp=$(mktemp -d "$app.tmp.XXXXXX")
    tar -C "$tmp" -xf "$tarball"
    touch "$tmp/.complete"
    mv -T "$tmp" "$app" 2>/dev/null || rm -rf "$tmp"
fi
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
export HOME="${TEST_TMPDIR:-${HOME:-$base}}" DOTNET_CLI_HOME="${TEST_TMPDIR:-${HOME:-$base}}"
exec dotnet "$app/$dll" "$@"
