#!/usr/bin/env bash
# cffi_check.sh — runs cffi_check.py (//abi:cffi_check) with the system's
# Python 3 and CFFI; a missing interpreter or module fails, never skips.
set -euo pipefail
if ! command -v python3 >/dev/null 2>&1; then
    echo "cffi_check: FAIL: python3 is missing (run tools/setup.sh)" >&2
    exit 1
fi
if ! python3 -c 'import cffi' 2>/dev/null; then
    echo "cffi_check: FAIL: the Python module cffi is missing (python3-cffi; run tools/setup.sh)" >&2
    exit 1
fi
export PYTHONDONTWRITEBYTECODE=1
exec python3 "$@"
