#!/usr/bin/env bash
# demo_smoke — runs the demo small (COUNT=300) and checks that it exits 0
# and prints the lines that show each behaviour: the timeout is
# DeadlineExceeded, the cancel is cancelled, NotFound and InternalFailure
# appear, no one-way note was lost, and the mesh split shows both B and C.
# Rates and latencies are printed but never checked.
#
# usage: demo_smoke_test.sh RUN_DEMO CS_SERVICE CS_CLIENT MESH_NODE
set -uo pipefail
run_demo=$1
shift
out="${TEST_TMPDIR:-/tmp}/demo_smoke.out"

"$run_demo" "$@" 300 >"$out" 2>&1
rc=$?
bad=0
if [ "$rc" -ne 0 ]; then
    echo "demo_smoke: the demo exited with status $rc"
    bad=1
fi

# expect COUNT PATTERN WHAT: PATTERN (extended regex) matches exactly COUNT
# lines of the output.
expect() {
    local n
    n=$(grep -cE -- "$2" "$out")
    if [ "$n" -ne "$1" ]; then
        echo "demo_smoke: expected $1 line(s) with $3, found $n (pattern: $2)"
        bad=1
    fi
}

for c in client-1 client-2; do
    expect 1 "^$c: requests,  1 in flight: +300 calls" "$c's 1-in-flight requests"
    expect 1 "^$c: requests, 64 in flight: +300 calls" "$c's 64-in-flight requests"
    expect 1 "^$c: one-way sends: +300 msgs" "$c's one-way sends"
    expect 1 "^$c: request \"slow\", 100 ms timeout -> DeadlineExceeded after" "$c's timeout"
    expect 1 "^$c: request \"slow\" cancelled -> cancelled \(ZLINK_FW_CANCELLED\)" "$c's cancel"
    expect 1 "^$c: request \"missing\" \(no handler\) -> NotFound, remote code 102" "$c's NotFound"
    expect 1 "^$c: request \"fail\" \(the handler fails\) -> InternalFailure" "$c's InternalFailure"
    expect 1 "^$c: request \"slow\", 10 s timeout -> OK after .* completed 1 time" \
        "$c's late answer and single cancel completion"
    expect 1 "^$c: .*all checks passed$" "$c's verdict"
done
# per client: 1 + 2 x 300 echo requests, 300 notes, 3 slow, 1 failing
expect 1 "^service: handled 1202 echo requests, 600 one-way notes, 6 slow requests, 2 failing requests$" \
    "the service's totals"
expect 1 "^service: one-way notes: 600 handled of 600 sent - none lost$" "no lost note"
expect 1 "^A: 2 of 2 peers ready" "the mesh peers ready"
expect 1 "^A: 200 requests to channel \"pricing\" .*: B answered [1-9][0-9]* .*, C answered [1-9][0-9]* " \
    "a split over both B and C"
expect 1 "^A: node-direct request to C -> OK, answered by C$" "the node-direct request"
expect 1 "^B: stopped .*answered [1-9][0-9]* \"pricing\" requests \(weight 100\) and 0 node-direct" "B's summary"
expect 1 "^C: stopped .*answered [1-9][0-9]* \"pricing\" requests \(weight 300\) and 1 node-direct" "C's summary"
expect 0 "FAILED" "a failure"
expect 1 "^demo: all six processes finished cleanly" "the verdict"

if [ "$bad" -ne 0 ]; then
    echo "---- the demo's output:"
    cat "$out"
    exit 1
fi
echo "demo_smoke: every expected line is there"
