#!/bin/sh
# run.sh — a conformance test target runs a language runner through this:
# the runner's exit status is the test's (doc/conformance.md).
# usage: run.sh RUNNER [ARGS ...]
[ $# -ge 1 ] || { echo "usage: run.sh RUNNER [ARGS ...]" >&2; exit 2; }
exec "$@"
