// preload_child.js — the child process of PL-15 and PL-23, started by
// cases_pl.js with preload.c's library in LD_PRELOAD (see that file for
// the signals that drive it). argv: case id, params JSON. Exit 0 when the
// case's checks held; a failure's text on stderr otherwise.
'use strict';
const fs = require('fs');
const { execFileSync } = require('child_process');
const { ok, eq, ms } = require('./check');
const zlink = require('../../bindings/node/lib');

const { Poll, SourceKind } = zlink;
const LONG_WAIT_MS = ms(10000);
// glibc's SIGRTMIN is 34; preload.c uses SIGRTMIN + 7 .. + 9.
const SIGRTMIN = 34;
const TRIGGER_SIG = SIGRTMIN + 7;
const ARM_SIG = SIGRTMIN + 8;
const DISARM_SIG = SIGRTMIN + 9;

// The answer FIFO (ZLINK_PRELOAD_ACK), both ends held by this process.
const ackPath = process.env.ZLINK_PRELOAD_ACK;
execFileSync('mkfifo', [ackPath]);
const ackR = fs.openSync(ackPath, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
const ackW = fs.openSync(ackPath, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);

// The library's next answer: a count (waited for with zlink_poll).
function answer() {
  eq(zlink.poll([{ fd: ackR, events: Poll.IN }], LONG_WAIT_MS).count, 1, 'the preload library answered');
  const b = Buffer.alloc(8);
  eq(fs.readSync(ackR, b, 0, 8, null), 8, 'an 8-byte answer');
  return Number(b.readBigUInt64LE(0));
}

// Signals to every thread but this one, answered with how many went out.
function pester(signals) {
  process.kill(process.pid, TRIGGER_SIG);
  const sent = answer();
  ok(sent >= signals, `${sent} signals sent, at least ${signals} expected`);
}

function pipe() {
  const p = `${ackPath}.pipe`;
  execFileSync('mkfifo', [p]);
  const r = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  const w = fs.openSync(p, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  fs.unlinkSync(p);
  return [r, w];
}

function expectStr(s, text) {
  eq(s.recv().parts[0].toString(), text, 'record');
}

// PL-15: the waits run on pool threads (waitAsync, pollAsync), which the
// library interrupts with a handler installed without SA_RESTART.
async function pl15(params) {
  const timeout = ms(params.timeout_ms);
  const signals = params.signals;
  ok(signals >= 1, 'signals >= 1');
  const ctx = new zlink.Context();
  const a = ctx.socket('PAIR');
  const b = ctx.socket('PAIR');
  const ep = `inproc://pl15-${process.pid}`;
  a.bind(ep);
  b.connect(ep);
  b.setOption('RCVTIMEO', LONG_WAIT_MS);
  const fds = pipe();
  // zlink_poller_wait: socket only, with a timer, with an fd.
  const t = new zlink.Timer();
  for (let variant = 0; variant < 3; variant++) {
    const p = new zlink.Poller();
    p.add(b, Poll.IN);
    if (variant === 1) {
      p.addTimer(t);
      t.start(3600000n * 1000000n, 0);
    }
    if (variant === 2) p.add(fds[0], Poll.IN);
    let t0 = Date.now();
    let w = p.waitAsync(4, timeout);
    pester(signals);
    let ev = await w; // a rejection (EINTR) fails the case
    const elapsed = Date.now() - t0;
    eq(ev.length, 0, `poller variant ${variant}: no event`);
    ok(elapsed >= timeout, `poller variant ${variant}: returned after ${elapsed} ms, timeout ${timeout}`);
    w = p.waitAsync(4, LONG_WAIT_MS);
    pester(signals);
    a.send('x');
    ev = await w;
    ok(ev.length === 1 && ev[0].sourceKind === SourceKind.SOCKET && ev[0].events === Poll.IN,
      `poller variant ${variant}: ${ev.length} event(s); expected the socket's IN`);
    expectStr(b, 'x');
    if (variant === 1) {
      t.stop();
      p.removeTimer(t);
    }
    p.close();
    t0 = 0;
  }
  t.close();
  // zlink_poll: a socket only, an fd only, both.
  for (let variant = 0; variant < 3; variant++) {
    const items = [];
    if (variant !== 1) items.push({ socket: b, events: Poll.IN });
    if (variant !== 0) items.push({ fd: fds[0], events: Poll.IN });
    const t0 = Date.now();
    let w = zlink.pollAsync(items, timeout);
    pester(signals);
    let r = await w;
    const elapsed = Date.now() - t0;
    eq(r.count, 0, `poll variant ${variant}: nothing ready`);
    ok(elapsed >= timeout, `poll variant ${variant}: returned after ${elapsed} ms, timeout ${timeout}`);
    w = zlink.pollAsync(items, LONG_WAIT_MS);
    pester(signals);
    if (variant === 1) eq(fs.writeSync(fds[1], Buffer.from([1])), 1, 'a byte written');
    else a.send('x');
    r = await w;
    eq(r.count, 1, `poll variant ${variant}: one ready`);
    if (variant === 1) eq(fs.readSync(fds[0], Buffer.alloc(1), 0, 1, null), 1, 'a byte read');
    else expectStr(b, 'x');
  }
  for (const fd of fds) fs.closeSync(fd);
  a.close();
  b.close();
  ctx.close();
}

// PL-23: allocation fails for what libzlink asks on this thread.
function pl23() {
  process.kill(process.pid, ARM_SIG);
  let err = null;
  let none = null;
  try {
    none = new zlink.Poller();
  } catch (e) {
    err = e;
  }
  process.kill(process.pid, DISARM_SIG);
  const failed = answer();
  ok(failed > 0, `zlink_poller_new allocated nothing through malloc/calloc (${none ? 'it returned a poller' : 'it failed'}): the injection did not reach it`);
  ok(none === null && err instanceof zlink.ZLinkError, `no poller: ${err}`);
  eq(err.errno, 'ENOMEM', 'errno');
  const p = new zlink.Poller();
  const q = new zlink.Poller();
  p.close();
  // The handle was set to NULL by the first destroy: a second is refused.
  let second = 'OK';
  try {
    p.close();
  } catch (e) {
    second = `${e.result}/${e.errno}`;
  }
  eq(second, 'ZLINK_CLOSE_INVALID_HANDLE/EFAULT', 'a second destroy');
  // Destroying a poller with registrations releases them all.
  const ctx = new zlink.Context();
  const s = ctx.socket('ROUTER');
  const t = new zlink.Timer();
  q.add(s, Poll.IN | Poll.COMPLETION | Poll.ROUTE);
  q.addTimer(t);
  q.add(0, Poll.IN);
  q.close();
  t.close();
  const r = new zlink.Poller();
  r.add(s, Poll.COMPLETION); // the completion bit is free again
  r.close();
  s.close();
  ctx.close();
}

(async () => {
  const [id, params] = [process.argv[2], JSON.parse(process.argv[3] || '{}')];
  try {
    if (id === 'PL-15') await pl15(params);
    else if (id === 'PL-23') pl23(params);
    else throw new Error(`unknown case ${id}`);
  } catch (e) {
    process.stderr.write(`${(e && e.message) || e}\n`);
    process.exit(1);
  }
  fs.closeSync(ackR);
  fs.closeSync(ackW);
  fs.unlinkSync(ackPath);
  // The parent needs this line: a child killed by a real-time signal is
  // reported to Node.js as exit code 0 with no signal name.
  process.stdout.write(`preload-child: ${id} done\n`, () => process.exit(0));
})();
