// harness.js — the SC / JQ cases' default harness in JavaScript, a port of
// conformance/c/sc.h and sc_harness.c over the Node binding's public API.
//
// A case builds hosts in this process: A (the caller) and servers (B, or S1
// and S2). In 'mesh' mode every host is a node of mesh "m" with its name as
// routing id; a server listens and serves channel "svc" (at a weight), A
// connects to each server and is a client of "svc". In 'cs' mode a server
// is a ClientServer server of "svc" and A a client naming every server.
//
// Server handlers (packet "m" send and request, "ping", "sync") run on the
// JavaScript thread. A gated handler awaits the server's gate before it
// records its payload's tag (the text up to the first NUL), so its turn
// stays open meanwhile, as the C handler's blocked worker keeps its turn.
// Reply modes as in C: 'now' (echo the tag), 'hold' (take the reply call
// and keep it), 'delay' (answer later from a timer), 'fail' (end the turn
// failed).
'use strict';
const zlink = require('../../bindings/node/lib');
const { ok, eq, eventually, deferred, settle, resultOf, param, ms } = require('./check');

let seq = 0;
function endpoint(tr, tag, name) {
  if (tr === 'tcp') return 'tcp://127.0.0.1:0';
  return `inproc://sc-${tag}-${name}-${process.pid}-${++seq}`;
}

function transports(params) {
  const t = param(params, 'transports');
  ok(Array.isArray(t) && t.length > 0, 'the "transports" parameter is a non-empty array');
  return t;
}

class Gate {
  constructor() {
    this.open = false;
    this.waiting = 0;
    this._d = deferred();
  }
  async pass() {
    if (this.open) return;
    this.waiting++;
    await this._d.promise;
    this.waiting--;
  }
  openGate() {
    this.open = true;
    this._d.resolve();
  }
  close() {
    this.open = false;
    this._d = deferred();
  }
}

function tagOf(buf) {
  const z = buf.indexOf(0);
  return buf.subarray(0, z < 0 ? Math.min(buf.length, 31) : Math.min(z, 31)).toString('utf8');
}

class Server {
  constructor({ name, weight = 100, maxJobs = 0, hwm = 0, zeroChannel = false } = {}) {
    Object.assign(this, { name, weight, maxJobs, hwm, zeroChannel });
    this.gated = false;
    this.replyMode = 'now';
    this.delayMin = 0;
    this.delayMax = 0;
    this.gate = new Gate();
    this.rec = [];
    this.pings = 0;
    this.held = [];
    this.syncRan = 0;
    this.syncSurface = null;
  }
  recCount() {
    return this.rec.length;
  }
  recHas(tag) {
    return this.rec.filter((t) => t === tag).length;
  }
  addHandlers(owner) {
    const h = this.h;
    h.handle(owner, 'send', 'm', async (turn) => {
      if (this.gated) await this.gate.pass();
      this.rec.push(tagOf(turn.payload));
    });
    h.handle(owner, 'request', 'm', async (turn) => {
      if (this.gated) await this.gate.pass();
      const tag = tagOf(turn.payload);
      this.rec.push(tag);
      if (this.replyMode === 'fail') throw new Error('cancelled timeout'); // the text must not decide
      const reply = turn.reply().payload('echo', Buffer.from(tag), '');
      if (this.replyMode === 'now') reply.submit().catch(() => {});
      else if (this.replyMode === 'hold') this.held.push({ reply, tag });
      else {
        const span = this.delayMax - this.delayMin + 1;
        const delay = this.delayMin + Math.floor(Math.random() * span);
        // Started with no completion function, as the C harness does:
        // nobody waits on a delayed reply's admission.
        setTimeout(() => {
          try {
            reply.submitDetached();
          } catch (e) {
            /* refused (the host is shutting down): nothing to answer */
          }
        }, delay);
      }
    });
    // "sync": Node has no synchronous terminator (seed 000 §4.1); the
    // handler records what a call object offers instead.
    h.handle(owner, 'send', 'sync', () => {
      const c = this.mode === 'mesh' ? this.h.sendToNode('m', 'A') : this.h.sendToChannel('svc');
      this.syncSurface = syncTerminators(c);
      this.syncRan++;
    });
    h.handle(owner, 'request', 'ping', (turn) => {
      this.pings++;
      turn.respond('pong', Buffer.from(this.name), '');
    });
  }
  open(mode, tr, tag) {
    this.mode = mode;
    const ep = endpoint(tr, tag, this.name);
    this.h = new zlink.Host(this.name);
    if (this.maxJobs > 0) this.h.setOption('MAX_QUEUED_JOBS', this.maxJobs);
    const sock = mode === 'mesh' ? 'm' : 'svc';
    if (mode === 'mesh') {
      this.h.addMeshNode('m', this.name, ep);
      this.h.addMeshChannelServer('m', 'svc', this.weight);
      if (this.zeroChannel) this.h.addMeshChannelServer('m', 'zero', 0);
      this.addHandlers({ channel: 'svc' });
      this.addHandlers({ node: 'm' });
    } else {
      this.h.addCsServer('svc', ep);
      this.addHandlers({ channel: 'svc' });
    }
    if (this.hwm > 0) {
      const set = mode === 'mesh' ? 'setMeshOption' : 'setChannelOption';
      this.h[set](sock, 'SNDHWM', this.hwm);
      this.h[set](sock, 'RCVHWM', this.hwm);
    }
    this.h.start();
    this.bound = this.h.endpoint(sock);
    return this;
  }
  takeHeld(tag) {
    const i = this.held.findIndex((x) => x.tag === tag);
    if (i < 0) return null;
    return this.held.splice(i, 1)[0].reply;
  }
  async close() {
    this.gate.openGate();
    const st = this.h.state;
    if (st === 'SERVING' || st === 'DRAINING') await this.h.shutdown(ms(2000));
    this.held = [];
    this.h.destroy();
  }
}

