#!/usr/bin/env bash
# demo.sh — the README's demo command: installs what is missing
# (tools/setup.sh), builds, and runs examples/run_demo.sh: the framework
# runtime in six processes over tcp — a ClientServer service with two
# clients, then a three-node RouteMesh.
# usage: tools/demo.sh [COUNT: calls per client and step, default 20000]
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
exec bazel run -c opt --ui_event_filters=-info --noshow_progress //examples:demo -- "$@"
