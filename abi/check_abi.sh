#!/usr/bin/env bash
# check_abi.sh — the ABI gate for libzlink (run as //abi:abi_check).
#
# usage: check_abi.sh BASELINE.abi LIBRARY VERSION_SCRIPT HEADER...
#
# Fails, and never skips, when:
#   1. a tool it needs (abidiff, readelf, gcc) is missing;
#   2. the SONAME is not libzlink.so.<ZLINK_VERSION_MAJOR of the header>;
#   3. a version node of the script does not belong to that major;
#   4. an exported symbol is not a zlink_ name bound to one of those nodes;
#   5. the exported zlink_ functions and the ZLINK_EXPORT declarations of the
#      headers differ (in either direction);
#   6. abidiff reports ANY difference from the committed baseline, compatible
#      or not. A compatible addition is allowed, but the baseline must be
#      regenerated (abi/update_baseline.sh) in the same commit, so that the
#      next incompatible change is measured against the real previous state.
# See doc/abi.md.
set -u

if [ "$#" -lt 4 ]; then
    echo "usage: $0 BASELINE.abi LIBRARY VERSION_SCRIPT HEADER..." >&2
    exit 2
fi
baseline=$1
lib=$2
map=$3
shift 3
headers=("$@")

failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

for tool in abidiff readelf gcc; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "FAIL: '$tool' is not installed; the ABI gate cannot be skipped." >&2
        echo "      Run tools/setup.sh (installs abigail-tools and build-essential)." >&2
        exit 1
    fi
done
for f in "$lib" "$map" "${headers[@]}"; do
    [ -r "$f" ] || { echo "FAIL: cannot read $f" >&2; exit 1; }
done

# ------------------------------------------------------------- 2. SONAME
major=$(sed -n 's/^#define ZLINK_VERSION_MAJOR[[:space:]]\{1,\}\([0-9]\{1,\}\).*/\1/p' "${headers[@]}" | head -n 1)
if [ -z "$major" ]; then
    fail "no ZLINK_VERSION_MAJOR in ${headers[*]}"
    major=unknown
fi
want_soname="libzlink.so.$major"
soname=$(readelf -d -W "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
if [ "$soname" != "$want_soname" ]; then
    fail "SONAME is '$soname', expected '$want_soname' (ZLINK_VERSION_MAJOR=$major)"
else
    echo "ok: SONAME $soname"
fi

# -------------------------------------------------------- 3. version nodes
# Node names are the identifiers that open a block: "ZLINK_1.0 {".
nodes=$(sed -e 's#/\*.*\*/##g' "$map" | grep -oE '^[[:space:]]*[A-Za-z_][A-Za-z0-9_.]*[[:space:]]*\{' |
        sed -e 's/[[:space:]{]//g')
if [ -z "$nodes" ]; then
    fail "no version node in $map"
fi
for node in $nodes; do
    case "$node" in
        ZLINK_"$major".[0-9]*) ;;
        *) fail "version node '$node' in $map does not belong to major $major (ZLINK_$major.N)" ;;
    esac
done
is_node() {
    local n
    for n in $nodes; do [ "$n" = "$1" ] && return 0; done
    return 1
}

# ----------------------------------------------------- 4. exported symbols
# readelf --dyn-syms -W: Num: Value Size Type Bind Vis Ndx Name[@@VER]
exported=""
bad=0
while read -r _num _value _size type bind vis ndx name _rest; do
    [ "$ndx" = "UND" ] && continue
    case "$bind" in GLOBAL | WEAK | GNU_UNIQUE) ;; *) continue ;; esac
    case "$vis" in DEFAULT | PROTECTED) ;; *) continue ;; esac
    # The linker emits one absolute symbol named after each version node.
    if [ "$ndx" = "ABS" ] && is_node "${name%%@*}"; then
        continue
    fi
    sym=${name%%@*}
    ver=${name#*@}
    ver=${ver#@}
    if [ "$sym" = "$name" ]; then
        fail "exported symbol '$sym' has no version"
        bad=1
        continue
    fi
    case "$sym" in
        zlink_*) ;;
        *) fail "exported symbol '$name' is not a zlink_ name"; bad=1; continue ;;
    esac
    if ! is_node "$ver"; then
        fail "exported symbol '$name' is bound to '$ver', not a node of $(basename "$map")"
        bad=1
        continue
    fi
    [ "$type" = "FUNC" ] || [ "$type" = "IFUNC" ] || {
        fail "exported symbol '$name' is a $type; the ABI exports functions only"
        bad=1
    }
    exported="$exported $sym"
