// cases_sc.js — the SC cases (seed 000 §17, framework-contract.md §7.1),
// ported from conformance/c/sc_submit.c and sc_request.c to the Node
// binding's public API. Where the C case uses the synchronous terminator
// (zlink_call_wait), the Node case uses submit() and awaits its Promise:
// Node has no synchronous terminator (seed 000 §4.1), and the cases check
// that the call objects have none.
'use strict';
const { ok, eq, eventually, settle, resultOf, ms, fail, param } = require('./check');
const { zlink, Server, Client, WorkerServer, Gate, endpoint, sendGated, transports, track, expectDone, doneBy, saturate, onTime, syncTerminators } = require('./harness');

const MS = (n) => BigInt(n) * 1000000n;

// Both terminators of Node refuse with want: submit() rejects and yield()
// rejects (yield is refused before anything is sent in this version, so it
// proves only that the call was not accepted twice).
async function refusedEachKind(a, channel, rid, want) {
  for (const request of [false, true]) {
    const c = rid !== null ? a.nodeCall(request, rid, 'refused-s') : a.call(request, channel, 'refused-s');
    eq(resultOf(await settle(c.submit())), want, `${request ? 'request' : 'send'} to ${rid !== null ? 'node ' + rid : channel}`);
  }
}

async function oneWayAndErrors(tr) {
  const b = new Server({ name: 'B', weight: 100, zeroChannel: true }).open('mesh', tr, 'sc01');
  const a = await new Client({ extraChannels: true }).open('mesh', [b]);
  const before = zlink.diagnostics();

  // A one-way completes at admission, before the gated handler runs.
  b.gated = true;
  const d1 = track(a.call(false, null, 'm1').submit());
  await expectDone(d1, 2000);
  eq(d1.result, 'OK', 'm1');
  eq(d1.value, undefined, 'a one-way has no value');
  eq(b.recCount(), 0, 'the gate is still closed');
  await eventually(() => b.gate.waiting === 1, 2000, 'm1 waits at the gate');
  eq(b.recCount(), 0, 'records at B');
  b.gate.openGate();
  await eventually(() => b.recHas('m1') === 1, 2000, 'm1 handled');

  // The error table: each call is refused with its kind.
  await refusedEachKind(a, 'nope', null, 'NOT_FOUND'); // unknown channel
  await refusedEachKind(a, 'none', null, 'NOT_FOUND'); // no server at all
  await refusedEachKind(a, 'zero', null, 'NOT_FOUND'); // weight 0 only
  await refusedEachKind(a, null, 'Z', 'NOT_FOUND'); // no such node

  // A second terminator changes nothing.
  const m2 = a.call(false, null, 'm2');
  const d2 = track(m2.submit());
  eq(resultOf(await settle(m2.submit())), 'INVALID_OPERATION', 'second submit');
  eq(resultOf(await settle(m2.yield())), 'INVALID_OPERATION', 'yield after submit');
  await expectDone(d2, 2000);
  const w = a.call(true, null, 'w1');
  eq(resultOf(await settle(w.submit())), 'OK', 'w1');
  eq(resultOf(await settle(w.submit())), 'INVALID_OPERATION', 'submit after the outcome');

  // The synchronous terminator: Node has none, on any call object, also
  // inside a handler (where C's fails with InvalidOperation).
  eq(syncTerminators(a.call(false, null, 'x')).length, 0, 'synchronous terminators of a call');
  eq(resultOf(await settle(a.h.sendToChannel('svc').payload('sync', 's', '').submit())), 'OK', 'sync');
  await eventually(() => b.syncRan === 1, 2000, 'the sync handler ran');
  eq(JSON.stringify(b.syncSurface), '[]', 'synchronous terminators seen in a handler');
  eq(b.h.state, 'SERVING', "B's state");

  // Nothing refused reached B: a marker behind them arrives, and B holds
  // exactly m1, m2, w1 and it.
  eq(resultOf(await settle(a.call(false, null, 'marker').submit())), 'OK', 'marker');
  await eventually(() => b.recHas('marker') === 1, 2000, 'marker handled');
  eq(b.recCount(), 4, 'records at B');
  eq(b.recHas('m1'), 1, 'm1 at B');
  eq(b.recHas('m2'), 1, 'm2 at B');
  eq(d1.calls, 1, 'm1 completions');
  eq(d2.calls, 1, 'm2 completions');
  eq(d2.result, 'OK', 'm2');

  // Any call after A's shutdown began: ShuttingDown. A request B holds
  // keeps A draining while the calls are made.
  b.replyMode = 'hold';
  const dh = track(a.call(true, null, 'h1').submit());
  await eventually(() => b.held.length === 1, 2000, 'h1 held');
  const down = settle(a.h.shutdown(ms(2000)));
  await eventually(() => a.h.state !== 'SERVING', 2000, 'A draining');
  await refusedEachKind(a, 'svc', null, 'SHUTTING_DOWN');
  await refusedEachKind(a, null, 'B', 'SHUTTING_DOWN');
  eq(dh.calls, 0, 'h1 still pending while A drains');
  eq(resultOf(await down), 'OK', "A's shutdown");
  await expectDone(dh, 2000);
  eq(dh.calls, 1, 'h1 completions');
  eq(dh.result, 'SHUTTING_DOWN', 'h1');
  await refusedEachKind(a, 'svc', null, 'SHUTTING_DOWN'); // and once stopped
  await a.close();

  // SendToNode to B after B's link is cut: Unavailable.
  const a2 = await new Client().open('mesh', [b]);
  eq(resultOf(await settle(a2.call(false, null, 'marker2').submit())), 'OK', 'marker2');
  await eventually(() => b.recHas('marker2') === 1, 2000, 'marker2 handled');
  eq(b.recCount(), 6, 'records at B (+ h1, marker2: no refused call arrived)');
  b.held = [];
  await b.h.shutdown(1000);
  await eventually(() => a2.h.meshReadyPeers('m') === 0, 5000, 'B no longer ready at A2');
  await refusedEachKind(a2, null, 'B', 'UNAVAILABLE');
  await refusedEachKind(a2, 'svc', null, 'UNAVAILABLE');
  await a2.close();
  await b.close();
  const after = zlink.diagnostics();
  eq(after.completionsPosted - before.completionsPosted, after.completionsDelivered - before.completionsDelivered, 'every posted completion delivered');
}

// --------------------------------------------------------------- SC-06

