#!/usr/bin/env bash
# demo.sh — the README's demo command: installs what is missing
# (tools/setup.sh), builds, and runs examples/run_demo.sh: one ROUTER
# service process and three DEALER client processes over tcp.
# usage: tools/demo.sh [records per client, default 200000]
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
exec bazel run -c opt --ui_event_filters=-info --noshow_progress //examples:demo -- "$@"
