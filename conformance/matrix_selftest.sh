#!/bin/sh
# matrix_selftest.sh — //conformance:matrix_selftest: the matrix reads CASE
# lines right. A made-up manifest (ZZ-.. ids), the real C runner (which
# implements none of them: "missing") and a stand-in runner for one more
# language that passes one case, fails one and says nothing of the third.
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
  {"id": "ZZ-03", "title": "three", "seed": "none", "params": {}}
]}
JSON
cat >"$tmp/fake_runner" <<'SH'
#!/bin/sh
echo "CASE ZZ-01 pass 1 ms"
echo "CASE ZZ-02 fail file.c:1: broken"
echo "not a case line"
exit 1
SH
chmod +x "$tmp/fake_runner"

sh "$matrix" --manifest "$tmp/cases.json" --runner "c=$c_runner" \
    --runner "java=$tmp/fake_runner" --json >"$tmp/json" 2>"$tmp/err"
rc=$?
cat >"$tmp/want" <<'JSON'
{
  "ZZ-01": {"c": "missing", "cpp": "missing", "java": "pass", "dotnet": "missing", "node": "missing"},
  "ZZ-02": {"c": "missing", "cpp": "missing", "java": "fail", "dotnet": "missing", "node": "missing"},
  "ZZ-03": {"c": "missing", "cpp": "missing", "java": "missing", "dotnet": "missing", "node": "missing"}
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
sh "$matrix" --manifest "$tmp/cases.json" --runner "c=$c_runner" \
    --runner "java=$tmp/fake_runner" >"$tmp/table" 2>/dev/null
if grep -Eq '^ZZ-02 +missing +missing +fail +missing +missing$' "$tmp/table" &&
    grep -Eq '^pass +0/3 +0/3 +1/3 +0/3 +0/3$' "$tmp/table"; then
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
