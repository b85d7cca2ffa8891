// include_dir.js — prints the directory holding zlink.h for binding.gyp:
// $ZLINK_INCLUDE_DIR, else pkg-config's include dir for zlink, else the
// package's own include/ copy, else the source tree's abi/include.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

function found(dir) {
  return dir && fs.existsSync(path.join(dir, 'zlink.h')) ? dir : null;
}

function fromPkgConfig() {
  try {
    const out = execFileSync('pkg-config', ['--variable=includedir', 'zlink'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    }).toString().trim();
    return found(out);
  } catch {
    return null;
  }
}

const root = path.join(__dirname, '..');
const dir =
  found(process.env.ZLINK_INCLUDE_DIR) ||
  fromPkgConfig() ||
  found(path.join(root, 'include')) ||
  found(path.join(root, '..', '..', 'abi', 'include'));
if (!dir) {
  process.stderr.write('zlink: zlink.h not found; set ZLINK_INCLUDE_DIR\n');
  process.exit(1);
}
process.stdout.write(dir);
