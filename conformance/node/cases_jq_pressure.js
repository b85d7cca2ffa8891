// cases_jq_pressure.js — JQ-11, JQ-12 and JQ-13 (conformance/c/
// jq_pressure.c) over the Node binding's public API.
//
// The host H under test is a framework host; what looks at its sockets is
// outside it and public: an "observer" is a plain Core DEALER of the
// case's own context connected to one of H's ROUTERs, whose monitor status
// tells whether that ROUTER asks its peers to pause
// (flowPausedConnections); a raw ZMP peer (raw_peer.js) reads the
// FLOWSTATE frames H sends and can send a record while paused.
//
// How jobs are held: H's handler awaits a turnstile that lets one turn
// through per token, so a case raises H's queued jobs one one-way at a
// time and lowers them one token at a time. The first record's turn waits
// at the turnstile (its permit went back at the turn's start); each later
// one waits in the channel's serial gate as a queued job with a permit. A
// Node handler holds no host thread while it waits: its turn stays open
// until its Promise settles, which is what keeps the owner busy.
// tcp only: the observers live in a context of their own.
'use strict';
const { ok, eq, eventually, settle, resultOf, ms, fail } = require('./check');
const { zlink } = require('./harness');
const { RawZmp, F_CONTROL, zmpFrame, submitOf } = require('./raw_peer');

const JQ = 'zlink.host.application_job_queue.';
const DROPPED = 'zlink.mesh_node.messages.dropped';

// One turn through per token.
class Turnstile {
  constructor() {
    this.tokens = 0;
    this.inside = 0;
    this.passed = 0;
    this.waiters = [];
  }
  handler() {
    return async () => {
      if (this.tokens === 0) {
        this.inside++;
        await new Promise((r) => this.waiters.push(r));
        this.inside--;
      } else this.tokens--;
      this.passed++;
    };
  }
  give(n) {
    this.tokens += n;
    while (this.tokens > 0 && this.waiters.length > 0) {
      this.tokens--;
      this.waiters.shift()();
    }
  }
}

// A Core DEALER of ctx connected to ep; its monitor's view.
class Observer {
  constructor(ctx, ep) {
    this.sock = ctx.socket('DEALER');
    this.sock.setOption('LINGER', 0);
    this.sock.connect(ep);
  }
  status() {
    zlink.poll([{ socket: this.sock, events: zlink.Poll.IN }], 0); // the socket takes its commands
    const st = this.sock.pendingStatus();
    ok((st.detailFlags & zlink.MonitorDetail.FLOW_STATE) !== 0, 'the monitor reports the flow state');
    return st;
  }
  ready() {
    return (this.status().stateFlags & zlink.MonitorState.READY) !== 0;
  }
  paused() {
    return Number(this.status().flowPausedConnections);
  }
  close() {
    this.sock.close();
  }
}

function meshHost(name, maxJobs, t) {
  const h = new zlink.Host(name);
  if (maxJobs > 0) h.setOption('MAX_QUEUED_JOBS', maxJobs);
  h.addMeshNode('m', name, 'tcp://127.0.0.1:0');
  if (t) {
    h.addMeshChannelServer('m', 'svc', 100);
    h.handle({ channel: 'svc' }, 'send', 'm', t.handler());
  }
  return h;
}

async function meshClient(name, ep, h) {
  const c = new zlink.Host(name);
  c.addMeshNode('m', name);
  c.addMeshChannelClient('m', 'svc');
  c.setMeshOption('m', 'SEND_TIMEOUT', 30000n * 1000000n);
  c.meshConnect('m', ep, 'H');
  c.start();
  await eventually(() => c.meshReadyPeers('m') === 1, 5000, `${name}'s peer ready`);
  await eventually(() => h.meshReadyPeers('m') >= 1, 5000, "H's peer ready");
  return c;
}

async function oneway(c, chan, tag) {
  return resultOf(await settle(c.sendToChannel(chan || 'svc').payload('m', tag, '').submit()));
}

async function end(...hosts) {
  for (const h of hosts) {
    const st = h.state;
    if (st === 'SERVING' || st === 'DRAINING') await h.shutdown(ms(2000));
    h.destroy();
  }
}