async function ownerValidation(o, want) {
  const bad = [0n, MS(-1), -1n, 2n ** 63n - 1n, MS(2147483648), -(2n ** 63n)];
  const before = o.get();
  for (const v of bad) {
    let got = 'OK';
    try {
      o.set(v);
    } catch (e) {
      got = e.result;
    }
    eq(got, 'INVALID_ARGUMENT', `${o.what}: send timeout ${v} ns`);
    eq(o.get(), before, `${o.what}: the old value is kept`);
  }
  o.set(400000n);
  eq(o.get(), MS(1), `${o.what}: 0.4 ms`);
  o.set(MS(1) + 1n);
  eq(o.get(), MS(2), `${o.what}: rounded up`);
  o.set(MS(2147483647));
  eq(o.get(), MS(2147483647), `${o.what}: INT_MAX ms`);
  o.set(want);
  eq(o.get(), want, `${o.what}: set`);
}

async function settersValidate() {
  const h = new zlink.Host('V');
  h.addMeshNode('m', 'V', `inproc://sc06-validate-${process.pid}`);
  h.addCsServer('cs-server', `inproc://sc06-server-${process.pid}`);
  h.addCsClient('cs-client', `inproc://sc06-server-${process.pid}`);
  const owner = (what, get, set) => ({ what, get, set });
  const root = owner('root fallback', () => h.getOption('DEFAULT_SEND_TIMEOUT'), (v) => h.setOption('DEFAULT_SEND_TIMEOUT', v));
  const mesh = owner('mesh node ROUTER', () => h.getMeshOption('m', 'SEND_TIMEOUT'), (v) => h.setMeshOption('m', 'SEND_TIMEOUT', v));
  const cli = owner('ClientServer client DEALER', () => h.getChannelOption('cs-client', 'SEND_TIMEOUT'), (v) => h.setChannelOption('cs-client', 'SEND_TIMEOUT', v));
  const srv = owner('ClientServer server ROUTER', () => h.getChannelOption('cs-server', 'SEND_TIMEOUT'), (v) => h.setChannelOption('cs-server', 'SEND_TIMEOUT', v));
  for (const o of [root, mesh, cli, srv]) eq(o.get(), MS(1000), `${o.what} unset`);
  await ownerValidation(root, MS(1500));
  eq(mesh.get(), MS(1500), 'mesh still unset: follows the root');
  await ownerValidation(mesh, MS(700));
  await ownerValidation(cli, MS(800));
  await ownerValidation(srv, MS(900));
  eq(root.get(), MS(1500), 'root');
  h.start();
  eq(h.state, 'SERVING', 'a host configured so serves');
  await ownerValidation(root, MS(1500));
  await ownerValidation(mesh, MS(700));
  await ownerValidation(cli, MS(800));
  await h.shutdown(1000);
  h.destroy();
}

async function pendingSendTimesOut(tr, mode, sockTimeout, rootTimeout, wantMs) {
  const HWM = 16 * 1024;
  const b = new Server({ name: 'B', weight: 100, maxJobs: 1, hwm: HWM }).open(mode, tr, 'sc06');
  const a = await new Client({ hwm: HWM, sendTimeout: sockTimeout, rootSendTimeout: rootTimeout }).open(mode, [b]);
  const sat = await saturate(a, b);
  await expectDone(sat.pending, wantMs + 250 + 1000);
  eq(sat.pending.result, 'DEADLINE_EXCEEDED', `${mode} pending send`);
  onTime(sat.pending.at - sat.started, wantMs);
  await a.close();
  await b.close();
}

async function sc06(params) {
  const trs = transports(params);
  await settersValidate();
  for (const tr of trs) {
    await pendingSendTimesOut(tr, 'mesh', 0, 0, 1000);
    await pendingSendTimesOut(tr, 'cs', 0, 0, 1000);
    await pendingSendTimesOut(tr, 'mesh', 0, MS(300), 300);
    await pendingSendTimesOut(tr, 'cs', MS(400), MS(3000), 400);
  }
}

// --------------------------------------------------------------- SC-09

function requestStart(a, tag, timeoutMs, signal) {
  const c = a.call(true, null, tag);
  if (timeoutMs > 0) c.timeout(timeoutMs);
  return track(c.submit(signal));
}

async function answeredRequest(a, tag) {
  const s = await settle(a.call(true, null, tag).submit());
  eq(resultOf(s), 'OK', tag);
  eq(s.value.payload.toString(), tag, `${tag}'s reply`);
}

async function inflightBackToZero(a) {
  await eventually(() => a.h.metric('zlink.mesh_node.requests.inflight', '') === 0n, 2000, 'requests.inflight back to 0');
  eq(a.h.status().requestsInflight, 0, 'requests_inflight');
}

async function firstOutcomeWins(tr) {
  const b = new Server({ name: 'B', weight: 100 }).open('mesh', tr, 'sc09');
  const a = await new Client().open('mesh', [b]);
  let repliesSent = 0;
  const delayed = (delay) => {
    b.replyMode = 'hold';
    const poll = setInterval(() => {
      for (const { reply } of b.held.splice(0)) {
        setTimeout(() => {
          reply.submit().then(() => repliesSent++, () => repliesSent++);
        }, delay);
      }
    }, 1);
    return () => clearInterval(poll);
  };

  // (a) B replies at once: the value.
  const da = requestStart(a, 'a', 0);
  await expectDone(da, 2000);
  eq(da.result, 'OK', '(a)');
  eq(da.value.payload.toString(), 'a', '(a) reply');

  // (b) B replies after 500 ms, the timeout is 200 ms.
  let stop = delayed(500);
  const t0 = Date.now();
  const db = requestStart(a, 'b', 200);
  await expectDone(db, 2000);
  eq(db.result, 'DEADLINE_EXCEEDED', '(b)');
  onTime(db.at - t0, 200);
  await eventually(() => repliesSent === 1, 3000, 'the late reply left B');
  eq(b.recHas('b'), 1, 'the handler ran');
  stop();
  b.replyMode = 'now';
  await answeredRequest(a, 'after-b');
  eq(db.calls, 1, '(b) completions');
  await inflightBackToZero(a);

  // (c) aborted at 100 ms; the reply at 300 ms is ignored.
  stop = delayed(300);
  const ac = new AbortController();
  const dc = requestStart(a, 'c', 0, ac.signal);
  const t1 = Date.now();
  ok(!(await doneBy(dc, t1 + 100)), '(c) pending at 100 ms');
  ac.abort();
  ac.abort(); // idempotent
  await expectDone(dc, 2000);
  eq(dc.result, 'CANCELLED', '(c)');
  await eventually(() => repliesSent === 2, 3000, 'the ignored reply left B');
  stop();
  b.replyMode = 'now';
  await answeredRequest(a, 'after-c');
  eq(dc.calls, 1, '(c) completions');
  await inflightBackToZero(a);

  // (e) B's handler fails: InternalFailure, once.
  b.replyMode = 'fail';
  const de = requestStart(a, 'e', 0);
  await expectDone(de, 2000);
  eq(de.result, 'INTERNAL_FAILURE', '(e)');
  b.replyMode = 'now';
  await answeredRequest(a, 'after-e');
  eq(de.calls, 1, '(e) completions');

  // (d) A shuts down while a request is pending: ShuttingDown.
  b.replyMode = 'hold';
  const dd = requestStart(a, 'd', 0);
  await eventually(() => b.held.length === 1, 2000, 'd held');
  const posted = zlink.diagnostics().completionsPosted;
  await a.h.shutdown(200);
  // Decided before shutdown returned: its completion was posted by then
  // (delivery to this thread may come just after the shutdown's callback).
  eq(zlink.diagnostics().completionsPosted - posted, 1, 'completions posted during the shutdown');
  await expectDone(dd, 2000);
  eq(dd.result, 'SHUTTING_DOWN', '(d)');
  eq(a.h.status().requestsInflight, 0, 'requests_inflight');
  await a.close();
  await b.close();
  for (const d of [da, db, dc, de, dd]) eq(d.calls, 1, 'completions of each call');
}

