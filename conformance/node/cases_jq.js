// cases_jq.js — the JQ cases (seed 001 §10), ported from conformance/c/
// jq_*.c to the Node binding's public API.
'use strict';
const { ok, eq, eventually, settle, resultOf, ms, fail, param } = require('./check');
const raw = require('./raw_peer');
const tables = require('../../bindings/node/lib/tables');
const { zlink, Server, Client, WorkerServer, Gate, transports, endpoint, track, expectDone, doneBy, sendGated, saturate, onTime } = require('./harness');

// A completion record's result by name, from the generated table.
const requestName = (v) => tables.FAMILIES.request.names[v] || `request result ${v}`;
const sendName = (v) => tables.FAMILIES.send_complete.names[v] || `send result ${v}`;

// sc_mesh_host: a node of mesh "m" named name (also its routing id).
function meshHost(name, tr, listen, maxJobs = 0) {
  const h = new zlink.Host(name);
  if (maxJobs > 0) h.setOption('MAX_QUEUED_JOBS', maxJobs);
  h.addMeshNode('m', name, listen ? endpoint(tr, 'mesh', name) : undefined);
  return h;
}

// --------------------------------------------------------------- JQ-04

async function failedCheckLeavesNoTrace(tr) {
  const seen = [];
  const x = meshHost('X', tr, true);
  x.addMeshChannelServer('m', 'svc', 100);
  x.handle({ channel: 'svc' }, 'send', 'm', (turn) => {
    seen.push({ tag: turn.payload.toString(), seq: turn.sequence });
  });
  x.start();
  const bound = x.endpoint('m');
  const a = meshHost('A', tr, false);
  a.addMeshChannelClient('m', 'svc');
  a.meshConnect('m', bound, 'X');
  a.start();
  await eventually(() => a.meshReadyPeers('m') === 1, 5000, 'X ready at A');
  const owner = () => x.ownerStatus({ channel: 'svc' });
  const send = async (tag) => eq(resultOf(await settle(a.sendToChannel('svc').payload('m', tag, '').submit())), 'OK', tag);
  const refused = async (packet) => resultOf(await settle(a.requestToChannel('svc').payload(packet, 'x', '').timeout(ms(5000)).submit()));

  await send('v1');
  await eventually(() => owner().handled === 1, 5000, 'v1 handled');
  const before = owner();
  eq(before.acceptedSeq, 1, 'accepted_seq');

  // Refused before the owner: a packet nobody handles, and the right
  // packet as the wrong kind (the channel takes "m" only as a one-way).
  eq(await refused('nope'), 'NOT_FOUND', 'an unknown packet');
  eq(await refused('m'), 'NOT_FOUND', 'the wrong kind');
  const mid = owner();
  for (const k of ['acceptedSeq', 'queuedRecords', 'queuedBytes', 'runningRecords', 'runningBytes', 'handled']) {
    eq(mid[k], before[k], `owner ${k} after the refusals`);
  }

  await send('v2');
  await eventually(() => owner().handled === 2, 5000, 'v2 handled');
  eq(seen.length, 2, 'records handled');
  ok(seen[0].tag === 'v1' && seen[1].tag === 'v2', 'in order');
  eq(seen[0].seq, 1, 'v1 sequence');
  eq(seen[1].seq, seen[0].seq + 1, 'consecutive: the refusals took no number');
  const end = owner();
  eq(end.acceptedSeq, 2, 'accepted_seq');
  eq(end.queuedRecords + end.queuedBytes + end.runningRecords + end.runningBytes, 0, 'nothing queued or running');
  const cap = x.capacity();
  eq(cap.permitsInUse, 0, 'permits in use');
  eq(cap.queuedJobs, 0, 'queued jobs');
  await a.shutdown(ms(2000));
  await x.shutdown(ms(2000));
  a.destroy();
  x.destroy();
}

// The C case's flood (jq_flow.c): count one-ways "f0".. to "svc" with at
// most window in flight; resolves once all ended.
async function flood(a, count, window, f = { done: 0, ok: 0, badIndex: -1, badResult: null }) {
  let inflight = 0;
  let room = null;
  let all = null;
  const allDone = new Promise((r) => (all = r));
  for (let i = 0; i < count; i++) {
    while (inflight >= window) await new Promise((r) => (room = r));
    inflight++;
    settle(a.call(false, null, `f${i}`).submit()).then((s) => {
      inflight--;
      f.done++;
      if (s.ok) f.ok++;
      else if (f.badIndex < 0) [f.badIndex, f.badResult] = [i, resultOf(s)];
      if (room) {
        const wake = room;
        room = null;
        wake();
      }
      if (f.done === count) all();
    });
  }
  await allDone;
  return f;
}

const REASONS = ['reason=no_handler', 'reason=decode_error', 'reason=shutdown', 'reason=backpressure', 'reason=stale_target'];
function expectNoDrops(h, who) {
  for (const r of REASONS) {
    const v = h.metric('zlink.mesh_node.messages.dropped', r);
    if (v !== 0n) fail(`${who} dropped ${v} records (${r})`);
  }
}

// --------------------------------------------------------------- JQ-07

// B's handler is fast. A1 floods B with oneways one-ways (window in
// flight); meanwhile A2, a host of its own on another connection, makes
// `requests` requests (timeout timeoutMs): each succeeds, and their p99
// stays below p99Ms (both scaled). Request k starts once (k + 1) /
// (2 x requests) of the flood ended.
async function crossConnectionProgress(tr, oneways, window, requests, timeoutMs, p99Ms) {
  // B on a worker thread: its handlers run on their own event loop, as
  // the C handlers run on the framework's threads; this thread floods.
  const b = await new WorkerServer({ name: 'B', weight: 100 }).open('mesh', tr, 'jq07');
  const a1 = await new Client({ sendTimeout: 60000n * 1000000n }).open('mesh', [b], { remoteServers: true });
  const a2 = meshHost('A2', tr, false);
  a2.addMeshChannelClient('m', 'svc');
  a2.meshConnect('m', b.bound, 'B');
  a2.start();
  await eventually(() => a2.meshReadyPeers('m') === 1, 5000, 'B ready at A2');
  await eventually(async () => (await b.diag()).readyPeers === 2, 5000, 'A1 and A2 ready at B');
  const base = (await b.diag()).recCount; // A1's readiness requests
  const f = { done: 0, ok: 0, badIndex: -1, badResult: null };
  const floodT0 = Date.now();
  const flooding = flood(a1, oneways, window, f);
  const lat = [];
  let doneAtLast = 0;
  for (let k = 0; k < requests; k++) {
    const mark = Math.floor((oneways * (k + 1)) / (2 * requests));
    await eventually(() => f.done >= mark, 30000, `${tr}: the flood reached ${mark} of ${oneways} sends`);
    const tag = `r${k}`;
    const t0 = Date.now();
    const s = await settle(a2.requestToChannel('svc').payload('m', Buffer.from(tag), '').timeout(ms(timeoutMs)).submit());
    lat.push(Date.now() - t0);
    if (!s.ok) {
      const c = (await b.diag()).capacity;
      fail(`${tr}: A2's request ${k} ended ${resultOf(s)} after ${lat[k]} ms, B capacity: in use ${c.permitsInUse}, state ${c.pressureState}`);
    }
    eq(s.value.payload.toString(), tag, `reply ${k}`);
    if (k === requests - 1) doneAtLast = f.done;
  }
  // The requests ran during the flood, or the case proved nothing.
  if (doneAtLast >= oneways) fail(`${tr}: the flood of ${oneways} ended before A2's last request`);
  await flooding;
  ok(f.ok === oneways, `${tr}: every flood send OK: ${f.ok} of ${oneways}; send ${f.badIndex} ended ${f.badResult}`);
  const floodMs = Date.now() - floodT0;
  await eventually(async () => (await b.diag()).recCount - base === oneways + requests, 30000, 'B handled every record');
  lat.sort((x, y) => x - y);
  const p99 = lat[Math.floor((requests * 99 + 99) / 100) - 1];
  const d = await b.diag();
  const bc = d.capacity;
  process.stderr.write(`JQ-07 ${tr}: ${oneways} one-ways in ${floodMs} ms; A2 latency ms min ${lat[0]} median ${lat[Math.floor(requests / 2)]} p99 ${p99}; B paused ${bc.transitionsPaused} times, peak permits ${bc.peakPermitsInUse} of ${bc.effectiveMax}\n`);
  ok(p99 < ms(p99Ms), `${tr}: A2's request p99 ${p99} ms, bound ${ms(p99Ms)} ms (B paused ${bc.transitionsPaused} times)`);
  for (const [r, v] of Object.entries(d.drops)) if (v !== '0') fail(`B dropped ${v} records (${r})`);
  await a2.shutdown(ms(2000));
  a2.destroy();
  await a1.close();
  await b.shutdown(ms(2000));
  await b.close();
}

