#!/bin/sh
# check_selftest.sh — //conformance:check_selftest: the checks catch what
# they should. Each step feeds the C runner a manifest (or another runner's
# CASE lines, for --verify and run.sh) and checks its exit status and the
# line that says why. Made-up ids (ZZ-.., Z-..) only: the real cases are
# named in the manifest alone.
# usage: check_selftest.sh C_RUNNER MANIFEST RUN_SH
set -u
[ $# -eq 3 ] || { echo "usage: check_selftest.sh C_RUNNER MANIFEST RUN_SH" >&2; exit 2; }
runner=$1
manifest=$2
run_sh=$3
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
# Ids: capitals, '-', digits (PL-01, X-1); anything else is refused.
for bad in zz1 ZZ1 -1 x-1 ZZ- ZZ-1a Z_Z-1 ""; do
    printf '{"cases": [{"id": "%s", "title": "t", "seed": "s", "params": {}}]}\n' "$bad" \
        >"$tmp/id.json"
    expect "malformed id \"$bad\"" 2 '^ERROR .*no id of the form' -- --check "$tmp/id.json"
done
short_case='{"id": "Z-7", "title": "made up", "seed": "none", "params": {}}'
sed "s/\"cases\": *\[/\"cases\": [$short_case,/" "$manifest" >"$tmp/short_id.json"
expect "short id Z-7 accepted (missing, not malformed)" 1 '^CASE Z-7 missing ' \
    -- --check "$tmp/short_id.json"
# Numbers are integers, keys unique.
printf '{"cases": [{"id": "ZZ-01", "title": "t", "seed": "s", "params": {"t": 1.5}}]}\n' \
    >"$tmp/fraction.json"
expect "a fraction" 2 '^ERROR .*cases\[0\]\.params\.t is 1\.5: the manifest takes integers only' \
    -- --check "$tmp/fraction.json"
printf '{"cases": [{"id": "ZZ-01", "title": "t", "seed": "s", "params": {}, "title": "u"}]}\n' \
    >"$tmp/dupkey.json"
expect "a duplicate key" 2 '^ERROR .*line 1 column [0-9]+: duplicate object key' \
    -- --check "$tmp/dupkey.json"
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
# The optional "absent" member: {"<lang>": "<reason citing the seed>"},
# never for c, only the known languages.
absent_case='{"id": "ZZ-01", "title": "t", "seed": "s", "params": {}, "absent": %s}'
sect=$(printf '\302\247') # the section sign, UTF-8
seed_why="\"seed 000 ${sect}4.1: no synchronous terminator\""
printf "{\"cases\": [$absent_case]}\n" "{\"c\": $seed_why}" >"$tmp/absent_c.json"
expect "absent for c" 2 '^ERROR .*ZZ-01: "absent" names c: the C runner is the reference' \
    -- --check "$tmp/absent_c.json"
printf "{\"cases\": [$absent_case]}\n" '{"node": ""}' >"$tmp/absent_empty.json"
expect "absent with an empty reason" 2 \
    '^ERROR .*ZZ-01: "absent" reason for node must be a non-empty string citing the seed' \
    -- --check "$tmp/absent_empty.json"
printf "{\"cases\": [$absent_case]}\n" '{"node": "no reason given"}' >"$tmp/absent_nocite.json"
expect "absent with a reason that cites no seed" 2 \
    '^ERROR .*ZZ-01: "absent" reason for node must be a non-empty string citing the seed' \
    -- --check "$tmp/absent_nocite.json"
printf "{\"cases\": [$absent_case]}\n" '{"node": 1}' >"$tmp/absent_number.json"
expect "absent with a reason that is no string" 2 \
    '^ERROR .*ZZ-01: "absent" reason for node must be a non-empty string' \
    -- --check "$tmp/absent_number.json"
printf "{\"cases\": [$absent_case]}\n" "{\"rust\": $seed_why}" >"$tmp/absent_lang.json"
expect "absent for an unknown language" 2 \
    '^ERROR .*ZZ-01: "absent" names an unknown language "rust"' -- --check "$tmp/absent_lang.json"
printf "{\"cases\": [$absent_case]}\n" '{}' >"$tmp/absent_none.json"
expect "absent naming no language" 2 '^ERROR .*ZZ-01: "absent" must be a non-empty object' \
    -- --check "$tmp/absent_none.json"
printf "{\"cases\": [$absent_case]}\n" '["node"]' >"$tmp/absent_array.json"
expect "absent not an object" 2 '^ERROR .*ZZ-01: "absent" must be a non-empty object' \
    -- --check "$tmp/absent_array.json"
good_absent=$(printf "$absent_case" "{\"node\": $seed_why, \"java\": $seed_why}")
sed "s/\"cases\": *\[/\"cases\": [$good_absent,/" "$manifest" >"$tmp/absent_ok.json"
expect "a well-formed absent is accepted (missing, not malformed)" 1 '^CASE ZZ-01 missing ' \
    -- --check "$tmp/absent_ok.json"

expect "unknown case on the command line" 2 '^ERROR case ZZ-77 is not in the manifest' \
    -- "$manifest" ZZ-77
expect "missing manifest" 2 '^ERROR .*cannot read' -- --check "$tmp/none.json"

# --verify: another runner's CASE lines held against a manifest where
# ZZ-02 is marked absent for node. expect_verify NAME STATUS PATTERN LANG
# LINES: the lines (printf format) as the runner's output; the verifier
# exits STATUS and its stdout and stderr have a line matching PATTERN.
printf '{"cases": [%s, %s]}\n' \
    '{"id": "ZZ-01", "title": "one", "seed": "none", "params": {}}' \
    "$(printf "$absent_case" "{\"node\": $seed_why}" | sed 's/ZZ-01/ZZ-02/')" \
    >"$tmp/verify.json"
expect_verify() {
    name=$1 want=$2 pattern=$3 lang=$4
    printf "$5" >"$tmp/lines"
    "$runner" --verify "$lang" "$tmp/verify.json" "$tmp/lines" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "not ok - verify: $name: exit $got, expected $want"
        sed 's/^/  | /' "$tmp/out" "$tmp/err"
        failures=$((failures + 1))
    elif ! cat "$tmp/out" "$tmp/err" | grep -Eq -- "$pattern"; then
        echo "not ok - verify: $name: no line matches /$pattern/"
        sed 's/^/  | /' "$tmp/out" "$tmp/err"
        failures=$((failures + 1))
    else
        echo "ok - verify: $name"
    fi
}
proved='CASE ZZ-02 absent-by-seed the call object has no synchronous terminator\n'
expect_verify "pass and a proved absence" 0 '^ZZ-02 absent-by-seed$' node \
    "CASE ZZ-01 pass 1 ms\n$proved"
expect_verify "absent-by-seed in a language the case is not marked for" 2 \
    'ZZ-02: absent-by-seed, but the manifest does not mark it absent for java' java \
    "CASE ZZ-01 pass 1 ms\n$proved"
expect_verify "... its cell is fail" 2 '^ZZ-02 fail$' java "CASE ZZ-01 pass 1 ms\n$proved"
expect_verify "absent-by-seed from the C runner" 2 'does not mark it absent for c' c \
    "CASE ZZ-01 pass 1 ms\n$proved"
expect_verify "absent-by-seed for a case not marked" 2 \
    'ZZ-01: absent-by-seed, but the manifest does not mark it absent for node' node \
    "CASE ZZ-01 absent-by-seed no such method\n$proved"
expect_verify "a pass for a case marked absent" 2 'ZZ-02: pass, but the manifest marks it absent' \
    node 'CASE ZZ-01 pass 1 ms\nCASE ZZ-02 pass 1 ms\n'
expect_verify "absent-by-seed without a detail" 2 'ZZ-02: absent-by-seed without a detail' node \
    'CASE ZZ-01 pass 1 ms\nCASE ZZ-02 absent-by-seed\n'
expect_verify "an unknown status" 2 'ZZ-01: unknown status "skip"' node \
    "CASE ZZ-01 skip later\n$proved"
expect_verify "out of manifest order" 2 'ZZ-01: out of manifest order' node \
    "${proved}CASE ZZ-01 pass 1 ms\n"
expect_verify "a case reported twice" 2 'ZZ-01: reported twice' node \
    "CASE ZZ-01 pass 1 ms\nCASE ZZ-01 pass 1 ms\n$proved"
expect_verify "a case the manifest does not have" 2 'ZZ-09: not a case of the manifest' node \
    "CASE ZZ-01 pass 1 ms\n${proved}CASE ZZ-09 pass 1 ms\n"
expect_verify "an ERROR line" 2 'the runner reported: ERROR broken' node \
    "ERROR broken\nCASE ZZ-01 pass 1 ms\n$proved"
expect_verify "a case with no line is missing" 1 '^ZZ-01 missing$' node "$proved"
expect_verify "a failed case" 1 '^ZZ-01 fail$' node "CASE ZZ-01 fail x.c:1: no\n$proved"
expect_verify "an unknown language" 2 'unknown language "rust"' rust "CASE ZZ-01 pass 1 ms\n"

# run.sh --run: the test passes only when the runner exits 0 AND its lines
# hold against the manifest; --check only when --check exits 0 with nothing
# missing. fake RC LINES makes a stand-in runner that prints LINES and
# exits RC.
fake() {
    printf '#!/bin/sh\nprintf "%s"\nexit %s\n' "$2" "$1" >"$tmp/fake_runner"
    chmod +x "$tmp/fake_runner"
}
expect_run() {
    name=$1 want=$2 mode=$3 lang=$4
    sh "$run_sh" "$mode" "$lang" "$runner" "$tmp/verify.json" "$tmp/fake_runner" \
        >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "not ok - run.sh: $name: exit $got, expected $want"
        sed 's/^/  | /' "$tmp/out" "$tmp/err"
        failures=$((failures + 1))
    else
        echo "ok - run.sh: $name"
    fi
}
fake 0 "CASE ZZ-01 pass 1 ms\\n$proved"
expect_run "every case passes or is rightly absent" 0 --run node
expect_run "the same lines from a language the case is not marked for" 1 --run java
fake 1 "CASE ZZ-01 pass 1 ms\\n$proved"
expect_run "the runner exits 1" 1 --run node
fake 0 "CASE ZZ-01 fail x.c:1: no\\n$proved"
expect_run "the runner exits 0 with a failed case" 1 --run node
fake 0 "CASE ZZ-01 pass 1 ms\\n"
expect_run "the runner exits 0 and leaves a case out" 1 --run node
fake 0 ""
expect_run "--check exits 0 with nothing to report" 0 --check node
fake 1 "CASE ZZ-01 missing not implemented\\n"
expect_run "--check exits 1" 1 --check node
fake 0 "CASE ZZ-01 missing not implemented\\n"
expect_run "--check exits 0 but reports a case missing" 1 --check node

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