// --------------------------------------------------------------- SC-20

async function outcomesByType(tr) {
  const b = new Server({ name: 'B', weight: 100 }).open('mesh', tr, 'sc20');
  const a = await new Client().open('mesh', [b]);
  b.replyMode = 'hold';

  // Timeout: the DeadlineExceeded kind.
  const t = await settle(a.call(true, null, 't-wait').timeout(100).submit());
  ok(t.error instanceof zlink.ZLinkFrameworkError, 'a timeout is a ZLinkFrameworkError');
  eq(t.error.kind, 'DeadlineExceeded', 'timeout kind');
  eq(t.error.remoteCode, 0, 'timeout remote code');
  const dt = requestStart(a, 't-start', 100);
  await expectDone(dt, 2000);
  eq(dt.result, 'DEADLINE_EXCEEDED', 't-start');

  // Cancel: the cancelled result, which is no error kind.
  const ac = new AbortController();
  const dc = requestStart(a, 'c', 0, ac.signal);
  await eventually(() => b.recHas('c') === 1, 2000, 'c reached B');
  ac.abort();
  await expectDone(dc, 2000);
  eq(dc.result, 'CANCELLED', 'c');
  eq(dc.error.name, 'AbortError', 'the cancelled type');
  eq(dc.error.kind, undefined, 'a cancellation has no kind');
  ok(!(dc.error instanceof zlink.ZLinkFrameworkError), 'a cancellation is not a framework error');

  // A handler error that says "cancelled timeout" is InternalFailure.
  b.replyMode = 'fail';
  const boom = await settle(a.call(true, null, 'boom').submit());
  eq(boom.error.kind, 'InternalFailure', 'boom kind');
  eq(boom.error.detail, 'cancelled timeout', 'boom message');
  eq(boom.error.remoteCode, 105, "the wire's internalError");

  // Shutdown: the ShuttingDown kind.
  b.replyMode = 'hold';
  const ds = requestStart(a, 's', 0);
  await eventually(() => b.recHas('s') === 1, 2000, 's reached B');
  const posted = zlink.diagnostics().completionsPosted;
  await a.h.shutdown(100);
  eq(zlink.diagnostics().completionsPosted - posted, 1, 'completions posted during the shutdown');
  await expectDone(ds, 2000);
  eq(ds.error.kind, 'ShuttingDown', 's kind');
  eq(dt.calls, 1, 't-start completions');
  eq(dc.calls, 1, 'c completions');
  await a.close();
  await b.close();
}


// --------------------------------------------------------------- SC-02

const SAT_HWM = 16 * 1024;

async function saturatedPair(tr, tag, mode, serverOpts, clientOpts) {
  const b = new Server(serverOpts).open(mode, tr, tag);
  const a = await new Client(clientOpts).open(mode, [b]);
  return { a, b };
}

async function capacityWait(tr, openEarly) {
  const { a, b } = await saturatedPair(tr, openEarly ? 'sc02a' : 'sc02b', 'mesh',
    { name: 'B', weight: 100, maxJobs: 1, hwm: SAT_HWM }, { hwm: SAT_HWM, sendTimeout: MS(2000) });
  const sat = await saturate(a, b);
  if (openEarly) {
    // (a) open() at 500 ms: m* is admitted then, once.
    ok(!(await doneBy(sat.pending, sat.started + 500)), 'm* pending at 500 ms');
    b.gate.openGate();
    await expectDone(sat.pending, 3000);
    eq(sat.pending.result, 'OK', 'm*');
    ok(sat.pending.at - sat.started < 2000, 'admitted before its send timeout');
  } else {
    // (b) never opened: DeadlineExceeded at the send timeout.
    await expectDone(sat.pending, 2000 + 250 + 1000);
    eq(sat.pending.result, 'DEADLINE_EXCEEDED', 'm*');
    onTime(sat.pending.at - sat.started, 2000);
    b.gate.openGate();
  }
  // B handles the backlog; a marker behind it shows what reached B.
  eq(resultOf(await settle(a.call(false, null, 'marker').submit())), 'OK', 'marker');
  await eventually(() => b.recHas('marker') === 1, 5000, 'marker handled');
  eq(b.recHas(sat.tag), openEarly ? 1 : 0, `${sat.tag} at B`);
  eq(b.recCount(), sat.accepted + (openEarly ? 2 : 1), 'records at B');
  eq(sat.pending.calls, 1, 'm* completions');
  await a.close();
  await b.close();
}

// --------------------------------------------------------------- SC-03

async function waiterPoolFull(tr) {
  const { a, b } = await saturatedPair(tr, 'sc03', 'mesh',
    { name: 'B', weight: 100, maxJobs: 1, hwm: SAT_HWM }, { hwm: SAT_HWM, sendTimeout: MS(ms(10000)) });
  const w = Number(a.h.getOption('ADMISSION_WAITERS'));
  ok(w > 0 && w < 100000, `ADMISSION_WAITERS ${w}`);
  eq(a.h.status().admissionWaitersMax, w, 'admission_waiters_max');
  const sat = await saturate(a, b); // m*: the first of the W parked sends
  const d = [];
  for (let i = 1; i < w; i++) d.push(track(a.call(false, null, `p${i}`, 4096).submit()));
  await eventually(() => a.h.status().onewayWaiting === w, 2000, 'W sends wait for room');
  ok(d.every((x) => x.calls === 0), 'no parked send completed');
  eq(sat.pending.calls, 0, 'm* completions');

  // W + 1: DeadlineExceeded at once, nothing kept.
  const t0 = Date.now();
  const dx = track(a.call(false, null, 'overflow', 4096).submit());
  await expectDone(dx, 50);
  eq(dx.result, 'DEADLINE_EXCEEDED', 'overflow');
  ok(dx.at - t0 <= ms(50), `overflow completed after ${dx.at - t0} ms`);
  eq(a.h.status().onewayWaiting, w, 'oneway_waiting');

  // open(): every parked send is admitted once; the overflow never.
  b.gate.openGate();
  await expectDone(sat.pending, 10000);
  eq(sat.pending.result, 'OK', 'm*');
  for (const x of d) {
    await expectDone(x, 10000);
    eq(x.result, 'OK', 'a parked send');
  }
  eq(resultOf(await settle(a.call(false, null, 'marker').submit())), 'OK', 'marker');
  await eventually(() => b.recHas('marker') === 1, 10000, 'marker handled');
  eq(b.recHas('overflow'), 0, 'overflow at B');
  eq(b.recCount(), sat.accepted + w + 1, 'records at B');
  eq(b.recHas(sat.tag), 1, `${sat.tag} at B`);
  eq(b.recHas('p1'), 1, 'p1 at B');
  eq(dx.calls, 1, 'overflow completions');
  ok(d.every((x) => x.calls === 1), 'each parked send completed once');
  await a.close();
  await b.close();
}

