#!/bin/sh
# matrix_selftest.sh — //conformance:matrix_selftest: the matrix reads CASE
# lines right. A made-up manifest (ZZ-.. ids; ZZ-04 marked absent for java
# and dotnet), the real C runner (which implements none of them: "missing")
# and stand-in runners: java passes one case, fails one, says nothing of
# the third and proves the fourth absent; node claims absences the manifest
# does not give it; dotnet passes the case marked absent for it. A claim
# the manifest does not back is a "fail" cell.
# usage: matrix_selftest.sh MATRIX_SH C_RUNNER
set -u
[ $# -eq 2 ] || { echo "usage: matrix_selftest.sh MATRIX_SH C_RUNNER" >&2; exit 2; }
matrix=$1
c_runner=$2
tmp=${TEST_TMPDIR:-$(mktemp -d)}

cat >"$tmp/cases.json" <<'JSON'
{"cases": [
  {"id": "ZZ-01", "title": "one", "seed": "none", "params": {}},
  {"id": "ZZ-02", "title": "two", "seed": "none", "params": {}},
  {"id": "ZZ-03", "title": "three", "seed": "none", "params": {}},
  {"id": "ZZ-04", "title": "four", "seed": "none", "params": {},
   "absent": {"java": "seed 000 \u00a74.1: made up", "dotnet": "seed 000 \u00a74.1: made up"}}
]}
JSON
cat >"$tmp/fake_runner" <<'SH'
#!/bin/sh
echo "CASE ZZ-01 pass 1 ms"
echo "CASE ZZ-02 fail file.c:1: broken"
echo "not a case line"
echo "CASE ZZ-04 absent-by-seed the call object has no such method"
exit 1
SH
cat >"$tmp/fake_node" <<'SH'
#!/bin/sh
echo "CASE ZZ-01 absent-by-seed not marked for node"
echo "CASE ZZ-02 pass 1 ms"
echo "CASE ZZ-03 pass 1 ms"
echo "CASE ZZ-04 absent-by-seed marked for java only"
exit 0
SH
cat >"$tmp/fake_dotnet" <<'SH'
#!/bin/sh
echo "CASE ZZ-01 pass 1 ms"
echo "CASE ZZ-04 pass 1 ms"
exit 1
SH
chmod +x "$tmp/fake_runner" "$tmp/fake_node" "$tmp/fake_dotnet"

sh "$matrix" --manifest "$tmp/cases.json" --runner "c=$c_runner" \
    --runner "java=$tmp/fake_runner" --runner "node=$tmp/fake_node" \
    --runner "dotnet=$tmp/fake_dotnet" --json >"$tmp/json" 2>"$tmp/err"
rc=$?
cat >"$tmp/want" <<'JSON'
{
  "ZZ-01": {"c": "missing", "cpp": "missing", "java": "pass", "dotnet": "pass", "node": "fail"},
  "ZZ-02": {"c": "missing", "cpp": "missing", "java": "fail", "dotnet": "missing", "node": "pass"},
  "ZZ-03": {"c": "missing", "cpp": "missing", "java": "missing", "dotnet": "missing", "node": "pass"},
  "ZZ-04": {"c": "missing", "cpp": "missing", "java": "absent-by-seed", "dotnet": "fail", "node": "fail"}
}
JSON
failures=0
if [ "$rc" -ne 0 ] || ! cmp -s "$tmp/json" "$tmp/want"; then
    echo "not ok - --json (exit $rc):"
    diff "$tmp/want" "$tmp/json"
    sed 's/^/  | /' "$tmp/err"
    failures=$((failures + 1))
else
    echo "ok - --json"
fi
for why in 'ZZ-01: absent-by-seed, but the manifest does not mark it absent for node' \
    'ZZ-04: absent-by-seed, but the manifest does not mark it absent for node' \
    'ZZ-04: pass, but the manifest marks it absent for dotnet'; do
    if grep -Fq "$why" "$tmp/err"; then
        echo "ok - explained: $why"
    else
        echo "not ok - not explained on stderr: $why"
        sed 's/^/  | /' "$tmp/err"
        failures=$((failures + 1))
    fi
done
sh "$matrix" --manifest "$tmp/cases.json" --runner "c=$c_runner" \
    --runner "java=$tmp/fake_runner" >"$tmp/table" 2>/dev/null
if grep -Eq '^ZZ-02 +missing +missing +fail +missing +missing$' "$tmp/table" &&
    grep -Eq '^ZZ-04 +missing +missing +absent-by-seed +missing +missing$' "$tmp/table" &&
    grep -Eq '^pass +0/4 +0/4 +1/4 +0/4 +0/4$' "$tmp/table" &&
    grep -Eq '^absent +0/4 +0/4 +1/4 +0/4 +0/4$' "$tmp/table"; then
    echo "ok - table"
else
    echo "not ok - table:"
    sed 's/^/  | /' "$tmp/table"
    failures=$((failures + 1))
fi
if sh "$matrix" --manifest "$tmp/cases.json" --runner "rust=$tmp/fake_runner" 2>/dev/null; then
    echo "not ok - an unknown language is accepted"
    failures=$((failures + 1))
else
    echo "ok - an unknown language is refused"
fi
echo "# $failures failure(s)"
[ "$failures" -eq 0 ]
