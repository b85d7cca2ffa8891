// cases_jq.js — the JQ cases (seed 001 §10), ported from conformance/c/
// jq_*.c to the Node binding's public API.
'use strict';
const { ok, eq, eventually, settle, resultOf, ms } = require('./check');
const { zlink, transports, endpoint } = require('./harness');

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

async function eachTransport(params, round) {
  for (const tr of transports(params)) await round(tr);
}

module.exports.cases = {
  'JQ-04': (p) => eachTransport(p, failedCheckLeavesNoTrace),
};
