// core.js — the Core of libzlink.so.1 as classes: Context, Socket, Poller,
// Timer, plus poll(). Each method calls one C function (src/core.cc) and
// throws ZLinkError, named from the generated table, when the result is
// not OK; nothing is retried, waited for or counted here.
//
// Records cross as arrays of Buffers (strings are taken as UTF-8). Blocking
// forms (a receive without DONTWAIT, a wait with a timeout) block the
// JavaScript thread, as the C calls do; pollerWaitAsync / Timer.recvAsync
// run the wait on a pool thread instead and return a Promise.
'use strict';
const { load } = require('./native');
const { ZLinkError } = require('./errors');

const native = load();

// Values of zlink.h (not results).
const SocketType = Object.freeze({
  PAIR: 0x1001, PUB: 0x1002, SUB: 0x1003, DEALER: 0x1004, ROUTER: 0x1005,
  XPUB: 0x1006, XSUB: 0x1007, STREAM: 0x1008,
});
const Poll = Object.freeze({ IN: 1, OUT: 2, ERR: 4, PRI: 8, COMPLETION: 32, ROUTE: 64 });
const SourceKind = Object.freeze({ SOCKET: 1, FD: 2, TIMER: 3 });
const DONTWAIT = 1;
const CompletionKind = Object.freeze({ REQUEST: 2, WRITABLE: 3 });
// Socket options and their C types (0 int, 1 uint64, 2 int64, 3 bytes).
const OPTIONS = {
  AFFINITY: [0x3001, 1], SNDBUF: [0x3005, 0], RCVBUF: [0x3006, 0], FD: [0x3007, 0],
  EVENTS: [0x3008, 0], TYPE: [0x3009, 0], LINGER: [0x300a, 0], RECONNECT_IVL: [0x300b, 0],
  BACKLOG: [0x300c, 0], RECONNECT_IVL_MAX: [0x300d, 0], MAXMSGSIZE: [0x300e, 2],
  SNDHWM: [0x300f, 1], RCVHWM: [0x3010, 1], RCVTIMEO: [0x3012, 0], SNDTIMEO: [0x3013, 0],
  LAST_ENDPOINT: [0x3014, 3], IMMEDIATE: [0x3019, 0], IPV6: [0x301a, 0],
  HANDSHAKE_IVL: [0x301d, 0], CONNECT_TIMEOUT: [0x3024, 0], TCP_NODELAY: [0x3031, 0],
  ROUTER_MANDATORY: [0x3101, 0], ROUTER_PROBE: [0x3103, 0], CONNECT_ROUTING_ID: [0x3104, 3],
  ROUTER_OPT_REQUEST_TIMEOUT_MS: [0x3105, 0], ROUTER_WEIGHT: [0x3106, 0],
  DEALER_PROBE: [0x3201, 0], DEALER_OPT_REQUEST_TIMEOUT_MS: [0x3202, 0],
  DEALER_WEIGHT: [0x3203, 0], STREAM_NOTIFY: [0x3501, 0], STREAM_OPT_RECV_MODE: [0x3502, 0],
};
const ReceiveFlowState = Object.freeze({ RUNNING: 0, PAUSED: 1 });
// ZLINK_MONITOR_STATE_* and ZLINK_MONITOR_STATUS_DETAIL_* (zlink.h).
const MonitorState = Object.freeze({ READY: 1, BOUND_READY: 2, CLOSED: 8 });
const MonitorDetail = Object.freeze({ SND_PENDING_MSGS: 2, RCV_PENDING_MSGS: 4, FLOW_STATE: 32 });

function ok([rc, errno], family, what) {
  if (rc !== 0) throw new ZLinkError(family, rc, errno, what);
}

function parts(record) {
  const list = Array.isArray(record) ? record : [record];
  return list.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p));
}

function userData(map, value) {
  const id = map.next++;
  map.values.set(id, value);
  return id;
}

