#!/usr/bin/env bash
# check_handle_tests.sh — every public function that takes a handle is in
# the bad-handle table of core/tests/test_handles.c (run as
# //abi:handle_tests_cover_header).
#
# usage: check_handle_tests.sh HEADER... -- TEST_SOURCE
#
# Each ZLINK_EXPORT function of the headers must appear in the test either
# as H(zlink_name, ...) (its handle argument is tested) or as
# NO_HANDLE(zlink_name). A function takes a handle when a parameter is a
# non-const `void *` or `void **` other than data, hint, user, user_context
# or user_data (the caller's own pointers, handed back untouched), a
# zlink_pollitem_t array, or a framework handle (zlink_host_t *,
# zlink_call_t *, zlink_turn_t *); such a function may not be listed
# as NO_HANDLE, and one without may not be in the table. Names the test
# lists that the headers do not declare fail too.
set -u

headers=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
    headers+=("$1")
    shift
done
[ "$#" -eq 2 ] || { echo "usage: $0 HEADER... -- TEST_SOURCE" >&2; exit 2; }
test_src=$2

text=$(for h in "${headers[@]}"; do gcc -w -fpreprocessed -E -P -x c "$h" 2>/dev/null; done)
[ -n "$text" ] || { echo "FAIL: could not read ${headers[*]}" >&2; exit 1; }

# One declaration per line: "name|parameters".
decls=$(printf '%s\n' "$text" | grep -v '^[[:space:]]*#' | tr '\n' ' ' | tr ';' '\n' |
    sed -n 's/.*ZLINK_EXPORT[[:space:]]//p' |
    sed -n 's/^[^(]*[^A-Za-z0-9_]\(zlink_[A-Za-z0-9_]*\)[[:space:]]*(\(.*\))[[:space:]]*$/\1|\2/p')
[ -n "$decls" ] || { echo "FAIL: no ZLINK_EXPORT functions found" >&2; exit 1; }

takes_handle() {
    local params=$1 p pname
    IFS=',' read -r -a parts <<<"$params"
    for p in "${parts[@]}"; do
        p=$(printf '%s' "$p" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
        case "$p" in
        const\ *) continue ;;
        *zlink_pollitem_t*) return 0 ;;
        esac
        # framework handles: typed opaque pointers (zlink/framework.h)
        if printf '%s' "$p" | grep -qE '^zlink_(host|call|turn)_t[[:space:]]*\*[[:space:]]*[A-Za-z_]+$'; then
            return 0
        fi
        if printf '%s' "$p" | grep -qE '^void[[:space:]]*\*{1,2}[[:space:]]*[A-Za-z_]+$'; then
            pname=$(printf '%s' "$p" | grep -oE '[A-Za-z_]+$')
            case "$pname" in
            data | hint | user | user_context | user_data) ;;
            *) return 0 ;;
            esac
        fi
    done
    return 1
}

src=$(gcc -w -fpreprocessed -dD -E -P -x c "$test_src" 2>/dev/null)
[ -n "$src" ] || { echo "FAIL: could not read $test_src" >&2; exit 1; }
tested=$(printf '%s\n' "$src" | grep -oE '\bH\((zlink_[A-Za-z0-9_]+),' | sed 's/^H(//; s/,$//' | sort -u)
exempt=$(printf '%s\n' "$src" | grep -oE '\bNO_HANDLE\((zlink_[A-Za-z0-9_]+)\)' |
    sed 's/^NO_HANDLE(//; s/)$//' | sort -u)

fail=0
nhandle=0
while IFS='|' read -r name params; do
    in_t=0
    in_e=0
    printf '%s\n' "$tested" | grep -qx "$name" && in_t=1
    printf '%s\n' "$exempt" | grep -qx "$name" && in_e=1
    if takes_handle "$params"; then
        nhandle=$((nhandle + 1))
        if [ "$in_t" -eq 0 ]; then
            echo "FAIL: $name takes a handle but is not in the table of $(basename "$test_src")" >&2
            fail=1
        fi
        if [ "$in_e" -eq 1 ]; then
            echo "FAIL: $name takes a handle but is listed as NO_HANDLE" >&2
            fail=1
        fi
    else
        if [ "$in_e" -eq 0 ]; then
            echo "FAIL: $name is neither in the table nor listed as NO_HANDLE" >&2
            fail=1
        fi
        if [ "$in_t" -eq 1 ]; then
            echo "FAIL: $name takes no handle but is in the table" >&2
            fail=1
        fi
    fi
done <<<"$decls"

names=$(printf '%s\n' "$decls" | cut -d'|' -f1 | sort -u)
for n in $(comm -23 <(printf '%s\n' $tested $exempt | sort -u) <(printf '%s\n' "$names")); do
    echo "FAIL: $(basename "$test_src") lists $n, which the headers do not declare" >&2
    fail=1
done
if [ "$fail" -ne 0 ]; then
    echo "Add each new handle-taking function to the table in core/tests/test_handles.c." >&2
    exit 1
fi
echo "ok: $nhandle handle-taking functions are in the bad-handle table;" \
    "$(printf '%s\n' "$names" | wc -l) exports checked"
