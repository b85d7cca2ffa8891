// node.js — the Node.js program of the interop suite (interop/README.md):
// the same roles, lines and packets as interop/c/node.c, through the Node
// binding's public API (//bindings/node). Started by its zlink_node_program launcher, which finds
// the addon and the plain libzlink.so.1 in the runfiles.
//
//   node serve-cs CHANNEL | call-cs CHANNEL ENDPOINT N | ring MESH RID [ENDPOINT PEER_RID]...
//
// Everything runs on the JavaScript thread: handler turns and completions
// arrive on the event loop. A hop handler returns a Promise that settles
// once the forwarded request answered, so its turn (and the node's gate)
// stays open until then, as the C program's does.
'use strict';

const readline = require('readline');
const zlink = require('../../bindings/node/lib');

const LANG = 'node';
const TIMEOUT_MS = 10000;

function say(line) {
  process.stdout.write(line + '\n');
}

function fail(what) {
  say('ERROR ' + what);
  process.exit(1);
}

// The lines of stdin, one at a time, each handled to its end before the next.
function commands(onLine, onEnd) {
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  let chain = Promise.resolve();
  rl.on('line', (line) => {
    chain = chain.then(() => onLine(line));
  });
  rl.on('close', () => {
    chain = chain.then(onEnd);
  });
  return chain;
}

async function bye(host) {
  await host.shutdown(5000);
  host.destroy();
  say('BYE');
  process.exit(0);
}

function serveCs(channel) {
  const host = new zlink.Host('interop-node-server').addCsServer(channel, 'tcp://127.0.0.1:0');
  host.handle({ channel }, 'request', 'interop.echo', (turn) => {
    turn.respond('interop.echo', turn.payload.toString('utf8') + '|' + LANG, 'text/plain');
  });
  host.start();
  say('READY ' + host.endpoint(channel));
  commands(() => {}, () => bye(host));
}

async function callCs(channel, endpoint, n) {
  const host = new zlink.Host('interop-node-client').addCsClient(channel, endpoint).start();
  for (let i = 0; i < n; i++) {
    const reply = await host.requestToChannel(channel)
      .payload('interop.echo', `${LANG}#${i}`, 'text/plain')
      .timeout(TIMEOUT_MS)
      .submit();
    say('REPLY ' + reply.payload.toString('utf8'));
  }
  // stdin is not read by this role; the host shuts down after the last reply.
  await bye(host);
}

function ring(mesh, rid, peers) {
  let next = '';
  const host = new zlink.Host('interop-node-ring').addMeshNode(mesh, rid, 'tcp://127.0.0.1:0');
  for (let i = 0; i + 1 < peers.length; i += 2) host.meshConnect(mesh, peers[i], peers[i + 1]);
  // interop.hop: "<hops>;<path>" -> append ">RID", forward or answer.
  host.handle({ node: mesh }, 'request', 'interop.hop', (turn) => {
    const text = turn.payload.toString('utf8');
    const semi = text.indexOf(';');
    const hops = parseInt(text, 10);
    if (semi < 0 || !(hops >= 0)) throw new Error('malformed hop');
    const path = text.slice(semi + 1) + '>' + rid;
    if (hops === 0) {
      turn.respond('interop.hop', path, 'text/plain');
      return undefined;
    }
    return host.requestToNode(mesh, next)
      .payload('interop.hop', `${hops - 1};${path}`, 'text/plain')
      .timeout(TIMEOUT_MS)
      .submit()
      .then((answer) => {
        turn.respond('interop.hop', answer.payload, 'text/plain');
      });
  });
  host.start();
  say('READY ' + host.endpoint(mesh));
  commands(async (line) => {
    const [cmd, arg] = line.trim().split(' ');
    if (cmd === 'NEXT') {
      next = arg;
    } else if (cmd === 'WAIT') {
      // No readiness event in the ABI: look every millisecond, for at most
      // the call timeout (a failure bound).
      const want = parseInt(arg, 10);
      const end = Date.now() + TIMEOUT_MS;
      while (host.meshReadyPeers(mesh) < want) {
        if (Date.now() > end) fail(`peers: ${host.meshReadyPeers(mesh)} of ${want}`);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      say('PEERS ' + want);
    } else if (cmd === 'START') {
      const answer = await host.requestToNode(mesh, next)
        .payload('interop.hop', `${arg};${rid}`, 'text/plain')
        .timeout(TIMEOUT_MS)
        .submit();
      say('RING ' + answer.payload.toString('utf8'));
    } else {
      fail('unknown command: ' + line);
    }
  }, () => bye(host)).catch((e) => fail(String(e)));
}

function main(args) {
  if (args.length === 2 && args[0] === 'serve-cs') return serveCs(args[1]);
  if (args.length === 4 && args[0] === 'call-cs') return callCs(args[1], args[2], parseInt(args[3], 10));
  if (args.length >= 3 && args.length % 2 === 1 && args[0] === 'ring') return ring(args[1], args[2], args.slice(3));
  process.stderr.write('usage: node serve-cs CHANNEL | call-cs CHANNEL ENDPOINT N | '
    + 'ring MESH RID [ENDPOINT PEER_RID]...\n');
  process.exit(2);
}

process.on('unhandledRejection', (e) => fail(String(e && e.message ? e.message : e)));
try {
  const r = main(process.argv.slice(2));
  if (r && typeof r.catch === 'function') r.catch((e) => fail(String(e && e.message ? e.message : e)));
} catch (e) {
  fail(String(e && e.message ? e.message : e));
}