// --------------------------------------------------------------- SC-17

async function callbackOnNewTurn(tr) {
  const b = new Server({ name: 'B', weight: 100 }).open('mesh', tr, 'sc17');
  const a = await new Client().open('mesh', [b]);
  // The target replies at once; the completion never reaches JavaScript
  // while submit() is on the stack (the addon delivers it through the
  // event loop), and runs in a runtime context.
  for (let i = 0; i < 200; i++) {
    const c = a.call(true, null, 'fast');
    if (i % 4 === 3) c.timeout(1);
    let inSubmit = true;
    let seenInSubmit = null;
    let inRuntime = null;
    const before = zlink.diagnostics().completionsDelivered;
    const p = c.submit().then(
      (v) => { seenInSubmit = inSubmit; inRuntime = zlink.inRuntimeContext(); return 'OK'; },
      (e) => { seenInSubmit = inSubmit; inRuntime = zlink.inRuntimeContext(); return e.result; });
    eq(zlink.diagnostics().completionsDelivered, before, 'completions delivered inside submit()');
    inSubmit = false;
    const r = await p;
    eq(seenInSubmit, false, 'the completion ran inside submit()');
    eq(inRuntime, true, 'the completion runs in a runtime context');
    ok(r === 'OK' || (i % 4 === 3 && r === 'DEADLINE_EXCEEDED'), `round ${i}: ${r}`);
  }
  // A completion that sends a new request gets its own: no deadlock. The
  // synchronous terminator C refuses there does not exist in Node.
  const inner = await a.call(true, null, 'outer').submit().then(() => {
    const c = a.call(true, null, 'inner');
    eq(syncTerminators(c).length, 0, 'synchronous terminators in a completion');
    return settle(c.submit());
  });
  eq(resultOf(inner), 'OK', 'inner');
  eq(inner.value.payload.toString(), 'inner', 'inner reply');
  // A misbehaving completion (it throws, and misuses the API) does not
  // stop the one after it.
  const c1 = a.call(true, null, 'bad');
  const bad = c1.submit().then(async () => {
    eq(resultOf(await settle(c1.submit())), 'INVALID_OPERATION', 'a second terminator in the completion');
    throw new Error('a failing completion');
  });
  const next = settle(a.call(true, null, 'next').submit());
  const badDone = await settle(bad);
  ok(!badDone.ok && badDone.error.message === 'a failing completion', 'the failing completion ran');
  const n = await next;
  eq(resultOf(n), 'OK', 'next');
  eq(n.value.payload.toString(), 'next', 'next reply');
  await a.close();
  await b.close();
}

// --------------------------------------------------------------- SC-18

async function dispatcherCap(tr) {
  const cap = 4096; // ZLINK_DISPATCHER_CAPACITY, read back below from the status
  const b = new Server({ name: 'B', weight: 100, maxJobs: 2 * cap });
  b.replyMode = 'hold';
  b.open('mesh', tr, 'sc18');
  const a = await new Client().open('mesh', [b]);
  eq(a.h.status().dispatcherCapacity, cap, 'dispatcher_capacity');
  eq(a.h.status().dispatcherInUse, 0, 'dispatcher_in_use');
  const calls = [];
  for (let i = 0; i < cap; i++) calls.push(track(a.call(true, null, `q${i}`).timeout(60000).submit()));
  await eventually(() => b.held.length === cap, 20000, 'every request held at B');
  eq(a.h.status().dispatcherInUse, cap, 'dispatcher_in_use');
  eq(a.h.status().requestsInflight, cap, 'requests_inflight');
  ok(calls.every((c) => c.calls === 0), 'no request completed');

  // One more: CapacityExceeded at once, nothing sent.
  const t0 = Date.now();
  const over = await settle(a.call(true, null, 'over1').submit());
  eq(resultOf(over), 'CAPACITY_EXCEEDED', 'one more request');
  ok(Date.now() - t0 <= ms(50), 'refused at once');
  eq(resultOf(await settle(a.call(false, null, 'over1').submit())), 'CAPACITY_EXCEEDED', 'one-ways count too');

  // Release one reply: its completion frees the slot, a new request is accepted.
  const reply = b.takeHeld('q0');
  ok(reply !== null, 'q0 held');
  eq(resultOf(await settle(reply.submit())), 'OK', 'the reply to q0');
  await expectDone(calls[0], 5000);
  eq(calls[0].result, 'OK', 'q0');
  await eventually(() => a.h.status().dispatcherInUse === cap - 1, 2000, 'one slot free');
  calls.push(track(a.call(true, null, 'again').timeout(60000).submit()));
  eq(a.h.status().dispatcherInUse, cap, 'dispatcher_in_use after "again"');
  const over2 = await settle(a.call(true, null, 'over2').submit());
  eq(resultOf(over2), 'CAPACITY_EXCEEDED', 'over2');

  // B never saw the refused ones: "again" and a marker came after them.
  await eventually(() => b.recHas('again') === 1, 5000, 'again at B');
  eq(b.recHas('over1'), 0, 'over1 at B');
  eq(resultOf(await settle(a.call(false, null, 'marker').submit())), 'CAPACITY_EXCEEDED', 'the marker while full');
  const r1 = b.takeHeld('q1');
  eq(resultOf(await settle(r1.submit())), 'OK', 'the reply to q1');
  await expectDone(calls[1], 5000);
  await eventually(() => a.h.status().dispatcherInUse === cap - 1, 2000, 'one slot free');
  eq(resultOf(await settle(a.call(false, null, 'marker').submit())), 'OK', 'marker');
  await eventually(() => b.recHas('marker') === 1, 2000, 'marker at B');
  eq(b.recHas('over2'), 0, 'over2 at B');

  // The rest end with A's shutdown, each once.
  await a.h.shutdown(100);
  await eventually(() => calls.every((c) => c.calls === 1), 5000, 'every call completed');
  for (let i = 2; i < calls.length; i++) eq(calls[i].result, 'SHUTTING_DOWN', `call ${i}`);
  eq(a.h.status().dispatcherInUse, 0, 'dispatcher_in_use at the end');
  b.held = [];
  await a.close();
  await b.close();
}

