#!/bin/sh
# check_selftest.sh — //conformance:check_selftest: the runner's manifest
# checks catch what they should. Each step feeds the C runner a manifest
# and checks its exit status and the line that says why. Made-up ids
# (ZZ-..) only: the real cases are named in the manifest alone.
# usage: check_selftest.sh C_RUNNER MANIFEST
set -u
[ $# -eq 2 ] || { echo "usage: check_selftest.sh C_RUNNER MANIFEST" >&2; exit 2; }
runner=$1
manifest=$2
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0

# expect NAME STATUS PATTERN -- ARGS...: the runner exits STATUS and its
# stdout has a line matching the extended regular expression PATTERN.
expect() {
    name=$1 want=$2 pattern=$3
    shift 4
    "$runner" "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "not ok - $name: exit $got, expected $want"
        sed 's/^/  | /' "$tmp/out" "$tmp/err"
        failures=$((failures + 1))
    elif [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$tmp/out"; then
        echo "not ok - $name: no line matches /$pattern/"
        sed 's/^/  | /' "$tmp/out"
        failures=$((failures + 1))
    else
        echo "ok - $name"
    fi
}

one_case='{"id": "ZZ-01", "title": "made up", "seed": "none", "params": {}}'

# The real manifest passes the check.
expect "real manifest" 0 '' -- --check "$manifest"
if grep -q '^CASE\|^ERROR' "$tmp/out"; then
    echo "not ok - real manifest: the check reported:"
    sed 's/^/  | /' "$tmp/out"
    failures=$((failures + 1))
fi

# A duplicate id.
printf '{"cases": [%s, %s]}\n' "$one_case" "$one_case" >"$tmp/dup.json"
expect "duplicate id" 2 '^ERROR .*duplicate case id ZZ-01' -- --check "$tmp/dup.json"

# A case in the manifest that the runner does not implement: missing, in
# --check and in a run; every case the runner implements is then an error.
sed "s/\"cases\": *\[/\"cases\": [$one_case,/" "$manifest" >"$tmp/extra.json"
expect "unimplemented case (check)" 1 '^CASE ZZ-01 missing ' -- --check "$tmp/extra.json"
expect "unimplemented case (run)" 1 '^CASE ZZ-01 missing ' -- "$tmp/extra.json" ZZ-01
printf '{"cases": [%s]}\n' "$one_case" >"$tmp/only.json"
expect "implemented case not in the manifest" 2 \
    '^ERROR case [A-Z]+-[0-9]+ is implemented by the C runner but not in the manifest' \
    -- --check "$tmp/only.json"

# Malformed manifests.
printf '{"cases": [%s,]}\n' "$one_case" >"$tmp/syntax.json"
expect "syntax error" 2 '^ERROR .*line 1 column' -- --check "$tmp/syntax.json"
printf '{"cases": [{"id": "ZZ-01", "seed": "none", "params": {}}]}\n' >"$tmp/title.json"
expect "case without a title" 2 '^ERROR .*ZZ-01 needs a non-empty "title"' \
    -- --check "$tmp/title.json"
printf '{"cases": [{"id": "zz1", "title": "t", "seed": "s", "params": {}}]}\n' >"$tmp/id.json"
expect "malformed id" 2 '^ERROR .*no id of the form' -- --check "$tmp/id.json"
# The optional "later" member: a non-empty array of {"part", "needs"}.
later_case='{"id": "ZZ-01", "title": "t", "seed": "s", "params": {}, "later": %s}'
printf "{\"cases\": [$later_case]}\n" '[]' >"$tmp/later_empty.json"
expect "empty later" 2 '^ERROR .*ZZ-01: "later" must be a non-empty array' \
    -- --check "$tmp/later_empty.json"
printf "{\"cases\": [$later_case]}\n" '{"part": "p", "needs": "n"}' >"$tmp/later_obj.json"
expect "later not an array" 2 '^ERROR .*ZZ-01: "later" must be a non-empty array' \
    -- --check "$tmp/later_obj.json"
printf "{\"cases\": [$later_case]}\n" '[{"part": "p"}]' >"$tmp/later_needs.json"
expect "later entry without needs" 2 '^ERROR .*ZZ-01: "later" entry 1 needs exactly' \
    -- --check "$tmp/later_needs.json"
printf "{\"cases\": [$later_case]}\n" '[{"part": "p", "needs": ""}]' >"$tmp/later_blank.json"
expect "later entry with an empty needs" 2 '^ERROR .*ZZ-01: "later" entry 1 needs exactly' \
    -- --check "$tmp/later_blank.json"
printf "{\"cases\": [$later_case]}\n" '[{"part": "p", "needs": "n", "when": "x"}]' \
    >"$tmp/later_extra.json"
expect "later entry with an unknown member" 2 '^ERROR .*ZZ-01: "later" entry 1 needs exactly' \
    -- --check "$tmp/later_extra.json"
printf '{"cases": [{"id": "ZZ-01", "title": "t", "seed": "s", "params": {}, "lately": 1}]}\n' \
    >"$tmp/unknown_member.json"
expect "unknown case member" 2 '^ERROR .*ZZ-01 has an unknown member "lately"' \
    -- --check "$tmp/unknown_member.json"

expect "unknown case on the command line" 2 '^ERROR case ZZ-77 is not in the manifest' \
    -- "$manifest" ZZ-77
expect "missing manifest" 2 '^ERROR .*cannot read' -- --check "$tmp/none.json"

# A case whose parameters are gone fails (parameters come from the manifest
# only), reported as "fail" with the reason. The first case that takes a
# parameter shows it; cases that take none pass and the search goes on.
sed 's/"params": *{[^}]*}/"params": {}/g' "$manifest" >"$tmp/noparams.json"
found=0
for id in $("$runner" --list "$manifest"); do
    "$runner" "$tmp/noparams.json" "$id" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -eq 1 ] && grep -Eq "^CASE $id fail .*parameter \"[a-z_]+\" is missing" "$tmp/out"; then
        echo "ok - a case without its parameters fails ($id)"
        found=1
        break
    fi
    if [ "$got" -ne 0 ]; then
        echo "not ok - $id without parameters: exit $got"
        sed 's/^/  | /' "$tmp/out"
        failures=$((failures + 1))
        break
    fi
done
if [ "$found" -eq 0 ]; then
    echo "not ok - no case failed with its parameters removed"
    failures=$((failures + 1))
fi

echo "# $failures failure(s)"
[ "$failures" -eq 0 ]