// --------------------------------------------------------------- JQ-19

// B has M = 1, Core HWMs 16 KiB and a gated handler; A (HWM 16 KiB,
// SendTimeout 60 s) sends `records` one-ways of `size` bytes, at most
// `window` outstanding. While the gate is closed the sends pend (100 ms
// without completing) and none fails; open() -> every one completes OK
// and B handles each once, in order, dropping nothing.
async function coreHwmBackpressure(mode, tr, records, size, window) {
  const HWM = 16384;
  const b = new Server({ name: 'B', weight: 100, maxJobs: 1, hwm: HWM }).open(mode, tr, 'jq19');
  const a = await new Client({ hwm: HWM, sendTimeout: 60000n * 1000000n }).open(mode, [b]);
  const base = b.recCount(); // ClientServer: the pings
  b.gated = true;
  let finished = 0;
  let failed = 0;
  let first = null;
  let onFinished = null; // the gated phase's wait, woken by the next completion
  const start = (i) => {
    settle(a.call(false, null, `j${i}`, size).submit()).then((st) => {
      finished++;
      if (!st.ok) {
        failed++;
        if (first === null) first = `j${i}: ${resultOf(st)}`;
      }
      if (onFinished) onFinished();
    });
  };
  const noFailure = () => ok(failed === 0, `${failed} one-way sends failed, the first ${first}`);
  let next = 0;
  for (; next < window; next++) start(next);
  // The first ones are admitted, then the Core HWMs and B's pause hold the
  // rest: they pend, and none fails. Over tcp the kernel's socket buffers
  // take records too (they grow to megabytes): keep the window full until
  // no send completed for 100 ms.
  await eventually(() => b.gate.waiting === 1, 5000, 'j0 at the gate');
  await eventually(() => a.h.status().onewayWaiting > 0, 5000, 'a one-way waits for room');
  const before = finished;
  const giveUp = Date.now() + ms(30000);
  let held;
  for (;;) {
    while (next < records && next - finished < window) start(next++);
    held = finished;
    ok(held < records, `all ${records} sends completed while B's gate was closed`);
    // The next completion, or 100 ms without one (the observation window).
    const moved = await new Promise((r) => {
      const timer = setTimeout(() => r(false), 100);
      onFinished = () => {
        clearTimeout(timer);
        r(true);
      };
    });
    onFinished = null;
    if (!moved) break; // held by the HWMs
    ok(Date.now() <= giveUp, `sends kept completing for 30 s while B's gate was closed (${held})`);
  }
  noFailure();
  process.stdout.write(`# ${mode} ${tr}: ${before} of ${window} admitted before open, ${held} when the flow stood still\n`);
  ok(a.h.status().onewayWaiting > 0, 'a one-way still waits for room');
  b.gate.openGate();
  while (next < records) {
    const want = next - window + 1;
    await eventually(() => finished >= want, 120000, () => `the flow stalled: ${finished} of ${next} started sends completed`);
    noFailure();
    while (next < records && next - finished < window) start(next++);
  }
  await eventually(() => finished === records, 120000, () => `only ${finished} of ${records} sends completed`);
  noFailure();
  await eventually(() => b.recCount() === base + records, 30000, 'B handled every record');
  for (let i = 0; i < records; i++) {
    if (b.rec[base + i] !== `j${i}`) fail(`B's record ${i} is ${b.rec[base + i]}, j${i} expected (order)`);
  }
  for (const r of ['reason=no_handler', 'reason=decode_error', 'reason=backpressure', 'reason=shutdown']) {
    eq(b.h.metric('zlink.mesh_node.messages.dropped', r), 0n, `B ${r}`);
  }
  await eventually(() => b.h.capacity().permitsInUse === 0, 5000, 'no permit in use');
  await a.close();
  await b.close();
}

// --------------------------------------------------------------- JQ-06

// Part 1: C is a RouteMesh server of channel "flood" (M = 1, gated
// handler) flooded by F, and a ClientServer client of S. Its request to S
// completes while C stays saturated, and the reply takes no permit: C's
// capacity reads the same before and after. Part 2: S (M = 1) is
// saturated by its gated handler; C sends d1..d5, then a request q: S
// handles d1..d5, then q.
async function csBypassKeepsFifo(tr) {
  const FLOOD = 8;
  const D = 5;
  const S60 = 60000n * 1000000n;
  const s = new Server({ name: 'S', weight: 100, maxJobs: 1 }).open('cs', tr, 'jq06');
  const cgate = new Gate();
  const ch = meshHost('C', tr, true, 1);
  ch.addMeshChannelServer('m', 'flood', 100);
  ch.handle({ channel: 'flood' }, 'send', 'm', async () => {
    await cgate.pass();
  });
  ch.addCsClient('svc', s.bound);
  ch.setChannelOption('svc', 'SEND_TIMEOUT', S60);
  ch.start();
  const cBound = ch.endpoint('m');
  const c = new Client();
  c.h = ch;
  c.mode = 'cs';
  const fh = meshHost('F', tr, false);
  fh.addMeshChannelClient('m', 'flood');
  fh.setMeshOption('m', 'SEND_TIMEOUT', S60);
  fh.meshConnect('m', cBound, 'C');
  fh.start();
  await eventually(() => fh.meshReadyPeers('m') === 1, 5000, 'C ready at F');
  await eventually(() => ch.meshReadyPeers('m') === 1, 5000, 'F ready at C');
  eq(resultOf(await settle(c.call(true, null, 'warm').timeout(ms(5000)).submit())), 'OK', "C's connection to S");

  // Part 1. F floods C: f0 waits at C's gate, f1 holds C's one permit as a
  // queued job, the rest wait in C's Core queue or at F.
  const fd = [];
  for (let i = 0; i < FLOOD; i++) {
    fd.push(track(fh.sendToChannel('flood').payload('m', Buffer.from(`f${i}`), '').submit()));
    if (i === 0) await eventually(() => cgate.waiting === 1, 5000, 'f0 at C\'s gate');
  }
  await eventually(() => ch.capacity().queuedJobs === 1, 5000, 'one job queued at C');
  const before = ch.capacity();
  eq(before.pressureState, 1, 'C PAUSED');
  eq(before.permitsInUse, 1, 'C permits in use');
  eq(before.effectiveMax, 1, 'C effective max');
  const r1 = await settle(c.call(true, null, 'q1').timeout(ms(2000)).submit());
  eq(resultOf(r1), 'OK', 'q1 while C is saturated');
  eq(r1.value.payload.toString(), 'q1', 'q1 reply');
  const after = ch.capacity();
  // capacityWaits is not compared (a late flood record starts a wait at
  // any moment); a reply that needed a permit would find none and q1
  // would have timed out.
  for (const k of ['pressureState', 'permitsInUse', 'reservedSupplyPermits', 'queuedJobs', 'peakPermitsInUse', 'transitionsPaused', 'transitionsRunning']) {
    eq(after[k], before[k], `C's ${k} before and after the reply`);
  }
  eq(cgate.waiting, 1, 'f0 still holds C\'s gate');
  cgate.openGate();
  for (let i = 0; i < FLOOD; i++) {
    await expectDone(fd[i], 5000, `f${i} completed`);
    eq(fd[i].result, 'OK', `f${i}`);
  }
  await eventually(() => ch.capacity().permitsInUse === 0, 5000, 'C has no permit in use');

  // Part 2. S saturated: d1 waits at S's gate, d2 holds S's permit.
  const dd = await sendGated(c, s, D);
  const t0 = Date.now();
  const q = track(c.call(true, null, 'q').timeout(ms(10000)).submit());
  ok(!(await doneBy(q, t0 + 100)), 'q pending 100 ms');
  eq(s.recCount(), 2, 'S ran nothing past its gate (warm and q1 only)');
  eq(s.gate.waiting, 1, 'd1 at S\'s gate');
  s.gate.openGate();
  for (let i = 0; i < D; i++) {
    await expectDone(dd[i], 5000, `d${i + 1} completed`);
    eq(dd[i].result, 'OK', `d${i + 1}`);
  }
  await expectDone(q, 10000, 'q completed');
  eq(q.result, 'OK', 'q');
  eq(q.value.payload.toString(), 'q', 'q reply');
  const want = ['warm', 'q1', 'd1', 'd2', 'd3', 'd4', 'd5', 'q'];
  ok(s.rec.length === want.length && want.every((t, i) => s.rec[i] === t),
    `${tr}: S handled ${s.rec.length} records: ${s.rec.join(' ')} (warm q1 d1..d5 q expected)`);
  eq(q.calls, 1, 'q completions');
  await fh.shutdown(ms(2000));
  fh.destroy();
  await ch.shutdown(ms(2000));
  ch.destroy();
  await s.close();
}

