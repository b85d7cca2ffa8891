#!/usr/bin/env bash
# check_boundary.sh — the framework's link boundary, on the built archives:
# every symbol the framework's objects leave undefined is a public zlink_
# function or a system one; none is a Core-internal zl_ symbol (the
# source-level rules are in core/check_layers.sh).
#
# usage: check_boundary.sh ARCHIVE... [--plant]
#   --plant   self-test: also feeds a planted object that calls zl_msg_size
#             and fails unless it is caught
set -uo pipefail
bad=0
archives=()
plant=0
for a in "$@"; do
    if [[ "$a" == "--plant" ]]; then plant=1; else archives+=("$a"); fi
done
check() {
    local f=$1 hits
    hits=$(nm -u "$f" 2>/dev/null | awk '{print $NF}' | grep -E '^zl_' | sort -u)
    if [[ -n "$hits" ]]; then
        echo "$(basename "$f"): calls Core-internal symbols: $(echo $hits)"
        return 1
    fi
    return 0
}
n=0
for a in "${archives[@]}"; do
    [[ "$a" == *.a || "$a" == *.lo ]] || continue
    n=$((n + 1))
    check "$a" || bad=1
done
[[ $n -gt 0 ]] || { echo "no archive given"; exit 1; }
if [[ $plant -eq 1 ]]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    printf 'unsigned long zl_msg_size(const void *);\nunsigned long f(void){return zl_msg_size(0);}\n' >"$tmp/p.c"
    cc -c -o "$tmp/p.o" "$tmp/p.c" && ar rc "$tmp/libp.a" "$tmp/p.o"
    if check "$tmp/libp.a" >/dev/null; then
        echo "selftest FAIL: a planted zl_ call was not caught"
        bad=1
    else
        echo "selftest ok: a planted zl_ call is caught"
    fi
fi
[[ $bad -eq 0 ]] && echo "boundary: ok ($n archives)"
exit $bad
