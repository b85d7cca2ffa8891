#!/usr/bin/env bash
# check_header_tests.sh — every public name is exercised by the header tests
# (run as //abi:header_tests_cover_header).
#
# usage: check_header_tests.sh HEADER... -- TEST_SOURCE...
#
# Each macro defined in a public header, each enum constant and each function
# must appear (as a whole word) in every test source given: adding a name to
# zlink.h without pinning it in core/tests/test_header_c.c and
# test_header_cpp.cc fails here, so a value can never change unnoticed.
set -u

headers=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
    headers+=("$1")
    shift
done
[ "$#" -gt 1 ] || { echo "usage: $0 HEADER... -- TEST_SOURCE..." >&2; exit 2; }
shift
tests=("$@")

# Comments stripped, directives kept.
text=$(for h in "${headers[@]}"; do gcc -w -fpreprocessed -dD -E -P -x c "$h" 2>/dev/null; done)
[ -n "$text" ] || { echo "FAIL: could not read ${headers[*]}" >&2; exit 1; }

names=$(
    {
        # macros (object-like and function-like)
        printf '%s\n' "$text" | sed -n 's/^[[:space:]]*#[[:space:]]*define[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p'
        # enum constants: NAME = value inside a typedef enum
        printf '%s\n' "$text" | grep -v '^[[:space:]]*#' | grep -oE '\b[A-Z][A-Z0-9_]*[[:space:]]*=[[:space:]]*-?[0-9]' |
            sed 's/[[:space:]]*=.*//'
        # enum constants generated from a table row X(NAME, value) of an
        # X-macro (the result families, ZLINK_<F>_RESULTS)
        printf '%s\n' "$text" | grep -oE '\b[A-Za-z_][A-Za-z0-9_]*\([[:space:]]*[A-Z][A-Z0-9_]*[[:space:]]*,[[:space:]]*-?[0-9]' |
            sed 's/^[^(]*([[:space:]]*//; s/[[:space:]]*,.*//'
        # typedef names
        printf '%s\n' "$text" | grep -v '^[[:space:]]*#' | grep -oE '\b(zlink_[a-z0-9_]+_t|zlink_free_fn)\b'
        # functions
        printf '%s\n' "$text" | grep -v '^[[:space:]]*#' | tr '\n' ' ' | tr ';' '\n' |
            sed -n 's/.*ZLINK_EXPORT[[:space:]]//p' |
            sed -n 's/^[^(]*[^A-Za-z0-9_]\(zlink_[A-Za-z0-9_]*\)[[:space:]]*(.*/\1/p'
    } | sort -u | comm -23 - <(
        # a helper macro the header #undefs again is not public
        printf '%s\n' "$text" | sed -n 's/^[[:space:]]*#[[:space:]]*undef[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' | sort -u
    )
)

missing=0
for t in "${tests[@]}"; do
    used=$(gcc -w -fpreprocessed -dD -E -P -x c "$t" 2>/dev/null | grep -oE '[A-Za-z_][A-Za-z0-9_]*' | sort -u)
    for n in $(comm -23 <(printf '%s\n' $names) <(printf '%s\n' "$used")); do
        echo "FAIL: $(basename "$t") does not use $n" >&2
        missing=$((missing + 1))
    done
done
if [ "$missing" -ne 0 ]; then
    echo "Pin each new public name in every header test (see doc/abi.md)." >&2
    exit 1
fi
echo "ok: $(printf '%s\n' $names | wc -l) public names are used by ${#tests[@]} header tests"