// --------------------------------------------------------------- JQ-11

// H's state at q queued: the host's view, its metric series, and the
// ROUTER's as the observer sees it.
async function expectState(h, obs, q, want) {
  const got = h.capacity().pressureState;
  if (got !== want) fail(`queued ${q}: pressure state ${got}, expected ${want}`);
  const paused = want === 1;
  eq(h.metric(`${JQ}pressure_state`, 'state=paused'), paused ? 1n : 0n, 'state=paused series');
  eq(h.metric(`${JQ}pressure_state`, 'state=running'), paused ? 0n : 1n, 'state=running series');
  await eventually(() => obs.paused() === (paused ? 1 : 0), 5000, `the peer sees ${paused ? 'PAUSED' : 'RUNNING'} at ${q} queued`);
}

// Waits until H holds q queued jobs (and q permits) with one turn at the
// turnstile.
async function expectQueued(h, t, q) {
  await eventually(() => {
    const c = h.capacity();
    return t.inside === 1 && c.queuedJobs === q && c.permitsInUse === q;
  }, 5000, () => `${q} queued jobs with one turn at the turnstile (inside ${t.inside}, queued ${h.capacity().queuedJobs}, in use ${h.capacity().permitsInUse})`);
}

async function hysteresis(ctx, m, pause, resume) {
  const t = new Turnstile();
  const h = meshHost('H', m, t);
  h.start();
  const ep = h.endpoint('m');
  eq(h.capacity().pauseCount, pause, `M = ${m}: pause count`);
  eq(h.capacity().resumeCount, resume, `M = ${m}: resume count`);
  const cl = await meshClient('C', ep, h);
  const obs = new Observer(ctx, ep);
  await eventually(() => obs.ready(), 5000, 'the observer connected');

  eq(await oneway(cl, null, 'j0'), 'OK', 'j0');
  await expectQueued(h, t, 0);
  const tp = h.capacity().transitionsPaused;
  const tr = h.capacity().transitionsRunning;
  if (pause === 1) ok(tp >= 1, 'M = 1: the control records paused the host');
  else eq(tp, 0, 'paused transitions before the case');
  eq(tr, tp, 'running transitions before the case');
  await expectState(h, obs, 0, 0);
  for (let q = 1; q <= pause; q++) {
    eq(await oneway(cl, null, `j${q}`), 'OK', `j${q}`);
    await expectQueued(h, t, q);
    await expectState(h, obs, q, q >= pause ? 1 : 0);
  }
  eq(h.capacity().transitionsPaused, tp + 1, 'paused transitions');
  eq(h.capacity().transitionsRunning, tr, 'running transitions');
  eq(h.metric(`${JQ}pressure_transitions`, 'state=paused'), BigInt(tp + 1), 'pressure_transitions{paused}');
  for (let q = pause - 1; q >= resume; q--) {
    const passed = t.passed;
    t.give(1);
    await eventually(() => t.passed === passed + 1, 5000, 'one turn through');
    await expectQueued(h, t, q);
    await expectState(h, obs, q, q <= resume ? 0 : 1);
  }
  eq(h.capacity().transitionsPaused, tp + 1, 'paused transitions');
  eq(h.capacity().transitionsRunning, tr + 1, 'running transitions');
  eq(h.metric(`${JQ}pressure_transitions`, 'state=running'), BigInt(tr + 1), 'pressure_transitions{running}');
  eq(await oneway(cl, null, 'again'), 'OK', 'again');
  await expectQueued(h, t, resume + 1);
  const again = resume + 1 >= pause;
  await expectState(h, obs, resume + 1, again ? 1 : 0);
  eq(h.capacity().transitionsPaused, tp + 1 + (again ? 1 : 0), 'paused transitions');
  eq(h.capacity().transitionsRunning, tr + 1, 'running transitions');
  eq(h.capacity().flowStateConfigFailures, 0, 'flow-state config failures');
  t.give(1 << 20);
  obs.close();
  await end(cl, h);
}

