#!/bin/sh
# node.sh ROLE ARGS... — the Node.js interop participant (node.js) with the
# binding's addon and the plain libzlink.so.1 found in the runfiles
# (interop/BUILD; the same lookup as conformance/node/runner.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$0.runfiles/zlink/interop/node/node.js" ]; then
    root="$0.runfiles/zlink"
elif [ -n "${RUNFILES_DIR:-}" ] && [ -f "$RUNFILES_DIR/zlink/interop/node/node.js" ]; then
    root="$RUNFILES_DIR/zlink"
else
    root=$(cd "$here/../.." && pwd) # inside another target's runfiles
fi
root=$(cd "$root" && pwd)
export ZLINK_NODE_ADDON="$root/bindings/node/zlink.node"
export ZLINK_LIBRARY="$root/core/libzlink.so.1"
export HOME="${TEST_TMPDIR:-${HOME:-/tmp}}"
exec node "$root/interop/node/node.js" "$@"
