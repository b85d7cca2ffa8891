#!/usr/bin/env bash
# soak_smoke.sh — //bench:soak_smoke: the soak for 5 s (every verdict of the
# long run, on a short one).
#
#   soak_smoke.sh <soak program>
#
# The run must exit 0 with "RESULT,soak,verdict,PASS", at least one kill,
# calls started and all completed (none twice, none lost, no wrong reply),
# one-way records handled and none duplicated. Bad usage is status 2.
. bench/smoke_lib.sh || exit 1

prog=$1
value() { sed -n "s/^RESULT,soak,$1,\([0-9A-Z]*\).*/\1/p" <<<"$out"; }

smoke_run "" "$prog" --seconds 5 --clients 2 --window 8 --oneway-per-ms 1 --seed 7
[ "$(value verdict)" = PASS ] || fail "verdict $(value verdict)"
[ "$(value kills)" -gt 0 ] 2>/dev/null || fail "no peer was killed"
[ "$(value calls_started)" -gt 0 ] 2>/dev/null || fail "no call started"
[ "$(value calls_started)" = "$(value calls_completed)" ] || fail "started != completed"
for m in completed_twice never_completed wrong_replies oneways_duplicated oneways_malformed; do
    [ "$(value $m)" = 0 ] || fail "$m = $(value $m)"
done
[ "$(value oneways_handled)" -gt 0 ] 2>/dev/null || fail "no one-way handled"

smoke_refused "--seconds 0" "$prog" --seconds 0

smoke_verdict