// --------------------------------------------------------------- JQ-12

// Part 1: H (a CS server, M = 2) is PAUSED; a peer that connects now is
// told PAUSED right after its handshake, before it sent anything, and a
// record it sends anyway stays in the Core, unreceived, until H has room.
async function newPeerPaused(ctx) {
  const t = new Turnstile();
  const h = new zlink.Host('H');
  h.setOption('MAX_QUEUED_JOBS', 2);
  h.addCsServer('cs', 'tcp://127.0.0.1:0');
  h.handle({ channel: 'cs' }, 'send', 'm', t.handler());
  h.start();
  const ep = h.endpoint('cs');
  const cl = new zlink.Host('C');
  cl.addCsClient('cs', ep);
  cl.start();
  for (let i = 0; i < 3; i++) {
    eq(await oneway(cl, 'cs', `p${i}`), 'OK', `one-way p${i}`);
    if (i === 0) await eventually(() => t.inside === 1, 5000, 'p0 in the turnstile');
  }
  await eventually(() => h.capacity().queuedJobs === 2, 5000, 'H holds two queued jobs');
  eq(h.capacity().pressureState, 1, 'H paused');
  const dropped = h.metric(DROPPED, 'reason=decode_error');

  const obs = new Observer(ctx, ep);
  await eventually(() => obs.paused() === 1, 5000, 'a new Core peer sees PAUSED');
  ok(submitOf(() => obs.sock.send(['k'], { dontwait: true })).result !== 'OK', 'the paused Core peer holds its record back');

  const raw = await RawZmp.connect(ep);
  raw.hello(zlink.SocketType.DEALER, 'raw');
  raw.readyDealer('raw');
  let f = await raw.next();
  ok(f && f.flags === F_CONTROL && f.body[0] === 0x01, 'HELLO from H');
  f = await raw.next();
  ok(f && f.flags === F_CONTROL && f.body[0] === 0x04, 'READY from H');
  f = await raw.next();
  eq(RawZmp.flowstate(f), 1, "the raw peer's first frame after READY: FLOWSTATE PAUSED");
  raw.send(zmpFrame(0, Buffer.from('ignores the pause')));
  await eventually(() => h.metric('zlink.host.core_hwm.accounted', 'state=receive') > 0n, 5000, "the raw record waits in H's Core queue");
  eq(h.capacity().queuedJobs, 2, "H's queued jobs");
  eq(h.capacity().permitsInUse, 2, "H's permits in use");
  eq(h.metric(DROPPED, 'reason=decode_error'), dropped, 'decode-error drops');

  t.give(1 << 20);
  await eventually(() => t.passed === 3, 5000, 'the held jobs ran');
  await eventually(() => h.metric(DROPPED, 'reason=decode_error') === dropped + 1n, 5000, 'the raw record dropped as malformed');
  await eventually(() => h.capacity().pressureState === 0, 5000, 'H running');
  await eventually(() => obs.paused() === 0, 5000, 'the Core peer sees RUNNING');
  let running = false;
  const until = Date.now() + ms(5000);
  while (!running && Date.now() < until) {
    const g = await raw.next(Math.max(1, until - Date.now()));
    if (g === null) break;
    running = RawZmp.flowstate(g) === 0;
  }
  ok(running, 'the raw peer was told RUNNING too');
  eq(h.capacity().flowStateConfigFailures, 0, 'flow-state config failures');
  raw.close();
  obs.close();
  await end(cl, h);
}

// A sender of part 2: n one-ways from c to chan, one after another.
function sender(c, chan, n) {
  const s = { sent: 0, failed: 0, stop: false };
  s.done = (async () => {
    for (let i = 0; i < n && !s.stop; i++) {
      if ((await oneway(c, chan, 't')) === 'OK') s.sent++;
      else s.failed++;
    }
  })();
  return s;
}