// --------------------------------------------------------------- JQ-22

// The zlink_ names libzlink.so.1 defines in its .dynsym, read from the
// file this process loaded (/proc/self/maps): none may be a send-ready,
// retry or retained-receive hook (framework-contract.md §7.2 JQ-22).
function checkAbiHooks() {
  const fs = require('fs');
  const maps = fs.readFileSync('/proc/self/maps', 'utf8').split('\n');
  const line = maps.find((l) => /\/libzlink[^/]*\.so/.test(l));
  ok(line, 'libzlink is among the loaded objects');
  const file = line.slice(line.indexOf('/'));
  const img = fs.readFileSync(file);
  ok(img.length >= 64 && img.readUInt32BE(0) === 0x7f454c46 && img[4] === 2, `${file}: a 64-bit ELF`);
  const shoff = Number(img.readBigUInt64LE(0x28));
  const shentsize = img.readUInt16LE(0x3a);
  const shnum = img.readUInt16LE(0x3c);
  const sh = (i) => {
    const o = shoff + i * shentsize;
    return { type: img.readUInt32LE(o + 4), offset: Number(img.readBigUInt64LE(o + 0x18)), size: Number(img.readBigUInt64LE(o + 0x20)), link: img.readUInt32LE(o + 0x28) };
  };
  const banned = ['send_ready', 'sendready', 'retry', 'retained', 'resubmit'];
  let nsyms = 0;
  let sawStart = false;
  for (let i = 0; i < shnum; i++) {
    const s = sh(i);
    if (s.type !== 11) continue; // SHT_DYNSYM
    const strs = sh(s.link);
    for (let k = 0; k < s.size / 24; k++) {
      const o = s.offset + k * 24;
      const nameOff = img.readUInt32LE(o);
      const shndx = img.readUInt16LE(o + 6);
      if (shndx === 0 || nameOff >= strs.size) continue; // imports are not the ABI
      const start = strs.offset + nameOff;
      const name = img.toString('latin1', start, img.indexOf(0, start));
      if (!name.startsWith('zlink_')) continue;
      nsyms++;
      sawStart = sawStart || name === 'zlink_call_start';
      for (const b of banned) if (name.toLowerCase().includes(b)) fail(`${file} exports ${name}, a send-ready/retry hook`);
    }
  }
  ok(sawStart && nsyms > 50, `the check read the real table (${nsyms} zlink_ symbols)`);
  return nsyms;
}

// A (a CS client of "svc", SNDHWM 16 KiB, SendTimeout 60 s) sends 4 KiB
// one-ways to R, a raw Core ROUTER that does not read (RCVHWM 16 KiB):
// admitted until the HWMs are full, then `pending` more wait. Over the
// blocked window R's Core receives no new record, the waiting sends stay
// pending, and the process (every thread) uses under cpuPpmMax of one
// CPU. R then reads: every started send arrives exactly once, in order,
// and each completes OK.
async function noRetainedReceiveOrRetry(pending, windowMs, cpuPpmMax) {
  const SIZE = 4096;
  const nsyms = checkAbiHooks();
  process.stdout.write(`# ${nsyms} exported zlink_ symbols, none a send-ready/retry hook\n`);
  const ctx = new zlink.Context();
  const r = ctx.socket('ROUTER');
  r.setOption('LINGER', 0);
  r.setOption('RCVHWM', 16384n);
  r.setOption('RCVTIMEO', ms(5000));
  r.bind('tcp://127.0.0.1:0');
  const ep = r.getOption('LAST_ENDPOINT');
  const rcvPending = () => {
    const st = r.pendingStatus();
    ok(st.detailFlags & 4, 'the monitor reports RCV_PENDING_MSGS');
    return st.rcvPendingMsgs;
  };
  const a = new zlink.Host('A');
  a.addCsClient('svc', ep);
  a.setChannelOption('svc', 'SNDHWM', 16384);
  a.setChannelOption('svc', 'SEND_TIMEOUT', 60000n * 1000000n);
  a.start();
  let finished = 0;
  let failed = 0;
  let first = null;
  let started = 0;
  const start = () => {
    const i = started++;
    const buf = Buffer.alloc(SIZE);
    buf.write(`k${i}`);
    const t = track(a.sendToChannel('svc').payload('m', buf, '').submit());
    t.done.then(() => {
      finished++;
      if (t.result !== 'OK') {
        failed++;
        if (first === null) first = `k${i}: ${t.result}`;
      }
    });
    return t;
  };
  const noFailure = () => ok(failed === 0, `${failed} sends failed, the first ${first}`);
  // Fill: one send at a time until one stays pending 100 ms.
  for (;;) {
    const t = start();
    if (!(await doneBy(t, Date.now() + ms(100)))) break;
    await t.done;
    noFailure();
    ok(started < 100000, 'the HWMs fill');
  }
  for (let i = 0; i < pending; i++) start();
  const accepted = finished;
  await eventually(() => a.status().onewayWaiting === started - accepted, 5000, 'the rest wait for room');
  // The blocked window (an observation window, not a wait for a condition).
  const held = rcvPending();
  const cpu0 = process.cpuUsage();
  const w0 = Date.now();
  await new Promise((res) => setTimeout(res, windowMs));
  const cpuD = process.cpuUsage(cpu0);
  const cpu = cpuD.user + cpuD.system;
  const wall = Date.now() - w0;
  eq(rcvPending(), held, "R's Core got no new record");
  eq(finished, accepted, 'no send completed meanwhile');
  eq(a.status().onewayWaiting, started - accepted, 'the waiting sends still wait');
  const ppm = Math.floor((cpu * 1000) / Math.max(wall, 1));
  process.stdout.write(`# blocked ${wall} ms: ${accepted} admitted, ${started - accepted} waiting, R holds ${held}; CPU ${cpu} us (${ppm} ppm)\n`);
  ok(ppm < cpuPpmMax, `the process used ${cpu} us of CPU over a ${wall} ms blocked window (${ppm} ppm, < ${cpuPpmMax} expected)`);
  // R reads everything: exactly one record per started send.
  let last = null;
  for (let got = 0; got < started; got++) {
    const m = r.routerRecv({ capacity: 4 });
    eq(m.token, 0n, 'DATA');
    eq(m.parts.length, 2, 'two frames');
    const f0 = m.parts[0];
    ok(f0.length >= 21 && f0[0] === 0x5a && f0[3] === 18, 'a ZMP header frame');
    const op = f0.subarray(5, 21).toString('hex');
    ok(op !== '0'.repeat(32), 'an OperationId');
    const env = m.parts[1];
    ok(env.length >= 8 + SIZE && env[0] === 1, 'an envelope with the payload');
    const z = env.indexOf(0, 8);
    const tag = env.toString('latin1', 8, z < 0 ? env.length : z);
    if (tag !== `k${got}`) fail(`R's record ${got} is ${tag}, k${got} expected (each send once, in order)`);
    ok(got === 0 || op !== last, 'one OperationId per record');
    last = op;
  }
  await eventually(() => finished === started, 10000, () => `${finished} of ${started} sends completed after R read them all`);
  noFailure();
  // Nothing more comes: no send was submitted twice.
  eq(zlink.poll([{ socket: r, events: zlink.Poll.IN }], ms(100)).count, 0, 'nothing more for R');
  eq(rcvPending(), 0n, 'R holds nothing');
  await a.shutdown(ms(2000));
  a.destroy();
  r.close();
  ctx.close();
}

