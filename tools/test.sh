#!/usr/bin/env bash
# test.sh — the project's test command: every test target under the address
# and undefined-behaviour sanitizers, with a one-line verdict at the end.
#
# usage: tools/test.sh [--config=NAME] [bazel test flags] [targets]
#   no --config given:  --config=asan   (--config=tsan for ThreadSanitizer,
#                                        --config=opt or plain for no sanitizer
#                                        flags: pass --config=plain)
#   no target given:    //...
#
# The last line of output is always "N passed, N failed" (", N skipped" is
# added when Bazel skipped any), counted per test target from Bazel's test
# summary. FLAKY, TIMEOUT, NO STATUS, FAILED TO BUILD and every other
# non-passing status count as failed. A build or analysis error that leaves
# no failing target still counts as one failure, never as zero tests.
# Exit status: 0 only when nothing failed and Bazel succeeded.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

verdict() { # passed failed skipped
    local line="$1 passed, $2 failed"
    [ "$3" -gt 0 ] && line="$line, $3 skipped"
    echo "$line"
}

if ! tools/setup.sh; then
    echo "test.sh: tools/setup.sh failed" >&2
    verdict 0 1 0
    exit 1
fi

flags=()
targets=()
config_given=0
for a in "$@"; do
    case "$a" in
        --config=plain) config_given=1 ;; # no config at all
        --config=*) config_given=1; flags+=("$a") ;;
        -*) flags+=("$a") ;;
        *) targets+=("$a") ;;
    esac
done
[ "$config_given" -eq 1 ] || flags=(--config=asan "${flags[@]}")
[ "${#targets[@]}" -gt 0 ] || targets=(//...)

log=$(mktemp)
trap 'rm -f "$log"' EXIT

bazel test --keep_going --test_output=errors --test_summary=short \
    "${flags[@]}" -- "${targets[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}

# One status per target from the summary lines, e.g.
#   //core:test_queue                        PASSED in 0.3s
#   //core:test_queue               (cached) PASSED in 0.3s
#   //core:test_poll                         FLAKY, failed in 1 out of 2 in 4.1s
#   //core:test_big                          FAILED TO BUILD
# Test logs echoed by --test_output=errors are skipped, so a test cannot fake
# a summary line.
summary=$(awk '
    /^==================== Test output for / { inlog = 1; next }
    inlog && /^=+$/ && length($0) >= 40 { inlog = 0; next }
    inlog { next }
    /^(\/\/|@)[^ ]+ +/ {
        target = $1
        rest = $0
        sub(/^[^ ]+ +/, "", rest)
        sub(/^\(cached\) +/, "", rest)
        status = rest
        sub(/(,| in [0-9.]+s).*$/, "", status)
        sub(/ +$/, "", status)
        if (status ~ /^(PASSED|FLAKY|FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD|INCOMPLETE|REMOTE FAILURE|SKIPPED|BUILD FAILURE|TOOL HALTED BEFORE TESTING)/)
            last[target] = status
    }
    END { for (t in last) print last[t] "\t" t }
' "$log")

passed=0
failed=0
skipped=0
while IFS=$'\t' read -r status target; do
    [ -n "$target" ] || continue
    case "$status" in
        PASSED) passed=$((passed + 1)) ;;
        SKIPPED) skipped=$((skipped + 1)) ;;
        *) failed=$((failed + 1)) ;;
    esac
done <<<"$summary"

if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
    echo "test.sh: bazel exited with status $rc and no test target reported a failure;" \
         "counting the build as one failure" >&2
    failed=1
fi
if [ "$failed" -eq 0 ] && [ "$passed" -eq 0 ]; then
    echo "test.sh: no test ran; counting that as one failure" >&2
    failed=1
fi

verdict "$passed" "$failed" "$skipped"
[ "$failed" -eq 0 ] && [ "$rc" -eq 0 ]