// --------------------------------------------------------------- SC-11

// Server y never saw tag: a marker sent to y after the outcome arrives, and
// y has no tag. Mesh: a node-direct send to y. ClientServer: channel
// requests until one lands on y (the DEALER picks per call).
async function neverSeenBy(a, y, tag) {
  if (a.mode === 'mesh') {
    eq(resultOf(await settle(a.nodeCall(false, y.name, 'marker').submit())), 'OK', 'marker');
    await eventually(() => y.recHas('marker') >= 1, 2000, 'the marker reached y');
  } else {
    for (let i = 0; y.recHas('marker') === 0; i++) {
      ok(i < 200, 'a marker reached y');
      const rc = resultOf(await settle(a.call(true, null, 'marker').submit()));
      ok(rc === 'OK' || rc === 'DEADLINE_EXCEEDED', `marker: ${rc}`);
    }
  }
  eq(y.recHas(tag), 0, `${tag} at the other server`);
}

async function noResubmit(tr, mode) {
  const s1 = new Server({ name: 'S1', weight: 100 }).open(mode, tr, 'sc11');
  const s2 = new Server({ name: 'S2', weight: 100 }).open(mode, tr, 'sc11');
  const a = await new Client().open(mode, [s1, s2]);
  s1.replyMode = 'hold';
  s2.replyMode = 'hold';
  const t0 = Date.now();
  const dt = requestStart(a, 't', 300);
  await eventually(() => s1.recHas('t') + s2.recHas('t') === 1, 2000, 't reached one server');
  let x = s1.recHas('t') ? s1 : s2;
  let y = x === s1 ? s2 : s1;
  await expectDone(dt, 2000);
  eq(dt.result, 'DEADLINE_EXCEEDED', 't');
  onTime(dt.at - t0, 300);
  x.replyMode = 'now';
  y.replyMode = 'now';
  await neverSeenBy(a, y, 't');
  eq(x.recHas('t'), 1, 't at its server');
  eq(dt.calls, 1, 't completions');

  // Killed after it received the request: one terminal, never resubmitted.
  s1.replyMode = 'hold';
  s2.replyMode = 'hold';
  const dk = requestStart(a, 'k', ms(3000));
  await eventually(() => s1.recHas('k') + s2.recHas('k') === 1, 2000, 'k reached one server');
  x = s1.recHas('k') ? s1 : s2;
  y = x === s1 ? s2 : s1;
  y.replyMode = 'now';
  x.held = [];
  await x.h.shutdown(500);
  await expectDone(dk, 3000 + 250 + 1000);
  ok(dk.result === 'UNAVAILABLE' || dk.result === 'DEADLINE_EXCEEDED', `the request to a killed server ended ${dk.result}`);
  await neverSeenBy(a, y, 'k');
  eq(dk.calls, 1, 'k completions');
  await inflightBackToZero(a);
  await a.close();
  await s1.close();
  await s2.close();
}

// --------------------------------------------------------------- SC-19

async function probeAnswered(a) {
  const rc = resultOf(await settle(a.call(true, null, 'probe').submit()));
  ok(rc === 'OK' || rc === 'NOT_FOUND' || rc === 'UNAVAILABLE', `a probe ended ${rc}`);
  return rc === 'OK';
}

async function noResendAfterAcceptance(tr) {
  const s1 = new Server({ name: 'S1', weight: 100, maxJobs: 3 }).open('mesh', tr, 'sc19');
  const s2 = new Server({ name: 'S2', weight: 0 }).open('mesh', tr, 'sc19');
  const a = await new Client().open('mesh', [s1, s2]);
  s1.gated = true;
  eq(resultOf(await settle(a.call(false, null, 'f0').submit())), 'OK', 'f0');
  await eventually(() => s1.gate.waiting === 1, 2000, 'f0 at the gate');
  eq(resultOf(await settle(a.call(false, null, 'f1').submit())), 'OK', 'f1');
  await eventually(() => s1.h.status().turnsQueued === 1, 2000, 'f1 queued');
  const dm = track(a.call(false, null, 'mk').submit());
  await expectDone(dm, 2000);
  eq(dm.result, 'OK', 'mk');
  const dq = requestStart(a, 'rq', ms(3000));
  await eventually(() => s1.h.status().turnsQueued === 3, 2000, 'three jobs queued');
  eq(s1.h.status().permitsInUse, 3, 'permits in use');
  ok(!(await doneBy(dq, Date.now() + 100)), 'rq pending');

  // Kill S1: its 300 ms drain deadline passes with the gate still closed,
  // so the queued jobs never run; then the gate opens so shutdown can end.
  const down = settle(s1.h.shutdown(300));
  await eventually(() => s1.h.state !== 'SERVING', 2000, 'S1 draining');
  await expectDone(dq, 3000 + 250 + 1000);
  s1.gate.openGate();
  eq(resultOf(await down), 'OK', "S1's shutdown");
  eq(s1.recHas('rq') + s1.recHas('mk'), 0, 'the queued jobs never ran');
  ok(['UNAVAILABLE', 'DEADLINE_EXCEEDED', 'SHUTTING_DOWN'].includes(dq.result), `the request queued at a killed server ended ${dq.result}`);

  // S2 becomes eligible: calls reach it, the marker and the request never do.
  await eventually(() => a.h.meshReadyPeers('m') === 1, 5000, 'only S2 ready');
  s2.h.setMeshWeight('m', 'svc', 100);
  await eventually(() => probeAnswered(a), 3000, 'a probe answered by S2');
  eq(resultOf(await settle(a.call(false, null, 'after').submit())), 'OK', 'after');
  await eventually(() => s2.recHas('after') === 1, 2000, 'after at S2');
  eq(s2.recHas('mk'), 0, 'mk at S2');
  eq(s2.recHas('rq'), 0, 'rq at S2');
  eq(s2.recHas('f0') + s2.recHas('f1'), 0, 'f0, f1 at S2');
  eq(dm.calls, 1, 'mk completions');
  eq(dq.calls, 1, 'rq completions');
  await inflightBackToZero(a);
  await a.close();
  await s1.close();
  await s2.close();
}

// --------------------------------------------------------------- SC-16

