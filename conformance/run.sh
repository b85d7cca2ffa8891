#!/bin/sh
# run.sh — how the conformance test targets run a language's runner
# (conformance/defs.bzl, doc/conformance.md "Test targets").
#
# usage: run.sh --run LANG VERIFIER MANIFEST RUNNER
#        run.sh --check LANG VERIFIER MANIFEST RUNNER
#        run.sh RUNNER [ARGS ...]
#
#   --run    runs "RUNNER MANIFEST" (every case), shows its CASE lines, then
#            holds them against the manifest with
#            "VERIFIER --verify LANG MANIFEST OUTPUT" (VERIFIER is the C
#            runner; see c/verify.c). Passes when the runner exits 0 and the
#            verification exits 0: every case pass, or absent-by-seed where
#            the manifest marks the case absent for LANG; one line per case,
#            in manifest order; no ERROR line.
#   --check  runs "RUNNER --check MANIFEST": passes when it exits 0 and
#            reports no case missing or failing and no ERROR (the manifest is
#            well formed and the runner implements exactly its cases).
#            VERIFIER is not used.
#   else     runs RUNNER ARGS; its exit status is the result.
set -u

usage() {
    echo "usage: run.sh --run|--check LANG VERIFIER MANIFEST RUNNER | run.sh RUNNER [ARGS ...]" >&2
    exit 2
}

[ $# -ge 1 ] || usage
case "$1" in
--run | --check) ;;
*) exec "$@" ;;
esac
[ $# -eq 5 ] || usage
mode=$1 lang=$2 verifier=$3 manifest=$4 runner=$5
tmp=${TEST_TMPDIR:-$(mktemp -d)}
out="$tmp/conformance-$lang.out"

if [ "$mode" = --check ]; then
    "$runner" --check "$manifest" >"$out"
    rc=$?
    cat "$out"
    if [ "$rc" -ne 0 ]; then
        echo "run.sh: the $lang runner's --check exited $rc" >&2
        exit 1
    fi
    if grep -Eq '^(ERROR|CASE [^ ]+ (missing|fail))' "$out"; then
        echo "run.sh: the $lang runner's --check exited 0 but reported the lines above" >&2
        exit 1
    fi
    exit 0
fi

"$runner" "$manifest" >"$out"
rc=$?
cat "$out"
"$verifier" --verify "$lang" "$manifest" "$out" >"$tmp/conformance-$lang.cells"
vrc=$?
status=0
if [ "$vrc" -ne 0 ]; then
    echo "run.sh: the $lang runner's lines against the manifest (verify exit $vrc):" >&2
    grep -v ' pass$\| absent-by-seed$' "$tmp/conformance-$lang.cells" | sed 's/^/  /' >&2
    status=1
fi
if [ "$rc" -ne 0 ]; then
    echo "run.sh: the $lang runner exited $rc" >&2
    status=1
fi
exit "$status"
