# install_test_lib.sh — shell helpers every package install test sources
# (packages/README.md, "Adding a package"). Bash only; source it after
# `set -euo pipefail`.
#
#   zpk_fail MESSAGE...          prints "FAIL: MESSAGE" on stderr, exits 1
#   zpk_bound SECONDS            SECONDS scaled by ZT_TIMEOUT_MULT (asan 3,
#                                tsan 5): a failure bound, never a pause
#   zpk_tmp                      a fresh directory under $TEST_TMPDIR
#   zpk_server_start SERVER [ARG...]
#                                starts //packages:echo_server (or anything
#                                speaking its protocol) in the background and
#                                waits for its LISTENING line; sets
#                                ZPK_ENDPOINT (e.g. tcp://127.0.0.1:41234)
#                                and ZPK_SERVER_PID
#   zpk_server_stop eof|term SERVED
#                                stops it by closing its stdin (eof) or by
#                                SIGTERM (term), reads the rest of its output
#                                and checks exit status 0 and the line
#                                "STOPPED stdin-eof|SIGTERM served SERVED"
# One server at a time. A server still running when the test exits is
# killed (by its process id) from the EXIT trap this file sets.

zpk_fail() {
    echo "FAIL: $*" >&2
    exit 1
}

zpk_bound() {
    echo $(($1 * ${ZT_TIMEOUT_MULT:-1}))
}

zpk_tmp() {
    mktemp -d "${TEST_TMPDIR:?run me under bazel test}/zpk.XXXXXX"
}

ZPK_SERVER_PID=
ZPK_ENDPOINT=
zpk__in=
zpk__out=
zpk__err=

zpk__cleanup() {
    if [ -n "$ZPK_SERVER_PID" ] && kill -0 "$ZPK_SERVER_PID" 2>/dev/null; then
        kill -KILL "$ZPK_SERVER_PID" 2>/dev/null || true
    fi
}
trap zpk__cleanup EXIT

zpk_server_start() {
    [ -z "$ZPK_SERVER_PID" ] || zpk_fail "zpk_server_start: a server is running already"
    [ -x "$1" ] || zpk_fail "zpk_server_start: $1 is not an executable"
    zpk__err=$(zpk_tmp)/stderr
    local srv_err=$zpk__err
    coproc ZPK_SRV { exec "$@" 2>"$srv_err"; }
    ZPK_SERVER_PID=$ZPK_SRV_PID
    # Own copies of the two pipe ends: bash closes the coproc's when the
    # process ends, and the server's stdin must have exactly one writer (us).
    exec {zpk__out}<&"${ZPK_SRV[0]}" {zpk__in}>&"${ZPK_SRV[1]}"
    eval "exec ${ZPK_SRV[0]}<&- ${ZPK_SRV[1]}>&-"

    local line= bound
    bound=$(zpk_bound 30)
    if ! read -r -t "$bound" line <&"$zpk__out"; then
        cat "$zpk__err" >&2 || true
        zpk_fail "the server printed no line within $bound s (exited or hung; its stderr is above)"
    fi
    case "$line" in
        "LISTENING tcp://"*:[0-9]*) ZPK_ENDPOINT=${line#LISTENING } ;;
        *) zpk_fail "the server's first line is not 'LISTENING tcp://HOST:PORT': '$line'" ;;
    esac
}

zpk_server_stop() {
    local how=$1 served=$2 why
    [ -n "$ZPK_SERVER_PID" ] || zpk_fail "zpk_server_stop: no server is running"
    case "$how" in
        eof) why=stdin-eof ;;
        term)
            why=SIGTERM
            kill -TERM "$ZPK_SERVER_PID"
            ;;
        *) zpk_fail "zpk_server_stop: eof or term, not '$how'" ;;
    esac
    exec {zpk__in}>&-

    # Everything it prints until it exits (read fails at end of file; a
    # status above 128 is the time bound).
    local line rest=() bound rc
    bound=$(zpk_bound 30)
    while :; do
        rc=0
        read -r -t "$bound" line <&"$zpk__out" || rc=$?
        if [ "$rc" -gt 128 ]; then
            zpk_fail "the server did not exit within $bound s of $how"
        fi
        [ "$rc" -eq 0 ] || break
        rest+=("$line")
    done
    exec {zpk__out}<&-
    rc=0
    wait "$ZPK_SERVER_PID" || rc=$?
    ZPK_SERVER_PID=
    if [ "$rc" -ne 0 ]; then
        cat "$zpk__err" >&2 || true
        zpk_fail "the server exited with status $rc after $how (its stderr is above)"
    fi
    local want="STOPPED $why served $served"
    [ "${#rest[@]}" -eq 1 ] && [ "${rest[0]}" = "$want" ] ||
        zpk_fail "the server's last output is not '$want': $(printf "'%s' " "${rest[@]}")"
}