// The synchronous terminators a call object offers (none in Node).
function syncTerminators(call) {
  const names = new Set();
  for (let o = call; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const n of Object.getOwnPropertyNames(o)) names.add(n);
  }
  return ['wait', 'submitSync', 'submit_sync', 'Submit', 'sync', 'waitFor'].filter((n) => names.has(n));
}

class Client {
  constructor({ hwm = 0, sendTimeout = 0, rootSendTimeout = 0, extraChannels = false } = {}) {
    Object.assign(this, { hwm, sendTimeout, rootSendTimeout, extraChannels });
  }
  // remoteServers: the servers live on another thread (WorkerServer), so
  // A checks only its own view of readiness.
  async open(mode, servers, { remoteServers = false } = {}) {
    this.mode = mode;
    this.h = new zlink.Host('A');
    if (this.rootSendTimeout) this.h.setOption('DEFAULT_SEND_TIMEOUT', this.rootSendTimeout);
    if (mode === 'mesh') {
      this.h.addMeshNode('m', 'A');
      this.h.addMeshChannelClient('m', 'svc');
      if (this.extraChannels) {
        this.h.addMeshChannelClient('m', 'none');
        this.h.addMeshChannelClient('m', 'zero');
      }
      for (const s of servers) this.h.meshConnect('m', s.bound, s.name);
      if (this.sendTimeout) this.h.setMeshOption('m', 'SEND_TIMEOUT', this.sendTimeout);
      if (this.hwm > 0) {
        this.h.setMeshOption('m', 'SNDHWM', this.hwm);
        this.h.setMeshOption('m', 'RCVHWM', this.hwm);
      }
    } else {
      for (const s of servers) this.h.addCsClient('svc', s.bound);
      if (this.sendTimeout) this.h.setChannelOption('svc', 'SEND_TIMEOUT', this.sendTimeout);
      if (this.hwm > 0) {
        this.h.setChannelOption('svc', 'SNDHWM', this.hwm);
        this.h.setChannelOption('svc', 'RCVHWM', this.hwm);
      }
    }
    this.h.start();
    if (mode === 'mesh') {
      await eventually(() => this.h.meshReadyPeers('m') === servers.length, 5000, 'A sees every server ready');
      if (remoteServers) {
        // A's first request to each server is the sign that it serves A.
        for (const s of servers) {
          await eventually(async () => resultOf(await settle(this.nodeCall(false, s.name, 'ready?').submit())) === 'OK', 5000, `${s.name} takes A's records`);
        }
        return this;
      }
      for (const s of servers) await eventually(() => s.h.meshReadyPeers('m') === 1, 5000, `${s.name} sees A ready`);
      return this;
    }
    // ClientServer has no readiness view: ping until every server answered.
    for (let round = 0; !servers.every((s) => s.pings > 0); round++) {
      ok(round < 500, 'every server answered a ping');
      const r = await settle(this.h.requestToChannel('svc').payload('ping', 'p', '').timeout(ms(5000)).submit());
      eq(resultOf(r), 'OK', 'ping');
    }
    return this;
  }
  // A call to channel "svc" (or channel) with packet "m" and the tag,
  // padded with NUL bytes to size.
  call(request, channel, tag, size = 0) {
    const c = request ? this.h.requestToChannel(channel || 'svc') : this.h.sendToChannel(channel || 'svc');
    const buf = Buffer.alloc(Math.max(size, Buffer.byteLength(tag)));
    buf.write(tag);
    return c.payload('m', buf, '');
  }
  nodeCall(request, rid, tag) {
    const c = request ? this.h.requestToNode('m', rid) : this.h.sendToNode('m', rid);
    return c.payload('m', Buffer.from(tag), '');
  }
  async close() {
    const st = this.h.state;
    if (st === 'SERVING' || st === 'DRAINING') await this.h.shutdown(ms(2000));
    this.h.destroy();
  }
}

