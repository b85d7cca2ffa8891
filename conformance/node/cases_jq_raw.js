// cases_jq_raw.js — JQ-09 and JQ-10 (conformance/c/jq_raw.c) over the
// Node binding's public API, with peers a framework host would never be
// (raw_peer.js). Raw peers live in a Core context of the case's own or
// speak ZMP over a plain TCP connection, so they reach a host over tcp
// only. (JQ-03 is in cases_jq.js next to JQ-02's owner, JQ-11..13 in
// cases_jq_pressure.js; JQ-08 prints missing, see cases_jq.js.)
'use strict';
const { ok, eq, eventually, settle, resultOf, ms, fail, param } = require('./check');
const { zlink, Gate } = require('./harness');
const { record, seqPayload, rawDealer, requestResult, RawZmp, F_CONTROL } = require('./raw_peer');

const tables = require('../../bindings/node/lib/tables');

const DROPPED = 'zlink.mesh_node.messages.dropped';
// A completion record's result by name, from the generated table.
const requestName = (v) => tables.FAMILIES.request.names[v] || `request result ${v}`;
const sendName = (v) => tables.FAMILIES.send_complete.names[v] || `send result ${v}`;
const JQ = 'zlink.host.application_job_queue.';

function host(name, maxJobs = 0, threads = 0) {
  const h = new zlink.Host(name);
  if (threads > 0) h.setOption('HANDLER_THREADS', threads);
  if (maxJobs > 0) h.setOption('MAX_QUEUED_JOBS', maxJobs);
  return h;
}

async function end(...hosts) {
  for (const h of hosts) {
    const st = h.state;
    if (st === 'SERVING' || st === 'DRAINING') await h.shutdown(ms(2000));
    h.destroy();
  }
}

function droppedAll(h) {
  let n = 0n;
  for (const r of ['reason=no_handler', 'reason=decode_error', 'reason=shutdown', 'reason=backpressure', 'reason=stale_target']) n += h.metric(DROPPED, r);
  return n;
}

// --------------------------------------------------------------- JQ-10

const BAD = ['undefined flag 0x10', 'an extra frame', 'no envelope', 'five frames'];

// The frames of malformed shape k (doc/protocol.md §14.7); a request when
// correlation != 0.
function badRecord(k, correlation, op) {
  const p = record(k === 0 ? 0x10 : 0x00, correlation, op, 'svc', 'bad');
  if (k === 1) return [p[0], p[1], Buffer.from('x')]; // frame count 3 without META
  if (k === 2) return [p[0]];
  if (k === 3) return [p[0], p[1], Buffer.from('x'), Buffer.from('x'), Buffer.from('x')];
  return p;
}

// B: a CS server "svc" with M = 1, so one permit that malformed input kept
// would stop B for good. A raw DEALER sends each malformed shape as a
// request (ProtocolError, no handler) and as a one-way (dropped as a
// decode error, no handler), then valid ones, which reach their handlers.
async function malformedInput() {
  const seen = { sends: 0, requests: 0 };
  const b = host('B', 1);
  b.addCsServer('svc', 'tcp://127.0.0.1:0');
  b.handle({ channel: 'svc' }, 'send', 'm', () => {
    seen.sends++;
  });
  b.handle({ channel: 'svc' }, 'request', 'm', (turn) => {
    seen.requests++;
    turn.respond('m', turn.payload, '');
  });
  b.start();
  const ep = b.endpoint('svc');
  const ctx = new zlink.Context();
  const d = rawDealer(ctx, 'raw', ep);
  const dropped0 = b.metric(DROPPED, 'reason=decode_error');
  const proto0 = b.metric('zlink.host.protocol_errors', '');
  for (let k = 0; k < BAD.length; k++) {
    const id = d.request(badRecord(k, 100 + k, 200 + k), { timeoutMs: ms(5000) });
    const r = await requestResult(d, id);
    eq(requestName(r), 'ZLINK_REQUEST_PROTOCOL_ERROR', `a request with ${BAD[k]}: its request_result`);
    d.send(badRecord(k, 0, 300 + k));
    const want = dropped0 + BigInt(k + 1);
    await eventually(() => b.metric(DROPPED, 'reason=decode_error') === want, 5000, `the one-way with ${BAD[k]} dropped as a decode error`);
    await eventually(() => b.capacity().permitsInUse === 0, 5000, 'the permit came back');
  }
  eq(b.metric('zlink.host.protocol_errors', ''), proto0 + BigInt(2 * BAD.length), 'protocol errors');
  eq(seen.sends + seen.requests, 0, 'handlers run by malformed records');
  // The same DEALER's valid records still reach their handlers: the single
  // permit came back after each malformed one.
  d.send(record(0, 0, 400, 'svc', 'ok'));
  const id = d.request(record(0, 401, 402, 'svc', 'ok'), { timeoutMs: ms(5000) });
  eq(requestName(await requestResult(d, id)), 'ZLINK_REQUEST_OK', "the valid request's result");
  await eventually(() => seen.sends === 1, 5000, 'the valid one-way handled');
  eq(seen.requests, 1, 'requests handled');
  eq(b.metric(DROPPED, 'reason=decode_error'), dropped0 + BigInt(BAD.length), 'decode-error drops');
  await eventually(() => b.capacity().permitsInUse === 0, 5000, "B's permits free");
  const c = b.capacity();
  eq(c.reservedSupplyPermits, 0, 'reserved supply permits');
  eq(c.queuedJobs, 0, 'queued jobs');
  d.close();
  ctx.close();
  await end(b);
}

