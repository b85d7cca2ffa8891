// worker_server.js — a harness server (harness.js Server) on a worker
// thread, with its own event loop, for the cases whose server must answer
// while the main thread is busy (SC-16: replies racing timeouts at 50 ms).
// The binding loads in the worker's own environment; hosts of both threads
// share the process's Core context, so inproc endpoints connect them.
// Messages: {op: 'open', ...} -> {bound}; {op: 'shutdown', ms} -> {down};
// {op: 'diag'} -> {diag, state, status, recCount, capacity, readyPeers,
// drops}; {op: 'close'} -> {closed}.
'use strict';
const { parentPort } = require('worker_threads');
const { Server } = require('./harness');

let server = null;
parentPort.on('message', async (m) => {
  try {
    if (m.op === 'open') {
      server = new Server(m.opts);
      Object.assign(server, m.behaviour || {});
      server.open(m.mode, m.tr, m.tag);
      parentPort.postMessage({ bound: server.bound });
    } else if (m.op === 'shutdown') {
      await server.h.shutdown(m.ms);
      parentPort.postMessage({ down: true });
    } else if (m.op === 'diag') {
      const drops = {};
      for (const r of ['reason=no_handler', 'reason=decode_error', 'reason=shutdown', 'reason=backpressure', 'reason=stale_target']) {
        drops[r] = String(server.h.metric('zlink.mesh_node.messages.dropped', r));
      }
      parentPort.postMessage({ diag: require('../../bindings/node/lib').diagnostics(), state: server.h.state, status: server.h.status(),
        recCount: server.recCount(), capacity: server.h.capacity(), readyPeers: server.mode === 'mesh' ? server.h.meshReadyPeers('m') : 0, drops });
    } else if (m.op === 'close') {
      await server.close();
      parentPort.postMessage({ closed: true });
      parentPort.close();
    }
  } catch (e) {
    parentPort.postMessage({ error: String((e && e.stack) || e) });
  }
});
