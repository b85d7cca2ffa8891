#!/bin/sh
# selftest.sh RUNNER MANIFEST — //conformance/node:runner_selftest: the Node
# runner speaks the protocol of doc/conformance.md on the real manifest:
# --list prints the manifest's ids in order; --check prints a CASE line for
# each case it lacks and exits 1 when one is missing (0 when none); a run
# of a few cases prints one CASE line each in manifest order and exits 1
# when one is missing; an unknown id or a malformed manifest is exit 2 with
# ERROR. Whether every case passes is //conformance:node's gate, not this
# test's.
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

# A run of a few cases (the whole manifest is //conformance:node's gate,
# with c_runner --verify checking its lines): given out of order, they come
# back in manifest order, one CASE line each; a case the manifest has and
# no runner implements (ZZ-01, added to a copy) is missing and makes the
# exit status 1; an id the manifest lacks is exit 2 with ERROR.
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); m["cases"].append({"id":"ZZ-01","title":"a case no runner implements","seed":"none","params":{}}); json.dump(m,open(sys.argv[2],"w"))' "$manifest" "$tmp/plus.json"
"$runner" --check "$tmp/plus.json" >"$tmp/plus.check" 2>/dev/null
[ $? -eq 1 ] || fail "--check with ZZ-01 did not exit 1"
grep -q '^CASE ZZ-01 missing ' "$tmp/plus.check" || fail "--check does not report ZZ-01 missing"
"$runner" "$tmp/plus.json" ZZ-01 X-2 SC-06 X-1 >"$tmp/run" 2>"$tmp/run.err"
rc=$?
lines=$(awk '{print $1, $2, $3}' "$tmp/run")
expect=$(printf 'CASE SC-06 pass\nCASE X-1 pass\nCASE X-2 pass\nCASE ZZ-01 missing')
[ "$lines" = "$expect" ] || { cat "$tmp/run" "$tmp/run.err" >&2; fail "CASE lines: $lines"; }
[ $rc -eq 1 ] || fail "a run with ZZ-01 missing exited $rc, expected 1"
"$runner" "$manifest" SC-06 >"$tmp/one" 2>/dev/null
[ $? -eq 0 ] || fail "a run of SC-06 alone did not exit 0"
"$runner" "$manifest" ZZ-99 >"$tmp/unknown" 2>/dev/null
[ $? -eq 2 ] || fail "an id the manifest lacks did not exit 2"
grep -q '^ERROR ' "$tmp/unknown" || fail "an id the manifest lacks printed no ERROR line"

printf '{"cases": [{"id": "bad"}]}' >"$tmp/bad.json"
"$runner" "$tmp/bad.json" >"$tmp/bad" 2>/dev/null
[ $? -eq 2 ] || fail "a malformed manifest did not exit 2"
grep -q '^ERROR ' "$tmp/bad" || fail "a malformed manifest printed no ERROR line"
echo "selftest: ok ($missing missing in --check)"
