#!/usr/bin/env bash
# gen_tables.sh — rewrites every binding's generated table from the header
# (abi/gen/tables.py). Run it after a change to the result table or the
# version script; each table's drift test (abi/gen/tables.bzl) fails until
# then.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bazel build //abi:results_json >/dev/null 2>&1 || bazel build //abi:results_json
results=$(bazel info bazel-bin 2>/dev/null)/abi/results.json

# language  committed table
while read -r lang table; do
    [ -n "$lang" ] || continue
    python3 abi/gen/tables.py --lang "$lang" "$results" abi/zlink.map >"$table.tmp"
    mv "$table.tmp" "$table"
    echo "gen_tables.sh: $table"
done <<'TABLES'
java bindings/java/src/main/java/io/zlink/Tables.java
dotnet bindings/dotnet/src/ZLink/Tables.g.cs
node bindings/node/lib/tables.js
node_dts bindings/node/lib/tables.d.ts
cpp bindings/cpp/include/zlink/tables.hpp
TABLES
