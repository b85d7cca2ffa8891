# smoke_lib.sh — what the bench/*_smoke.sh tests share, sourced by each of
# them (bench/BUILD lists it in their data) from the directory they start in,
# the workspace root of their runfiles under `bazel test` and `bazel run`:
#
#   . bench/smoke_lib.sh || exit 1
#
# It sets `set -uo pipefail` (no -e: every check runs and counts) and gives:
#   fail MESSAGE             counts a failure (failures) and prints it on stderr
#   smoke_tsan_suppressions FILE
#                            under --config=tsan (TSAN_OPTIONS set), adds FILE,
#                            a runfiles path, to the suppressions; FILE may be
#                            empty (the argument was not given)
#   smoke_run [--status N] LABEL COMMAND...
#                            runs COMMAND; its output is printed and kept in
#                            $out, its status in $rc; a status other than N
#                            (0 by default) is a failure of LABEL
#   smoke_refused LABEL COMMAND...
#                            COMMAND, its output discarded, must be refused
#                            as bad usage: status 2
#   smoke_verdict            the last line: exits 1 after any failure, else
#                            prints "<test>: ok"
# <test> is the script's name without .sh.
set -uo pipefail

smoke_name=$(basename "$0" .sh)
failures=0
out=
rc=0

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# The baselines (libzmq, nng, gRPC) run on Debian's uninstrumented libraries:
# their internal races are suppressed, nothing of ZLink's.
smoke_tsan_suppressions() {
    if [ -n "$1" ] && [ -n "${TSAN_OPTIONS:-}" ]; then
        export TSAN_OPTIONS="$TSAN_OPTIONS:suppressions=$(pwd)/$1"
    fi
}

smoke_run() {
    local want=0
    if [ "$1" = --status ]; then
        want=$2
        shift 2
    fi
    local label=$1
    shift
    out=$("$@")
    rc=$?
    echo "$out"
    [ "$rc" -eq "$want" ] || fail "${label:+$label: }exit status $rc, expected $want"
}

smoke_refused() {
    local label=$1 status
    shift
    "$@" >/dev/null 2>&1
    status=$?
    [ "$status" -eq 2 ] || fail "$label: exit status $status, expected 2"
}

smoke_verdict() {
    if [ "$failures" -ne 0 ]; then
        echo "$smoke_name: $failures failure(s)" >&2
        exit 1
    fi
    echo "$smoke_name: ok"
}
