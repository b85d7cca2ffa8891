// cases_jq08.js — JQ-08, bounded receive rotation (conformance/c/jq_raw.c
// rotation_round(), check_runs(), jq08_bounded_rotation()) over the Node
// binding.
//
// Pre-queuing: B runs HANDLER_THREADS 1 (two host threads). Two blocker
// records, on channels "hold" and "hold2", put both threads into two
// blocking C handlers of the test-only Node-API helper (native/jq08_napi.c,
// registered on B's C host through Host#nativeHandle before B starts),
// because a JavaScript handler never holds a C thread. Then no thread is
// left to receive, B's permits stay unused (permitsInUse 0) and B stays
// RUNNING; over inproc a completed send is in B's Core queue, so once every
// send completed every record waits there when the gates open. The order
// observed is the one in which B's ingress hands turns to the JavaScript
// "svc" handler (the addon queues them to the event loop in that order),
// and every check of the C case is made on it.
'use strict';
const path = require('path');
const { ok, eq, eventually, settle, resultOf, fail, ms, param } = require('./check');
const { zlink, transports, endpoint } = require('./harness');

const BLOCKER = 0xffffffff;
const RUNNING = 0; // ZLINK_PRESSURE_RUNNING

// The helper, loaded once by absolute path ($ZLINK_JQ08_NAPI, set by the
// runner's launcher) and bound to the libzlink.so.1 the binding loaded.
let helper = null;
function loadHelper() {
  if (helper) return helper;
  const file = process.env.ZLINK_JQ08_NAPI;
  ok(file, '$ZLINK_JQ08_NAPI names the JQ-08 Node-API helper (the runner\'s launcher sets it)');
  ok(process.env.ZLINK_LIBRARY, '$ZLINK_LIBRARY names the libzlink.so.1 the binding loaded');
  new zlink.Host('probe').destroy(); // the binding has loaded its library
  const mod = { exports: {} };
  process.dlopen(mod, path.resolve(file));
  const why = mod.exports.init(path.resolve(process.env.ZLINK_LIBRARY));
  if (why !== null) fail(why);
  helper = mod.exports;
  return helper;
}

// What the "svc" handler saw, in arrival order: source index and sequence.
class Log {
  constructor(names, cap) {
    this.names = names.map((n) => Buffer.from(n));
    this.cap = cap;
    this.src = [];
    this.seq = [];
    this.bad = 0; // unknown source, short payload, overflow
  }
  record(turn) {
    const p = turn.payload;
    const s = this.names.findIndex((n) => n.equals(turn.source));
    if (s < 0 || p.length < 4 || this.src.length === this.cap) {
      this.bad++;
      return;
    }
    this.src.push(s);
    this.seq.push(p.readUInt32BE(0));
  }
  get n() {
    return this.src.length;
  }
}