async function exactlyOnceUnderRaces(tr, total, window, cancelPct) {
  // B answers from its own thread (a worker), as the C case's B does, so
  // its replies race A's timeouts and cancels at about 50 ms.
  const b = await new WorkerServer({ name: 'B', weight: 100 }, { replyMode: 'delay', delayMin: 45, delayMax: 55 }).open('mesh', tr, 'sc16');
  const a = await new Client().open('mesh', [b], { remoteServers: true });
  const base = zlink.diagnostics();
  let inflight = 0;
  let room = null;
  const calls = [];
  let rng = 0x2545f4914f6cdd1dn;
  const next = () => {
    rng ^= (rng << 13n) & 0xffffffffffffffffn;
    rng ^= rng >> 7n;
    rng ^= (rng << 17n) & 0xffffffffffffffffn;
    return rng;
  };
  for (let i = 0; i < total; i++) {
    const r = next();
    const cancel = Number(r % 100n) < cancelPct;
    while (inflight >= window) await new Promise((res) => (room = res));
    inflight++;
    const ac = cancel ? new AbortController() : null;
    const c = { index: i, cancel, calls: 0, result: null, replyOk: false };
    calls.push(c);
    settle(a.call(true, null, `r${i}`).timeout(50).submit(ac ? ac.signal : undefined)).then((s) => {
      c.calls++;
      c.result = resultOf(s);
      if (s.ok) c.replyOk = s.value.payload.toString() === `r${i}`;
      inflight--;
      if (room) {
        const wake = room;
        room = null;
        wake();
      }
    });
    if (ac) setTimeout(() => ac.abort(), 45 + Number(r % 11n)); // cancel at about 50 ms
  }
  // The last window is still racing: shut A down now.
  await a.h.shutdown(20);
  // Shutdown returned: every accepted callback has run in C; their
  // deliveries to this thread follow at once (the process also counts B's
  // reply calls, so the counts below are compared after both hosts end).
  await eventually(() => inflight === 0, 5000, 'every completion delivered');
  eq(a.h.status().requestsInflight, 0, 'requests_inflight');
  eq(a.h.metric('zlink.mesh_node.requests.inflight', ''), 0n, 'requests.inflight');
  await b.shutdown(1000);
  let bdiag = null;
  await eventually(async () => {
    if (a.h.status().dispatcherInUse === 0) return true;
    bdiag = await b.diag();
    return false;
  }, 5000, () => `the dispatcher is empty (in use ${a.h.status().dispatcherInUse}; A's diagnostics ${JSON.stringify(zlink.diagnostics())}; B ${JSON.stringify(bdiag)})`);
  await eventually(() => {
    const d = zlink.diagnostics();
    return d.completionsPosted === d.completionsDelivered;
  }, 5000, 'every completion posted in the process delivered once');
  const d = zlink.diagnostics();
  ok(d.completionsDelivered - base.completionsDelivered >= total, 'at least one completion per call');
  const counts = { OK: 0, DEADLINE_EXCEEDED: 0, CANCELLED: 0, SHUTTING_DOWN: 0 };
  for (const c of calls) {
    eq(c.calls, 1, `call ${c.index} completions`);
    ok(c.result in counts, `call ${c.index} ended ${c.result}`);
    if (c.result === 'OK') ok(c.replyOk, `call ${c.index} got another call's reply`);
    if (c.result === 'CANCELLED') ok(c.cancel, `call ${c.index} was cancelled but nobody cancelled it`);
    counts[c.result]++;
  }
  process.stderr.write(`SC-16 ${tr}: ${counts.OK} ok, ${counts.DEADLINE_EXCEEDED} deadline, ${counts.CANCELLED} cancelled, ${counts.SHUTTING_DOWN} shutting down\n`);
  await a.close();
  await b.close();
}

// --------------------------------------------------------------- SC-12

async function csReplyHeldInFifo(tr) {
  const D = 20;
  const s = new Server({ name: 'S', weight: 100, maxJobs: 1 }).open('cs', tr, 'sc12');
  const c = await new Client({ sendTimeout: MS(60000) }).open('cs', [s]);
  eq(resultOf(await settle(c.call(true, null, 'warm').submit())), 'OK', 'warm'); // the connection is up
  const dd = await sendGated(c, s, D);
  const t0 = Date.now();
  const dq = track(c.call(true, null, 'q').timeout(300).submit());
  await expectDone(dq, 2000);
  eq(dq.result, 'DEADLINE_EXCEEDED', 'q');
  onTime(dq.at - t0, 300);
  eq(s.h.capacity().pressureState, 1, 'S PAUSED');
  s.gate.openGate();
  for (const d of dd) {
    await expectDone(d, 5000);
    eq(d.result, 'OK', 'a gated one-way');
  }
  eq(resultOf(await settle(c.call(true, null, 'after').submit())), 'OK', 'after'); // behind everything sent before
  const rec = s.rec;
  const n = rec.length;
  let order = n >= 2 + D && rec[0] === 'warm' && rec[n - 1] === 'after';
  for (let i = 0; order && i < D; i++) order = rec[1 + i] === `d${i + 1}`;
  const qOk = n === 2 + D || (n === 3 + D && rec[1 + D] === 'q');
  ok(order && qOk, `S handled ${n} records out of FIFO order (warm, d1..d20, [q], after expected): ${rec.join(',')}`);
  eq(dq.calls, 1, 'q completions');
  await eventually(() => c.h.metric('zlink.mesh_node.requests.inflight', '') === 0n, 2000, 'requests.inflight back to 0');
  await c.close();
  await s.close();
}

// --------------------------------------------------------------- SC-13

