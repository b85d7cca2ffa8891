// pl17_worker.js — PL-17's second thread (worker_threads): it drains or
// connects a PAIR peer of the main thread's socket over TCP (a Context is
// one thread's JavaScript object, so the peer has its own; TCP links the
// two). Messages from the main thread:
//   {op: 'drain', ep}: connect, receive until "END", reply {got}.
//   {op: 'attach', ep, flag}: set flag[0] to 1 (Atomics), connect, reply
//     {connected}; then {op: 'recv'} -> {text} or {op: 'drop'} -> {dropped}.
'use strict';
const { parentPort } = require('worker_threads');
const zlink = require('../../bindings/node/lib');

let ctx = null;
let b = null;
function open() {
  ctx = new zlink.Context();
  b = ctx.socket('PAIR');
}
function drop() {
  b.setOption('LINGER', 0);
  b.close();
  ctx.close();
  b = ctx = null;
}

parentPort.on('message', (m) => {
  try {
    if (m.op === 'drain') {
      open();
      b.setOption('RCVTIMEO', -1);
      b.connect(m.ep);
      let got = 0;
      for (;;) {
        const text = b.recv().parts[0].toString();
        if (text === 'END') break;
        got++;
      }
      drop();
      parentPort.postMessage({ got });
    } else if (m.op === 'attach') {
      open();
      b.setOption('RCVTIMEO', m.timeoutMs);
      Atomics.store(m.flag, 0, 1);
      b.connect(m.ep);
      parentPort.postMessage({ connected: true });
    } else if (m.op === 'recv') {
      const text = b.recv().parts[0].toString();
      drop();
      parentPort.postMessage({ text });
    } else if (m.op === 'drop') {
      drop();
      parentPort.postMessage({ dropped: true });
    }
  } catch (e) {
    parentPort.postMessage({ error: String((e && e.stack) || e) });
  }
});