// --------------------------------------------------------------- JQ-09

const BLOCKER = 0xffffffff;
const WARM = 0xfffffffe;

// What B's "svc" handler saw, in arrival order: the source (payload byte
// 4: a ClientServer turn's source is "") and the sequence (bytes 0..3).
class OrderLog {
  constructor(nsrc) {
    this.nsrc = nsrc;
    this.src = [];
    this.seq = [];
    this.bad = 0;
    this.warm = 0;
  }
  handler() {
    return (turn) => {
      const p = turn.payload;
      if (p.length < 5 || p[4] >= this.nsrc) {
        this.bad++;
        return;
      }
      const seq = p.readUInt32BE(0);
      if (seq === WARM) this.warm++;
      else {
        this.src.push(p[4]);
        this.seq.push(seq);
      }
    };
  }
}

// A raw ZMP DEALER to B's ClientServer endpoint ep, past its handshake.
async function rawCsPeer(ep, rid) {
  const r = await RawZmp.connect(ep);
  r.hello(zlink.SocketType.DEALER, rid);
  r.readyDealer(rid);
  const h = await r.next();
  ok(h && h.flags === F_CONTROL && h.body[0] === 0x01, `HELLO from B to ${rid}`);
  const rd = await r.next();
  ok(rd && rd.flags === F_CONTROL && rd.body[0] === 0x04, `READY from B to ${rid}`);
  return r;
}

const csRecord = (seq, src, size) => record(0, 0, 0, 'svc', seqPayload(seq, src, size));

