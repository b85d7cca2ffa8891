#!/usr/bin/env bash
# update_baseline.sh — (re)write abi/baseline.abi from a fresh build.
#
# usage: abi/update_baseline.sh [extra bazel build flags]
#
# Run it, from anywhere in the repository, when a change to the public ABI is
# intended and compatible (an added function, a new version node), and
# commit the new baseline together with that change. Never run it to silence
# an incompatible change: that needs a new major version (doc/abi.md).
# Builds with the repository's default flags (-O2 -g, nothing stripped); the
# sanitizer configs are not needed and are not used here.
set -euo pipefail

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel 2>/dev/null || (cd "$(dirname "$0")/.." && pwd))
cd "$root"

for tool in abidw bazel readelf; do
    command -v "$tool" >/dev/null 2>&1 || { echo "$tool is missing; run tools/setup.sh" >&2; exit 1; }
done

major=$(sed -n 's/^#define ZLINK_VERSION_MAJOR[[:space:]]\{1,\}\([0-9]\{1,\}\).*/\1/p' abi/include/zlink.h)
[ -n "$major" ] || { echo "no ZLINK_VERSION_MAJOR in abi/include/zlink.h" >&2; exit 1; }

bazel build "$@" //core:libzlink
lib="$(bazel info "$@" bazel-bin)/core/libzlink.so.$major"
[ -f "$lib" ] || { echo "built library not found at $lib" >&2; exit 1; }
readelf -S -W "$lib" | grep -q '\.debug_info' || {
    echo "$lib has no debug info; the ABI baseline needs -g (see .bazelrc)" >&2
    exit 1
}

# Only the public surface is recorded: types not declared in abi/include
# (internal structs, libuv, libc) and imported symbols are dropped, so the
# file changes only when the ABI does. Paths and line numbers are left out
# for the same reason; DT_NEEDED because it differs between sanitizer builds
# and is not part of ZLink's own interface.
abidw --no-corpus-path --no-comp-dir-path --no-show-locs --no-elf-needed \
    --drop-undefined-syms --headers-dir abi/include --drop-private-types \
    --out-file abi/baseline.abi "$lib"
echo "wrote abi/baseline.abi from $lib ($(grep -c '<elf-symbol ' abi/baseline.abi) symbols)"