// The runs of the log (maximal stretches from one source), as check_runs()
// of jq_raw.c: each source's records in its sending order; a run that
// started while another source still had records to come is at most maxRun
// long; with all three sources still sending (cyclic), the run after a stop
// comes from the next source, never again from one of the last two.
// Returns the longest run checked.
function checkRuns(l, nsrc, perSrc, maxRun, cyclic, what) {
  const left = new Array(nsrc).fill(perSrc);
  const next = new Array(nsrc).fill(0);
  let longest = 0, nruns = 0, prev0 = -1, prev1 = -1;
  for (let i = 0; i < l.n;) {
    const s = l.src[i];
    let others = 0, alive = 0;
    for (let k = 0; k < nsrc; k++) {
      if (left[k] > 0) alive++;
      if (k !== s && left[k] > 0) others++;
    }
    let j = i;
    while (j < l.n && l.src[j] === s) {
      if (l.seq[j] !== next[s]) fail(`${what}: record ${j} of source ${s} has seq ${l.seq[j]}, expected ${next[s]}`);
      next[s]++;
      j++;
    }
    const len = j - i;
    if (others > 0) {
      longest = Math.max(longest, len);
      if (len > maxRun) {
        fail(`${what}: source ${s} got ${len} consecutive records (records ${i}..${j - 1}) while another still had data; at most ${maxRun} expected`);
      }
    }
    if (cyclic && alive === nsrc && nsrc === 3 && prev1 >= 0 && (s === prev0 || s === prev1)) {
      const runs = [];
      for (let x = 0; x < l.n && runs.length < 12;) {
        let y = x;
        while (y < l.n && l.src[y] === l.src[x]) y++;
        runs.push(`${l.src[x]}x${y - x}`);
        x = y;
      }
      fail(`${what}: run ${nruns} (records ${i}..${j - 1}) is from source ${s} again, not the next socket after the last stop (first runs: ${runs.join(' ')})`);
    }
    prev1 = prev0;
    prev0 = s;
    left[s] -= Math.min(len, left[s]);
    nruns++;
    i = j;
  }
  for (let k = 0; k < nsrc; k++) eq(next[k], perSrc, `${what}: records of source ${k}`);
  return longest;
}

// A one-way to channel of h: seq (4 bytes BE) padded to size; resolves at admission.
async function sendSeq(h, channel, seq, size) {
  const p = Buffer.alloc(Math.max(4, size));
  p.writeUInt32BE(seq >>> 0, 0);
  eq(resultOf(await settle(h.sendToChannel(channel).payload('m', p, '').submit())), 'OK', `a one-way to ${channel}`);
}

