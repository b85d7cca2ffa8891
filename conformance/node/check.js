// check.js — what a case body sees: its checks (the first failed one ends
// the case and names the case file's line, like zltest's "file:line: what"),
// waits that end on the condition they wait for (the timeout, scaled by
// ZT_TIMEOUT_MULT, is only the failure bound), and the case's parameters.
'use strict';
const path = require('path');

const MULT = Number(process.env.ZT_TIMEOUT_MULT) > 0 ? Number(process.env.ZT_TIMEOUT_MULT) : 1;

class CaseFailure extends Error {
  constructor(message, where) {
    super(message);
    this.where = where;
  }
}

// The case file and line that called a check.
function caller() {
  const lines = new Error().stack.split('\n').slice(1);
  for (const l of lines) {
    const m = l.match(/\(?([^()\s]+\.js):(\d+):\d+\)?$/);
    if (m && !m[1].endsWith('check.js') && !m[1].endsWith('harness.js')) return `${path.basename(m[1])}:${m[2]}`;
  }
  return 'case';
}

function show(v) {
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Error) return `${v.name}(${v.kind || v.result || v.message})`;
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

function fail(msg) {
  throw new CaseFailure(msg, caller());
}

function ok(cond, what) {
  if (!cond) fail(what || 'check failed');
}

function eq(actual, want, what) {
  if (actual !== want) fail(`${what || 'value'} = ${show(actual)}, expected ${show(want)}`);
}

const ms = (n) => Math.round(n * MULT);
const tick = () => new Promise((r) => setTimeout(r, 1));

// Waits until cond() holds, checking after each turn of the event loop.
async function eventually(cond, boundMs, what) {
  const until = Date.now() + ms(boundMs);
  for (;;) {
    if (await cond()) return;
    if (Date.now() > until) fail(`not within ${ms(boundMs)} ms: ${typeof what === 'function' ? what() : what || cond.toString()}`);
    await tick();
  }
}

// How a Promise settled: { ok: true, value } or { ok: false, error }.
function settle(p) {
  return p.then(
    (value) => ({ ok: true, value }),
    (error) => ({ ok: false, error }),
  );
}

// The framework result a settled call gave, by name: 'OK', 'CANCELLED'
// or the result's short name ('NOT_FOUND', ...).
function resultOf(s) {
  if (s.ok) return 'OK';
  const e = s.error;
  if (e && e.name === 'AbortError' && e.cancelled) return 'CANCELLED';
  if (e && typeof e.result === 'string') return e.result;
  return `not a ZLink error: ${e && e.stack ? e.stack.split('\n')[0] : e}`;
}

// A promise with its settle functions (the cases' gate and latch).
function deferred() {
  let resolve, reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function context(entry) {
  return { id: entry.id, params: entry.params };
}

function param(params, name) {
  if (!(name in params)) fail(`parameter "${name}" missing from the manifest`);
  return params[name];
}

module.exports = { context, fail, ok, eq, eventually, settle, resultOf, deferred, ms, param, MULT, CaseFailure };