// --------------------------------------------------------------- JQ-17

async function fifoNeverRejects(tr, oneways, window) {
  const b = new Server({ name: 'B', weight: 100, maxJobs: 2 * oneways }).open('mesh', tr, 'jq17');
  const a = await new Client({ sendTimeout: 60000n * 1000000n }).open('mesh', [b]);
  b.gated = true;
  const t0 = Date.now();
  const f = await flood(a, oneways, window);
  ok(f.ok === oneways, `every send OK with the gate closed: ${f.ok} of ${oneways}; send ${f.badIndex} ended ${f.badResult}`);
  const sentMs = Date.now() - t0;
  await eventually(() => b.h.capacity().queuedJobs === oneways - 1, 30000, 'every other job queued');
  const bc = b.h.capacity();
  eq(b.gate.waiting, 1, 'f0 at the gate');
  eq(b.recCount(), 0, 'records handled');
  eq(bc.pressureState, 0, 'B RUNNING');
  b.gate.openGate();
  await eventually(() => b.recCount() === oneways, 60000, 'every record handled');
  await eventually(() => b.h.capacity().permitsInUse === 0, 5000, 'no permit in use');
  const firstBad = b.rec.findIndex((tag, i) => tag !== `f${i}`);
  ok(b.rec.length === oneways && firstBad < 0, `${tr}: B handled ${b.rec.length} of ${oneways}; record ${firstBad} is '${b.rec[firstBad]}'`);
  process.stderr.write(`JQ-17 ${tr}: ${oneways} one-ways completed in ${sentMs} ms, handled by ${Date.now() - t0} ms; peak ${bc.peakPermitsInUse}\n`);
  expectNoDrops(b.h, 'B');
  expectNoDrops(a.h, 'A');
  await a.close();
  await b.close();
}

// --------------------------------------------------------------- JQ-18

async function noHandlerOnlyRecorded(tr, mode) {
  const b = new Server({ name: 'B', weight: 100 }).open(mode, tr, mode === 'mesh' ? 'jq18m' : 'jq18c');
  const a = await new Client().open(mode, [b]);
  expectNoDrops(b.h, 'B');
  const base = b.recCount(); // pings of the ClientServer open are no records
  const s = await settle(a.h.sendToChannel('svc').payload('nohandler', 'x', '').submit());
  eq(resultOf(s), 'OK', 'a one-way to a packet with no handler');
  await eventually(() => b.h.metric('zlink.mesh_node.messages.dropped', 'reason=no_handler') === 1n, 5000, 'B recorded it');
  eq(resultOf(await settle(a.call(true, null, 'after').submit())), 'OK', 'after');
  eq(b.h.metric('zlink.mesh_node.messages.dropped', 'reason=no_handler'), 1n, 'no_handler drops');
  for (const r of REASONS.slice(1)) eq(b.h.metric('zlink.mesh_node.messages.dropped', r), 0n, r);
  eq(b.recHas('x'), 0, 'x at B');
  eq(b.recCount() - base, 1, '"after" only');
  expectNoDrops(a.h, 'A');
  await a.close();
  await b.close();
}

// --------------------------------------------------------------- JQ-16

async function checkRoomOutcome(tr, what, i, d, started, wantMs, oneway) {
  await expectDone(d, 5000);
  const r = d.result;
  if (['CAPACITY_EXCEEDED', 'REJECTED', 'UNAVAILABLE'].includes(r)) fail(`${tr}: ${what} ${i} ended ${r} for lack of room`);
  if (oneway && r === 'OK') return; // admitted
  if (r !== 'DEADLINE_EXCEEDED') fail(`${tr}: ${what} ${i} ended ${r}, expected ${oneway ? 'OK or DEADLINE_EXCEEDED' : 'DEADLINE_EXCEEDED'}`);
  onTime(d.at - started, wantMs);
  eq(d.calls, 1, `${what} ${i} completions`);
}

async function roomIsNotAnError(tr, mode, batch, sendMs, requestMs) {
  const HWM = 16 * 1024;
  const b = new Server({ name: 'B', weight: 100, maxJobs: 1, hwm: HWM }).open(mode, tr, mode === 'mesh' ? 'jq16m' : 'jq16c');
  const a = await new Client({ hwm: HWM, sendTimeout: BigInt(sendMs) * 1000000n }).open(mode, [b]);
  const sat = await saturate(a, b);
  const dd = [];
  for (let i = 0; i < 2 * batch; i++) {
    const request = i % 2 === 1;
    const c = a.call(request, null, `${request ? 'q' : 'w'}${Math.floor(i / 2)}`);
    if (request) c.timeout(requestMs);
    const started = Date.now();
    dd.push({ request, started, d: track(c.submit()) });
  }
  await checkRoomOutcome(tr, 'the pending one-way', 0, sat.pending, sat.started, sendMs, true);
  let admitted = 0;
  let timedOut = 0;
  for (let i = 0; i < 2 * batch; i++) {
    const { request, started, d } = dd[i];
    await checkRoomOutcome(tr, request ? 'request' : 'one-way', Math.floor(i / 2), d, started, request ? requestMs : sendMs, !request);
    if (!request && d.result === 'OK') admitted++;
    else if (!request) timedOut++;
  }
  process.stderr.write(`JQ-16 ${tr} ${mode}: ${sat.accepted} saturating sends accepted; batch one-ways: ${admitted} admitted, ${timedOut} DeadlineExceeded\n`);
  await a.close();
  await b.close();
}

// ------------------------------------------------------ JQ-02 (jq_permits.c)

// The owner of jq_permits.c: one-way turns record their tag and the
// capacity read at their first instruction, pass the gate if gated, and
// (tag starting with awaitPrefix) request awaitChannel and keep the turn
// until the reply; request turns pass the gate and echo the payload.
class JqOwner {
  constructor(gated) {
    this.gated = gated;
    this.gate = new Gate();
    this.awaitPrefix = '';
    this.awaitChannel = '';
    this.awaitTimeoutMs = 0;
    this.started = 0;
    this.ended = 0;
    this.tags = [];
    this.inUseAtStart = [];
    this.reservedAtStart = [];
    this.awaited = 0;
    this.awaitResult = [];
    this.awaitReply = [];
    this.awaitElapsed = [];
  }
}

function jqServe(h, ch, sendOwner, requestOwner) {
  h.addMeshChannelServer('m', ch, 100);
  if (sendOwner) {
    const o = sendOwner;
    h.handle({ channel: ch }, 'send', 'm', async (turn) => {
      const c = h.capacity(); // the first instruction
      const i = o.started++;
      o.tags[i] = turn.payload.toString();
      o.inUseAtStart[i] = c.permitsInUse;
      o.reservedAtStart[i] = c.reservedSupplyPermits;
      const wait = o.awaitPrefix !== '' && o.tags[i].startsWith(o.awaitPrefix);
      if (o.gated) await o.gate.pass();
      if (!wait) {
        o.ended++;
        return;
      }
      const t0 = Date.now();
      const r = await settle(h.requestToChannel(o.awaitChannel).payload('m', o.tags[i], '').timeout(o.awaitTimeoutMs).submit());
      o.awaitElapsed[i] = Date.now() - t0;
      o.awaitResult[i] = resultOf(r);
      o.awaitReply[i] = r.ok ? r.value.payload.toString() : '';
      o.awaited++;
      o.ended++; // the turn ends as this returns
    });
  }
  h.handle({ channel: ch }, 'request', 'm', async (turn) => {
    const o = requestOwner;
    if (o && o.gated) await o.gate.pass();
    if (o) {
      o.started++;
      o.ended++;
    }
    turn.respond('m', turn.payload, '');
  });
}

