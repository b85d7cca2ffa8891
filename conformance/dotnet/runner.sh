#!/bin/bash
# runner.sh — //conformance/dotnet:runner: the .NET conformance runner
# (doc/conformance.md's protocol; every argument is passed on), started by
# bindings/dotnet/tools/run_app.sh with the plain libzlink.so.1 of the
# runfiles (ZLINK_LIBRARY).
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
export ZLINK_LIBRARY=$(readlink -f "$lib")
# PL-23's test-only LD_PRELOAD library (its case preloads it into a child).
export ZLINK_DOTNET_PRELOAD="$root/conformance/dotnet/alloc_fail_preload.so"
exec "$root/bindings/dotnet/tools/run_app.sh" "$tarball" ZLink.ConformanceRunner.dll "$@"
