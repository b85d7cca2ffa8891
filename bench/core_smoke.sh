#!/usr/bin/env bash
# core_smoke.sh — //bench:core_smoke: core_vs_libzmq runs end to end with
# tiny counts (not a measurement).
#
#   core_smoke.sh <core_vs_libzmq program> [tsan suppressions]
#
# pair over inproc (an nng equivalent: pair1) must print REP lines of all
# three libraries and the throughput, rtt_p50 and rtt_p99 ratios against
# libzmq and nng; router_router over tcp (none in nng) must print libzmq's
# ratios and no nng line at all. The first runs with zlink's low-latency
# window at its default (50 us) and none for the I/O threads, the second
# with --no-spin --io-spin-us 20, as HEADER says. A pair inproc run with
# --no-nng prints no nng line. Every run exits 0; bad usage is status 2.
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

grep -q "^HEADER,.*,zlink_spin_us=50,zlink_io_spin_us=0$" <<<"$out" || fail "pair inproc: the low-latency window is not 50 us by default"

smoke_run "router_router tcp" "$prog" --pattern router_router --transport tcp --no-spin --io-spin-us 20 "${small[@]}"
grep -q "^HEADER,.*,zlink_spin_us=0,zlink_io_spin_us=20$" <<<"$out" ||
    fail "router_router tcp: --no-spin --io-spin-us 20 did not set the windows to 0 and 20"
grep -Eq "^RATIO,router_router,tcp,64,throughput,zlink_vs_libzmq,[0-9]" <<<"$out" ||
    fail "router_router tcp: no throughput ratio against libzmq"
grep -v "^HEADER" <<<"$out" | grep -q "nng" && fail "router_router tcp: an nng line"

smoke_run "pair inproc --no-nng" "$prog" --pattern pair --transport inproc --no-nng "${small[@]}"
grep -q "^HEADER,.*,no_nng=1$" <<<"$out" || fail "pair inproc --no-nng: no no_nng=1 in HEADER"
grep -q "^REP,zlink,pair,inproc,64,1,[0-9]" <<<"$out" || fail "pair inproc --no-nng: no REP line of zlink"
grep -v "^HEADER" <<<"$out" | grep -q "nng" && fail "pair inproc --no-nng: an nng line"

smoke_refused "an unknown pattern" "$prog" --pattern nope --transport tcp --size 64
smoke_refused "a window above 10,000 us" "$prog" --pattern pair --transport tcp --size 64 --spin-us 10001

smoke_verdict
