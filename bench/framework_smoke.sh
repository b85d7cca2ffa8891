#!/usr/bin/env bash
# framework_smoke.sh — //bench:framework_smoke: the request/reply harness
# works end to end for the raw Core and gRPC halves (not a measurement).
#
#   framework_smoke.sh <driver> <core program> <grpc program> <framework program> [tsan supp]
#
# For each of core, grpc and framework: `<driver> --quick --only <impl>` must exit 0,
# print no FAIL line, and print one RESULT line at 1 and one at 1,000 in
# flight with a positive throughput and latencies. A third run checks that
# a missing program is a FAIL line with exit status 1, never a silent skip
# (also a binding's), and a fourth that an unknown --language is refused
# with status 2.
set -uo pipefail

driver=$1
core=$2
grpc=$3
framework=$4
supp=${5:-}
failures=0
# Under --config=tsan the gRPC program runs against Debian's uninstrumented
# gRPC and Abseil: their internal races are suppressed (grpc_tsan.supp),
# nothing of ZLink's.
if [ -n "$supp" ] && [ -n "${TSAN_OPTIONS:-}" ]; then
    export TSAN_OPTIONS="$TSAN_OPTIONS:suppressions=$(pwd)/$supp"
fi

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

check_impl() {
    local impl=$1 out rc
    out=$("$driver" --language c --quick --only "$impl" --core-bin "$core" --grpc-bin "$grpc" \
        --framework-bin "$framework")
    rc=$?
    echo "$out"
    [ "$rc" -eq 0 ] || fail "$impl: driver exit status $rc"
    if grep -q '^FAIL,' <<<"$out"; then
        fail "$impl: FAIL line printed"
    fi
    for n in 1 1000; do
        # RESULT,request_reply,<impl>,<n>,throughput=<x>,p50_us=<y>,p99_us=<z>, all > 0
        if ! grep -Eq "^RESULT,request_reply,$impl,$n,throughput=[0-9]*[1-9][0-9]*,p50_us=[0-9.]*[1-9][0-9.]*,p99_us=[0-9.]*[1-9][0-9.]*$" <<<"$out"; then
            fail "$impl: no valid RESULT line at $n in flight"
        fi
    done
}

check_impl core
check_impl grpc
check_impl framework

out=$("$driver" --language c --quick --only framework --framework-bin /nonexistent/framework_zlink)
rc=$?
echo "$out"
[ "$rc" -eq 1 ] || fail "missing program: exit status $rc, want 1"
for n in 1 1000; do
    grep -q "^FAIL,request_reply,framework,$n,program /nonexistent/framework_zlink not built" <<<"$out" ||
        fail "missing program: no FAIL line at $n in flight"
done
grep -q '^RESULT,' <<<"$out" && fail "missing program: a RESULT line was printed"

"$driver" --language cobol --quick >/dev/null 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "--language cobol: exit status $rc, want 2"

# A binding's program that is missing is a FAIL line of that language, never
# a silent skip.
out=$("$driver" --language java --quick --only java --binding-bin /nonexistent/framework_java)
rc=$?
[ "$rc" -eq 1 ] || fail "missing binding program: exit status $rc, want 1"
grep -q "^FAIL,request_reply,java,1000,program /nonexistent/framework_java not built" <<<"$out" ||
    fail "missing binding program: no FAIL line"

if [ "$failures" -ne 0 ]; then
    echo "framework_smoke: $failures failure(s)" >&2
    exit 1
fi
echo "framework_smoke: ok"
