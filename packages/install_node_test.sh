#!/usr/bin/env bash
# install_node_test.sh — //packages:install_node: the Node.js package (the
# npm tarball) installed the way a user would, with no Bazel between the
# package and the program, over the C package's library.
#
#   install_node_test.sh TGZ C_DEB NODE_ADDON_API_DIR ECHO_SERVER README.md INSTALL_TEST_LIB ZLINK_H
#
# 1. the tarball is zlink at the header's version, holds the addon's
#    sources and the JavaScript API, and no build output, node_modules or
#    libzlink.so;
# 2. the C package is unpacked with `dpkg -x` into a fresh prefix and
#    PKG_CONFIG_PATH names its pkgconfig directory: that is how the
#    package finds libzlink.so.1 at run time (lib/native.js: pkg-config's
#    libdir), and zlink.h at install (scripts/include_dir.js tries
#    pkg-config before the package's own include/ copy; the test cannot
#    tell those two apart, they are the same file); ZLINK_LIBRARY and
#    ZLINK_INCLUDE_DIR are unset;
# 3. a fresh project (`npm init -y`) in $TEST_TMPDIR runs, offline (npm's
#    cache under $TEST_TMPDIR, npm_config_offline), `npm install` of
#    node-addon-api (a tarball packed from the copy tools/setup.sh
#    installs: the registry is not reachable here) and of
#    ./zlink-<version>.tgz, whose install script builds the addon with
#    node-gyp --nodedir=/usr; the block of packages/README.md after the
#    marker "<!-- install_node: index.js -->" is its index.js, run with
#    `node index.js` against //packages:echo_server: it prints the reply,
#    exits 0 (the host's shutdown lets the loop end) and the server counts
#    one request (no other libzlink.so.1 is on the machine's loader
#    path, so the library that answered is the prefix's).
set -euo pipefail

[ "$#" -eq 7 ] || { echo "usage: install_node_test.sh TGZ DEB NAPI SERVER README LIB ZLINK_H" >&2; exit 2; }
tgz=$(realpath "$1")
deb=$(realpath "$2")
napi=$(realpath "$3")
server=$(realpath "$4")
readme=$(realpath "$5")
header=$(realpath "$7")
# shellcheck source=install_test_lib.sh
source "$6"
unset LD_LIBRARY_PATH LD_PRELOAD ZLINK_LIBRARY ZLINK_INCLUDE_DIR NODE_OPTIONS

version=$(awk '/#define ZLINK_VERSION_(MAJOR|MINOR|PATCH) /{v = v (v ? "." : "") $3} END {print v}' "$header")
[ -n "$version" ] || zpk_fail "no version in $header"

# ---------------------------------------------------------------- 1. the package
[ "$(basename "$tgz")" = "zlink-$version.tgz" ] || zpk_fail "the tarball is $(basename "$tgz"), not zlink-$version.tgz"
listing=$(tar -tzf "$tgz") || zpk_fail "the tarball is not a gzip'd tar"
for f in package/package.json package/binding.gyp package/index.d.ts package/lib/index.js \
         package/include/zlink.h package/scripts/include_dir.js; do
    grep -qxF "$f" <<<"$listing" || zpk_fail "the tarball has no $f"
done
if grep -E 'node_modules|/build/|\.node$|libzlink\.so' <<<"$listing"; then
    zpk_fail "the tarball carries build output, node_modules or a library"
fi
meta=$(tar -xzOf "$tgz" package/package.json | node -e '
let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
  const p = JSON.parse(s);
  console.log(p.name + " " + p.version + " " + ((p.dependencies || {})["node-addon-api"] || "-"));
});')
[ "${meta% *}" = "zlink $version" ] || zpk_fail "the tarball's package.json is '$meta', not zlink $version"
echo "install_node: the tarball is ${meta% *} (node-addon-api ${meta##* })"

# ---------------------------------------------------- 2. the C package's library
work=$(zpk_tmp)
prefix=$work/prefix
dpkg -x "$deb" "$prefix" || zpk_fail "dpkg -x $deb failed"
libdir=$prefix/usr/lib/x86_64-linux-gnu
export PKG_CONFIG_PATH=$libdir/pkgconfig
[ "$(pkg-config --variable=libdir zlink)" -ef "$libdir" ] ||
    zpk_fail "pkg-config's libdir is '$(pkg-config --variable=libdir zlink)', not $libdir"
[ -f "$libdir/libzlink.so.1" ] || zpk_fail "the C package has no libzlink.so.1"

# ------------------------------------------------------- 3. a fresh project
export HOME=$work/home npm_config_cache=$work/npm-cache npm_config_offline=true
export npm_config_nodedir=/usr npm_config_audit=false npm_config_fund=false
export npm_config_update_notifier=false npm_config_loglevel=warn
mkdir -p "$HOME" "$work/napi"
cp "$tgz" "$work/"
cp -rL "$napi" "$work/napi/node-addon-api"    # the runfiles are symlinks
(cd "$work/napi" && npm pack ./node-addon-api --pack-destination "$work/napi" >"$work/napi.log" 2>&1) ||
    { cat "$work/napi.log" >&2; zpk_fail "npm pack of node-addon-api failed"; }
napi_tgz=$(ls "$work"/napi/node-addon-api-*.tgz)
project=$work/hello
mkdir -p "$project"
(cd "$project" && npm init -y >"$work/init.log" 2>&1) || { cat "$work/init.log" >&2; zpk_fail "npm init -y failed"; }
(cd "$project" && npm install "$napi_tgz" "../zlink-$version.tgz" >"$work/install.log" 2>&1) ||
    { cat "$work/install.log" >&2; zpk_fail "npm install ./zlink-$version.tgz failed"; }
[ -f "$project/node_modules/zlink/build/Release/zlink.node" ] ||
    zpk_fail "npm install did not build node_modules/zlink/build/Release/zlink.node"
awk '/<!-- install_node: index.js -->/ {on = 1; next}
     on && /^```js/ {inside = 1; next}
     inside && /^```/ {exit}
     inside {print}' "$readme" >"$project/index.js"
[ -s "$project/index.js" ] || zpk_fail "no index.js block after the install_node marker in $readme"
echo "install_node: npm install ./zlink-$version.tgz built the addon (offline, --nodedir=/usr)"

# No other libzlink.so.1 is reachable (none in the loader's cache), so a
# reply means the package found the prefix's through pkg-config.
if /sbin/ldconfig -p 2>/dev/null | grep -q 'libzlink\.so'; then
    zpk_fail "a system libzlink.so is installed; the test could not tell which library loaded"
fi
zpk_server_start "$server"
out=$(cd "$project" && timeout "$(zpk_bound 60)" node index.js "$ZPK_ENDPOINT") ||
    zpk_fail "the example failed: '$out'"
[ "$out" = "reply: hello, zlink" ] || zpk_fail "the example printed '$out', not 'reply: hello, zlink'"
zpk_server_stop eof 1
echo "install_node: ok ($out)"
