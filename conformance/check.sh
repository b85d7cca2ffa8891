#!/bin/sh
# check.sh — //conformance:check: the manifest is well formed (unique ids,
# every field present) and the C runner implements exactly its cases.
# usage: check.sh C_RUNNER MANIFEST
set -u
[ $# -eq 2 ] || { echo "usage: check.sh C_RUNNER MANIFEST" >&2; exit 2; }
exec "$1" --check "$2"
