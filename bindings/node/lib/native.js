// native.js — finds and loads the addon, then has it open libzlink.so.1 and
// check it (src/loader.cc): every export of the generated table and of the
// addon must resolve, or loading fails naming the missing one; the
// library's major version must be the table's.
//
// Where things are found:
//   the addon        $ZLINK_NODE_ADDON, else build/Release/zlink.node
//                    (node-gyp's output; `npm install` builds it)
//   libzlink.so.1    $ZLINK_LIBRARY (a path), else <libdir>/libzlink.so.1
//                    for pkg-config's libdir of zlink, else "libzlink.so.1"
//                    through the dynamic loader's search path
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const tables = require('./tables');

function addonPath() {
  if (process.env.ZLINK_NODE_ADDON) return path.resolve(process.env.ZLINK_NODE_ADDON);
  return path.join(__dirname, '..', 'build', 'Release', 'zlink.node');
}

function libraryPath() {
  if (process.env.ZLINK_LIBRARY) return path.resolve(process.env.ZLINK_LIBRARY);
  const soname = `libzlink.so.${tables.VERSION.major}`;
  try {
    const libdir = execFileSync('pkg-config', ['--variable=libdir', 'zlink'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    }).toString().trim();
    if (libdir && fs.existsSync(path.join(libdir, soname))) return path.join(libdir, soname);
  } catch {
    // no pkg-config or no zlink.pc: the loader's search path
  }
  return soname;
}

let native = null;
let eventDispatcher = null;

// The framework module installs the function that takes each batch of
// completions and handler turns (src/framework.cc, zn_drain).
function setEventDispatcher(fn) {
  eventDispatcher = fn;
}

function load() {
  if (native) return native;
  const mod = { exports: {} };
  process.dlopen(mod, addonPath());
  const addon = mod.exports;
  const lib = libraryPath();
  const version = addon.load(lib, tables.EXPORTS, tables.VERSION.major, (nums, count, objs, strs, pool) =>
    eventDispatcher(nums, count, objs, strs, pool),
  );
  addon.libraryPath = lib;
  addon.libraryVersion = Object.freeze(version);
  native = addon;
  return native;
}

module.exports = { load, setEventDispatcher };
