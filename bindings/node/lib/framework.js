// framework.js — Host, calls and turns: the framework runtime of
// libzlink.so.1 projected onto Promises and AbortSignals.
//
// What lives here and what does not. Every rule (timeouts, admission,
// the completion race, cancellation, shutdown, error kinds) is decided by
// the C runtime. This file only: builds C calls; starts them with one
// completion function that settles the call's Promise once, from the C
// outcome; forwards an AbortSignal's 'abort' to zlink_call_cancel; hands
// each handler turn to the JavaScript handler and ends the turn when the
// handler (or its Promise) finishes. There is no timer, retry, counter or
// race of our own, and no synchronous terminator (seed 000 §4.1).
//
// Threads: everything runs on the JavaScript thread, which the addon marks
// a runtime context for its life (zlink_runtime_context_enter at load).
// zlink_host_shutdown blocks, so the addon runs it on a pool thread and
// shutdown() returns a Promise while completions and turns keep arriving.
'use strict';
const { load, setEventDispatcher } = require('./native');
const tables = require('./tables');
const { ZLinkFrameworkError, frameworkError } = require('./errors');

const native = load();
const FW = tables.FRAMEWORK;

// Option numbers of zlink/framework.h (values of the header, not results).
const HostOption = Object.freeze({
  DEFAULT_REQUEST_TIMEOUT: 1,
  DEFAULT_SEND_TIMEOUT: 2,
  SHUTDOWN_TIMEOUT: 3,
  ADMISSION_WAITERS: 4,
  MAX_QUEUED_JOBS: 5,
  HANDLER_THREADS: 6,
  JOB_QUEUE_PROFILE: 7,
  PAUSE_PERCENT: 8,
  RESUME_PERCENT: 9,
  EFFECTIVE_PROCESSORS: 10,
  CORE_HWM_PROFILE: 11,
  CORE_BUDGET_BYTES: 12,
  CORE_MEMORY_LIMIT_BYTES: 13,
});
const NodeOption = Object.freeze({ SEND_TIMEOUT: 1, REQUEST_TIMEOUT: 2, SNDHWM: 3, RCVHWM: 4 });
const HostState = Object.freeze(['PREPARING', 'SERVING', 'DRAINING', 'STOPPED', 'FAILED']);
const JobQueueProfile = Object.freeze({ COMPACT: 0, LOW_LATENCY: 1, BALANCED: 2, THROUGHPUT: 3 });
const OWNER_CHANNEL = 1;
const OWNER_NODE = 2;
const MESSAGE_SEND = 1;
const MESSAGE_REQUEST = 2;
const JSON_TYPE = 'application/json';
const BYTES_TYPE = 'application/octet-stream';

// Nanoseconds from milliseconds: numbers may be fractional (400 us is 0.4);
// bigints are whole milliseconds. The C setter rounds and checks the range.
function msToNs(ms) {
  if (typeof ms === 'bigint') return ms * 1000000n;
  if (typeof ms !== 'number' || Number.isNaN(ms)) throw new TypeError('expected milliseconds');
  if (!Number.isFinite(ms)) return ms > 0 ? 2n ** 63n - 1n : -1n;
  return BigInt(Math.round(ms * 1e6));
}

function optionNumber(table, option) {
  if (typeof option === 'number') return option;
  const v = table[option];
  if (v === undefined) throw new TypeError(`unknown option ${option}`);
  return v;
}

function bytes(data) {
  if (data instanceof Uint8Array) return data;
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  throw new TypeError('payload bytes must be a Buffer, a Uint8Array or a string');
}

function check(rc, what) {
  if (rc !== FW.OK) {
    const err = frameworkError(rc, 0, what);
    throw err;
  }
}

function owner(spec) {
  if (spec && typeof spec.channel === 'string') return [OWNER_CHANNEL, spec.channel];
  if (spec && typeof spec.node === 'string') return [OWNER_NODE, spec.node];
  throw new TypeError("owner must be { channel: name } or { node: meshName }");
}

// ------------------------------------------------------------------ turns

const handlers = new Map(); // id -> { fn }
let nextHandlerId = 1;