async function meshReplyWhilePaused(tr) {
  const mesh = (name, listen, maxJobs = 0) => {
    const h = new zlink.Host(name);
    if (maxJobs > 0) h.setOption('MAX_QUEUED_JOBS', maxJobs);
    h.addMeshNode('m', name, listen ? endpoint(tr, 'mesh', name) : undefined);
    return h;
  };
  const gate = new Gate();
  // B serves "back" and answers at once.
  const b = mesh('B', true);
  b.addMeshChannelServer('m', 'back', 100);
  b.handle({ channel: 'back' }, 'request', 'm', (turn) => turn.respond('m', turn.payload, ''));
  b.start();
  // A: M = 2 (pause at 2), a gated server of "svc", a client of "back".
  const a = mesh('A', true, 2);
  a.addMeshChannelServer('m', 'svc', 100);
  a.handle({ channel: 'svc' }, 'send', 'm', () => gate.pass());
  a.addMeshChannelClient('m', 'back');
  a.meshConnect('m', b.endpoint('m'), 'B');
  a.start();
  // C floods A's "svc" (its sends may wait for room: 30 s allowed).
  const c = mesh('C', false);
  c.addMeshChannelClient('m', 'svc');
  c.setMeshOption('m', 'SEND_TIMEOUT', MS(30000));
  c.meshConnect('m', a.endpoint('m'), 'A');
  c.start();
  await eventually(() => c.meshReadyPeers('m') === 1, 5000, 'A ready at C');
  await eventually(() => a.meshReadyPeers('m') >= 1, 5000, 'peers ready at A');
  for (let i = 0; i < 3; i++) {
    eq(resultOf(await settle(c.sendToChannel('svc').payload('m', `f${i}`, '').submit())), 'OK', `f${i}`);
    if (i === 0) await eventually(() => gate.waiting === 1, 5000, 'f0 at the gate');
  }
  await eventually(() => a.capacity().queuedJobs === 2, 5000, 'both permits held as queued jobs');
  let cap = a.capacity();
  eq(cap.pressureState, 1, 'A PAUSED');
  eq(cap.queuedJobs, 2, 'queued jobs');
  // A requests "back" from B: the reply comes over the Completion lane
  // and needs no permit.
  const t0 = Date.now();
  const q = await settle(a.requestToChannel('back').payload('m', 'q', '').submit());
  const took = Date.now() - t0;
  eq(resultOf(q), 'OK', 'q');
  eq(q.value.payload.toString(), 'q', 'its reply');
  ok(took < ms(100), `the request took ${took} ms while A was paused (< ${ms(100)} ms expected)`);
  cap = a.capacity();
  eq(cap.pressureState, 1, 'still paused throughout');
  eq(cap.permitsInUse, 2, 'permits in use');
  eq(cap.transitionsRunning, 0, 'no RUNNING transition');
  gate.openGate();
  await eventually(() => a.capacity().permitsInUse === 0, 5000, 'permits released');
  eq(a.capacity().pressureState, 0, 'A RUNNING');
  for (const h of [c, a, b]) await h.shutdown(ms(2000));
  for (const h of [c, a, b]) h.destroy();
}

async function eachTransport(params, round) {
  for (const tr of transports(params)) await round(tr);
}

// ------------------------------------------------- SC-14, SC-15 (sc_raw.c)

// Raw reply admission at the Core level, on the binding's Socket API.
const RAW_TIMEO_MS = ms(10000);
let rawSeq = 0;
function rawBind(sock, tr) {
  if (tr === 'tcp') {
    sock.bind('tcp://127.0.0.1:0');
    return sock.getOption('LAST_ENDPOINT');
  }
  const ep = `inproc://sc-raw-${process.pid}-${++rawSeq}`;
  sock.bind(ep);
  return ep;
}

function rawSocket(ctx, type, rid) {
  const s = ctx.socket(type);
  s.setRoutingId(rid);
  s.setOption('LINGER', 0);
  s.setOption('RCVTIMEO', RAW_TIMEO_MS);
  return s;
}

// The C result name and errno of a failed Core call, 'OK' otherwise; the
// failure's completionId (a wait token) is kept in out.
function rawTry(fn, out = {}) {
  try {
    out.value = fn();
    return 'OK';
  } catch (e) {
    if (!(e instanceof zlink.ZLinkError)) throw e;
    out.token = e.completionId;
    return `${e.result}/${e.errno}`;
  }
}

function recvRequest(r, want) {
  const got = r.routerRecv();
  ok(got.token !== 0n, 'a REQUEST token');
  eq(got.parts.length, 1, 'request parts');
  eq(got.parts[0].toString(), want, 'request text');
  return { rid: got.rid, token: got.token };
}

// DATA from ROUTER r to `to` with DONTWAIT until refused: the count
// admitted and the refusal's wait token.
function rawFill(r, to, size) {
  const body = Buffer.alloc(size, 'd');
  const until = Date.now() + ms(10000);
  for (let n = 0; ; n++) {
    const out = {};
    const res = rawTry(() => r.send([body], { rid: Buffer.from(to), dontwait: true }), out);
    if (res !== 'OK') {
      eq(res, 'ZLINK_SUBMIT_BACKPRESSURED/EAGAIN', 'a refused DATA send');
      ok(out.token !== 0n, 'the refusal has a wait token');
      return { n, token: out.token };
    }
    ok(Date.now() <= until && n <= 1000000, `sends to '${to}' were never refused`);
  }
}

// rawFill until the refusal holds (over tcp the engine keeps moving records
// to the kernel, each move a WRITABLE edge of the last token): stops when
// no edge comes within 100 ms (scaled).
function rawFillStable(r, to, size) {
  let total = 0;
  let token = 0n;
  r.setOption('RCVTIMEO', ms(100));
  for (let round = 0; ; round++) {
    ok(round < 100000, 'the fill settles');
    const f = rawFill(r, to, size);
    total += f.n;
    token = f.token;
    const out = {};
    if (rawTry(() => r.completionRecv(), out) !== 'OK') break; // quiet: the refusal holds
    eq(out.value.kind, zlink.CompletionKind.WRITABLE, 'an edge is WRITABLE');
    eq(out.value.sendResult, 0, 'ADMITTED');
    eq(out.value.completionId, token, 'the edge of the last refusal');
  }
  r.setOption('RCVTIMEO', RAW_TIMEO_MS);
  return { n: total, token };
}

function rawNoRecord(s) {
  eq(rawTry(() => s.completionRecv({ dontwait: true })), 'ZLINK_RECV_NO_DATA/EAGAIN', 'no completion record');
}

// s's records until the WRITABLE of wt (ADMITTED); WRITABLEs of others may
// come first.
function expectWritable(s, wt, others) {
  for (;;) {
    const rec = s.completionRecv();
    eq(rec.kind, zlink.CompletionKind.WRITABLE, 'a WRITABLE record');
    eq(rec.sendResult, 0, 'ADMITTED');
    if (rec.completionId === wt) return;
    ok(others.includes(rec.completionId), `a WRITABLE record of an unknown token ${rec.completionId}`);
  }
}

function expectRawReply(s, id, text) {
  const rec = s.completionRecv();
  eq(rec.kind, zlink.CompletionKind.REQUEST, 'a REQUEST record');
  eq(rec.completionId, id, 'its id');
  eq(rec.requestResult, 0, 'OK');
  ok(rec.replyParts.length === 1 && rec.replyParts[0].toString() === text, `reply "${text}"`);
}

function drainData(d, n, size) {
  for (let i = 0; i < n; i++) {
    const { parts } = d.recv();
    ok(parts.length === 1 && parts[0].length === size, `DATA ${i}: ${parts.length} part(s) of ${parts[0] && parts[0].length} bytes, ${size} expected`);
  }
}

