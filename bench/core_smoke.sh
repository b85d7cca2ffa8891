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
. bench/smoke_lib.sh || exit 1

prog=$1
smoke_tsan_suppressions "${2:-}"
small=(--size 64 --reps 1 --count 5000 --rtt-count 200 --rtt-warmup 20)

smoke_run "pair inproc" "$prog" --pattern pair --transport inproc "${small[@]}"
for lib in zlink libzmq nng; do
    grep -q "^REP,$lib,pair,inproc,64,1,[0-9]" <<<"$out" || fail "pair inproc: no REP line of $lib"
done
for base in libzmq nng; do
    for m in throughput rtt_p50 rtt_p99; do
        grep -Eq "^RATIO,pair,inproc,64,$m,zlink_vs_$base,[0-9]+\.[0-9]+$" <<<"$out" ||
            fail "pair inproc: no $m ratio against $base"
    done
done

smoke_run "router_router tcp" "$prog" --pattern router_router --transport tcp "${small[@]}"
grep -Eq "^RATIO,router_router,tcp,64,throughput,zlink_vs_libzmq,[0-9]" <<<"$out" ||
    fail "router_router tcp: no throughput ratio against libzmq"
grep -v "^HEADER" <<<"$out" | grep -q "nng" && fail "router_router tcp: an nng line"

smoke_refused "an unknown pattern" "$prog" --pattern nope --transport tcp --size 64

smoke_verdict