class Reply {
  constructor(packet, contentType, payload) {
    this.packet = packet;
    this.contentType = contentType;
    this.payload = payload;
  }
  json() {
    return JSON.parse(this.payload.toString('utf8'));
  }
  text() {
    return this.payload.toString('utf8');
  }
}

// One handler execution. The turn stays open (and holds its gate) until the
// handler returned or its Promise settled, or respond() answered it.
class Turn {
  // The addon reads the turn's fields when it delivers the turn.
  constructor(handle, kind, packet, contentType, payload, source, sequence) {
    this._h = handle;
    this._answered = false; // respond() returned OK: the C runtime ended the turn
    this.kind = kind === MESSAGE_REQUEST ? 'request' : 'send';
    this.packet = packet;
    this.contentType = contentType;
    this.payload = payload;
    this.source = source;
    this.sequence = sequence;
  }
  get open() {
    return !this._answered && native.turnKind(this._h) !== -1;
  }
  json() {
    return JSON.parse(this.payload.toString('utf8'));
  }
  text() {
    return this.payload.toString('utf8');
  }
  metadata(key) {
    return native.turnMetadata(this._h, key);
  }
  // Answers a request with bytes and ends the turn (zlink_turn_respond).
  respond(packet, data, contentType = BYTES_TYPE) {
    check(native.turnRespond(this._h, packet, contentType, bytes(data)), 'respond');
    this._answered = true;
  }
  respondJson(packet, value) {
    this.respond(packet, Buffer.from(JSON.stringify(value), 'utf8'), JSON_TYPE);
  }
  // The reply as a call (zlink_turn_reply): set its payload and submit()
  // it (resolves when the Core accepted the reply); it may outlive the
  // turn. A reply call released without a submit answers nothing.
  reply() {
    const [h, rc] = native.turnReply(this._h);
    check(rc, 'reply');
    return new Call(h, false);
  }
  // An error reply of a framework error kind ('NotFound', ...).
  replyError(kind, message = '') {
    const k = tables.ERROR_KINDS.indexOf(kind);
    if (k < 0) throw new TypeError(`unknown error kind ${kind}`);
    check(native.turnReplyError(this._h, k, message), 'replyError');
  }
  // The handler's end: a request handler's value (if it did not answer
  // yet) is its reply, JSON-encoded unless it is bytes; a failure ends the
  // turn failed (the C runtime answers a request InternalFailure).
  _finish(err, value) {
    if (!this.open) return;
    if (err !== null) {
      native.turnEnd(this._h, true, String((err && err.message) || err));
      return;
    }
    if (this.kind === 'request' && value !== undefined) {
      const isBytes = value instanceof Uint8Array;
      const data = isBytes ? value : Buffer.from(JSON.stringify(value), 'utf8');
      const rc = native.turnRespond(this._h, this.packet, isBytes ? BYTES_TYPE : JSON_TYPE, data);
      if (rc === FW.OK) this._answered = true;
      if (rc === FW.OK || !this.open) return;
    }
    native.turnEnd(this._h, false, '');
  }
}

function runTurn(reg, turn) {
  let r;
  try {
    r = reg.fn(turn);
  } catch (e) {
    turn._finish(e === null || e === undefined ? new Error('handler threw') : e);
    return;
  }
  if (r !== null && typeof r === 'object' && typeof r.then === 'function') {
    r.then(
      (v) => turn._finish(null, v),
      (e) => turn._finish(e === null || e === undefined ? new Error('handler rejected') : e),
    );
  } else {
    turn._finish(null, r);
  }
}

// Started calls by the number the addon reports their completion with.
const pending = [];
const freeIds = [];

