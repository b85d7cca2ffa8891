#!/usr/bin/env bash
# setup.sh — installs what building and testing ZLink needs: Debian packages
# with apt, and the Node.js binding's one build dependency with npm (the
# .NET SDK, its package folder and Node.js 20 come with the machine).
#
# Idempotent and quiet: installs only the packages that are missing, prints
# nothing when all are present, and prints apt's log only when it fails.
# Runs apt-get directly as root, through sudo otherwise.
set -euo pipefail

packages=(
    bazel-bootstrap # Bazel 4.2.3, the build (spec/DECISIONS.md D6)
    build-essential # gcc, g++, make, binutils (readelf)
    pkg-config
    libuv1-dev      # the engine's event loop
    libzmq3-dev     # the benchmark baseline
    libgrpc++-dev   # gRPC C++ 1.51, the framework benchmark's baseline (//bench:framework_grpc)
    abigail-tools   # abidw / abidiff for the ABI gate
    python3         # abi/gen/tables.py (the bindings' tables) and the CFFI ABI check
    python3-cffi    # //abi:cffi_check: the ABI seen from a foreign loader
    python3-pycparser # abi/layout_gen.py (also a dependency of python3-cffi)
    libjansson-dev  # the C conformance runner's manifest reader
    nlohmann-json3-dev # the C++ binding's JSON helpers and the C++ runner's manifest reader
    default-jdk-headless # javac, jar and the JNI headers (JDK 17)
    junit5          # the Java binding's tests (junit-platform-console-standalone.jar)
    libjackson2-databind-java # the Java binding's typed payloads
    clang-14        # the libFuzzer targets (//fuzz)
    libclang-rt-14-dev # libFuzzer and the sanitizer runtimes for clang (//fuzz)
    libnng-dev      # nng, the Core benchmark's second baseline
)

# The Node.js binding's build dependency (node-addon-api's headers, pinned by
# bindings/node/package-lock.json) into bindings/node/node_modules, which
# //bindings/node:addon reads offline. Skipped when the pinned version is
# already there; needs npm (Node 20) and the npm registry the first time.
# It comes before the Debian part, which exits early when nothing is missing.
node_dir=$(cd "$(dirname "$0")/.." && pwd)/bindings/node
if [ -f "$node_dir/package-lock.json" ]; then
    if ! command -v npm >/dev/null 2>&1; then
        echo "setup.sh: npm (Node.js 20) is missing; the Node binding cannot be built" >&2
        exit 1
    fi
    want=$(node -p "require('$node_dir/package-lock.json').packages['node_modules/node-addon-api'].version" 2>/dev/null || true)
    have=$(node -p "require('$node_dir/node_modules/node-addon-api/package.json').version" 2>/dev/null || true)
    if [ -z "$want" ] || [ "$want" != "$have" ]; then
        npm_log=$(mktemp)
        if ! (cd "$node_dir" && npm ci --ignore-scripts --no-audit --no-fund) >"$npm_log" 2>&1; then
            cat "$npm_log" >&2
            rm -f "$npm_log"
            echo "setup.sh: npm ci in bindings/node failed" >&2
            exit 1
        fi
        rm -f "$npm_log"
    fi
fi

missing=()
for p in "${packages[@]}"; do
    if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
        missing+=("$p")
    fi
done
[ "${#missing[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
else
    echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2
    exit 1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "setup.sh: installing ${missing[*]}" >&2
if ! { "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
       "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
           --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup.sh: apt-get failed" >&2
    exit 1
fi

