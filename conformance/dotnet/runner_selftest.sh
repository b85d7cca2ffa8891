#!/bin/bash
# runner_selftest.sh RUNNER MANIFEST — //conformance/dotnet:runner_selftest:
# the .NET runner speaks doc/conformance.md's protocol: --list prints the
# manifest's ids in order; --check reports missing cases with exit 1 and no
# ERROR; a case id the manifest lacks, a duplicate id and an unknown member
# are ERROR lines with exit 2; a run prints CASE lines in manifest order
# (pass for an implemented case, missing for ZZ-01, a case added to a copy
# of the manifest that no runner implements), X-1 and X-2 among
# them; a case implemented but not in the manifest is an ERROR (exit 2).
set -uo pipefail
runner=$1; manifest=$(readlink -f "$2")
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "runner_selftest: $*" >&2; exit 1; }

want=$(python3 -c 'import json,sys; print("\n".join(c["id"] for c in json.load(open(sys.argv[1]))["cases"]))' "$manifest")
got=$("$runner" --list "$manifest") || fail "--list exited $?"
[ "$got" = "$want" ] || fail "--list differs from the manifest's ids"

# A manifest with one more case, ZZ-01, that no runner implements.
plus=$tmp/plus.json
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); m["cases"].append({"id":"ZZ-01","title":"a case no runner implements","seed":"none","params":{}}); json.dump(m,open(sys.argv[2],"w"))' "$manifest" "$plus"
out=$("$runner" --check "$manifest"); rc=$?
{ [ $rc -eq 0 ] || [ $rc -eq 1 ]; } || fail "--check exited $rc (expected 0, or 1 with missing cases)"
echo "$out" | grep -q '^ERROR' && fail "--check printed ERROR lines: $(echo "$out" | grep '^ERROR')"
out=$("$runner" --check "$plus"); rc=$?
[ $rc -eq 1 ] || fail "--check with ZZ-01 exited $rc (a missing case: expected 1)"
echo "$out" | grep -q '^ERROR' && fail "--check printed ERROR lines: $(echo "$out" | grep '^ERROR')"
echo "$out" | grep -q '^CASE ZZ-01 missing ' || fail "--check does not report ZZ-01 missing"

out=$("$runner" "$manifest" ZZ-99); rc=$?
[ $rc -eq 2 ] || fail "an id the manifest lacks exited $rc (expected 2)"
echo "$out" | grep -q '^ERROR case ZZ-99 is not in the manifest' || fail "no ERROR line for ZZ-99"

python3 - "$manifest" "$tmp/dup.json" "$tmp/member.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
d = json.loads(json.dumps(m)); d["cases"].append(dict(d["cases"][0])); json.dump(d, open(sys.argv[2], "w"))
u = json.loads(json.dumps(m)); u["cases"][0]["bogus"] = 1; json.dump(u, open(sys.argv[3], "w"))
PY
out=$("$runner" --check "$tmp/dup.json"); rc=$?
{ [ $rc -eq 2 ] && echo "$out" | grep -q '^ERROR .*duplicate case id'; } || fail "a duplicate id: exit $rc"
out=$("$runner" --check "$tmp/member.json"); rc=$?
{ [ $rc -eq 2 ] && echo "$out" | grep -q '^ERROR .*unknown member "bogus"'; } || fail "an unknown member: exit $rc"

out=$("$runner" "$plus" ZZ-01 X-2 SC-06 X-1); rc=$?
[ $rc -eq 1 ] || fail "the X run exited $rc (ZZ-01 missing: expected 1)"
lines=$(echo "$out" | awk '{print $1, $2, $3}')
expect=$'CASE SC-06 pass\nCASE X-1 pass\nCASE X-2 pass\nCASE ZZ-01 missing'
[ "$lines" = "$expect" ] || fail "CASE lines: $lines"
small=$tmp/small.json
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); m["cases"]=[c for c in m["cases"] if c["id"]!="SC-06"]; json.dump(m,open(sys.argv[2],"w"))' "$manifest" "$small"
out=$("$runner" --check "$small"); rc=$?
{ [ $rc -eq 2 ] && echo "$out" | grep -q '^ERROR case SC-06 is implemented by the .NET runner but not in the manifest'; } || fail "an implemented case the manifest lacks: exit $rc"
echo "runner_selftest: ok"
