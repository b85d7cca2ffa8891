#!/bin/bash
# bazel run //fuzz:<target> -- [libFuzzer flags] [corpus dirs or files]
#
# Runs the fuzzer in the directory bazel run was started from, so relative
# paths in the flags mean what the caller meant. Without a corpus argument
# it fuzzes into a fresh temporary directory (printed) seeded with the
# committed corpus; new inputs never go into the source tree. The default
# limits (fuzz/README.md) come first, so a flag given here overrides them.
set -euo pipefail
bin="$(pwd)/$1"
seeds="$(pwd)/$2"
shift 2
cd "${BUILD_WORKING_DIRECTORY:-.}"
have_corpus=0
for a in "$@"; do
  case "$a" in -*) ;; *) have_corpus=1 ;; esac
done
defaults=(-rss_limit_mb=2048 -malloc_limit_mb=64 -timeout=10)
if [ "$have_corpus" = 0 ]; then
  work="$(mktemp -d "${TMPDIR:-/tmp}/zlink-fuzz.XXXXXX")"
  echo "run.sh: new inputs go to $work" >&2
  exec "$bin" "${defaults[@]}" "$@" "$work" "$seeds"
fi
exec "$bin" "${defaults[@]}" "$@"