async function jqTrioOpen(tr, maxJobs, oa, ob) {
  const b = meshHost('B', tr, true);
  jqServe(b, 'back', null, ob);
  b.start();
  const a = meshHost('A', tr, true, maxJobs);
  jqServe(a, 'svc', oa, null);
  a.addMeshChannelClient('m', 'back');
  a.meshConnect('m', b.endpoint('m'), 'B');
  a.start();
  const c = meshHost('C', tr, false);
  c.addMeshChannelClient('m', 'svc');
  c.setMeshOption('m', 'SEND_TIMEOUT', 30000n * 1000000n);
  c.meshConnect('m', a.endpoint('m'), 'A');
  c.start();
  await eventually(() => c.meshReadyPeers('m') === 1, 5000, 'A ready at C');
  await eventually(() => a.meshReadyPeers('m') === 2, 5000, 'B and C ready at A');
  return { a, b, c };
}

async function jqSend(h, ch, tag) {
  eq(resultOf(await settle(h.sendToChannel(ch).payload('m', tag, '').submit())), 'OK', tag);
}

function jqExpectStart(o, i, queued) {
  const inUse = o.inUseAtStart[i];
  const reserved = o.reservedAtStart[i];
  ok(inUse - reserved === queued && reserved <= 1,
    `turn ${i} started with ${inUse} permits in use (${reserved} reserved), expected ${queued} jobs (and at most one reservation)`);
}

function jqExpectOrder(o, from, prefix, first, n) {
  for (let i = 0; i < n; i++) {
    const want = `${prefix}${first + i}`;
    ok(from + i < o.started && o.tags[from + i] === want,
      `turn ${from + i} of ${o.started} started is "${o.tags[from + i]}", expected ${want} (each once, in order)`);
  }
}

async function hostEnd(...hosts) {
  for (const h of hosts) {
    await h.shutdown(ms(2000));
    h.destroy();
  }
}

async function permitAccounting(tr) {
  const oa = new JqOwner(true);
  const ob = new JqOwner(true);
  oa.awaitPrefix = 'j1';
  oa.awaitChannel = 'back';
  oa.awaitTimeoutMs = 10000;
  const { a, b, c } = await jqTrioOpen(tr, 4, oa, ob);
  await jqSend(c, 'svc', 'j1');
  await eventually(() => oa.gate.waiting === 1, 5000, 'j1 at the gate');
  jqExpectStart(oa, 0, 0); // read at j1's first instruction
  await eventually(() => a.capacity().permitsInUse === 0, 5000, 'nothing in use with j1 running');
  for (let i = 2; i <= 4; i++) await jqSend(c, 'svc', `j${i}`);
  await eventually(() => a.capacity().queuedJobs === 3 && a.capacity().permitsInUse === 3, 5000, 'j2..j4 queued');
  let cap = a.capacity();
  eq(cap.queuedJobs, 3, 'queued jobs');
  eq(cap.pressureState, 0, 'RUNNING (the pause count is 4)');
  // j1 passes the gate and awaits B (held at B's gate); the gate closes again behind it.
  oa.gate.openGate();
  await eventually(() => ob.gate.waiting === 1, 5000, "j1's request at B's gate");
  oa.gate.close();
  await eventually(() => a.capacity().permitsInUse === 3, 5000, 'the await took no permit');
  eq(a.capacity().queuedJobs, 3, 'queued jobs');
  eq(a.status().turnsRunning, 1, 'turns running');
  eq(oa.started, 1, 'turns started');
  // The reply ends j1's turn; j2 starts and lowers in use to 2.
  ob.gate.openGate();
  await eventually(() => oa.awaited === 1 && oa.gate.waiting === 1, 5000, "j1's await ended, j2 at the gate");
  eq(oa.awaitResult[0], 'OK', "j1's await");
  eq(oa.awaitReply[0], 'j1', "j1's reply");
  eq(oa.started, 2, 'turns started');
  jqExpectStart(oa, 1, 2);
  await eventually(() => a.capacity().permitsInUse === 2, 5000, 'two in use');
  eq(a.capacity().queuedJobs, 2, 'queued jobs');
  oa.gate.openGate();
  await eventually(() => oa.ended === 4, 5000, 'every turn ended');
  jqExpectOrder(oa, 0, 'j', 1, 4);
  jqExpectStart(oa, 2, 1);
  jqExpectStart(oa, 3, 0);
  await eventually(() => a.capacity().permitsInUse === 0, 5000, 'nothing in use');
  await hostEnd(c, a, b);
}

// A saturated: no free permit, PAUSED, and a record without a permit
// waits (a capacity waiter at A's ingress, or a one-way waiting at c).
function jqSaturated(h, c) {
  const cap = h.capacity();
  return cap.permitsInUse === cap.effectiveMax && cap.pressureState === 1 &&
    (cap.capacityWaiters >= 1 || c.status().onewayWaiting >= 1);
}

// --------------------------------------------------------------- JQ-03

// The framework HELLO (a request) of mesh node "C" to A, DONTWAIT; its
// completion id, or null while the peer is not connected yet.
function rawHello(peer) {
  const hello = new raw.Wire().prefix(1, 0).l8('m').l8('C').l8('framework-service-v11').u64(1).u16(0).done();
  const s = raw.submitOf(() => peer.request([hello], { rid: Buffer.from('A'), dontwait: true, timeoutMs: ms(5000) }));
  if (s.result === 'OK') return s.id;
  eq(s.result, 'ZLINK_SUBMIT_NOT_CONNECTED', "the raw HELLO's submit");
  return null;
}

// CHANNEL_SEND to "svc" with payload tag, as DATA to A with DONTWAIT.
function rawSend(peer, tag) {
  return raw.submitOf(() => peer.send(raw.record(0, 0, 0, 'svc', tag), { rid: Buffer.from('A'), dontwait: true }));
}

// The peers pausing peer now, as its monitor sees them (a zero-timeout
// poll first lets the socket take its commands).
function pausedSeen(peer) {
  zlink.poll([{ socket: peer, events: zlink.Poll.OUT }], 0);
  const st = peer.pendingStatus();
  ok((st.detailFlags & zlink.MonitorDetail.FLOW_STATE) !== 0, 'the monitor reports the flow state');
  return st.flowPausedConnections;
}

