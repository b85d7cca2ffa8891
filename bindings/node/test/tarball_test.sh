#!/bin/sh
# tarball_test.sh TGZ LIBZLINK NODE_ADDON_API_DIR — //bindings/node:tarball_test:
# the npm package holds what it must, builds with node-gyp from its own
# contents (include/ copy of zlink.h, no source tree), and require()s.
set -eu
tgz=$(pwd)/$1 lib=$(pwd)/$2 napi=$(pwd)/$3
work=${TEST_TMPDIR:-$(mktemp -d)}/pkg
rm -rf "$work" && mkdir -p "$work"
tar -xzf "$tgz" -C "$work"
cd "$work/package"
for f in package.json binding.gyp index.d.ts README.md lib/index.js lib/tables.js lib/tables.d.ts \
         src/loader.cc include/zlink.h include/zlink/framework.h scripts/include_dir.js; do
    [ -f "$f" ] || { echo "tarball_test: $f missing from the package" >&2; exit 1; }
done
if tar -tzf "$tgz" | grep -E 'node_modules|build/|\.node$'; then
    echo "tarball_test: build output or node_modules in the package" >&2
    exit 1
fi
mkdir -p node_modules
cp -rL "$napi" node_modules/node-addon-api
HOME="$work/home" node /usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js rebuild \
    --nodedir=/usr >"$work/gyp.log" 2>&1 || { cat "$work/gyp.log" >&2; exit 1; }
ZLINK_LIBRARY=$lib node -e '
const z = require(".");
const v = z.version();
if (v.major !== z.BINDING_VERSION.major) throw new Error("major");
console.log("tarball_test: loaded libzlink " + v.major + "." + v.minor + "." + v.patch);'
