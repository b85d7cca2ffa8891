// bench.js — the request/reply benchmark's program in JavaScript
// (framework_node; bench/rr_common.h states the protocol it speaks,
// bench/rr_framework.c is the same program in C). Both sides use the Node
// binding's public API (//bindings/node):
//   server   one Host, ClientServer server "bench" on tcp://127.0.0.1:0, a
//            request handler for "echo" that answers the payload
//   client   one Host, ClientServer client; N requests in flight, each
//            started with call.submit() (zlink_call_start); its Promise
//            settles on the event loop (the addon hands the completion from
//            the C dispatcher thread to the JavaScript thread), where the
//            latency is recorded and, while the window is open, the slot's
//            next request starts
// One thread (the JavaScript one) touches the client's state: no lock.
'use strict';

const zlink = require('../../bindings/node/lib');

const CHANNEL = 'bench';
const PACKET = 'echo';
const TYPE = 'application/octet-stream';
const STALL_NS = 20000000000n;

function error(what) {
  process.stdout.write('ERROR,' + what + '\n');
  process.exit(1);
}

// ZLINK_BENCH_DIAG=1: the addon's event counts (zlink.diagnostics()) on
// stderr at the end, for profiling; the driver reads stdout only.
function diag(side) {
  if (process.env.ZLINK_BENCH_DIAG === '1') {
    process.stderr.write(`DIAG,${side},${JSON.stringify(zlink.diagnostics())}\n`);
  }
}

function version() {
  const v = zlink.version();
  return `${v.major}.${v.minor}.${v.patch}`;
}

function server() {
  const host = new zlink.Host('bench-server').addCsServer(CHANNEL, 'tcp://127.0.0.1:0');
  host.handle({ channel: CHANNEL }, 'request', PACKET, (turn) => {
    turn.respond(PACKET, turn.payload, TYPE);
  });
  host.start();
  const ep = host.endpoint(CHANNEL);
  process.stdout.write('READY,port=' + ep.slice(ep.lastIndexOf(':') + 1) + '\n');
  process.stdin.on('data', () => {});
  process.stdin.on('end', async () => {
    diag('server');
    try {
      await host.shutdown();
      host.destroy();
    } catch (e) {
      error('shutdown: ' + e.message);
    }
    process.exit(0);
  });
}

// rr_common.c's percentile: the nearest rank.
function percentile(sorted, p) {
  const n = sorted.length;
  const rank = Math.min(n, Math.max(1, Math.ceil((p / 100) * n - 1e-9)));
  return sorted[rank - 1];
}

function parse(args) {
  const o = { port: 0, inflight: 0, size: 0, warmup: 0, duration: 0 };
  const names = { '--port': 'port', '--inflight': 'inflight', '--size': 'size',
    '--warmup-ms': 'warmup', '--duration-ms': 'duration' };
  for (let i = 1; i + 1 < args.length; i += 2) {
    const key = names[args[i]];
    if (!key) error('usage: unknown option ' + args[i]);
    o[key] = parseInt(args[i + 1], 10);
  }
  if (!(o.port > 0 && o.inflight > 0 && o.size > 0 && o.duration > 0 && o.warmup >= 0)) {
    error('usage: client --port P --inflight N --size S --warmup-ms W --duration-ms D');
  }
  return o;
}

function client(args) {
  const o = parse(args);
  const host = new zlink.Host('bench-client').addCsClient(CHANNEL, `tcp://127.0.0.1:${o.port}`).start();
  const payload = Buffer.alloc(o.size, 'q');
  const windowStart = process.hrtime.bigint() + BigInt(o.warmup) * 1000000n;
  const windowEnd = windowStart + BigInt(o.duration) * 1000000n;
  const startNs = new Array(o.inflight).fill(0n);
  const samples = [];
  let calls = 0;
  let inflight = o.inflight;
  let failure = null;
  let finished = false;

  async function finish() {
    if (finished) return;
    finished = true;
    clearTimeout(stall);
    if (inflight > 0) error(`${inflight} calls still in flight 20 s after the window`);
    if (failure) error(failure);
    if (samples.length === 0) error('no call completed inside the measuring window');
    diag('client');
    await host.shutdown();
    host.destroy();
    samples.sort((a, b) => a - b);
    const seconds = o.duration / 1000;
    process.stdout.write(`INFO,version=zlink-node-${version()}\n`);
    process.stdout.write(`SAMPLE,calls=${calls},window_s=${seconds.toFixed(3)},`
      + `throughput=${(calls / seconds).toFixed(1)},p50_us=${percentile(samples, 50).toFixed(2)},`
      + `p99_us=${percentile(samples, 99).toFixed(2)}\n`);
    process.exit(0);
  }

  function done(slot, reply, err) {
    const now = process.hrtime.bigint();
    const ok = !err && reply && reply.payload.length === o.size;
    if (!ok && !failure) failure = 'request outcome: ' + (err ? (err.result || err.message) : 'wrong reply size');
    if (ok && now >= windowStart && now < windowEnd) {
      calls++;
      samples.push(Number(now - startNs[slot]) / 1000);
    }
    if (ok && !failure && now < windowEnd) {
      start(slot);
    } else if (--inflight === 0) {
      finish().catch((e) => error(e.message));
    }
  }

  function start(slot) {
    startNs[slot] = process.hrtime.bigint();
    let p;
    try {
      p = host.requestToChannel(CHANNEL).payload(PACKET, payload, TYPE).submit();
    } catch (e) {
      done(slot, null, e);
      return;
    }
    p.then((reply) => done(slot, reply, null), (e) => done(slot, null, e));
  }

  // A failure bound only: the run is stalled if calls remain this long
  // after the window.
  const stall = setTimeout(() => finish().catch((e) => error(e.message)),
    Number((windowEnd - process.hrtime.bigint() + STALL_NS) / 1000000n));
  for (let i = 0; i < o.inflight; i++) start(i);
}

const args = process.argv.slice(2);
try {
  if (args.length === 1 && args[0] === 'server') server();
  else if (args.length >= 1 && args[0] === 'client') client(args);
  else error('usage: framework_node server | client --port P --inflight N --size S --warmup-ms W --duration-ms D');
} catch (e) {
  error(String(e && e.message ? e.message : e));
}