// One call's completion as the C collector sees it: how many times its
// Promise settled (always 1 here), when, and the result by name.
function track(promise) {
  const t = { calls: 0, result: null, at: 0, value: undefined, error: null };
  t.done = settle(promise).then((s) => {
    t.calls++;
    t.at = Date.now();
    t.result = resultOf(s);
    t.value = s.value;
    t.error = s.error;
    return t;
  });
  return t;
}

// A completion within bound ms (scaled), else the case fails.
async function expectDone(t, boundMs, what) {
  await eventually(() => t.calls > 0, boundMs, what || 'the call completed');
  return t;
}

// Waits until untilMs (absolute) for t; true when it completed by then.
async function doneBy(t, untilMs) {
  while (t.calls === 0 && Date.now() < untilMs) await new Promise((r) => setTimeout(r, 1));
  return t.calls > 0;
}

// "Saturate B" (framework-contract.md §7): b has max_jobs 1, a 16 KiB HWM
// and is gated; a sends 4 KiB one-ways "f0", "f1" ... until one stays
// pending 100 ms with a's status showing a one-way waiting for room.
async function saturate(a, b) {
  b.gated = true;
  for (let i = 0; ; i++) {
    ok(i < 100000, 'saturation reached');
    const tag = `f${i}`;
    const started = Date.now();
    const t = track(a.call(false, null, tag, 4096).submit());
    if (!(await doneBy(t, started + 100)) && a.h.status().onewayWaiting === 1) {
      return { pending: t, started, tag, accepted: i };
    }
    await expectDone(t, 5000, `send ${tag} neither completed nor waited for room`);
    eq(t.result, 'OK', `send ${tag}`);
  }
}

// sc_send_gated: gates s and starts one-ways "d1".."d<n>" from a (n >= 2);
// returns their trackers once d1 waits at s's gate and, after d2, s
// (max_jobs 1) is PAUSED.
async function sendGated(a, s, n) {
  s.gated = true;
  const dd = [];
  for (let i = 0; i < n; i++) {
    dd.push(track(a.call(false, null, `d${i + 1}`).submit()));
    if (i === 0) await eventually(() => s.gate.waiting === 1, 5000, 'd1 at the gate');
    if (i === 1) await eventually(() => s.h.capacity().pressureState === 1, 5000, 's PAUSED');
  }
  return dd;
}

// The deadline check of sc.h: elapsed in want..want + 250 ms (scaled).
function onTime(elapsed, want) {
  const late = want + ms(250);
  ok(elapsed >= want && elapsed <= late, `ended after ${elapsed} ms, expected ${want}..${late} ms`);
}

// A Server on a worker thread (worker_server.js): name and bound, plus
// shutdown(ms) and close(); a Client connects to it like to a local one.
class WorkerServer {
  constructor(opts, behaviour) {
    this.name = opts.name;
    this.opts = opts;
    this.behaviour = behaviour;
  }
  _ask(msg) {
    return new Promise((resolve, reject) => {
      this.w.once('message', (m) => (m.error ? reject(new Error(`worker: ${m.error}`)) : resolve(m)));
      this.w.postMessage(msg);
    });
  }
  async open(mode, tr, tag) {
    const { Worker } = require('worker_threads');
    this.w = new Worker(require('path').join(__dirname, 'worker_server.js'));
    this.w.on('error', (e) => process.stderr.write(`worker error: ${e.stack || e}\n`));
    const m = await this._ask({ op: 'open', opts: this.opts, behaviour: this.behaviour, mode, tr, tag });
    this.bound = m.bound;
    return this;
  }
  shutdown(ms) {
    return this._ask({ op: 'shutdown', ms });
  }
  diag() {
    return this._ask({ op: 'diag' });
  }
  async close() {
    await this._ask({ op: 'close' });
    await new Promise((r) => this.w.once('exit', r));
  }
}

module.exports = {
  WorkerServer,
  sendGated, zlink, Server, Client, Gate, transports, endpoint, track, expectDone, doneBy, saturate, onTime, syncTerminators };
