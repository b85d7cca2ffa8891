#!/bin/sh
# matrix.sh — //conformance:matrix: the case x language matrix.
#
#   bazel run //conformance:matrix             a table
#   bazel run //conformance:matrix -- --json   {"<id>": {"c": "pass", ...}, ...}
#
# usage: matrix.sh --manifest FILE --runner c=PATH [--runner LANG=PATH ...] [--json]
#
# Runs every language runner given with --runner against the whole
# manifest, then reads its CASE lines through the C runner's
# "--verify LANG MANIFEST OUTPUT" (c/verify.c), which applies the protocol's
# rules: a cell is pass, fail, missing or absent-by-seed; a line that breaks
# a rule (absent-by-seed for a case the manifest does not mark absent for
# that language, a pass for one it does, an unknown status, a repeat ...)
# makes its cell "fail" and is explained on stderr. A language without a
# runner, or a case its runner printed no line for, is "missing".
# Plain POSIX sh and awk: no python, no jq. Exits 0 once the matrix is
# printed, whatever the results (the test targets are the gates); 2 for a
# usage error or a manifest the C runner cannot read.
#
# Under "bazel run" the runners find their runfiles through RUNFILES_DIR,
# which this script sets to its own runfiles tree when it is not set.
set -u

LANGS="c cpp java dotnet node"

usage() {
    echo "usage: matrix.sh --manifest FILE --runner c=PATH [--runner LANG=PATH ...] [--json]" >&2
    exit 2
}

manifest=
json=0
runners=
while [ $# -gt 0 ]; do
    case "$1" in
    --manifest) [ $# -ge 2 ] || usage; manifest=$2; shift 2 ;;
    --runner) [ $# -ge 2 ] || usage; runners="$runners $2"; shift 2 ;;
    --json) json=1; shift ;;
    *) usage ;;
    esac
done
[ -n "$manifest" ] || usage

runner_of() { # LANG -> the path given for it, or nothing
    for r in $runners; do
        case "$r" in "$1="*) echo "${r#*=}"; return ;; esac
    done
}

for r in $runners; do
    case " $LANGS " in
    *" ${r%%=*} "*) ;;
    *) echo "matrix: unknown language in --runner $r (known: $LANGS)" >&2; exit 2 ;;
    esac
done
c_runner=$(runner_of c)
[ -n "$c_runner" ] || usage

if [ -z "${RUNFILES_DIR:-}" ] && [ -d "$0.runfiles" ]; then
    case "$0" in
    /*) RUNFILES_DIR="$0.runfiles" ;;
    *) RUNFILES_DIR="$PWD/$0.runfiles" ;;
    esac
    export RUNFILES_DIR
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

if ! "$c_runner" --list "$manifest" >"$tmp/ids"; then
    echo "matrix: the C runner cannot read $manifest" >&2
    exit 2
fi

for lang in $LANGS; do
    path=$(runner_of "$lang")
    : >"$tmp/$lang.out"
    if [ -n "$path" ]; then
        "$path" "$manifest" >"$tmp/$lang.out" 2>"$tmp/$lang.err"
        rc=$?
        if [ "$rc" -gt 1 ]; then
            echo "matrix: the $lang runner exited $rc:" >&2
            grep '^ERROR' "$tmp/$lang.out" >&2
            tail -n 5 "$tmp/$lang.err" >&2
        fi
    fi
    "$c_runner" --verify "$lang" "$manifest" "$tmp/$lang.out" >"$tmp/$lang.cells" 2>"$tmp/$lang.verr"
    if [ $? -gt 1 ] && [ -n "$path" ]; then
        echo "matrix: the $lang runner's lines break the protocol:" >&2
        sed 's/^/  /' "$tmp/$lang.verr" >&2
    fi
done

awk -v langs="$LANGS" -v json="$json" -v dir="$tmp" '
BEGIN {
    nl = split(langs, lang, " ")
    for (i = 1; i <= nl; i++) {
        file = dir "/" lang[i] ".cells"
        while ((getline line < file) > 0) {
            split(line, f, " ")
            st[lang[i], f[1]] = f[2]
        }
        close(file)
    }
}
{ id[++n] = $1 }
END {
    for (k = 1; k <= n; k++)
        for (i = 1; i <= nl; i++) {
            s = ((lang[i], id[k]) in st) ? st[lang[i], id[k]] : "missing"
            res[k, i] = s
            count[i, s]++
        }
    if (json) {
        printf "{"
        for (k = 1; k <= n; k++) {
            printf "%s\n  \"%s\": {", (k > 1 ? "," : ""), id[k]
            for (i = 1; i <= nl; i++)
                printf "%s\"%s\": \"%s\"", (i > 1 ? ", " : ""), lang[i], res[k, i]
            printf "}"
        }
        printf "%s}\n", (n > 0 ? "\n" : "")
        exit 0
    }
    for (i = 1; i <= nl; i++)
        row[i] = lang[i]
    put("case")
    for (k = 1; k <= n; k++) {
        for (i = 1; i <= nl; i++)
            row[i] = res[k, i]
        put(id[k])
    }
    for (i = 1; i <= nl; i++)
        row[i] = sprintf("%d/%d", count[i, "pass"], n)
    put("pass")
    for (i = 1; i <= nl; i++)
        row[i] = sprintf("%d/%d", count[i, "absent-by-seed"], n)
    put("absent")
}
function put(first,    i) { # first, then row[1..nl], in columns
    printf "%-8s", first
    for (i = 1; i <= nl; i++)
        printf(i < nl ? " %-15s" : " %s\n", row[i])
}' "$tmp/ids"