// B: two host threads, a limit that never binds, the JavaScript "svc"
// handler and the two C blockers. layout 1: one mesh node "m" with the
// three clients as its peers (one ROUTER); layout 3: "m1".."m3", one per
// client (three ROUTERs, one channel). Each client pre-queues perSrc records
// of size bytes; then the gates open.
async function round(tr, layout, perSrc, size, maxRun, what) {
  const h = loadHelper();
  const names = ['A1', 'A2', 'A3'];
  const meshes = layout === 1 ? ['m', 'm', 'm'] : ['m1', 'm2', 'm3'];
  const hwm = perSrc * (size + 256) * 2 + (1 << 20);
  const log = new Log(names, 3 * perSrc);
  eq(h.reset(), 0, "the helper's gates reset (no thread waits at one)");

  const b = new zlink.Host('B', { HANDLER_THREADS: 1, MAX_QUEUED_JOBS: 1000000 });
  const a = [];
  try {
    for (let i = 0; i < layout; i++) {
      b.addMeshNode(meshes[i], 'B', endpoint(tr, 'jq08', meshes[i]));
      b.addMeshChannelServer(meshes[i], 'svc', 100);
      b.setMeshOption(meshes[i], 'RCVHWM', hwm * 3);
    }
    b.addMeshChannelServer(meshes[0], 'hold', 100);
    b.addMeshChannelServer(meshes[0], 'hold2', 100);
    b.handle({ channel: 'svc' }, 'send', 'm', (turn) => log.record(turn));
    eq(h.addBlocker(b.nativeHandle, 0, 'hold', 'm'), 0, 'the C blocker of "hold" registered');
    eq(h.addBlocker(b.nativeHandle, 1, 'hold2', 'm'), 0, 'the C blocker of "hold2" registered');
    b.start();
    const bound = meshes.slice(0, layout).map((m) => b.endpoint(m));

    for (let i = 0; i < 3; i++) {
      const ai = new zlink.Host(names[i]);
      a.push(ai);
      ai.addMeshNode(meshes[i], names[i]);
      ai.addMeshChannelClient(meshes[i], 'svc');
      if (i === 0) {
        ai.addMeshChannelClient(meshes[i], 'hold');
        ai.addMeshChannelClient(meshes[i], 'hold2');
      }
      ai.setMeshOption(meshes[i], 'SNDHWM', hwm);
      ai.setMeshOption(meshes[i], 'SEND_TIMEOUT', 60000n * 1000000n);
      ai.meshConnect(meshes[i], bound[layout === 1 ? 0 : i], 'B');
      ai.start();
      await eventually(() => ai.meshReadyPeers(meshes[i]) === 1, 5000, `${names[i]} sees B ready`);
    }
    for (let i = 0; i < layout; i++) {
      const want = layout === 1 ? 3 : 1;
      await eventually(() => b.meshReadyPeers(meshes[i]) === want, 5000, `B's ${meshes[i]} sees its peers ready`);
    }

    // The blockers hold both of B's threads: B receives nothing more.
    await sendSeq(a[0], 'hold', BLOCKER, 4);
    await eventually(() => h.waiting(0) === 1, 5000, 'one host thread of B waits in the "hold" blocker');
    await sendSeq(a[0], 'hold2', BLOCKER, 4);
    await eventually(() => h.waiting(1) === 1, 5000, 'the other host thread of B waits in the "hold2" blocker');
    // Pre-queue: the clients take turns, so that no client's records are
    // older than another's by more than one record.
    for (let k = 0; k < perSrc; k++) {
      for (let i = 0; i < 3; i++) await sendSeq(a[i], 'svc', k, size);
    }
    eq(log.n, 0, `${what}: records handled before the gates opened`);
    eq(b.capacity().permitsInUse, 0, `${what}: B's permits in use with every record queued`);
    eq(b.capacity().pressureState, RUNNING, `${what}: B's pressure state (RUNNING) with every record queued`);

    h.open(1);
    h.open(0);
    await eventually(() => log.n + log.bad >= 3 * perSrc, 30000, () => `the handler logged ${log.n} of ${3 * perSrc} records (bad ${log.bad})`);
    eq(log.bad, 0, `${what}: records with an unknown source or a short payload`);
    const longest = checkRuns(log, 3, perSrc, maxRun, layout === 3, what);
    let first = 0;
    while (first < log.n && log.src[first] === log.src[0]) first++;
    if (layout === 1 && longest > 1) fail(`${what}: peers of one ROUTER were not interleaved record by record (a run of ${longest})`);
    process.stdout.write(`# ${what} ${tr}: longest run ${longest} (first ${first})\n`);
    eq(h.passed(0) + h.passed(1), 2, 'blocker turns ended');
    await eventually(() => b.capacity().permitsInUse === 0, 5000, `${what}: B's permits back`);
    eq(log.n, 3 * perSrc, `${what}: records handled (each once)`);
    eq(log.bad, 0, `${what}: records with an unknown source or a short payload`);
    return longest;
  } finally {
    h.open(0); // a failed round must not leave B's threads held
    h.open(1);
    for (const ai of a) {
      await ai.shutdown(ms(2000));
      ai.destroy();
    }
    await b.shutdown(ms(2000));
    b.destroy();
  }
}

async function boundedRotation(p) {
  const perSrc = param(p, 'records');
  const small = param(p, 'small_size');
  const large = param(p, 'large_size');
  const largeRecords = param(p, 'large_records');
  ok(perSrc > 0 && small >= 4 && large >= 4 && largeRecords > 0, 'parameters in range');
  // The byte bound: a socket's batch ends once 1 MiB of payload came, so a
  // run is at most ceil(1 MiB / size) records.
  const byteRun = Math.ceil((1 << 20) / large);
  for (const tr of transports(p)) {
    await round(tr, 1, perSrc, small, 1, 'one ROUTER');
    const smallRun = await round(tr, 3, perSrc, small, 64, 'three sockets');
    const largeRun = await round(tr, 3, largeRecords, large, byteRun, 'three sockets, large');
    if (largeRun >= smallRun) fail(`runs of ${large}-byte records (${largeRun}) are not shorter than of ${small}-byte ones (${smallRun})`);
  }
}

module.exports = { boundedRotation };