done < <(readelf --dyn-syms -W "$lib" | awk '$1 ~ /^[0-9]+:$/')
exported=$(printf '%s\n' $exported | sort -u | sed '/^$/d')
if [ -z "$exported" ]; then
    fail "$lib exports no zlink_ symbol"
elif [ "$bad" -eq 0 ]; then
    echo "ok: $(printf '%s\n' "$exported" | wc -l) exported symbols, all zlink_* with versions: $(echo $nodes)"
fi

# ------------------------------------------- 5. header declarations vs. exports
# Comments go first (the compiler's own preprocessor-only mode keeps the
# directives), then directives; what remains is split into declarations.
declared=$(for h in "${headers[@]}"; do gcc -w -fpreprocessed -dD -E -P -x c "$h" 2>/dev/null; done |
           grep -v '^[[:space:]]*#' | tr '\n' ' ' | tr ';' '\n' |
           sed -n 's/.*ZLINK_EXPORT[[:space:]]//p' |
           sed -n 's/^[^(]*[^A-Za-z0-9_]\(zlink_[A-Za-z0-9_]*\)[[:space:]]*(.*/\1/p' | sort -u)
missing=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported") | sed '/^$/d')
extra=$(comm -13 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported") | sed '/^$/d')
if [ -n "$missing" ]; then
    fail "declared ZLINK_EXPORT in the header but not exported by $(basename "$lib"):"
    printf '    %s\n' $missing >&2
fi
if [ -n "$extra" ]; then
    fail "exported by $(basename "$lib") but not declared ZLINK_EXPORT in the header:"
    printf '    %s\n' $extra >&2
fi
if [ -z "$missing" ] && [ -z "$extra" ]; then
    echo "ok: exports match the $(printf '%s\n' "$declared" | wc -l) ZLINK_EXPORT declarations"
fi

# ------------------------------------------------------------ 6. abidiff
regen="abi/update_baseline.sh   # runs: abidw --no-corpus-path --no-comp-dir-path --no-show-locs --no-elf-needed --drop-undefined-syms --headers-dir abi/include --drop-private-types --out-file abi/baseline.abi bazel-bin/core/$want_soname"
if [ ! -s "$baseline" ]; then
    fail "baseline $baseline is missing or empty; create it with: $regen"
else
    out=$(abidiff --fail-no-debug-info --no-show-locs "$baseline" "$lib" 2>&1)
    rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "$out" >&2
        what="abidiff exit $rc:"
        [ $((rc & 1)) -ne 0 ] && what="$what error;"
        [ $((rc & 2)) -ne 0 ] && what="$what usage error;"
        [ $((rc & 4)) -ne 0 ] && what="$what ABI change;"
        [ $((rc & 8)) -ne 0 ] && what="$what INCOMPATIBLE ABI change;"
        fail "$what the library differs from $baseline."
        echo "      Read the report above. abidiff marks only some breaks as incompatible" >&2
        echo "      (a struct that grew behind a pointer is a plain 'ABI change')." >&2
        echo "      - An incompatible change needs a new major version (doc/abi.md)." >&2
        echo "      - A compatible addition (new function in a new version node, new" >&2
        echo "        enum value at the end) is allowed: regenerate the baseline in" >&2
        echo "        the same commit with:" >&2
        echo "        $regen" >&2
    else
        echo "ok: abidiff finds no difference from $(basename "$baseline")"
    fi
fi

if [ "$failures" -ne 0 ]; then
    echo "ABI check FAILED ($failures problem(s))" >&2
    exit 1
fi
echo "ABI check passed"
exit 0