// One batch of records from the addon (src/framework.cc, zn_drain), in
// arrival order: numbers (STRIDE a record, the first `count` slots of an
// array the addon reuses), the other values (objs), the addon's string
// cache (strs) and the slab small payloads are views of (pool). The addon
// gives each completion's held slot back after this function and the
// microtasks it queued (the promises' reactions) ran.
const STRIDE = 10;
function payloadOf(v, size, objs, pool) {
  if (v >= 0) return Buffer.from(pool, v, size);
  return v === -1 ? null : objs[-2 - v];
}
function str(v, objs, strs) {
  if (v >= 0) return strs[v];
  return v === -1 ? null : objs[-2 - v];
}
function onEvents(nums, count, objs, strs, pool) {
  let first = null;
  for (let at = 0; at < count; at += STRIDE) {
    try {
      if (nums[at] === 1) {
        const id = nums[at + 1];
        const call = pending[id];
        pending[id] = undefined;
        freeIds.push(id);
        const p = nums[at + 5];
        call._settle(nums[at + 2], nums[at + 3], str(nums[at + 4], objs, strs),
          payloadOf(p, nums[at + 9], objs, pool), str(nums[at + 6], objs, strs), str(nums[at + 7], objs, strs));
      } else {
        const p = nums[at + 6];
        const src = nums[at + 7];
        runTurn(handlers.get(nums[at + 1]), new Turn(objs[nums[at + 2]], nums[at + 3],
          str(nums[at + 4], objs, strs), str(nums[at + 5], objs, strs),
          payloadOf(p, nums[at + 9], objs, pool) || Buffer.alloc(0), src >= 0 ? objs[src] : Buffer.alloc(0),
          nums[at + 8]));
      }
    } catch (e) {
      if (first === null) first = e; // the rest of the batch is still delivered
    }
  }
  if (first !== null) throw first;
}
setEventDispatcher(onEvents);

// ------------------------------------------------------------------ calls

// A call under construction, then finished by exactly one terminator:
// submit(signal?) or yield(signal?). There is no synchronous terminator.
class Call {
  constructor(handle, isRequest) {
    this._h = handle;
    this._request = isRequest;
    this._decodeJson = false;
    this._resolve = null;
    this._reject = null;
    this._signal = null;
    this._onAbort = null;
  }
  payload(packet, data, contentType = BYTES_TYPE) {
    check(native.callSetPayload(this._h, packet, contentType, bytes(data)), 'payload');
    return this;
  }
  json(packet, value) {
    return this.payload(packet, Buffer.from(JSON.stringify(value), 'utf8'), JSON_TYPE);
  }
  metadata(key, value) {
    check(native.callSetMetadata(this._h, key, value), 'metadata');
    return this;
  }
  // The whole-call timeout of a request, in milliseconds (see msToNs).
  timeout(ms) {
    check(native.callSetTimeout(this._h, msToNs(ms)), 'timeout');
    return this;
  }
  timeoutNs(ns) {
    check(native.callSetTimeout(this._h, ns), 'timeout');
    return this;
  }
  // Requests: submit() resolves with the reply decoded from JSON.
  expectJson() {
    this._decodeJson = true;
    return this;
  }
  // One-way: resolves (no value) at admission. Request: resolves with the
  // Reply (or its JSON value). Rejects with ZLinkFrameworkError, or with an
  // AbortError when the call ended CANCELLED.
  submit(signal) {
    return this._start(signal, false);
  }
  // Starts the call with no completion (zlink_call_start with a NULL
  // function): nothing reports its admission or its reply; throws only
  // when the start itself is refused. For replies nobody waits on.
  submitDetached() {
    check(native.callStartDetached(this._h), 'submitDetached');
  }
  // Releases the caller's Spot gate while waiting; this version has no
  // Spot turns, so the C runtime refuses it (InvalidOperation).
  yield(signal) {
    return this._start(signal, true);
  }
  _start(signal, isYield) {
    return new Promise((resolve, reject) => {
      const h = this._h;
      let onAbort = null;
      if (signal !== undefined && signal !== null) {
        if (signal.aborted) native.callCancel(h);
        else {
          onAbort = () => native.callCancel(h);
          signal.addEventListener('abort', onAbort, { once: true });
        }
      }
      const id = freeIds.length > 0 ? freeIds.pop() : pending.length;
      const rc = native.callStart(h, id, isYield);
      if (rc !== FW.OK) {
        freeIds.push(id);
        if (onAbort) signal.removeEventListener('abort', onAbort);
        reject(frameworkError(rc, 0, isYield ? 'yield' : 'submit'));
        return;
      }
      // Accepted: the completion arrives in a later batch (onEvents), never
      // during callStart, so the call is registered now.
      pending[id] = this;
      this._resolve = resolve;
      this._reject = reject;
      this._signal = signal;
      this._onAbort = onAbort;
    });
  }
  _unlisten() {
    if (this._onAbort) {
      this._signal.removeEventListener('abort', this._onAbort);
      this._onAbort = null;
      this._signal = null;
    }
  }
  // The completion, from onEvents; the call's held dispatcher slot is given
  // back by the addon once the reactions this settlement queued have run.
  _settle(result, remoteCode, message, payload, packet, contentType) {
    this._unlisten();
    const resolve = this._resolve;
    const reject = this._reject;
    this._resolve = this._reject = null;
    if (result !== FW.OK) {
      reject(frameworkError(result, remoteCode, message));
      return;
    }
    if (!this._request) resolve(undefined);
    else if (this._decodeJson) {
      try {
        resolve(JSON.parse(payload.toString('utf8')));
      } catch (e) {
        reject(e);
      }
    } else resolve(new Reply(packet, contentType, payload));
  }
}