class Context {
  constructor() {
    const [h, errno] = native.ctxNew();
    if (h === null) throw new ZLinkError('config', -1, errno, 'zlink_ctx_new');
    this._h = h;
  }
  set(option, value) {
    ok(native.ctxSet(this._h, option, value), 'config', 'zlink_ctx_set');
  }
  get(option) {
    const [rc, errno, v] = native.ctxGet(this._h, option);
    ok([rc, errno], 'config', 'zlink_ctx_get');
    return v;
  }
  socket(type) {
    return new Socket(this, typeof type === 'string' ? SocketType[type] : type);
  }
  shutdown() {
    ok(native.ctxShutdown(this._h), 'close', 'zlink_ctx_shutdown');
  }
  // zlink_ctx_term: blocks until every socket of the context is closed.
  close() {
    ok(native.ctxTerm(this._h), 'close', 'zlink_ctx_term');
  }
}

class Socket {
  constructor(ctx, type) {
    const [h, errno] = native.socket(ctx._h, type);
    if (h === null) throw new ZLinkError('config', -1, errno, 'zlink_socket');
    this._h = h;
    this.type = type;
    this.id = native.handleId(h);
  }
  setOption(name, value) {
    const [opt, kind] = OPTIONS[name] || [name, typeof value === 'bigint' ? 1 : 0];
    ok(native.setsockopt(this._h, opt, kind, value), 'config', `setsockopt ${name}`);
  }
  getOption(name, kind) {
    const [opt, k] = OPTIONS[name] || [name, kind || 0];
    const [rc, errno, v] = native.getsockopt(this._h, opt, k);
    ok([rc, errno], 'config', `getsockopt ${name}`);
    return v;
  }
  setRoutingId(id) {
    ok(native.setRoutingId(this._h, parts(id)[0]), 'config', 'zlink_set_routing_id');
  }
  bind(endpoint) {
    ok(native.endpoint(this._h, 0, endpoint), 'bind', `bind ${endpoint}`);
  }
  connect(endpoint) {
    ok(native.endpoint(this._h, 1, endpoint), 'connect', `connect ${endpoint}`);
  }
  unbind(endpoint) {
    ok(native.endpoint(this._h, 2, endpoint), 'connect', `unbind ${endpoint}`);
  }
  disconnect(endpoint) {
    ok(native.endpoint(this._h, 3, endpoint), 'connect', `disconnect ${endpoint}`);
  }
  // zlink_send (rid null) or zlink_send_rid; returns the wait token (0n
  // unless a DONTWAIT send was refused for lack of room, then it throws
  // with err.completionId set).
  send(record, { rid = null, dontwait = false, userContext = 0 } = {}) {
    const [rc, errno, cid] = native.send(this._h, rid, parts(record), dontwait ? DONTWAIT : 0, userContext);
    if (rc !== 0) {
      const err = new ZLinkError('submit', rc, errno, 'send');
      err.completionId = cid;
      throw err;
    }
    return cid;
  }
  // zlink_request: returns the completion id of the REQUEST record to come.
  request(record, { rid = null, dontwait = false, timeoutMs = 0, userContext = 0 } = {}) {
    const [rc, errno, cid] = native.request(this._h, rid, parts(record), dontwait ? DONTWAIT : 0, timeoutMs, userContext);
    if (rc !== 0) {
      const err = new ZLinkError('submit', rc, errno, 'request');
      err.completionId = cid;
      throw err;
    }
    return cid;
  }
  // zlink_recv: { parts, rid } (rid only for STREAM).
  recv({ dontwait = false, capacity = 16 } = {}) {
    const [rc, errno, p, rid] = native.recv(this._h, dontwait ? DONTWAIT : 0, capacity);
    if (rc !== 0) {
      const err = new ZLinkError('recv', rc, errno, 'recv');
      err.needed = p;
      throw err;
    }
    return { parts: p, rid };
  }
  // zlink_router_recv: { parts, rid, token } (token 0n for DATA).
  routerRecv({ dontwait = false, capacity = 16 } = {}) {
    const [rc, errno, p, rid, token] = native.routerRecv(this._h, dontwait ? DONTWAIT : 0, capacity);
    if (rc !== 0) throw new ZLinkError('recv', rc, errno, 'router_recv');
    return { parts: p, rid, token };
  }
  reply(rid, token, record) {
    ok(native.reply(this._h, rid, token, parts(record)), 'submit', 'reply');
  }
  replyError(rid, token, errnoValue, record = []) {
    ok(native.reply(this._h, rid, token, parts(record), errnoValue), 'submit', 'reply_error');
  }
  // zlink_reply_submit: the reply (or, with error, the error reply) of a
  // REQUEST; returns 0n when admitted. With dontwait, a reply refused for
  // lack of room throws BACKPRESSURED with err.completionId set (its wait
  // token; a WRITABLE record follows when there is room).
  replySubmit(rid, token, record, { error = 0, dontwait = false, userContext = 0 } = {}) {
    const [rc, errno, cid] = native.replySubmit(this._h, rid, token, parts(record), error, dontwait ? DONTWAIT : 0, userContext);
    if (rc !== 0) {
      const err = new ZLinkError('submit', rc, errno, 'reply_submit');
      err.completionId = cid;
      throw err;
    }
    return cid;
  }
  // The socket's monitor snapshot (zlink_socket_monitor_open,
  // zlink_monitor_status, zlink_monitor_close): { stateFlags, detailFlags,
  // sndPendingMsgs, sndPendingBytes, rcvPendingMsgs, rcvPendingBytes,
  // flowPausedConnections, flowPauseAppliedTotal, flowResumeAppliedTotal,
  // flowStateStaleTotal } (counts are bigints; each group valid as
  // detailFlags says: MonitorDetail).
  pendingStatus() {
    const [rc, errno, st] = native.pendingStatus(this._h);
    if (rc !== 0) throw new ZLinkError('config', rc, errno, 'zlink_monitor_status');
    return st;
  }
  // zlink_completion_recv: the record, or throws (NO_DATA/EAGAIN when empty
  // with dontwait).
  completionRecv({ dontwait = false } = {}) {
    const [rc, errno, rec] = native.completionRecv(this._h, dontwait ? DONTWAIT : 0);
    if (rc !== 0) throw new ZLinkError('recv', rc, errno, 'completion_recv');
    return rec;
  }
  setReceiveFlowState(state) {
    const s = typeof state === 'string' ? ReceiveFlowState[state] : state;
    ok(native.setFlowState(this._h, s), 'config', 'set_receive_flow_state');
  }
  close() {
    ok(native.close(this._h), 'close', 'zlink_close');
  }
}

