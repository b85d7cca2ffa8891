// errors.js — the binding's error types, named from the generated table
// (tables.js): nothing here knows a result value.
//
//  ZLinkFrameworkError  a framework result other than OK and CANCELLED:
//                       .kind is the error kind's name ("NotFound", ...) for
//                       the 13 kinds, undefined for INVALID_ARGUMENT and
//                       INVALID_HANDLE; .result the result's short name;
//                       .code its value; .remoteCode a remote error's wire
//                       code (0 otherwise).
//  ZLinkAbortError      a call that ended CANCELLED (an AbortSignal, or the
//                       C runtime's cancel): name 'AbortError', code
//                       'ABORT_ERR' like Node's own, .cancelled true, .kind
//                       undefined.
//  ZLinkError           a Core result other than OK: .result the full name
//                       ("ZLINK_CONFIG_CONFLICT"), .family, .code, .errno
//                       (its name, "EEXIST") and .errnoValue.
'use strict';
const tables = require('./tables');

const FW_NAMES = {};
for (const [name, value] of Object.entries(tables.FRAMEWORK)) FW_NAMES[value] = name;

class ZLinkFrameworkError extends Error {
  constructor(code, remoteCode, message) {
    const result = FW_NAMES[code] || `UNKNOWN_${code}`;
    super(message ? `${result}: ${message}` : result);
    this.name = 'ZLinkFrameworkError';
    this.code = code;
    this.result = result;
    this.kind = tables.RESULT_KINDS[code];
    this.kindValue = this.kind === undefined ? undefined : tables.ERROR_KINDS.indexOf(this.kind);
    this.remoteCode = remoteCode || 0;
    this.detail = message || '';
  }
}

class ZLinkAbortError extends Error {
  constructor(message) {
    super(message || 'the call was cancelled');
    this.name = 'AbortError';
    this.code = 'ABORT_ERR';
    this.cancelled = true;
    this.kind = undefined;
    this.result = 'CANCELLED';
  }
}

class ZLinkError extends Error {
  constructor(family, code, errnoValue, what) {
    const fam = tables.FAMILIES[family];
    const result = (fam && fam.names[code]) || `${family}:${code}`;
    const errno = tables.ERRNOS[errnoValue] || (errnoValue ? `errno ${errnoValue}` : '');
    super(`${what ? what + ': ' : ''}${result}${errno ? '/' + errno : ''}`);
    this.name = 'ZLinkError';
    this.family = family;
    this.code = code;
    this.result = result;
    this.errno = errno;
    this.errnoValue = errnoValue;
  }
}

// The error a framework result gives, or null for OK.
function frameworkError(code, remoteCode, message) {
  if (code === tables.FRAMEWORK.OK) return null;
  if (code === tables.FRAMEWORK.CANCELLED) return new ZLinkAbortError(message);
  return new ZLinkFrameworkError(code, remoteCode, message);
}

function checkFramework(code, what) {
  const err = frameworkError(code, 0, what);
  if (err) throw err;
}

module.exports = { ZLinkFrameworkError, ZLinkAbortError, ZLinkError, frameworkError, checkFramework };
