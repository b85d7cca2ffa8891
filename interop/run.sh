#!/bin/sh
# run.sh DRIVER ARGS... — one interop scenario as a test (interop/BUILD).
exec python3 "$@"
