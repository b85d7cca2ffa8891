#!/usr/bin/env bash
# check_bindings_selftest.sh CHECK GEN_TABLES_SH — the boundary gate fails for
# each breach it is there to catch (//bindings:boundary_selftest).
set -uo pipefail
check=$1 gen=$2
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0
expect() { # want(0|1) what args...
    local want=$1 what=$2
    shift 2
    "$check" "$gen" "$@" >"$tmp/out" 2>&1
    local rc=$?
    if { [ "$want" -eq 0 ] && [ "$rc" -ne 0 ]; } || { [ "$want" -ne 0 ] && [ "$rc" -eq 0 ]; }; then
        echo "not ok: $what (exit $rc)"
        cat "$tmp/out"
        failures=$((failures + 1))
    else
        echo "ok: $what"
    fi
}
printf 'int x;\n' >"$tmp/clean.hpp"
printf 'const t = setTimeout(() => retry(), 10);\n' >"$tmp/timer.js"
printf '// setTimeout is never used here\n' >"$tmp/comment.js"
printf 'await Task.Delay(5);\n' >"$tmp/delay.cs"
printf 'Thread.sleep(5);\n' >"$tmp/sleep.java"
printf '#include "core/src/sock/sock_impl.h"\n' >"$tmp/internal.cc"
seq 4000 | sed 's/^/\/\/ line /' >"$tmp/big.js"
expect 0 "a clean file passes" --lang=cpp "$tmp/clean.hpp"
expect 1 "setTimeout in node fails" --lang=node "$tmp/timer.js"
expect 0 "a timer named in a comment passes" --lang=node "$tmp/comment.js"
expect 1 "Task.Delay in dotnet fails" --lang=dotnet "$tmp/delay.cs"
expect 1 "Thread.sleep in java fails" --lang=java "$tmp/sleep.java"
expect 1 "an internal include fails" --lang=node "$tmp/internal.cc"
expect 1 "4,000 lines fail" --lang=node "$tmp/big.js"
expect 1 "no source at all fails"
if [ "$failures" -ne 0 ]; then
    echo "check_bindings_selftest: $failures failure(s)"
    exit 1
fi
echo "check_bindings_selftest: ok"