// M = 2, gated owner; a raw Core ROUTER peer sends r1, then r2..r5 back
// to back. r1 runs at the gate, r2 and r3 hold both permits: in use 2,
// queued 2, PAUSED, and the peer sees the pause. r4 and r5 were not
// received: those the peer's Core admitted before the pause reached it
// wait in A's Core (A's ingress is a capacity waiter), those sent after
// it the peer's Core refused (BACKPRESSURED with a wait token). open() ->
// r1..r5 each once, in order.
async function noReceiveWithoutPermit() {
  const oa = new JqOwner(true);
  const a = meshHost('A', 'tcp', true, 2);
  jqServe(a, 'svc', oa, null);
  a.start();
  const bound = a.endpoint('m');
  const ctx = new zlink.Context();
  const peer = ctx.socket('ROUTER');
  peer.setOption('LINGER', 0);
  peer.setRoutingId('C');
  peer.setOption('CONNECT_ROUTING_ID', Buffer.from('A'));
  peer.connect(bound);

  let hid = null;
  await eventually(() => (hid = rawHello(peer)) !== null, 5000, 'the raw HELLO sent');
  const hc = await raw.nextCompletion(peer, 5000);
  ok(hc !== null, "the HELLO's completion");
  eq(hc.kind, zlink.CompletionKind.REQUEST, "the HELLO's completion kind");
  eq(hc.completionId, hid, "the HELLO's completion id");
  eq(requestName(hc.requestResult), 'ZLINK_REQUEST_OK', "the HELLO's request result");
  ok(hc.replyParts.length >= 1 && hc.replyParts[0].length > 3, "the HELLO's reply");
  eq(hc.replyParts[0][3], 2, 'the reply command (ADMIT)');
  await eventually(() => a.meshReadyPeers('m') === 1, 5000, "A's peer ready");

  let s = rawSend(peer, 'r1');
  eq(s.result, 'OK', 'r1');
  await eventually(() => oa.gate.waiting === 1, 5000, "r1 at A's gate");
  let sent = 1; // r1..r<sent> left the peer
  let wt = 0n;
  for (let i = 2; i <= 5; i++) {
    s = rawSend(peer, `r${i}`);
    if (s.result !== 'OK') {
      eq(s.result, 'ZLINK_SUBMIT_BACKPRESSURED', `r${i}'s submit`);
      ok(s.id !== 0n, 'a wait token');
      wt = s.id;
      break;
    }
    sent = i;
  }
  // A pauses only once r2 and r3 were received: both left the peer.
  ok(sent >= 3, `r2 and r3 left the peer (sent ${sent})`);
  await eventually(() => a.capacity().queuedJobs === 2, 5000, 'A holds two queued jobs');
  await eventually(() => pausedSeen(peer) === 1n, 5000, 'the peer sees PAUSED');
  if (sent >= 4) await eventually(() => a.capacity().capacityWaiters >= 1, 5000, "A's ingress waits for a permit");
  const cap = a.capacity();
  eq(cap.permitsInUse, 2, "A's permits in use");
  eq(cap.queuedJobs, 2, "A's queued jobs");
  eq(cap.pressureState, 1, 'A paused');
  if (sent >= 4) ok(cap.capacityWaiters >= 1, "r4 waits in A's Core");
  eq(oa.started, 1, 'turns started (only r1)');
  eq(a.status().turnsQueued, 2, 'turns queued (r2, r3)');
  process.stdout.write(`# ${sent} of r1..r5 left the peer before the pause\n`);

  oa.gate.openGate();
  while (sent < 5) {
    if (wt !== 0n) {
      const c = await raw.nextCompletion(peer, 5000);
      ok(c !== null, 'the WRITABLE record of the refused send');
      eq(c.kind, zlink.CompletionKind.WRITABLE, 'a WRITABLE completion');
      eq(c.completionId, wt, 'the wait token');
      eq(sendName(c.sendResult), 'ZLINK_SEND_ADMITTED', 'ADMITTED');
      wt = 0n;
    }
    s = rawSend(peer, `r${sent + 1}`);
    if (s.result === 'OK') sent++;
    else {
      eq(s.result, 'ZLINK_SUBMIT_BACKPRESSURED', 'a submit');
      ok(s.id !== 0n, 'a wait token');
      wt = s.id;
    }
  }
  await eventually(() => oa.ended === 5, 5000, 'every turn ended');
  jqExpectOrder(oa, 0, 'r', 1, 5);
  await eventually(() => a.capacity().permitsInUse === 0, 5000, "A's permits free");
  eq(a.capacity().pressureState, 0, 'A running');
  let dropped = 0n;
  for (const r of REASONS) dropped += a.metric('zlink.mesh_node.messages.dropped', r);
  eq(dropped, 0n, "A's dropped records");
  eq(oa.started, 5, 'turns started');
  peer.close();
  ctx.close();
  await hostEnd(a);
}

// --------------------------------------------------------------- JQ-20

async function completionNeedsNoPermit(tr) {
  const oa = new JqOwner(false);
  const ob = new JqOwner(true);
  oa.awaitPrefix = 'h';
  oa.awaitChannel = 'back';
  oa.awaitTimeoutMs = 10000;
  const { a, b, c } = await jqTrioOpen(tr, 1, oa, ob);
  await jqSend(c, 'svc', 'h0');
  await eventually(() => ob.gate.waiting === 1, 5000, 'h0 awaits B');
  const F = 6;
  const dd = [];
  for (let i = 1; i <= F; i++) dd.push(track(c.sendToChannel('svc').payload('m', `f${i}`, '').submit()));
  await eventually(() => jqSaturated(a, c), 5000, 'A saturated');
  eq(oa.awaited, 0, 'awaits ended');
  eq(oa.started, 1, 'turns started');
  const t0 = Date.now();
  ob.gate.openGate();
  await eventually(() => oa.awaited === 1, 5000, "h0's reply arrived");
  const took = Date.now() - t0;
  eq(oa.awaitResult[0], 'OK', "h0's await");
  eq(oa.awaitReply[0], 'h0', "h0's reply");
  ok(took < ms(1000), `the reply took ${took} ms to reach saturated A`);
  for (const d of dd) {
    await expectDone(d, 5000);
    eq(d.result, 'OK', 'a flood one-way');
  }
  await eventually(() => oa.ended === F + 1, 5000, 'every turn ended');
  eq(oa.tags[0], 'h0', 'the first turn');
  jqExpectOrder(oa, 1, 'f', 1, F);
  await eventually(() => a.capacity().permitsInUse === 0, 5000, 'nothing in use');
  eq(a.capacity().pressureState, 0, 'A RUNNING');
  await hostEnd(c, a, b);
}

// --------------------------------------------------------------- JQ-05

async function saturatedIngress(tr) {
  const D = 500;
  const FLOOD = 40; // JQ05_FLOOD of the C case
  let oa = new JqOwner(true);
  const b = meshHost('B', tr, true);
  jqServe(b, 'back', null, null);
  b.start();
  let a = meshHost('A', tr, true, 2);
  jqServe(a, 'svc', oa, null);
  a.addMeshChannelClient('m', 'back');
  a.meshConnect('m', b.endpoint('m'), 'B');
  a.start();
  const boundA = a.endpoint('m');
  const flooder = () => {
    const h = meshHost('C', tr, false);
    h.addMeshChannelClient('m', 'svc');
    h.setMeshOption('m', 'SEND_TIMEOUT', 30000n * 1000000n);
    h.meshConnect('m', boundA, 'A');
    h.start();
    return h;
  };
  let c = flooder();
  await eventually(() => c.meshReadyPeers('m') === 1, 5000, 'A ready at C');
  await eventually(() => a.meshReadyPeers('m') === 2, 5000, 'B and C ready at A');
  await jqSend(c, 'svc', 'f0');
  await eventually(() => oa.gate.waiting === 1, 5000, 'f0 at the gate');
  let dd = [];
  for (let i = 1; i < FLOOD; i++) dd.push(track(c.sendToChannel('svc').payload('m', `f${i}`, '').submit()));
  await eventually(() => jqSaturated(a, c), 5000, 'A saturated');
  let t = Date.now();
  const q = await settle(a.requestToChannel('back').payload('m', 'q', '').timeout(10000).submit());
  let took = Date.now() - t;
  eq(resultOf(q), 'OK', 'q');
  eq(q.value.payload.toString(), 'q', "q's reply");
  ok(took < ms(200), `the request to B took ${took} ms while A was saturated`);
  t = Date.now();
  const u = await settle(a.requestToChannel('back').payload('nope', 'u', '').timeout(10000).submit());
  took = Date.now() - t;
  eq(resultOf(u), 'NOT_FOUND', 'an unknown packet');
  ok(took < ms(200), `the unknown packet's NotFound took ${took} ms`);
  eq(a.capacity().pressureState, 1, 'A PAUSED');
  eq(a.capacity().transitionsRunning, 0, 'no RUNNING transition');
  const t0 = Date.now();
  setTimeout(() => oa.gate.openGate(), D);
  await a.shutdown(D);
  onTime(Date.now() - t0, D);
  eq(a.state, 'STOPPED', "A's state");
  const cap = a.capacity();
  eq(cap.capacityWaiters, 0, 'capacity waiters');
  eq(cap.permitsInUse, 0, 'permits in use');
  await hostEnd(c); // ends what still waited for room toward A
  for (const d of dd) await expectDone(d, 5000);
  await hostEnd(a, b);

  // Part 2: no shutdown; open() delivers everything.
  oa = new JqOwner(true);
  a = new zlink.Host('A'); // listening where the first A did
  a.setOption('MAX_QUEUED_JOBS', 2);
  a.addMeshNode('m', 'A', boundA);
  jqServe(a, 'svc', oa, null);
  a.start();
  c = flooder();
  await eventually(() => c.meshReadyPeers('m') === 1, 5000, 'A ready at C');
  await jqSend(c, 'svc', 'f0');
  await eventually(() => oa.gate.waiting === 1, 5000, 'f0 at the gate');
  dd = [];
  for (let i = 1; i < FLOOD; i++) dd.push(track(c.sendToChannel('svc').payload('m', `f${i}`, '').submit()));
  await eventually(() => jqSaturated(a, c), 5000, 'A saturated');
  oa.gate.openGate();
  for (const d of dd) {
    await expectDone(d, 10000);
    eq(d.result, 'OK', 'a flood one-way');
  }
  await eventually(() => oa.ended === FLOOD, 10000, 'every record handled');
  jqExpectOrder(oa, 0, 'f', 0, FLOOD);
  let dropped = 0n;
  for (const r of REASONS) dropped += a.metric('zlink.mesh_node.messages.dropped', r);
  eq(dropped, 0n, 'dropped at A');
  await eventually(() => a.capacity().permitsInUse === 0, 5000, 'nothing in use');
  eq(a.capacity().pressureState, 0, 'A RUNNING');
  await hostEnd(c, a);
}

