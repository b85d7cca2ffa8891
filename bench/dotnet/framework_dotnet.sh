#!/bin/bash
# framework_dotnet.sh server | client ... — the benchmark's .NET program
# (dotnet/Bench.cs), run with the plain libzlink.so.1 of the runfiles.
set -euo pipefail
# Its own runfiles, else the driver's (the driver starts it from its own
# directory, where bench/framework.runfiles is).
root=
for d in "${RUNFILES_DIR:-$0.runfiles}/zlink" "$0.runfiles/zlink" "$(dirname "$0")/framework.runfiles/zlink"; do
    if [ -f "$d/bench/bench_dotnet_app.tar" ]; then root=$d; break; fi
done
[ -n "$root" ] || { echo "ERROR,framework_dotnet.sh: cannot find its runfiles"; exit 1; }
export ZLINK_LIBRARY=$(readlink -f "$root/core/libzlink.so.1")
exec "$root/bindings/dotnet/tools/run_app.sh" "$root/bench/bench_dotnet_app.tar" ZLink.Bench.dll "$@"
