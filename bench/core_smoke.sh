#!/usr/bin/env bash
# core_smoke.sh — //bench:core_smoke: core_vs_libzmq runs end to end with
# tiny counts (not a measurement).
#
#   core_smoke.sh <core_vs_libzmq program> [tsan suppressions]
#
# pair over inproc (an nng equivalent: pair1) must print REP lines of all
# three libraries and the throughput, rtt_p50 and rtt_p99 ratios against
# libzmq and nng; router_router over tcp (none in nng) must print libzmq's
# ratios and no nng line at all. Both runs exit 0; bad usage is status 2.
set -uo pipefail

prog=$1
supp=${2:-}
# Under --config=tsan the libzmq and nng halves run on Debian's
# uninstrumented libraries: their internal races are suppressed
# (baselines_tsan.supp), nothing of ZLink's.
if [ -n "$supp" ] && [ -n "${TSAN_OPTIONS:-}" ]; then
    export TSAN_OPTIONS="$TSAN_OPTIONS:suppressions=$(pwd)/$supp"
fi
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
small=(--size 64 --reps 1 --count 5000 --rtt-count 200 --rtt-warmup 20)

out=$("$prog" --pattern pair --transport inproc "${small[@]}")
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || fail "pair inproc: exit status $rc"
for lib in zlink libzmq nng; do
    grep -q "^REP,$lib,pair,inproc,64,1,[0-9]" <<<"$out" || fail "pair inproc: no REP line of $lib"
done
for base in libzmq nng; do
    for m in throughput rtt_p50 rtt_p99; do
        grep -Eq "^RATIO,pair,inproc,64,$m,zlink_vs_$base,[0-9]+\.[0-9]+$" <<<"$out" ||
            fail "pair inproc: no $m ratio against $base"
    done
done

out=$("$prog" --pattern router_router --transport tcp "${small[@]}")
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || fail "router_router tcp: exit status $rc"
grep -Eq "^RATIO,router_router,tcp,64,throughput,zlink_vs_libzmq,[0-9]" <<<"$out" ||
    fail "router_router tcp: no throughput ratio against libzmq"
grep -v "^HEADER" <<<"$out" | grep -q "nng" && fail "router_router tcp: an nng line"

"$prog" --pattern nope --transport tcp --size 64 >/dev/null 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "an unknown pattern: exit status $rc, expected 2"

[ "$failures" -eq 0 ] || exit 1
echo "core_smoke: ok"