// ------------------------------------------------- JQ-01 (jq_pressure.c)

const JQ = 'zlink.host.application_job_queue.';
const CORE = 'zlink.host.core_hwm.';
const PROFILE = { COMPACT: 0, LOW_LATENCY: 1, BALANCED: 2, THROUGHPUT: 3 }; // ZLINK_PROFILE_* (zlink.h)
const JQP = zlink.JobQueueProfile;

// A host with P forced to 2 and one CS server channel (not started).
function p2Host(name) {
  const h = new zlink.Host(name);
  h.setOption('EFFECTIVE_PROCESSORS', 2);
  h.addCsServer('svc', 'tcp://127.0.0.1:0');
  return h;
}

const opt = (h, o) => Number(h.getOption(o));

function expectStarted(h, m, jqProfile, coreProfile) {
  h.start();
  const c = h.capacity();
  eq(c.effectiveMax, m, 'M');
  eq(c.profile, jqProfile, 'the job-queue profile');
  eq(h.metric(JQ + 'limit', ''), BigInt(m), 'the limit metric');
  eq(h.metric(CORE + 'profile', ''), BigInt(coreProfile), 'the Core profile in force');
}

function expectStartRefused(h, want) {
  let got = 'OK';
  try {
    h.start();
  } catch (e) {
    got = e.result;
  }
  eq(got, want, 'start');
  eq(h.state, 'FAILED', 'state');
  let bound = true;
  try {
    h.endpoint('svc');
  } catch {
    bound = false;
  }
  ok(!bound, 'never bound');
  h.destroy();
}

async function independentProfiles() {
  let h = p2Host('jq01-default');
  eq(opt(h, 'JOB_QUEUE_PROFILE'), JQP.BALANCED, 'job-queue profile');
  eq(opt(h, 'CORE_HWM_PROFILE'), -1, "unset: the Core's default");
  eq(opt(h, 'MAX_QUEUED_JOBS'), 256, 'M');
  expectStarted(h, 256, JQP.BALANCED, PROFILE.BALANCED);
  eq(h.metric(CORE + 'effective_budget', ''), 0n, 'effective budget');
  await hostEnd(h);

  h = p2Host('jq01-both');
  h.setOption('CORE_HWM_PROFILE', PROFILE.COMPACT);
  eq(opt(h, 'MAX_QUEUED_JOBS'), 256, "the Core's profile moved nothing");
  h.setOption('JOB_QUEUE_PROFILE', JQP.THROUGHPUT);
  eq(opt(h, 'CORE_HWM_PROFILE'), PROFILE.COMPACT, 'Core profile');
  h.setOption('CORE_BUDGET_BYTES', 4 << 20);
  eq(opt(h, 'MAX_QUEUED_JOBS'), 512, 'M');
  expectStarted(h, 512, JQP.THROUGHPUT, PROFILE.COMPACT);
  eq(opt(h, 'CORE_HWM_PROFILE'), PROFILE.COMPACT, 'Core profile after start');
  eq(h.metric(CORE + 'effective_budget', ''), BigInt(4 << 20), 'effective budget');
  await hostEnd(h);

  h = p2Host('jq01-core-only');
  h.setOption('CORE_HWM_PROFILE', PROFILE.COMPACT);
  expectStarted(h, 256, JQP.BALANCED, PROFILE.COMPACT);
  await hostEnd(h);
  h = p2Host('jq01-jq-only');
  h.setOption('JOB_QUEUE_PROFILE', JQP.THROUGHPUT);
  expectStarted(h, 512, JQP.THROUGHPUT, PROFILE.BALANCED);
  eq(opt(h, 'CORE_HWM_PROFILE'), -1, 'Core profile unset');
  await hostEnd(h);

  h = p2Host('jq01-manual');
  h.setOption('MAX_QUEUED_JOBS', 17);
  h.setOption('JOB_QUEUE_PROFILE', JQP.COMPACT); // the manual value wins over a profile
  expectStarted(h, 17, JQP.COMPACT, PROFILE.BALANCED);
  let c = h.capacity();
  eq(c.manualMax, 17, 'manual max');
  eq(c.pauseCount, 14, 'pause count');
  eq(c.resumeCount, 10, 'resume count');
  await hostEnd(h);

  const bad = [['MAX_QUEUED_JOBS', 0], ['MAX_QUEUED_JOBS', -1], ['MAX_QUEUED_JOBS', 2 ** 31],
    ['PAUSE_PERCENT', 0], ['PAUSE_PERCENT', 101], ['RESUME_PERCENT', 100],
    ['CORE_HWM_PROFILE', PROFILE.THROUGHPUT + 1], ['CORE_BUDGET_BYTES', -1], ['CORE_MEMORY_LIMIT_BYTES', -1]];
  h = p2Host('jq01-bad');
  for (const [o, v] of bad) {
    const before = opt(h, o);
    let got = 'OK';
    try {
      h.setOption(o, v);
    } catch (e) {
      got = e.result;
    }
    eq(got, 'INVALID_ARGUMENT', `${o} = ${v}`);
    eq(opt(h, o), before, `${o} kept`);
  }
  expectStarted(h, 256, JQP.BALANCED, PROFILE.BALANCED);
  c = h.capacity();
  eq(c.pausePercent, 80, 'pause percent');
  eq(c.resumePercent, 60, 'resume percent');
  await hostEnd(h);
  for (const [pause, resume] of [[60, 60], [50, 70]]) {
    h = p2Host('jq01-order');
    h.setOption('PAUSE_PERCENT', pause);
    h.setOption('RESUME_PERCENT', resume);
    expectStartRefused(h, 'INVALID_ARGUMENT');
  }
  h = p2Host('jq01-memory');
  h.setOption('CORE_MEMORY_LIMIT_BYTES', 2n ** 63n - 1n);
  expectStartRefused(h, 'INVALID_ARGUMENT');
}

// --------------------------------------------------------------- JQ-14

async function replyToPausedClient(tr) {
  const s = new zlink.Host('S');
  s.addCsServer('cs-out', endpoint(tr, 'jq14', 'S'));
  s.handle({ channel: 'cs-out' }, 'request', 'm', (turn) => turn.respond('m', turn.payload, ''));
  s.start();
  const oh = new JqOwner(true);
  const h = meshHost('H', tr, true, 1);
  jqServe(h, 'svc', oh, null);
  h.addCsClient('cs-out', s.endpoint('cs-out'));
  h.start();
  const c = meshHost('C', tr, false);
  c.addMeshChannelClient('m', 'svc');
  c.setMeshOption('m', 'SEND_TIMEOUT', 30000n * 1000000n);
  c.meshConnect('m', h.endpoint('m'), 'H');
  c.start();
  await eventually(() => c.meshReadyPeers('m') === 1, 5000, 'H ready at C');
  const req = async (tag) => {
    const t0 = Date.now();
    const r = await settle(h.requestToChannel('cs-out').payload('m', tag, '').timeout(10000).submit());
    return { r, took: Date.now() - t0 };
  };
  eq(resultOf((await req('warm')).r), 'OK', 'warm'); // connected
  await jqSend(c, 'svc', 'f0');
  await eventually(() => oh.gate.waiting === 1, 5000, 'f0 at the gate');
  const dd = [];
  for (let i = 1; i < 4; i++) dd.push(track(c.sendToChannel('svc').payload('m', `f${i}`, '').submit()));
  await eventually(() => jqSaturated(h, c), 5000, 'H saturated');
  const before = h.capacity();
  const { r, took } = await req('q');
  eq(resultOf(r), 'OK', 'q');
  eq(r.value.payload.toString(), 'q', "q's reply");
  ok(took < ms(200), `the request to S took ${took} ms while H was PAUSED`);
  const after = h.capacity();
  eq(after.pressureState, 1, 'H PAUSED');
  eq(after.transitionsRunning, before.transitionsRunning, 'paused throughout');
  eq(after.permitsInUse, 1, 'permits in use');
  oh.gate.openGate();
  for (const d of dd) {
    await expectDone(d, 5000);
    eq(d.result, 'OK', 'a flood one-way');
  }
  await eventually(() => oh.ended === 4, 5000, 'every turn ended');
  jqExpectOrder(oh, 0, 'f', 0, 4);
  await hostEnd(c, h, s);
}