// ------------------------------------------------------------------- host

const serving = new Set(); // started hosts stay reachable until shut down

class Host {
  constructor(name, options = {}) {
    const [h, rc] = native.hostNew(name);
    check(rc, 'host');
    this._h = h;
    this._handlerIds = [];
    for (const [k, v] of Object.entries(options)) this.setOption(k, v);
  }
  // Raw option values of zlink/framework.h: timeouts in ns (number or bigint).
  setOption(option, value) {
    check(native.hostSetOption(this._h, optionNumber(HostOption, option), value), 'setOption');
    return this;
  }
  getOption(option) {
    const [v, rc] = native.hostGetOption(this._h, optionNumber(HostOption, option));
    check(rc, 'getOption');
    return v;
  }
  addCsServer(channel, endpoint) {
    check(native.hostAddCs(this._h, channel, endpoint, true), 'addCsServer');
    return this;
  }
  addCsClient(channel, endpoint) {
    check(native.hostAddCs(this._h, channel, endpoint, false), 'addCsClient');
    return this;
  }
  setChannelOption(channel, option, value) {
    check(native.namedSetOption(this._h, channel, optionNumber(NodeOption, option), value, false), 'setChannelOption');
    return this;
  }
  getChannelOption(channel, option) {
    const [v, rc] = native.namedGetOption(this._h, channel, optionNumber(NodeOption, option), false);
    check(rc, 'getChannelOption');
    return v;
  }
  addMeshNode(mesh, routingId, listenEndpoint) {
    check(native.hostAddMeshNode(this._h, mesh, bytes(routingId), listenEndpoint), 'addMeshNode');
    return this;
  }
  meshConnect(mesh, endpoint, peerRoutingId) {
    check(native.meshConnect(this._h, mesh, endpoint, bytes(peerRoutingId)), 'meshConnect');
    return this;
  }
  setMeshOption(mesh, option, value) {
    check(native.namedSetOption(this._h, mesh, optionNumber(NodeOption, option), value, true), 'setMeshOption');
    return this;
  }
  getMeshOption(mesh, option) {
    const [v, rc] = native.namedGetOption(this._h, mesh, optionNumber(NodeOption, option), true);
    check(rc, 'getMeshOption');
    return v;
  }
  addMeshChannelClient(mesh, channel) {
    check(native.meshAddChannel(this._h, mesh, channel), 'addMeshChannelClient');
    return this;
  }
  addMeshChannelServer(mesh, channel, weight = 100) {
    check(native.meshAddChannel(this._h, mesh, channel, weight), 'addMeshChannelServer');
    return this;
  }
  setMeshWeight(mesh, channel, weight) {
    check(native.meshSetWeight(this._h, mesh, channel, weight), 'setMeshWeight');
    return this;
  }
  endpoint(name) {
    const [ep, rc] = native.hostEndpoint(this._h, name);
    check(rc, 'endpoint');
    return ep;
  }
  meshReadyPeers(mesh) {
    const [n, rc] = native.meshReadyPeers(this._h, mesh);
    check(rc, 'meshReadyPeers');
    return n;
  }
  // handle({channel} | {node}, 'send' | 'request', packet, fn(turn)).
  handle(ownerSpec, kind, packet, fn) {
    const [ok, name] = owner(ownerSpec);
    if (kind !== 'send' && kind !== 'request') throw new TypeError("kind must be 'send' or 'request'");
    if (typeof fn !== 'function') throw new TypeError('handler must be a function');
    const id = nextHandlerId++;
    handlers.set(id, { fn });
    const rc = native.hostAddHandler(this._h, ok, name, kind === 'send' ? MESSAGE_SEND : MESSAGE_REQUEST, packet, id);
    if (rc !== FW.OK) {
      handlers.delete(id);
      check(rc, 'handle');
    }
    this._handlerIds.push(id);
    return this;
  }
  start() {
    check(native.hostStart(this._h), 'start');
    serving.add(this);
    return this;
  }
  // Graceful shutdown (deadline in ms; default: the SHUTDOWN_TIMEOUT option).
  shutdown(deadlineMs) {
    const ns = deadlineMs === undefined ? 0n : msToNs(deadlineMs);
    return new Promise((resolve, reject) => {
      native.hostShutdown(this._h, ns, (rc) => {
        if (native.hostState(this._h) !== 1 && native.hostState(this._h) !== 2) serving.delete(this);
        const err = frameworkError(rc, 0, 'shutdown');
        if (err) reject(err);
        else resolve();
      });
    });
  }
  // Frees a PREPARING, STOPPED or FAILED host.
  destroy() {
    check(native.hostDestroy(this._h), 'destroy');
    serving.delete(this);
    for (const id of this._handlerIds) handlers.delete(id);
    this._handlerIds = [];
  }
  // The addon's reference to this host, for native code of the
  // application's own that calls the C ABI on it (e.g. a test helper's
  // zlink_host_add_handler while PREPARING): an External whose data begins
  // with the zlink_host_t handle. The binding keeps owning the host.
  get nativeHandle() {
    return native.hostHandle(this._h);
  }
  get state() {
    const s = native.hostState(this._h);
    return s < 0 ? 'DESTROYED' : HostState[s];
  }
  status() {
    const [s, rc] = native.hostStatus(this._h);
    check(rc, 'status');
    s.state = HostState[s.state];
    return s;
  }
  capacity() {
    const [c, rc] = native.hostCapacity(this._h);
    check(rc, 'capacity');
    return c;
  }
  ownerStatus(ownerSpec) {
    const [ok, name] = owner(ownerSpec);
    const [s, rc] = native.hostOwnerStatus(this._h, ok, name);
    check(rc, 'ownerStatus');
    return s;
  }
  resetMetrics() {
    check(native.hostResetMetrics(this._h), 'resetMetrics');
  }
  metric(name, labels = '') {
    const [v, rc] = native.hostMetric(this._h, name, labels);
    check(rc, 'metric');
    return v;
  }
  _call(kind, target, rid) {
    let h = native.callNew(this._h, kind, target, rid === undefined ? undefined : bytes(rid));
    if (typeof h === 'number') {
      check(h, 'call'); // refused: the C result
      h = null;
    }
    return new Call(h, kind === 1 || kind === 3);
  }
  sendToChannel(channel) {
    return this._call(0, channel);
  }
  requestToChannel(channel) {
    return this._call(1, channel);
  }
  sendToNode(mesh, routingId) {
    return this._call(2, mesh, routingId);
  }
  requestToNode(mesh, routingId) {
    return this._call(3, mesh, routingId);
  }
}

// Counts kept by the addon, for tests and diagnosis: completions and turns
// posted by ZLink's threads and delivered here, and the calls plus serving
// hosts that keep the event loop alive now.
function diagnostics() {
  return native.diagnostics();
}

function inRuntimeContext() {
  return native.inRuntimeContext();
}

module.exports = {
  Host,
  Call,
  Turn,
  Reply,
  HostOption,
  NodeOption,
  JobQueueProfile,
  msToNs,
  inRuntimeContext,
  diagnostics,
  ZLinkFrameworkError,
};