// Part 2: H (M = 1, a mesh node and a CS server, handlers that never
// wait) toggles PAUSED/RUNNING once each way per record: 1,000 records
// from two senders. Peer sockets of H's ROUTERs open and close meanwhile;
// in the second run H itself shuts down mid-toggle.
async function toggles(ctx, shutdownMid) {
  const per = 500;
  const t = new Turnstile();
  t.give(1 << 30);
  const h = meshHost('H', 1, t);
  h.addCsServer('cs', 'tcp://127.0.0.1:0');
  h.handle({ channel: 'cs' }, 'send', 'm', t.handler());
  h.start();
  const mep = h.endpoint('m');
  const cep = h.endpoint('cs');
  const mc = await meshClient('C1', mep, h);
  const cc = new zlink.Host('C2');
  cc.addCsClient('cs', cep);
  cc.setChannelOption('cs', 'SEND_TIMEOUT', 30000n * 1000000n);
  cc.start();
  eq(await oneway(cc, 'cs', 'warm'), 'OK', 'warm');
  await eventually(() => t.passed === 1, 5000, 'warm handled');
  await eventually(() => h.capacity().permitsInUse === 0 && h.capacity().pressureState === 0, 5000, 'H at rest');
  const c0 = h.capacity();
  const s = [sender(mc, 'svc', per), sender(cc, 'cs', per)];
  const keep = [new Observer(ctx, mep), new Observer(ctx, cep)];
  let churn = 0;
  const churnEnd = Date.now() + ms(30000);
  while (t.passed < 1 + (shutdownMid ? 200 : 2 * per)) {
    if (Date.now() > churnEnd) fail(`H handled ${t.passed - 1} of the ${2 * per} records within ${ms(30000)} ms`);
    const o = new Observer(ctx, churn % 2 === 0 ? mep : cep);
    await eventually(() => o.ready(), 5000, 'a churning observer connected');
    o.close();
    churn++;
  }
  if (shutdownMid) {
    await h.shutdown(ms(2000));
    eq(h.state, 'STOPPED', "H's state");
    const c = h.capacity();
    ok(c.transitionsPaused >= 200 && c.transitionsPaused - c.transitionsRunning <= 1,
      `H toggled (${c.transitionsPaused} paused, ${c.transitionsRunning} running)`);
    eq(c.flowStateConfigFailures, 0, 'flow-state config failures');
    for (const x of s) x.stop = true;
    await mc.shutdown(ms(2000));
    await cc.shutdown(ms(2000));
    for (const x of s) await x.done;
    ok(s[0].sent + s[1].sent >= 200, 'the senders sent 200 or more');
  } else {
    for (const x of s) {
      await x.done;
      eq(x.failed, 0, "a sender's failures");
      eq(x.sent, per, "a sender's one-ways");
    }
    await eventually(() => t.passed === 1 + 2 * per, 10000, 'every record handled');
    await eventually(() => h.capacity().permitsInUse === 0, 5000, "H's permits free");
    const c = h.capacity();
    eq(c.transitionsPaused - c0.transitionsPaused, 2 * per, 'paused transitions');
    eq(c.transitionsRunning - c0.transitionsRunning, 2 * per, 'running transitions');
    eq(c.pressureState, 0, 'H running');
    await eventually(() => keep[0].paused() === 0 && keep[1].paused() === 0, 5000, 'the live peers see RUNNING');
    const late = new Observer(ctx, mep);
    await eventually(() => late.ready(), 5000, 'a late observer connected');
    eq(late.paused(), 0, "a late peer's view");
    late.close();
    eq(c.flowStateConfigFailures, 0, 'flow-state config failures');
    ok(churn > 0, 'observers churned');
    eq(h.metric(DROPPED, 'reason=no_handler'), 0n, 'no-handler drops');
  }
  process.stdout.write(`# toggles${shutdownMid ? ' (shutdown mid-toggle)' : ''}: ${churn} observers churned, ${h.capacity().transitionsPaused - c0.transitionsPaused} pauses\n`);
  keep[0].close();
  keep[1].close();
  await end(mc, cc, h);
}

// --------------------------------------------------------------- JQ-13

