#!/bin/sh
# selftest.sh RUNNER MANIFEST — //conformance/node:runner_selftest: the Node
# runner speaks the protocol of doc/conformance.md on the real manifest:
# --list prints the manifest's ids in order; --check prints a CASE line for
# each case it lacks and exits 1 when one is missing (0 when none); a run
# prints exactly one CASE line per case in manifest order, never a pass for
# a case --check called missing, and exits 1 when a case failed or is
# missing; a malformed manifest is exit 2 with ERROR. Whether the cases
# pass is //conformance:node's gate, not this test's.
set -u
runner=$1 manifest=$2
tmp=${TEST_TMPDIR:-$(mktemp -d)}
fail() { echo "selftest: $*" >&2; exit 1; }

"$runner" --list "$manifest" >"$tmp/list" || fail "--list exited $?"
python3 -c "import json,sys; print('\n'.join(c['id'] for c in json.load(open(sys.argv[1]))['cases']))" "$manifest" >"$tmp/ids"
cmp -s "$tmp/list" "$tmp/ids" || fail "--list differs from the manifest's ids"

"$runner" --check "$manifest" >"$tmp/check" 2>/dev/null
rc=$?
missing=$(grep -c '^CASE .* missing ' "$tmp/check")
if [ "$missing" -gt 0 ]; then [ $rc -eq 1 ] || fail "--check with $missing missing exited $rc"; else [ $rc -eq 0 ] || fail "--check exited $rc"; fi
grep -v '^CASE [A-Z]*-[0-9]* missing ' "$tmp/check" | grep . && fail "--check printed more than missing lines"

"$runner" "$manifest" >"$tmp/run" 2>"$tmp/run.err"
rc=$?
sed 's/^CASE \([^ ]*\) .*/\1/' "$tmp/run" >"$tmp/run.ids"
cmp -s "$tmp/run.ids" "$tmp/ids" || { cat "$tmp/run" >&2; fail "a run did not print one CASE line per case in manifest order"; }
# A failing case is the suite's finding, not a protocol fault: it is shown
# here and gated by //conformance:node; the exit status must count it.
failed=$(grep -c '^CASE [^ ]* fail ' "$tmp/run")
[ "$failed" -gt 0 ] && grep '^CASE [^ ]* fail ' "$tmp/run" >&2
for id in $(sed -n 's/^CASE \([^ ]*\) missing .*/\1/p' "$tmp/check"); do
    grep -q "^CASE $id missing " "$tmp/run" || fail "$id: missing in --check, not in the run"
done
want=0; [ "$missing" -gt 0 ] || [ "$failed" -gt 0 ] && want=1
[ $rc -eq $want ] || fail "a run exited $rc, expected $want"

printf '{"cases": [{"id": "bad"}]}' >"$tmp/bad.json"
"$runner" "$tmp/bad.json" >"$tmp/bad" 2>/dev/null
[ $? -eq 2 ] || fail "a malformed manifest did not exit 2"
grep -q '^ERROR ' "$tmp/bad" || fail "a malformed manifest printed no ERROR line"
echo "selftest: $(grep -c '^CASE [^ ]* pass ' "$tmp/run") pass, $failed fail, $missing missing"
