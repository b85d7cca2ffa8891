// cases_pl.js — the PL cases (seed 004 §9), ported from conformance/c/
// pl_*.c to the Node binding's Core API. Sub-checks that pass what a typed
// JavaScript API cannot form (a NULL array, a negative item count, a
// pointer to arbitrary memory as a handle, a NULL error_out) are not
// ported. A destroyed poller stands for a bad poller handle (the C ABI
// refuses a stale handle like a forged one, doc/errors.md "Handles"); a
// closed socket is not a bad handle (it reports POLLERR), so no sub-check
// uses one for that.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { ok, eq, param, ms } = require('./check');
const zlink = require('../../bindings/node/lib');

const { Poll, SourceKind } = zlink;
const LONG_WAIT_MS = ms(10000);
const EDGE_BOUND_MS = ms(1000);

// A pipe: a FIFO opened non-blocking at both ends, [readFd, writeFd].
let fifoSeq = 0;
function pipe() {
  const p = path.join(os.tmpdir(), `zlink-pl-${process.pid}-${++fifoSeq}`);
  execFileSync('mkfifo', [p]);
  const r = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  const w = fs.openSync(p, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  fs.unlinkSync(p);
  return [r, w];
}
const writeByte = (fd) => eq(fs.writeSync(fd, Buffer.from([1])), 1, 'a byte written');
const readByte = (fd) => eq(fs.readSync(fd, Buffer.alloc(1), 0, 1, null), 1, 'a byte read');
function pipeClose(fds) {
  for (const fd of fds) fs.closeSync(fd);
}

// The C result and errno a Core call failed with ('OK' when it did not).
function failure(fn) {
  try {
    fn();
  } catch (e) {
    if (e instanceof zlink.ZLinkError) return `${e.result}/${e.errno}`;
    throw e;
  }
  return 'OK';
}

let linkSeq = 0;
function pairLink(ctx) {
  const a = ctx.socket('PAIR');
  const b = ctx.socket('PAIR');
  const ep = `inproc://pl-${process.pid}-${++linkSeq}`;
  a.bind(ep);
  b.connect(ep);
  b.setOption('RCVTIMEO', LONG_WAIT_MS);
  return [a, b];
}

function expectStr(s, text) {
  const { parts } = s.recv();
  eq(parts.length, 1, 'parts');
  eq(parts[0].toString(), text, 'record');
}

function finish(ctx, ...socks) {
  for (const s of socks) s.close();
  ctx.close();
}

// --------------------------------------------------------------- PL-01

function pl01(params) {
  const quiet = ms(param(params, 'timeout_ms'));
  const ctx = new zlink.Context();
  const [a, b] = pairLink(ctx);
  const fds = pipe();
  const items = [{ socket: b, events: Poll.IN }, { fd: fds[0], events: Poll.IN }, { socket: a, events: Poll.OUT }];
  let r = zlink.poll(items, 0);
  eq(r.count, 1, 'one ready (a can send)');
  eq(r.revents[2], Poll.OUT, 'revents of a');
  a.send('x');
  writeByte(fds[1]);
  r = zlink.poll(items, 0);
  eq(r.count, 3, 'three ready');
  eq(r.revents[0], Poll.IN, 'revents of b');
  eq(r.revents[1], Poll.IN, 'revents of the fd');
  const t0 = Date.now();
  eq(zlink.poll([{ socket: a, events: Poll.IN }], quiet).count, 0, '0 on timeout');
  ok(Date.now() - t0 >= quiet, 'after the timeout');
  // -1 with the result and errno (the C case's NULL array, negative count
  // and junk handles cannot be formed from JavaScript).
  eq(failure(() => zlink.poll([{ socket: b, events: Poll.IN | 16 }], 0)), 'ZLINK_CONFIG_INVALID_ARGUMENT/EINVAL', 'POLLITEMS_DFLT as a bit');
  eq(failure(() => zlink.poll([{ fd: -1, events: Poll.IN }], 0)), 'ZLINK_CONFIG_INVALID_ARGUMENT/EINVAL', 'fd -1');
  expectStr(b, 'x');
  pipeClose(fds);
  finish(ctx, a, b);
}

// --------------------------------------------------------------- PL-03

function pl03() {
  // The addon fills every revents with garbage before the call: the C call
  // must clear it on entry, also for an item with no events.
  const ctx = new zlink.Context();
  const [a, b] = pairLink(ctx);
  const items = [{ socket: b, events: Poll.IN }, { socket: a, events: 0 }];
  let r = zlink.poll(items, 0);
  eq(r.count, 0, 'nothing ready');
  eq(r.revents[0], 0, 'revents cleared');
  eq(r.revents[1], 0, 'revents cleared for an item with no events');
  a.send('x');
  r = zlink.poll(items, 0);
  eq(r.count, 1, 'b ready');
  eq(r.revents[0], Poll.IN, 'revents of b');
  eq(r.revents[1], 0, 'revents of a');
  expectStr(b, 'x');
  eq(r.revents[0], Poll.IN, 'the snapshot does not follow later changes');
  r = zlink.poll(items, 0);
  eq(r.revents[0], 0, 'the next call does');
  items[1].events = 1024;
  eq(failure(() => zlink.poll(items, 0)), 'ZLINK_CONFIG_INVALID_ARGUMENT/EINVAL', 'an unknown bit');
  finish(ctx, a, b);
}

// ----------------------------------------------------- PL-04, 05, 07

function sourcesOpen() {
  const ctx = new zlink.Context();
  return { ctx, s: ctx.socket('PAIR'), t: new zlink.Timer(), fds: pipe(), p: new zlink.Poller() };
}

function sourcesClose(x, registered) {
  eq(x.p.size(), registered, 'registrations');
  x.p.close();
  x.t.close();
  pipeClose(x.fds);
  finish(x.ctx, x.s);
}

function pl04() {
  const x = sourcesOpen();
  x.p.add(x.s, Poll.IN);
  eq(failure(() => x.p.add(x.s, Poll.OUT)), 'ZLINK_CONFIG_CONFLICT/EEXIST', 'a socket again');
  x.p.add(x.fds[0], Poll.IN);
  eq(failure(() => x.p.add(x.fds[0], Poll.OUT)), 'ZLINK_CONFIG_CONFLICT/EEXIST', 'an fd again');
  x.p.addTimer(x.t);
  eq(failure(() => x.p.addTimer(x.t)), 'ZLINK_CONFIG_CONFLICT/EEXIST', 'a timer again');
  eq(failure(() => x.p.add(x.t, Poll.IN)), 'ZLINK_CONFIG_CONFLICT/EEXIST', 'a timer again, generic add');
  sourcesClose(x, 3);
}

function pl05() {
  // A timer held by one poller cannot be added to another.
  let t = new zlink.Timer();
  let p1 = new zlink.Poller();
  let p2 = new zlink.Poller();
  p1.addTimer(t);
  eq(failure(() => p2.addTimer(t)), 'ZLINK_CONFIG_INVALID_STATE/EBUSY', 'held by p1');
  eq(failure(() => p2.add(t, Poll.IN)), 'ZLINK_CONFIG_INVALID_STATE/EBUSY', 'held by p1, generic add');
  eq(p2.size(), 0, 'p2 registrations');
  p1.removeTimer(t);
  p2.addTimer(t);
  p2.close();
  p1.addTimer(t);
  p1.close();
  t.close();
  // A registered timer cannot be destroyed.
  t = new zlink.Timer();
  const p = new zlink.Poller();
  p.addTimer(t);
  eq(failure(() => t.close()), 'ZLINK_CLOSE_BUSY/EBUSY', 'destroying a registered timer');
  t.start(1000000n, 1);
  const ev = p.wait(2, LONG_WAIT_MS);
  eq(ev.length, 1, 'events');
  eq(ev[0].timer, t.id, 'the timer fired, still registered');
  p.remove(t); // generic remove works too
  t.close();
  p.close();
}

function pl07() {
  const ctx = new zlink.Context();
  const s = ctx.socket('PAIR');
  const other = ctx.socket('PAIR');
  const t = new zlink.Timer();
  const p = new zlink.Poller();
  p.add(other, Poll.IN);
  const NF = 'ZLINK_CONFIG_NOT_FOUND/ENOENT';
  eq(failure(() => p.modify(s, Poll.IN)), NF, 'modify a socket');
  eq(failure(() => p.remove(s)), NF, 'remove a socket');
  eq(failure(() => p.modify(0, Poll.IN)), NF, 'modify an fd');
  eq(failure(() => p.remove(0)), NF, 'remove an fd');
  eq(failure(() => p.removeTimer(t)), NF, 'remove a timer');
  eq(failure(() => p.modify(t, Poll.IN)), NF, 'modify a timer');
  eq(failure(() => p.remove(t)), NF, 'remove a timer, generic');
  // Something that is no source of that kind is a bad handle, not a
  // missing one (junk memory and NULL cannot be formed from JavaScript).
  eq(failure(() => p.removeTimer(s)), 'ZLINK_CONFIG_INVALID_HANDLE/EFAULT', 'a socket as a timer');
  p.remove(other);
  eq(failure(() => p.remove(other)), NF, 'a removed source');
  eq(p.size(), 0, 'registrations');
  p.close();
  t.close();
  finish(ctx, s, other);
}

// ----------------------------------------------------- PL-24, 25, 26

function pl24() {
  const ctx = new zlink.Context();
  const s = ctx.socket('PAIR');
  const t = new zlink.Timer();
  const p = new zlink.Poller();
  eq(p.size(), 0, 'empty');
  p.add(s, 0); // a zero mask is still a registration
  p.add(0, Poll.IN);
  p.addTimer(t);
  eq(p.size(), 3, 'three registrations');
  p.remove(0);
  eq(p.size(), 2, 'two registrations');
  const gone = new zlink.Poller();
  gone.close();
  eq(failure(() => gone.size()), 'ZLINK_CONFIG_INVALID_HANDLE/EFAULT', 'size of a destroyed poller');
  p.close();
  t.close();
  finish(ctx, s);
}

async function pl25(params) {
  const quiet = ms(param(params, 'timeout_ms'));
  const fds = pipe();
  const p = new zlink.Poller();
  p.add(fds[0], Poll.IN);
  eq(failure(() => p.wait(0, 0)), 'ZLINK_CONFIG_INVALID_ARGUMENT/EINVAL', 'capacity 0');
  eq(failure(() => p.wait(-3, -1)), 'ZLINK_CONFIG_INVALID_ARGUMENT/EINVAL', 'capacity -3');
  const gone = new zlink.Poller();
  gone.close();
  eq(failure(() => gone.wait(0, 0)), 'ZLINK_CONFIG_INVALID_ARGUMENT/EINVAL', 'arguments before the handle');
  eq(failure(() => gone.wait(2, 0)), 'ZLINK_CONFIG_INVALID_HANDLE/EFAULT', 'a destroyed poller');
  let t0 = Date.now();
  eq(p.wait(2, 0).length, 0, '0 at once');
  ok(Date.now() - t0 < EDGE_BOUND_MS, 'at once');
  t0 = Date.now();
  eq(p.wait(2, quiet).length, 0, '0 on timeout');
  ok(Date.now() - t0 >= quiet, 'after the timeout');
  writeByte(fds[1]);
  eq(p.wait(2, -1).length, 1, 'the count of events');
  readByte(fds[0]);
  // Every negative timeout waits without limit (here: until the edge).
  const w = p.waitAsync(2, -7);
  writeByte(fds[1]);
  const ev = await w;
  eq(ev.length, 1, 'events');
  eq(ev[0].sourceKind, SourceKind.FD, 'source kind');
  eq(ev[0].events, Poll.IN, 'bits');
  p.close();
  pipeClose(fds);
}

function pl26() {
  const ctx = new zlink.Context();
  const s = ctx.socket('PAIR');
  const p = new zlink.Poller();
  const t0 = Date.now();
  eq(p.wait(2, -1).length, 0, 'empty');
  p.add(s, 0);
  p.add(0, 0);
  eq(p.wait(2, -1).length, 0, 'only zero masks');
  ok(Date.now() - t0 < EDGE_BOUND_MS, 'at once');
  s.close();
  const ev = p.wait(2, -1);
  eq(ev.length, 1, 'a closed socket: its POLLERR first');
  eq(ev[0].events, Poll.ERR, 'bits');
  eq(p.wait(2, -1).length, 0, 'then nothing');
  ok(Date.now() - t0 < EDGE_BOUND_MS, 'at once');
  p.close();
  ctx.close();
}

module.exports.cases = {
  'PL-01': pl01,
  'PL-03': pl03,
  'PL-04': pl04,
  'PL-05': pl05,
  'PL-07': pl07,
  'PL-24': pl24,
  'PL-25': pl25,
  'PL-26': pl26,
};
