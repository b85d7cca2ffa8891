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
. bench/smoke_lib.sh || exit 1

driver=$1
core=$2
grpc=$3
framework=$4
# The gRPC program runs on Debian's gRPC and Abseil (grpc_tsan.supp).
smoke_tsan_suppressions "${5:-}"

# At 1,000 calls in flight the first call ends about 1,000 / throughput
# seconds after it started: a second or more for gRPC under ThreadSanitizer
# or on a loaded machine (about a thousand calls a second), so the quick
# run's 100 ms of warm-up would leave its window empty. The window stays
# short; only the warm-up grows.
window=(--warmup-ms 3000)

check_impl() {
    local impl=$1
    smoke_run "$impl: driver" "$driver" --language c --quick --only "$impl" --core-bin "$core" \
        --grpc-bin "$grpc" --framework-bin "$framework" "${window[@]}"
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

smoke_run --status 1 "missing program" \
    "$driver" --language c --quick --only framework --framework-bin /nonexistent/framework_zlink
for n in 1 1000; do
    grep -q "^FAIL,request_reply,framework,$n,program /nonexistent/framework_zlink not built" <<<"$out" ||
        fail "missing program: no FAIL line at $n in flight"
done
grep -q '^RESULT,' <<<"$out" && fail "missing program: a RESULT line was printed"

smoke_refused "--language cobol" "$driver" --language cobol --quick

# A binding's program that is missing is a FAIL line of that language, never
# a silent skip.
smoke_run --status 1 "missing binding program" \
    "$driver" --language java --quick --only java --binding-bin /nonexistent/framework_java
grep -q "^FAIL,request_reply,java,1000,program /nonexistent/framework_java not built" <<<"$out" ||
    fail "missing binding program: no FAIL line"

smoke_verdict
