#!/bin/sh
# run_tests.sh ADDON LIBZLINK FAKE_LIB... — runs the binding's node:test
# files (//bindings/node:tests) against the addon and the plain library.
set -eu
addon=$1 lib=$2
shift 2
for f in "$@"; do
    case "$f" in
    *fake_major*) ZLINK_TEST_FAKE_MAJOR=$(pwd)/$f ;;
    *fake_missing*) ZLINK_TEST_FAKE_MISSING=$(pwd)/$f ;;
    esac
done
export ZLINK_TEST_FAKE_MAJOR ZLINK_TEST_FAKE_MISSING
export ZLINK_NODE_ADDON="$(pwd)/$addon" ZLINK_LIBRARY="$(pwd)/$lib"
export HOME="${TEST_TMPDIR:-/tmp}"
cd bindings/node
exec node --test --test-force-exit --test-timeout=60000 --test-reporter=spec test/*.test.js