class Timer {
  constructor() {
    const [h, errno] = native.timerNew();
    if (h === null) throw new ZLinkError('config', -1, errno, 'zlink_timer_new');
    this._h = h;
    this.id = native.handleId(h);
  }
  start(intervalNs, repeat = 0) {
    ok(native.timerStart(this._h, intervalNs, repeat), 'config', 'zlink_timer_start');
  }
  stop() {
    ok(native.timerStop(this._h), 'config', 'zlink_timer_stop');
  }
  // The number of fires since the last receive.
  recv({ dontwait = false } = {}) {
    const [rc, errno, count] = native.timerRecv(this._h, dontwait ? DONTWAIT : 0);
    if (rc !== 0) throw new ZLinkError('recv', rc, errno, 'zlink_timer_recv');
    return count;
  }
  close() {
    const [rc, errno] = native.timerDestroy(this._h);
    ok([rc, errno], 'close', 'zlink_timer_destroy');
  }
}

// One poller; sources are Sockets, Timers or fds (numbers). user data may
// be any JavaScript value: the poller passes back a number that maps to it.
class Poller {
  constructor() {
    const [h, errno] = native.pollerNew();
    if (h === null) throw new ZLinkError('config', -1, errno, 'zlink_poller_new');
    this._h = h;
    this._data = { next: 1, values: new Map() };
  }
  // { errorOut: false } passes NULL as error_out: a failure then has code
  // -1 and only its errno (as for wait() and poll()).
  size({ errorOut = true } = {}) {
    const [n, rc, errno] = native.pollerSize(this._h, !errorOut);
    if (n < 0) throw new ZLinkError('config', rc, errno, 'zlink_poller_size');
    return n;
  }
  _op(op, src, user, events, what) {
    ok(native.pollerOp(this._h, op, src, user, events), 'config', what);
  }
  // zlink_poller_add (a Socket or a Timer) or zlink_poller_add_fd (a number).
  add(source, events, user) {
    const id = user === undefined ? 0 : userData(this._data, user);
    if (typeof source === 'number') this._op(3, source, id, events, 'zlink_poller_add_fd');
    else this._op(0, source._h, id, events, 'zlink_poller_add');
  }
  // zlink_poller_modify / zlink_poller_modify_fd.
  modify(source, events) {
    if (typeof source === 'number') this._op(4, source, 0, events, 'zlink_poller_modify_fd');
    else this._op(1, source._h, 0, events, 'zlink_poller_modify');
  }
  // zlink_poller_remove / zlink_poller_remove_fd.
  remove(source) {
    if (typeof source === 'number') this._op(5, source, 0, 0, 'zlink_poller_remove_fd');
    else this._op(2, source._h, 0, 0, 'zlink_poller_remove');
  }
  // zlink_poller_add_timer / zlink_poller_remove_timer (a Timer, or any
  // handle: the C function decides what it accepts).
  addTimer(timer, user) {
    const id = user === undefined ? 0 : userData(this._data, user);
    this._op(6, timer._h, id, 0, 'zlink_poller_add_timer');
  }
  removeTimer(timer) {
    this._op(7, timer._h, 0, 0, 'zlink_poller_remove_timer');
  }
  _events(list) {
    return list.map((e) => ({
      sourceKind: e.sourceKind,
      socket: e.socket,
      fd: e.fd,
      timer: e.timer,
      user: e.userData === 0 ? undefined : this._data.values.get(e.userData),
      events: e.events,
    }));
  }
  // zlink_poller_wait on this thread: the events (empty on timeout).
  wait(capacity, timeoutMs, { errorOut = true } = {}) {
    const [n, rc, errno, events] = native.pollerWait(this._h, capacity, timeoutMs, false, !errorOut);
    if (n < 0) throw new ZLinkError('config', rc, errno, 'zlink_poller_wait');
    return this._events(events);
  }
  // The same wait on a pool thread: a Promise of the events.
  waitAsync(capacity, timeoutMs) {
    return new Promise((resolve, reject) => {
      native.pollerWaitAsync(this._h, capacity, timeoutMs, (n, rc, errno, events) => {
        if (n < 0) reject(new ZLinkError('config', rc, errno, 'zlink_poller_wait'));
        else resolve(this._events(events));
      });
    });
  }
  close() {
    ok(native.pollerDestroy(this._h), 'close', 'zlink_poller_destroy');
  }
}