// H has a mesh ROUTER (node "m", serving "svc"), a CS server ROUTER ("cs")
// and a CS client DEALER ("out") connected to S, a plain Core ROUTER of
// the case. Saturated (M = 2, gated), H pauses both ROUTERs, as their
// peers see, and never gives the DEALER a flow state.
async function flowStateSockets() {
  const ctx = new zlink.Context();
  const srv = ctx.socket('ROUTER');
  srv.setOption('LINGER', 0);
  srv.bind('tcp://127.0.0.1:0');
  const sep = srv.getOption('LAST_ENDPOINT').toString().replace(/\0+$/, '');
  const sstatus = () => {
    zlink.poll([{ socket: srv, events: zlink.Poll.IN }], 0);
    const st = srv.pendingStatus();
    ok((st.detailFlags & zlink.MonitorDetail.FLOW_STATE) !== 0, "S's monitor reports the flow state");
    return st;
  };
  const t = new Turnstile();
  const h = meshHost('H', 2, t);
  h.addCsServer('cs', 'tcp://127.0.0.1:0');
  h.handle({ channel: 'cs' }, 'send', 'm', t.handler());
  h.addCsClient('out', sep);
  h.start();
  const mep = h.endpoint('m');
  const cep = h.endpoint('cs');
  const om = new Observer(ctx, mep);
  const oc = new Observer(ctx, cep);
  await eventually(() => om.ready() && oc.ready(), 5000, 'the observers connected');
  await eventually(() => (sstatus().stateFlags & zlink.MonitorState.READY) !== 0, 5000, "H's DEALER connected to S");

  const cl = await meshClient('C', mep, h);
  for (let i = 0; i < 3; i++) {
    eq(await oneway(cl, null, `s${i}`), 'OK', `one-way s${i}`);
    if (i === 0) await eventually(() => t.inside === 1, 5000, 's0 in the turnstile');
  }
  await eventually(() => h.capacity().queuedJobs === 2, 5000, 'H holds two queued jobs');
  eq(h.capacity().pressureState, 1, 'H paused');
  await eventually(() => om.paused() === 1 && oc.paused() === 1, 5000, 'both ROUTERs pause their peers');
  let st = sstatus();
  eq(st.flowPausedConnections, 0n, "S's paused connections");
  eq(st.flowPauseAppliedTotal, 0n, 'PAUSED transitions applied at S');
  eq(await oneway(h, 'out', 'out'), 'OK', "H's one-way to S while paused");
  let rec = null;
  await eventually(() => {
    try {
      rec = srv.routerRecv({ dontwait: true, capacity: 4 });
      return true;
    } catch (e) {
      if (e.result !== 'ZLINK_RECV_NO_DATA') throw e;
      return false;
    }
  }, 5000, "S received H's record");
  ok(rec.parts.length >= 1, "S received H's record");
  eq(h.capacity().pressureState, 1, 'H still paused');
  eq(sstatus().flowPauseAppliedTotal, 0n, 'PAUSED transitions applied at S');
  eq(h.capacity().flowStateConfigFailures, 0, "H's flow-state config failures");

  t.give(1 << 20);
  await eventually(() => h.capacity().pressureState === 0, 5000, 'H running');
  await eventually(() => om.paused() === 0 && oc.paused() === 0, 5000, 'both ROUTERs resume their peers');
  st = sstatus();
  eq(st.flowPauseAppliedTotal, 0n, 'PAUSED transitions applied at S');
  eq(st.flowResumeAppliedTotal, 0n, 'RUNNING transitions applied at S');
  om.close();
  oc.close();
  await end(cl, h);
  srv.close();
  ctx.close();
}

async function withContext(body) {
  const ctx = new zlink.Context();
  await body(ctx); // a failure ends the case's process, context and all
  ctx.close();
}

module.exports.cases = {
  'JQ-11': () => withContext(async (ctx) => {
    await hysteresis(ctx, 10, 8, 6);
    await hysteresis(ctx, 1, 1, 0);
    await hysteresis(ctx, 17, 14, 10);
  }),
  'JQ-12': () => withContext(async (ctx) => {
    await newPeerPaused(ctx);
    await toggles(ctx, false);
    await toggles(ctx, true);
  }),
  'JQ-13': () => flowStateSockets(),
};
