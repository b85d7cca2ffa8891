#!/bin/sh
# runner.sh — //conformance/node:runner: the Node.js conformance runner
# (runner.js) with the binding's addon and the plain libzlink.so.1 found in
# its runfiles (doc/conformance.md "The runner protocol").
#   runner [-v] MANIFEST [ID ...] | --check MANIFEST | --list MANIFEST
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$0.runfiles/zlink/conformance/node/runner.js" ]; then
    root="$0.runfiles/zlink"
elif [ -n "${RUNFILES_DIR:-}" ] && [ -f "$RUNFILES_DIR/zlink/conformance/node/runner.js" ]; then
    root="$RUNFILES_DIR/zlink"
else
    root=$(cd "$here/../.." && pwd) # inside another target's runfiles
fi
root=$(cd "$root" && pwd)
export ZLINK_NODE_ADDON="${ZLINK_NODE_ADDON:-$root/bindings/node/zlink.node}"
export ZLINK_LIBRARY="${ZLINK_LIBRARY:-$root/core/libzlink.so.1}"
export ZLINK_NODE_PRELOAD="${ZLINK_NODE_PRELOAD:-$root/conformance/node/preload.so}"
export HOME="${TEST_TMPDIR:-${HOME:-/tmp}}"
exec node "$root/conformance/node/runner.js" "$@"
