#!/bin/sh
# framework_node.sh server | client ... — the benchmark's Node.js program
# (node/bench.js) with the binding's addon and the plain libzlink.so.1 of the
# runfiles: its own, else the driver's (the driver starts it from its own
# directory, where bench/framework.runfiles is).
set -eu
root=
for d in "${RUNFILES_DIR:-$0.runfiles}/zlink" "$0.runfiles/zlink" "$(dirname "$0")/framework.runfiles/zlink"; do
    if [ -f "$d/bench/node/bench.js" ]; then root=$(cd "$d" && pwd); break; fi
done
[ -n "$root" ] || { echo "ERROR,framework_node.sh: cannot find its runfiles"; exit 1; }
export ZLINK_NODE_ADDON="$root/bindings/node/zlink.node"
export ZLINK_LIBRARY=$(readlink -f "$root/core/libzlink.so.1")
export HOME="${TEST_TMPDIR:-${HOME:-/tmp}}"
exec node "$root/bench/node/bench.js" "$@"
