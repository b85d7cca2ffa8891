// helpers.js — what the binding's tests share: a deferred (a Promise to
// settle by hand, the tests' gate) and a started server/client pair.
'use strict';
const zlink = require('../lib');

function deferred() {
  let resolve, reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

let seq = 0;
// A ClientServer pair over inproc; `setup(server)` adds the handlers.
function pair(setup, { clientOptions } = {}) {
  const id = `${process.pid}-${++seq}`;
  const endpoint = `inproc://node-test-${id}`;
  const server = new zlink.Host(`srv-${id}`).addCsServer('svc', endpoint);
  setup(server);
  server.start();
  const client = new zlink.Host(`cli-${id}`, clientOptions).addCsClient('svc', endpoint).start();
  return {
    server,
    client,
    async close() {
      await client.shutdown(5000);
      await server.shutdown(5000);
      client.destroy();
      server.destroy();
    },
  };
}

// How the promise settled: ['ok', value] or ['err', error].
function settle(p) {
  return p.then(
    (v) => ['ok', v],
    (e) => ['err', e],
  );
}

module.exports = { zlink, deferred, pair, settle };
