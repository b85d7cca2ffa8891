#!/bin/sh
# Stand-in for Bazel's downloaded coverage tools; see BUILD.
echo "remote_coverage_tools: bazel coverage is not available in the offline build" >&2
exit 1
