#!/usr/bin/env bash
# The ZLink demo: the framework runtime in six processes over tcp on this
# machine, no other services needed.
#   1. ClientServer: one service (cs_service) and two clients (cs_client):
#      requests with 1 and 64 in flight, one-way sends, a timeout, a cancel,
#      NotFound and InternalFailure.
#   2. RouteMesh: nodes B and C serve channel "pricing" at weights 100 and
#      300; node A connects to both, splits requests between them and sends
#      one node-direct request to C.
# Each server prints "LISTENING <endpoint>" as its first line; the script
# reads it and hands the endpoint to the processes that connect. Servers are
# stopped by closing their stdin (a pipe the script holds), then print
# their totals. Exit status: 0 only if every process succeeded.
#
# usage: run_demo.sh CS_SERVICE CS_CLIENT MESH_NODE [COUNT]
#   (bazel run //examples:demo passes the three binaries; COUNT may follow:
#   calls per client and step, default 20000; the mesh sends COUNT/10,
#   at least 200)
set -uo pipefail

if [ $# -lt 3 ] || [ $# -gt 4 ]; then
    echo "usage: run_demo.sh CS_SERVICE CS_CLIENT MESH_NODE [COUNT]" >&2
    exit 2
fi
svc_bin=$1
client_bin=$2
mesh_bin=$3
count=${4:-20000}
case $count in
    '' | *[!0-9]* | 0) echo "demo: COUNT must be a whole number >= 1, not '$count'" >&2; exit 2 ;;
esac
mesh_count=$((count / 10 < 200 ? 200 : count / 10))
clients=2

tmp=$(mktemp -d "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/zlink-demo.XXXXXX") || exit 1
declare -A srv_pid srv_in srv_out
failed=()
started=$SECONDS

# Stops whatever server is still running (an early failure) and removes
# the fifos.
cleanup() {
    local n
    for n in "${!srv_pid[@]}"; do
        kill -TERM "${srv_pid[$n]}" 2>/dev/null
        wait "${srv_pid[$n]}" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT

# without_held_fds COMMAND...: execs COMMAND with none of the servers' pipe
# ends the script holds. Run it in a subshell (with & or in parentheses):
# a child holding a server's stdin open would keep that server from ever
# seeing end of file.
without_held_fds() {
    local fd
    for fd in "${srv_in[@]}" "${srv_out[@]}"; do
        eval "exec $fd>&-"
    done
    exec "$@"
}

# start_server NAME COMMAND...: starts COMMAND with its stdin and stdout on
# fifos, reads its first line and sets $endpoint. Returns 1 if it did not
# print "LISTENING <endpoint>" within 10 s.
start_server() {
    local name=$1 line fd
    shift
    mkfifo "$tmp/$name.in" "$tmp/$name.out" || return 1
    # The child opens its stdin, then its stdout; the script opens the other
    # ends in the same order, so neither open blocks the other for good.
    without_held_fds "$@" <"$tmp/$name.in" >"$tmp/$name.out" &
    srv_pid[$name]=$!
    exec {fd}>"$tmp/$name.in"
    srv_in[$name]=$fd
    exec {fd}<"$tmp/$name.out"
    srv_out[$name]=$fd
    if ! read -r -t 10 line <&"${srv_out[$name]}" || [[ $line != "LISTENING "* ]]; then
        echo "demo: $name did not start (first line: '${line:-}')"
        return 1
    fi
    endpoint=${line#LISTENING }
    echo "demo: $name (pid ${srv_pid[$name]}) listening on $endpoint"
}

# stop_server NAME: closes its stdin, prints the rest of its output (its
# summary; 20 s bound) and collects its exit status.
stop_server() {
    local name=$1 fd=${srv_in[$1]} out=${srv_out[$1]} pid=${srv_pid[$1]} rc
    exec {fd}>&-
    if ! timeout 20 cat <&"$out"; then
        echo "demo: $name did not stop within 20 s; killing it"
        kill -KILL "$pid" 2>/dev/null
    fi
    exec {out}<&-
    wait "$pid"
    rc=$?
    unset "srv_pid[$name]" "srv_in[$name]" "srv_out[$name]"
    if [ "$rc" -ne 0 ]; then
        echo "demo: $name exited with status $rc"
        failed+=("$name")
    fi
}

echo "ZLink demo: the framework runtime, six processes over tcp on this machine (COUNT=$count)"
echo
echo "== ClientServer: one service, two clients (channel \"svc\")"
start_server service "$svc_bin" --expect-notes $((clients * count)) || exit 1
svc_endpoint=$endpoint

pids=()
for i in $(seq 1 "$clients"); do
    without_held_fds timeout -k 5 120 "$client_bin" --endpoint "$svc_endpoint" --name "client-$i" \
        --count "$count" >"$tmp/client-$i.log" 2>&1 &
    pids+=($!)
done
echo "demo: client-1 .. client-$clients running at the same time (each prints below when done)"
for i in $(seq 1 "$clients"); do
    wait "${pids[$((i - 1))]}"
    rc=$?
    cat "$tmp/client-$i.log"
    if [ "$rc" -ne 0 ]; then
        echo "demo: client-$i exited with status $rc"
        failed+=("client-$i")
    fi
done
echo "demo: stopping the service (closing its stdin)"
stop_server service

echo
echo "== RouteMesh \"demo\": B and C serve channel \"pricing\" (weights 100 and 300), A connects to both"
start_server B "$mesh_bin" --name B --weight 100 || exit 1
b_endpoint=$endpoint
start_server C "$mesh_bin" --name C --weight 300 || exit 1
c_endpoint=$endpoint
(without_held_fds timeout -k 5 60 "$mesh_bin" --name A --peer "B=$b_endpoint" \
    --peer "C=$c_endpoint" --count "$mesh_count")
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "demo: A exited with status $rc"
    failed+=(A)
fi
echo "demo: stopping B and C"
stop_server B
stop_server C

echo
if [ ${#failed[@]} -eq 0 ]; then
    echo "demo: all six processes finished cleanly in $((SECONDS - started)) s"
    exit 0
fi
echo "demo: FAILED: ${failed[*]}"
exit 1
