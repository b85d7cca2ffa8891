// cases_jq_raw.js — the JQ cases that need peers a framework host would
// never be (raw_peer.js): JQ-03 (jq_permits.c), JQ-08, JQ-09, JQ-10
// (jq_raw.c), JQ-11, JQ-12, JQ-13 (jq_pressure.c), over the Node
// binding's public API. Raw peers live in a Core context of the case's
// own, so they reach a host over tcp only.
'use strict';
const { ok, eq, eventually, settle, resultOf, ms, fail } = require('./check');
const { zlink, Gate, endpoint } = require('./harness');
const { record, seqPayload, rawDealer, nextCompletion, requestResult, submitOf, RawZmp, Wire } = require('./raw_peer');

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

module.exports = { cases: { 'JQ-10': () => malformedInput() } };