// SC-14. paused: the DEALER's receive flow is PAUSED; else its receive
// side is full of unread DATA.
function replyToDealer(tr, paused) {
  const ctx = new zlink.Context();
  const r = rawSocket(ctx, 'ROUTER', 'R');
  const d = rawSocket(ctx, 'DEALER', 'D');
  if (!paused) {
    r.setOption('SNDHWM', 4096n);
    d.setOption('RCVHWM', 4096n);
    if (tr === 'tcp') {
      r.setOption('SNDBUF', 4096);
      d.setOption('RCVBUF', 4096);
    }
  }
  d.connect(rawBind(r, tr));
  const id = d.request(['q'], { timeoutMs: ms(10000) });
  ok(id !== 0n, 'a completion id');
  const q = recvRequest(r, 'q');
  const size = paused ? 1 : 1024;
  if (paused) d.setReceiveFlowState('PAUSED');
  // Full: DATA until the HWM refuses. Paused: until the PAUSE arrived.
  const data = rawFillStable(r, 'D', size);
  // Full: top up with empty records until even those are refused.
  const empties = paused ? { n: 0, token: 0n } : rawFillStable(r, 'D', 0);
  // The async reply: BACKPRESSURED with a wait token.
  const out = {};
  eq(rawTry(() => r.replySubmit(q.rid, q.token, ['reply'], { dontwait: true }), out), 'ZLINK_SUBMIT_BACKPRESSURED/EAGAIN', `${tr} ${paused ? 'paused' : 'full'}: the async reply`);
  const wt = out.token;
  ok(wt !== 0n && wt !== data.token && wt !== empties.token, 'a wait token of its own');
  rawNoRecord(r); // not admitted while the DEALER neither reads nor resumes
  // The sync reply with SNDTIMEO 50 ms times out.
  r.setOption('SNDTIMEO', 50);
  const t0 = Date.now();
  const sync = rawTry(() => r.reply(q.rid, q.token, ['reply']));
  const took = Date.now() - t0;
  eq(sync, 'ZLINK_SUBMIT_BACKPRESSURED/EAGAIN', `${tr} ${paused ? 'paused' : 'full'}: the sync reply after ${took} ms`);
  ok(took >= 50, `the sync reply waited SNDTIMEO: ${took} ms`);
  rawNoRecord(r);
  r.setOption('SNDTIMEO', RAW_TIMEO_MS);
  // The DEALER drains (or resumes): then, and only then, the edge.
  if (paused) d.setReceiveFlowState('RUNNING');
  else {
    drainData(d, data.n, size);
    drainData(d, empties.n, 0);
  }
  expectWritable(r, wt, paused ? [data.token] : [data.token, empties.token]);
  eq(rawTry(() => r.replySubmit(q.rid, q.token, ['reply'], { dontwait: true })), 'OK', 'the reply once there is room');
  if (paused) drainData(d, data.n, size);
  expectRawReply(d, id, 'reply');
  r.close();
  d.close();
  ctx.close();
}

// SC-15: a raw reply to a ROUTER peer takes the HWM-free Completion lane.
async function replyToRouter(tr) {
  const ctx = new zlink.Context();
  const a = rawSocket(ctx, 'ROUTER', 'A');
  a.setOption('SNDHWM', 4096n);
  const b = rawSocket(ctx, 'ROUTER', 'B');
  b.setOption('RCVHWM', 4096n);
  if (tr === 'tcp') {
    a.setOption('SNDBUF', 4096);
    b.setOption('RCVBUF', 4096);
  }
  b.connect(rawBind(a, tr));
  const toA = Buffer.from('A');
  let id1 = 0n;
  await eventually(() => {
    const out = {};
    const res = rawTry(() => b.request(['q1'], { rid: toA, dontwait: true, timeoutMs: ms(10000) }), out);
    if (res === 'OK') {
      id1 = out.value;
      return true;
    }
    ok(res.startsWith('ZLINK_SUBMIT_NOT_CONNECTED'), `q1 while the route forms: ${res}`);
    return false;
  }, 5000, 'the route to A');
  const id2 = b.request(['q2'], { rid: toA, timeoutMs: ms(10000) });
  const q1 = recvRequest(a, 'q1');
  const q2 = recvRequest(a, 'q2');
  // b PAUSED and the Application connection to b full of unread DATA.
  b.setReceiveFlowState('PAUSED');
  const data = rawFillStable(a, 'B', 1024);
  eq(rawFill(a, 'B', 1024).n, 0, 'still refused: full and paused');
  // Replies are admitted at once, async and sync (SNDTIMEO 0).
  eq(a.replySubmit(q1.rid, q1.token, ['r1'], { dontwait: true }), 0n, 'the async reply is admitted with no token');
  a.setOption('SNDTIMEO', 0);
  eq(rawTry(() => a.reply(q2.rid, q2.token, ['r2'])), 'OK', 'the sync reply');
  // ... and delivered while b is still PAUSED with the DATA unread.
  expectRawReply(b, id1, 'r1');
  expectRawReply(b, id2, 'r2');
  b.setReceiveFlowState('RUNNING');
  for (let i = 0; i < data.n; i++) {
    const got = b.routerRecv();
    eq(got.token, 0n, 'DATA, not a request');
    eq(got.parts[0].length, 1024, 'DATA size');
  }
  a.close();
  b.close();
  ctx.close();
}

module.exports.cases = {
  'SC-01': (p) => eachTransport(p, oneWayAndErrors),
  'SC-02': (p) => eachTransport(p, async (tr) => {
    await capacityWait(tr, true);
    await capacityWait(tr, false);
  }),
  'SC-03': (p) => eachTransport(p, waiterPoolFull),
  'SC-06': sc06,
  'SC-09': (p) => eachTransport(p, firstOutcomeWins),
  'SC-11': (p) => eachTransport(p, async (tr) => {
    await noResubmit(tr, 'mesh');
    await noResubmit(tr, 'cs');
  }),
  'SC-12': (p) => eachTransport(p, csReplyHeldInFifo),
  'SC-13': (p) => eachTransport(p, meshReplyWhilePaused),
  'SC-14': (p) => eachTransport(p, (tr) => {
    replyToDealer(tr, false);
    replyToDealer(tr, true);
  }),
  'SC-15': (p) => eachTransport(p, replyToRouter),
  'SC-16': (p) => eachTransport(p, (tr) => exactlyOnceUnderRaces(tr, param(p, 'requests'), param(p, 'window'), param(p, 'cancel_percent'))),
  'SC-17': (p) => eachTransport(p, callbackOnNewTurn),
  'SC-18': (p) => eachTransport(p, dispatcherCap),
  'SC-19': (p) => eachTransport(p, noResendAfterAcceptance),
  'SC-20': (p) => eachTransport(p, outcomesByType),
};