// --------------------------------------------------------------- JQ-15

async function noHoldingWhileWaiting(tr) {
  const FLOOD = 3; // JQ15_FLOOD
  const oa = new JqOwner(false);
  const ob = new JqOwner(false);
  Object.assign(oa, { awaitPrefix: 'f', awaitChannel: 'svc-b', awaitTimeoutMs: 1000 });
  Object.assign(ob, { awaitPrefix: 'f', awaitChannel: 'svc-a', awaitTimeoutMs: 1000 });
  const b = meshHost('B', tr, true, 2);
  jqServe(b, 'svc-b', ob, null);
  b.addMeshChannelClient('m', 'svc-a');
  b.start();
  const a = meshHost('A', tr, true, 2);
  jqServe(a, 'svc-a', oa, null);
  a.addMeshChannelClient('m', 'svc-b');
  a.meshConnect('m', b.endpoint('m'), 'B');
  a.start();
  const c = meshHost('C', tr, false);
  c.addMeshChannelClient('m', 'svc-a');
  c.addMeshChannelClient('m', 'svc-b');
  c.setMeshOption('m', 'SEND_TIMEOUT', 30000n * 1000000n);
  c.meshConnect('m', a.endpoint('m'), 'A');
  c.meshConnect('m', b.endpoint('m'), 'B');
  c.start();
  await eventually(() => c.meshReadyPeers('m') === 2, 5000, 'A and B ready at C');
  await eventually(() => a.meshReadyPeers('m') === 2, 5000, 'peers ready at A');
  await eventually(() => b.meshReadyPeers('m') === 2, 5000, 'peers ready at B');
  const dd = [];
  for (let i = 0; i < FLOOD; i++) {
    dd.push(track(c.sendToChannel('svc-a').payload('m', `f${i}`, '').submit()));
    dd.push(track(c.sendToChannel('svc-b').payload('m', `f${i}`, '').submit()));
  }
  // Until every await ended the peers never stop being ready; the samples
  // are the observation, the bound 3 rounds of 1 s plus slack.
  const until = Date.now() + ms(3 * 1000 + 5000);
  while (oa.awaited < FLOOD || ob.awaited < FLOOD) {
    if (Date.now() > until) fail(`awaits ended: A ${oa.awaited}, B ${ob.awaited} of ${FLOOD}`);
    eq(a.meshReadyPeers('m'), 2, 'ready peers at A');
    eq(b.meshReadyPeers('m'), 2, 'ready peers at B');
    eq(c.meshReadyPeers('m'), 2, 'ready peers at C');
    await new Promise((r) => setTimeout(r, 10));
  }
  for (const [k, o] of [['A', oa], ['B', ob]]) {
    for (let i = 0; i < o.started; i++) {
      if (!o.tags[i].startsWith('f')) continue;
      const r = o.awaitResult[i];
      const e = o.awaitElapsed[i];
      if (r === 'DEADLINE_EXCEEDED') onTime(e, 1000);
      else if (r !== 'OK') fail(`${k}'s request ${i} ended ${r}`);
      else ok(e <= 1000 + ms(250), `${k}'s request ${i} replied after ${e} ms`);
    }
  }
  ok(a.capacity().transitionsPaused >= 1, 'A was saturated');
  ok(b.capacity().transitionsPaused >= 1, 'B was saturated');
  for (const d of dd) {
    await expectDone(d, 5000);
    eq(d.result, 'OK', 'a flood one-way');
  }
  await eventually(() => a.capacity().permitsInUse === 0 && b.capacity().permitsInUse === 0 &&
    a.status().turnsRunning === 0 && b.status().turnsRunning === 0, 5000, 'nothing held');
  eq(a.capacity().pressureState, 0, 'A RUNNING');
  eq(b.capacity().pressureState, 0, 'B RUNNING');
  eq(oa.awaited, FLOOD, "A's awaits");
  eq(ob.awaited, FLOOD, "B's awaits");
  for (const [k, h] of [['A', a], ['B', b]]) {
    let dropped = 0n;
    for (const r of REASONS) dropped += h.metric('zlink.mesh_node.messages.dropped', r);
    eq(dropped, 0n, `dropped at ${k}`);
  }
  await hostEnd(c, a, b);
}

async function eachTransport(params, round) {
  for (const tr of transports(params)) await round(tr);
}

module.exports.cases = {
  ...require('./cases_jq_raw').cases,
  ...require('./cases_jq_pressure').cases,
  'JQ-01': independentProfiles,
  'JQ-08': require('./cases_jq08').boundedRotation,
  'JQ-02': (p) => eachTransport(p, permitAccounting),
  'JQ-03': (p) => eachTransport(p, (tr) => {
    if (tr !== 'tcp') fail(`JQ-03's raw peer lives in its own context: tcp only, not ${tr}`);
    return noReceiveWithoutPermit();
  }),
  'JQ-04': (p) => eachTransport(p, failedCheckLeavesNoTrace),
  'JQ-20': (p) => eachTransport(p, completionNeedsNoPermit),
  'JQ-21': require('./cases_sc').cases['SC-12'], // SC-12 run in the 001 suite (as in C)
  'JQ-05': (p) => eachTransport(p, saturatedIngress),
  'JQ-14': (p) => eachTransport(p, replyToPausedClient),
  'JQ-15': (p) => eachTransport(p, noHoldingWhileWaiting),
  'JQ-16': (p) => eachTransport(p, async (tr) => {
    const batch = param(p, 'batch');
    const sendMs = param(p, 'send_timeout_ms');
    const requestMs = param(p, 'request_timeout_ms');
    ok(batch > 0 && sendMs > 0 && requestMs > 0 && requestMs !== sendMs, 'parameters');
    await roomIsNotAnError(tr, 'mesh', batch, sendMs, requestMs);
    await roomIsNotAnError(tr, 'cs', batch, sendMs, requestMs);
    await roomIsNotAnError(tr, 'mesh', batch, requestMs, sendMs); // swapped
  }),
  'JQ-06': (p) => eachTransport(p, csBypassKeepsFifo),
  'JQ-07': (p) => eachTransport(p, (tr) => crossConnectionProgress(tr, param(p, 'oneways'), param(p, 'window'),
    param(p, 'requests'), param(p, 'timeout_ms'), param(p, 'p99_ms'))),
  'JQ-19': (p) => eachTransport(p, async (tr) => {
    for (const mode of ['mesh', 'cs']) await coreHwmBackpressure(mode, tr, param(p, 'records'), param(p, 'record_size'), param(p, 'window'));
  }),
  'JQ-22': (p) => noRetainedReceiveOrRetry(param(p, 'pending'), param(p, 'window_ms'), param(p, 'cpu_ppm_max')),
  'JQ-17': (p) => eachTransport(p, (tr) => fifoNeverRejects(tr, param(p, 'oneways'), param(p, 'window'))),
  'JQ-18': (p) => eachTransport(p, async (tr) => {
    await noHandlerOnlyRecorded(tr, 'mesh');
    await noHandlerOnlyRecorded(tr, 'cs');
  }),
};

// Cases this runner does not implement, with the reason its CASE line gives
// (none: JQ-08 is in cases_jq08.js).
module.exports.reasons = {};
