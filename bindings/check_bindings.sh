#!/usr/bin/env bash
# check_bindings.sh — the bindings' boundary gate (//bindings:boundary).
#
#   check_bindings.sh GEN_TABLES_SH --lang=LANG FILE... [--lang=LANG FILE...]...
#
# The files after each --lang=LANG are that binding's hand-written, non-test
# source (bindings/BUILD: each binding's :sources filegroup). For each language it checks what STYLE.md's first
# lesson asks of a thin binding:
#   - the hand-written source stays under 4,000 lines (the generated tables
#     named in tools/gen_tables.sh do not count);
#   - it holds no timer or sleep: deadlines, retries and waits are decided
#     in C (zlink_call_set_timeout, the Core's timeouts), so a binding that
#     schedules its own is a second runtime;
#   - it sees the C runtime only through the public ABI: no include of the
#     runtime's own sources (core/...); the library exports zlink_* names
#     only, so nothing else links.
# Prints one line per language and one FAIL line per breach; exit 1 on any.
set -uo pipefail

gen_tables=$1
shift
limit=4000
failures=0
fail() {
    echo "FAIL $*"
    failures=$((failures + 1))
}

# The generated tables: the paths between the TABLES markers.
generated=$(sed -n "/<<'TABLES'/,/^TABLES$/p" "$gen_tables" | awk 'NF == 2 {print $2}')

declare -A lines files
lang=
for arg in "$@"; do
    case "$arg" in
        --lang=*) lang=${arg#--lang=}; continue ;;
    esac
    path=$arg
    if [ -z "$lang" ]; then
        fail "$path: no --lang before it"
        continue
    fi
    if grep -qxF "$path" <<<"$generated"; then
        continue
    fi
    n=$(wc -l <"$path")
    lines[$lang]=$(( ${lines[$lang]:-0} + n ))
    files[$lang]=$(( ${files[$lang]:-0} + 1 ))

    # Timers and sleeps, per language (comments are not code: lines whose
    # first non-blank characters open a comment are skipped).
    case "$lang" in
        cpp) pattern='sleep_for|sleep_until|steady_timer|system_timer|std::async' ;;
        java) pattern='Thread\.sleep|ScheduledExecutor|java\.util\.Timer|\.orTimeout\(|\.completeOnTimeout\(|\.get\([^)]*TimeUnit' ;;
        dotnet) pattern='Task\.Delay|Thread\.Sleep|Threading\.Timer|PeriodicTimer|CancelAfter\(|WaitAsync\(' ;;
        node) pattern='setTimeout\(|setInterval\(|setImmediate\(|timers/promises|std::this_thread::sleep' ;;
        *) pattern='^$' ;;
    esac
    hits=$(grep -nE "$pattern" "$path" | grep -vE '^[0-9]+:\s*(//|\*|/\*|#)' || true)
    if [ -n "$hits" ]; then
        while IFS= read -r h; do
            fail "$lang: $path:${h%%:*}: a timer or sleep in a binding (deadlines live in C): ${h#*:}"
        done <<<"$hits"
    fi
    hits=$(grep -nE '#\s*include\s*[<"][^>"]*(core/|sock_impl|fw\.h|wire\.h)' "$path" || true)
    if [ -n "$hits" ]; then
        while IFS= read -r h; do
            fail "$lang: $path:${h%%:*}: reaches past the public ABI: ${h#*:}"
        done <<<"$hits"
    fi
done

langs=0
seen=$(printf '%s\n' "${!lines[@]}" 2>/dev/null | sort)
for lang in $seen; do
    langs=$((langs + 1))
    echo "$lang: ${files[$lang]} files, ${lines[$lang]} hand-written lines (limit $limit)"
    if [ "${lines[$lang]}" -ge "$limit" ]; then
        fail "$lang: ${lines[$lang]} hand-written lines, the limit is $limit"
    fi
done
[ "$langs" -gt 0 ] || fail "no binding source given"

if [ "$failures" -ne 0 ]; then
    echo "check_bindings: $failures failure(s)"
    exit 1
fi
echo "check_bindings: ok"
