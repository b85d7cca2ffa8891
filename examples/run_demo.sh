#!/usr/bin/env bash
# The ZLink demo: one ROUTER service process and three DEALER client
# processes talking over tcp on this machine. Prints what they exchanged
# and the rates. Usage: run_demo.sh SERVICE_BIN CLIENT_BIN [COUNT]
# (bazel run //examples:demo passes the two binaries; COUNT may follow.)
set -euo pipefail
service=$1
client=$2
count=${3:-200000}
clients=3

# The service's stdout comes through fd 3; its first line names the endpoint.
exec 3< <(exec "$service" --clients "$clients")
svc_pid=$!
trap 'kill "$svc_pid" 2>/dev/null || true' EXIT
read -r -t 10 first <&3 || { echo "demo: the service did not start"; exit 1; }
endpoint=${first#LISTENING }
echo "demo: service (pid $svc_pid) listening on $endpoint"

pids=()
for i in $(seq 1 "$clients"); do
    "$client" --endpoint "$endpoint" --name "client-$i" --count "$count" &
    pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
cat <&3
trap - EXIT
exit $status
