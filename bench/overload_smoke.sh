#!/usr/bin/env bash
# overload_smoke.sh — //bench:overload_smoke: the overload benchmark runs end
# to end with tiny parameters (not a measurement).
#
#   overload_smoke.sh <overload program>
#
# One short run must exit 0 and print every RESULT line with a number, no
# drop and no failed send, reach the pause threshold at least once (permits
# in use up to the pause count of --max-jobs 16 at 80 %: 13) with resumes
# within one of pauses, and print SAMPLE lines. Bad usage must be
# refused with status 2.
. bench/smoke_lib.sh || exit 1

prog=$1

smoke_run "" "$prog" --clients 2 --duration-ms 400 --idle-ms 200 --job-us 500 --max-jobs 16 \
    --window 32 --size 1024 --samples 5

value() { sed -n "s/^RESULT,overload,$1,//p" <<<"$out"; }
for m in dropped send_failures rss_high_water_bytes rss_high_water_bytes_short \
    pause_transitions resume_transitions permits_in_use_max probe_p50_us probe_p99_us \
    idle_p50_us idle_p99_us flood_sends handled flood_sends_short handled_short; do
    v=$(value "$m")
    grep -Eq '^[0-9]+(\.[0-9]+)?$' <<<"$v" || fail "RESULT $m missing or not a number: '$v'"
done
[ "$(value dropped)" = 0 ] || fail "dropped is $(value dropped)"
[ "$(value send_failures)" = 0 ] || fail "send_failures is $(value send_failures)"
[ "$(value flood_sends)" = "$(value handled)" ] || fail "flood_sends != handled"
[ "$(value flood_sends_short)" = "$(value handled_short)" ] || fail "short: flood_sends != handled"
p=$(value pause_transitions)
r=$(value resume_transitions)
if [ -n "$p" ] && [ -n "$r" ]; then
    [ "$p" -ge 1 ] || fail "pressure never reached (pause_transitions $p)"
    # Edges alternate, so resumes are within one of pauses: one fewer when
    # the run ends paused, one more when the host's metric reset at GO fell
    # inside a pause (its first counted edge is then a resume).
    [ "$r" -ge $((p - 1)) ] && [ "$r" -le $((p + 1)) ] || fail "resumes $r for pauses $p"
fi
pm=$(value permits_in_use_max)
[ -n "$pm" ] && { [ "$pm" -ge 13 ] && [ "$pm" -le 16 ]; } || fail "permits_in_use_max $pm not in 13..16"
grep -Eq '^SAMPLE,[0-9]+,[0-9]+,(running|paused)$' <<<"$out" || fail "no SAMPLE line"
n=$(grep -c '^SAMPLE,' <<<"$out")
[ "$n" -le 5 ] || fail "$n SAMPLE lines for --samples 5"

smoke_refused "--clients 0" "$prog" --clients 0
smoke_refused "--bogus" "$prog" --bogus 1

smoke_verdict
