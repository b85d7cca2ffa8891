#!/usr/bin/env bash
# install_test_lib_selftest.sh — //packages:install_test_lib_selftest: the
# helpers of install_test_lib.sh pass a server that keeps the protocol and
# fail, with their message, for each way a server can break it.
#
#   install_test_lib_selftest.sh INSTALL_TEST_LIB ECHO_SERVER
#
# Every scenario runs in its own subshell (zpk_fail exits it) with a fake
# server written here, except the two that use the real echo_server.
set -euo pipefail

[ "$#" -eq 2 ] || { echo "usage: install_test_lib_selftest.sh LIB ECHO_SERVER" >&2; exit 2; }
lib=$(realpath "$1")
server=$(realpath "$2")
dir=$(mktemp -d "${TEST_TMPDIR:?}/selftest.XXXXXX")
failures=0

# fake NAME BODY: an executable bash script $dir/NAME running BODY.
fake() {
    printf '#!/usr/bin/env bash\n%s\n' "$2" >"$dir/$1"
    chmod +x "$dir/$1"
}
# The protocol kept: LISTENING, then STOPPED when stdin ends or on SIGTERM.
fake good 'trap "echo STOPPED SIGTERM served 1; exit 0" TERM
echo LISTENING tcp://127.0.0.1:5999
while read -r _; do :; done
echo STOPPED stdin-eof served 1'
fake wrong_first_line 'echo READY tcp://127.0.0.1:5999; cat >/dev/null'
fake silent_exit 'echo "cannot bind" >&2; exit 1'
fake bad_status 'echo LISTENING tcp://127.0.0.1:5999; cat >/dev/null; echo STOPPED stdin-eof served 1; exit 3'
fake wrong_count 'echo LISTENING tcp://127.0.0.1:5999; cat >/dev/null; echo STOPPED stdin-eof served 2'
fake extra_line 'echo LISTENING tcp://127.0.0.1:5999; cat >/dev/null; echo something; echo STOPPED stdin-eof served 1'

# expect pass|fail WORDS NAME COMMANDS: runs COMMANDS after sourcing the
# library; a fail must print "FAIL: " with WORDS in it.
expect() {
    local want=$1 words=$2 name=$3 cmds=$4 rc=0 err
    err=$( (source "$lib"; eval "$cmds") 2>&1 >/dev/null) || rc=$?
    if [ "$want" = pass ] && [ "$rc" -ne 0 ]; then
        echo "not ok: $name: failed: $err"
        failures=$((failures + 1))
    elif [ "$want" = fail ] && { [ "$rc" -eq 0 ] || [[ "$err" != *"FAIL: "*"$words"* ]]; }; then
        echo "not ok: $name: wanted a failure naming '$words', got status $rc: $err"
        failures=$((failures + 1))
    else
        echo "ok: $name"
    fi
}

expect pass "" "good server, stdin EOF" \
    "zpk_server_start '$dir/good'; [ \"\$ZPK_ENDPOINT\" = tcp://127.0.0.1:5999 ]; zpk_server_stop eof 1"
expect pass "" "good server, SIGTERM" \
    "zpk_server_start '$dir/good'; zpk_server_stop term 1"
expect pass "" "echo_server, nothing served" \
    "zpk_server_start '$server'; zpk_server_stop eof 0"
expect fail "first line is not" "a wrong first line" \
    "zpk_server_start '$dir/wrong_first_line'"
expect fail "printed no line" "a server that exits at once" \
    "zpk_server_start '$dir/silent_exit'"
expect fail "printed no line" "echo_server that cannot bind" \
    "zpk_server_start '$server' --endpoint tcp://256.0.0.1:1"
expect fail "exited with status 3" "a non-zero exit status" \
    "zpk_server_start '$dir/bad_status'; zpk_server_stop eof 1"
expect fail "served 1" "a wrong served count" \
    "zpk_server_start '$dir/wrong_count'; zpk_server_stop eof 1"
expect fail "last output is not" "an extra line before STOPPED" \
    "zpk_server_start '$dir/extra_line'; zpk_server_stop eof 1"
expect fail "stdin-eof served 1" "the wrong stop reason" \
    "zpk_server_start '$dir/good'; kill -TERM \$ZPK_SERVER_PID; zpk_server_stop eof 1"
expect fail "not an executable" "a missing server" \
    "zpk_server_start '$dir/none'"

[ "$failures" -eq 0 ] || { echo "$failures scenario(s) failed"; exit 1; }
echo "PASS: every scenario"
