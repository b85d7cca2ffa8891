#!/bin/bash
# node.sh ROLE ARGS... — the .NET interop participant (Program.cs), built by
# :node_app, run with the plain libzlink.so.1 of the runfiles.
set -euo pipefail
here=${RUNFILES_DIR:-$0.runfiles}
root="$here/zlink"
[ -d "$root" ] || root=$(pwd)
export ZLINK_LIBRARY=$(readlink -f "$root/core/libzlink.so.1")
exec "$root/bindings/dotnet/tools/run_app.sh" "$root/interop/dotnet/node_app.tar" \
    ZLink.InteropNode.dll "$@"