// JQ-09 (the C body's structure, jq_raw.c; what differs and why is in the
// notes). B: a CS server "svc" over tcp, M = 1, RCVHWM hwm (bytes, per
// pipe) and a logging handler; P1 and P2 are raw ZMP peers of "svc".
//
// Pre-queuing without holding a thread: a Node handler never holds one of
// B's host threads (its turn reaches JavaScript as an event), so the C
// body's two thread-holding blockers cannot exist here. Instead B's only
// permit is taken: X, a CS client of B's second server "hold", sends two
// one-ways to a gated owner; the first waits at the gate (its permit went
// back at its start), the second waits behind it as a queued job holding
// the permit. B's ingress then has no permit, receives nothing more, and
// B is PAUSED, so it asks its peers to stop sending. Core peers would obey
// (their sends would be refused for the pause, not for a full pipe), so
// P1 and P2 speak ZMP themselves and ignore the pause: their records land
// in B's Core receive queue, which zlink.host.core_hwm.accounted{state=
// receive} shows (the bytes B's Core holds from its peers).
//
// Differences from the C assertions: (1) P1's "refusal" is TCP's: B's Core
// stops reading P1's connection once P1's pipe holds the HWM, so P1's
// kernel buffers fill and its writes stay queued with no drain for 100 ms
// (the C peer's DONTWAIT send is BACKPRESSURED); (2) P2's sends "admitted
// at once" are shown in B's Core: the accounted bytes grow by at least
// P2's payloads while P1 stays blocked (the C peer's DONTWAIT sends return
// OK and its monitor shows nothing pending); (3) before open B holds one
// permit (the queued blocker) and is PAUSED, where the C B holds none and
// stays RUNNING. The order check after open is the C body's.
async function perPeerAccounting(hwm, size, p2Records) {
  const log = new OrderLog(2);
  const gate = new Gate();
  const b = host('B', 1, 1);
  b.addCsServer('svc', 'tcp://127.0.0.1:0');
  b.setChannelOption('svc', 'RCVHWM', hwm);
  b.addCsServer('hold', 'tcp://127.0.0.1:0');
  b.handle({ channel: 'svc' }, 'send', 'm', log.handler());
  b.handle({ channel: 'hold' }, 'send', 'm', () => gate.pass());
  b.start();
  const ep = b.endpoint('svc');
  const holdEp = b.endpoint('hold');
  const acc = () => b.metric('zlink.host.core_hwm.accounted', 'state=receive');

  const p1 = await rawCsPeer(ep, 'P1');
  const p2 = await rawCsPeer(ep, 'P2');
  // Both connected and their records understood: a record of each reached
  // the handler.
  p1.sendRecord(csRecord(WARM, 0, 5));
  p2.sendRecord(csRecord(WARM, 1, 5));
  await eventually(() => log.warm === 2, 5000, 'the warm-up records handled');
  eq(log.bad, 0, 'records with an unknown source or a short payload');
  await eventually(() => b.capacity().permitsInUse === 0, 5000, "B's permit free after the warm-up");

  // The blockers take B's only permit.
  const x = host('X');
  x.addCsClient('hold', holdEp);
  x.start();
  const blocker = async (tag) => resultOf(await settle(x.sendToChannel('hold').payload('m', seqPayload(BLOCKER, 2, 5), '').submit()));
  eq(await blocker('b1'), 'OK', 'blocker 1');
  await eventually(() => gate.waiting === 1, 5000, 'blocker 1 at the gate');
  eq(await blocker('b2'), 'OK', 'blocker 2');
  await eventually(() => {
    const c = b.capacity();
    return c.queuedJobs === 1 && c.permitsInUse === 1 && c.pressureState === 1;
  }, 5000, "blocker 2 queued with B's permit, B PAUSED");
  // B told its peers PAUSED; they ignore it.
  for (const [name, r] of [['P1', p1], ['P2', p2]]) {
    eq(await r.lastFlowState(100), 1, `${name} was told PAUSED last`);
  }
  const acc0 = acc();

  // P1 fills its pipe: it writes until its writes queue in this process,
  // and again after each drain, until no drain comes for 100 ms: B's Core
  // reads P1 no more (its pipe holds the HWM) and the kernel buffers are
  // full.
  let p1Sent = 0;
  for (;;) {
    ok(p1Sent < 1000000, 'P1 filled its pipe');
    const room = p1.sendRecord(csRecord(p1Sent, 0, size));
    p1Sent++;
    if (!room && !(await p1.drained(100))) break;
  }
  const p1Queued = p1.s.writableLength;
  ok(p1Queued > 0, "P1's last writes wait in this process");
  await eventually(async () => {
    const a = acc();
    await new Promise((r) => setTimeout(r, 20));
    return acc() === a;
  }, 5000, "B's Core stops taking P1's records");
  const acc1 = acc();
  ok(acc1 - acc0 >= BigInt(hwm), `B's Core holds P1's pipe: ${acc1 - acc0} bytes, the HWM ${hwm}`);

  // P2, another peer of the same ROUTER, is taken at once.
  for (let i = 0; i < p2Records; i++) ok(p2.sendRecord(csRecord(i, 1, size)), `P2's record ${i} went to the kernel at once`);
  await eventually(() => acc() - acc1 >= BigInt(p2Records * size), 5000,
    () => `P2's records in B's Core (accounted grew by ${acc() - acc1} bytes, at least ${p2Records * size} expected)`);
  eq(p2.s.writableLength, 0, "P2's records all left P2");
  // P1 is still refused: B's Core takes no more of it beside P2 (its
  // kernel buffers may still take a little of its queue, which is not B's
  // refusal: the check is on B's Core, the per-peer mark).
  await eventually(async () => {
    const a = acc();
    await new Promise((r) => setTimeout(r, 20));
    return acc() === a;
  }, 5000, "B's Core has taken all of P2's records");
  const acc2 = acc();
  await p1.drained(100);
  eq(acc(), acc2, "B's Core bytes after 100 ms more of P1's sending (P1 refused at its pipe's mark)");
  eq(log.src.length, 0, 'records handled before open');
  const c = b.capacity();
  eq(c.permitsInUse, 1, "B's permits in use (the queued blocker)");
  eq(c.pressureState, 1, 'B PAUSED');
  ok(c.capacityWaiters >= 1, "B's ingress waits for a permit with records there");

  gate.openGate();
  const total = p1Sent + p2Records;
  await eventually(() => log.src.length === total, 30000, () => `handlers logged ${log.src.length} of ${total} records`);
  eq(log.bad, 0, 'records with an unknown source or a short payload');
  // Both sources in their sending order; while P2 has records left, the
  // two take turns: no source twice in a row.
  const next = [0, 0];
  let p2Left = p2Records;
  for (let i = 0; i < log.src.length; i++) {
    const s = log.src[i];
    if (log.seq[i] !== next[s]) fail(`record ${i} of ${['P1', 'P2'][s]} has seq ${log.seq[i]}, expected ${next[s]}`);
    next[s]++;
    if (p2Left > 0 && i > 0 && log.src[i - 1] === s) fail(`record ${i}: ${['P1', 'P2'][s]} twice in a row while P2 still had ${p2Left} records`);
    if (s === 1) p2Left--;
  }
  process.stdout.write(`# P1 sent ${p1Sent} before its pipe was full (${acc1 - acc0} bytes in B's Core); first handled after open: ${['P1', 'P2'][log.src[0]]}\n`);
  await eventually(() => b.capacity().permitsInUse === 0, 5000, "B's permit free");
  eq(droppedAll(b), 0n, "B's dropped records");
  p1.close();
  p2.close();
  await end(x, b);
}

module.exports = {
  cases: {
    'JQ-09': (p) => perPeerAccounting(param(p, 'hwm'), param(p, 'record_size'), param(p, 'p2_records')),
    'JQ-10': () => malformedInput(),
  },
};
