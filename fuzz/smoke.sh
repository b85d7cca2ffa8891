#!/bin/bash
# The bounded smoke run of one fuzz target (part of bazel test //...):
# every seed (fuzz/corpus/<target>) is run, then the fuzzer mutates for
# $3 seconds from a fixed seed, with the memory limits that catch a
# reservation sized by a peer's claim. Any crash, sanitizer report, leak,
# failed FZ_CHECK or limit breach fails the test; so does a run that did
# not execute the seeds (the log must show libFuzzer's final line).
set -euo pipefail
bin="$1"
seeds="$2"
secs="$3"
work="${TEST_TMPDIR:-$(mktemp -d)}/corpus"
mkdir -p "$work"
log="${TEST_TMPDIR:-/tmp}/fuzz.log"
nseeds=$(find "$seeds" -type f -o -type l | wc -l)
if [ "$nseeds" -eq 0 ]; then
  echo "smoke.sh: no seeds in $seeds" >&2
  exit 1
fi
set +e
"$bin" -seed=1 -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=64 -timeout=10 \
  -print_final_stats=1 "$work" "$seeds" >"$log" 2>&1
rc=$?
set -e
cat "$log"
if [ "$rc" -ne 0 ]; then
  echo "smoke.sh: the fuzzer exited with $rc" >&2
  exit 1
fi
grep -q '^Done [0-9]* runs' "$log" || { echo "smoke.sh: no 'Done N runs' line" >&2; exit 1; }
grep -q 'INITED' "$log" || { echo "smoke.sh: the seed corpus was not loaded" >&2; exit 1; }
echo "smoke.sh: $nseeds seeds, $(grep -o '^Done [0-9]* runs' "$log")"
