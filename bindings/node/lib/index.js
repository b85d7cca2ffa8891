// index.js — the zlink package: the framework (Host, calls, turns) and the
// Core (Context, Socket, Poller, Timer), over one libzlink.so.1 that is
// loaded and checked when this module is first required (lib/native.js).
'use strict';
const framework = require('./framework');
const core = require('./core');
const errors = require('./errors');
const tables = require('./tables');

module.exports = {
  ...framework,
  ...core,
  ZLinkFrameworkError: errors.ZLinkFrameworkError,
  ZLinkAbortError: errors.ZLinkAbortError,
  ZLinkError: errors.ZLinkError,
  ErrorKind: Object.freeze(Object.fromEntries(tables.ERROR_KINDS.map((k) => [k, k]))),
  ERROR_KINDS: tables.ERROR_KINDS,
  BINDING_VERSION: tables.VERSION,
};