// zlink_poll over [{ socket | fd, events }]: the revents of each item.
function poll(items, timeoutMs, { errorOut = true } = {}) {
  const list = items.map((it) => [it.socket ? it.socket._h : null, it.fd === undefined ? -1 : it.fd, it.events]);
  const [n, rc, errno, revents] = native.poll(list, timeoutMs, !errorOut);
  if (n < 0) throw new ZLinkError('config', rc, errno, 'zlink_poll');
  return { count: n, revents };
}

// The same wait on a pool thread: a Promise of { count, revents }.
function pollAsync(items, timeoutMs) {
  const list = items.map((it) => [it.socket ? it.socket._h : null, it.fd === undefined ? -1 : it.fd, it.events]);
  return new Promise((resolve, reject) => {
    native.pollAsync(list, timeoutMs, (n, rc, errno, revents) => {
      if (n < 0) reject(new ZLinkError('config', rc, errno, 'zlink_poll'));
      else resolve({ count: n, revents, items });
    });
  });
}

function version() {
  const [major, minor, patch] = native.version();
  return { major, minor, patch };
}

module.exports = {
  Context, Socket, Poller, Timer, poll, pollAsync, version, SocketType, Poll, SourceKind,
  CompletionKind, ReceiveFlowState, MonitorState, MonitorDetail, DONTWAIT, ZLinkError,
};
