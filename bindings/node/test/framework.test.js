// framework.test.js — the framework projection: each completion reaches
// JavaScript exactly once (success, abort, timeout, shutdown during a
// send), the terminator surface (no synchronous terminator), async
// handlers keep their turn, typed JSON request / reply, error kinds.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { zlink, deferred, pair, settle } = require('./helpers');

// Completions posted by the C dispatcher and delivered on this thread,
// counted by the addon, from a baseline.
function counter() {
  const base = zlink.diagnostics();
  return () => {
    const d = zlink.diagnostics();
    return {
      posted: d.completionsPosted - base.completionsPosted,
      delivered: d.completionsDelivered - base.completionsDelivered,
    };
  };
}

test('a request and a one-way complete exactly once (typed JSON reply)', async () => {
  let turns = 0;
  const p = pair((s) => {
    s.handle({ channel: 'svc' }, 'request', 'add', (turn) => {
      turns++;
      const { a, b } = turn.json();
      return { sum: a + b };
    });
    s.handle({ channel: 'svc' }, 'send', 'note', () => {
      turns++;
    });
  });
  const count = counter();
  const reply = await p.client.requestToChannel('svc').json('add', { a: 2, b: 3 }).timeout(5000).submit();
  assert.ok(reply instanceof zlink.Reply);
  assert.equal(reply.packet, 'add');
  assert.equal(reply.contentType, 'application/json');
  assert.deepEqual(reply.json(), { sum: 5 });
  const value = await p.client.requestToChannel('svc').json('add', { a: 1, b: 1 }).timeout(5000).expectJson().submit();
  assert.deepEqual(value, { sum: 2 });
  const sent = await p.client.sendToChannel('svc').json('note', {}).submit();
  assert.equal(sent, undefined, 'a one-way resolves with no value');
  await p.close();
  assert.deepEqual(count(), { posted: 3, delivered: 3 });
  assert.equal(turns, 3);
});

test('an abort completes the request once, as an AbortError', async () => {
  const gate = deferred();
  const entered = deferred();
  const p = pair((s) => {
    s.handle({ channel: 'svc' }, 'request', 'slow', async () => {
      entered.resolve();
      await gate.promise;
      return 'late';
    });
  });
  const count = counter();
  const ac = new AbortController();
  const call = settle(p.client.requestToChannel('svc').json('slow', {}).timeout(10000).submit(ac.signal));
  await entered.promise;
  ac.abort();
  const [how, err] = await call;
  gate.resolve();
  assert.equal(how, 'err');
  assert.equal(err.name, 'AbortError');
  assert.equal(err.cancelled, true);
  assert.equal(err.kind, undefined);
  ac.abort(); // a second abort changes nothing
  gate.resolve();
  await p.close();
  assert.deepEqual(count(), { posted: 1, delivered: 1 });
});

test('an already aborted signal: CANCELLED from the C start, nothing sent, no completion', async () => {
  let turns = 0;
  const p = pair((s) => {
    s.handle({ channel: 'svc' }, 'request', 'x', () => {
      turns++;
      return 1;
    });
  });
  const count = counter();
  const ac = new AbortController();
  ac.abort();
  const [how, err] = await settle(p.client.requestToChannel('svc').json('x', {}).submit(ac.signal));
  assert.equal(how, 'err');
  assert.equal(err.name, 'AbortError');
  const [how2, err2] = await settle(p.client.sendToChannel('svc').json('x', {}).submit(ac.signal));
  assert.equal(how2, 'err');
  assert.equal(err2.name, 'AbortError');
  await p.close();
  assert.deepEqual(count(), { posted: 0, delivered: 0 }, 'a refused start never completes');
  assert.equal(turns, 0);
});

test('a timeout completes the request once with DeadlineExceeded', async () => {
  const gate = deferred();
  const p = pair((s) => {
    s.handle({ channel: 'svc' }, 'request', 'slow', async () => {
      await gate.promise;
    });
  });
  const count = counter();
  const [how, err] = await settle(p.client.requestToChannel('svc').json('slow', {}).timeout(50).submit());
  assert.equal(how, 'err');
  assert.ok(err instanceof zlink.ZLinkFrameworkError);
  assert.equal(err.kind, 'DeadlineExceeded');
  assert.equal(err.kindValue, zlink.ERROR_KINDS.indexOf('DeadlineExceeded'));
  gate.resolve();
  await p.close();
  assert.deepEqual(count(), { posted: 1, delivered: 1 });
});

test('shutdown during sends: every accepted send completes exactly once', async () => {
  const gate = deferred();
  const p = pair((s) => {
    s.handle({ channel: 'svc' }, 'send', 'load', async () => {
      await gate.promise;
    });
  });
  try {
    const count = counter();
    const results = [];
    for (let i = 0; i < 200; i++) {
      results.push(settle(p.client.sendToChannel('svc').payload('load', Buffer.alloc(64)).submit()));
    }
    const down = p.client.shutdown(2000);
    // Wait (bounded) until the C shutdown has begun draining on its thread.
    for (let i = 0; i < 100000 && p.client.state === 'SERVING'; i++) await new Promise((r) => setImmediate(r));
    assert.notEqual(p.client.state, 'SERVING');
    const late = await settle(p.client.sendToChannel('svc').payload('load', Buffer.alloc(1)).submit());
    assert.equal(late[0], 'err');
    assert.equal(late[1].kind, 'ShuttingDown', 'a send after shutdown began is refused');
    await down;
    const settled = await Promise.all(results);
    for (const [how, v] of settled) {
      if (how === 'err') assert.ok(v instanceof zlink.ZLinkFrameworkError, String(v));
    }
    const c = count();
    assert.equal(c.posted, c.delivered);
    assert.equal(c.delivered, settled.length, 'one completion per accepted send');
  } finally {
    gate.resolve();
  }
  await p.server.shutdown(5000);
  assert.equal(zlink.diagnostics().outstanding, 0, 'nothing keeps the loop alive');
});

test('the call objects have no synchronous terminator; a second terminator is InvalidOperation', async () => {
  const p = pair((s) => {
    s.handle({ channel: 'svc' }, 'request', 'x', () => 7);
  });
  const names = new Set();
  for (let o = zlink.Call.prototype; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const n of Object.getOwnPropertyNames(o)) names.add(n);
  }
  for (const sync of ['wait', 'submitSync', 'submit_sync', 'sync', 'submitAndWait', 'get', 'result']) {
    assert.equal(names.has(sync), false, `Call has ${sync}`);
  }
  const call = p.client.requestToChannel('svc').json('x', {}).timeout(5000).expectJson();
  assert.equal(typeof call.submit, 'function');
  assert.equal(typeof call.yield, 'function');
  const first = call.submit();
  assert.ok(first instanceof Promise);
  const [how, err] = await settle(call.submit());
  assert.equal(how, 'err');
  assert.equal(err.kind, 'InvalidOperation');
  assert.equal(await first, 7, 'the first submit is untouched by the second');
  const [yhow, yerr] = await settle(p.client.requestToChannel('svc').json('x', {}).yield());
  assert.equal(yhow, 'err');
  assert.equal(yerr.kind, 'InvalidOperation', 'yield outside a Spot turn');
  await p.close();
});

test('an async handler keeps its turn (gate) until its Promise settles', async () => {
  const gate = deferred();
  const entered = deferred();
  const order = [];
  const p = pair((s) => {
    s.handle({ channel: 'svc' }, 'request', 'job', async (turn) => {
      const n = turn.json().n;
      order.push(`start ${n}`);
      assert.equal(zlink.inRuntimeContext(), true, 'handler code runs in a runtime context');
      if (n === 1) {
        entered.resolve();
        await gate.promise;
      }
      order.push(`end ${n}`);
      return n;
    });
  });
  const r1 = p.client.requestToChannel('svc').json('job', { n: 1 }).timeout(10000).expectJson().submit();
  await entered.promise;
  const r2 = p.client.requestToChannel('svc').json('job', { n: 2 }).timeout(10000).expectJson().submit();
  // Wait (on events, bounded) until the second record is queued behind the open turn.
  for (let i = 0; i < 10000; i++) {
    const st = p.server.ownerStatus({ channel: 'svc' });
    if (st.queuedRecords === 1) break;
    await new Promise((r) => setImmediate(r));
  }
  const st = p.server.ownerStatus({ channel: 'svc' });
  assert.equal(st.busy, true);
  assert.equal(st.queuedRecords, 1, 'the second record waits for the gate');
  assert.deepEqual(order, ['start 1']);
  gate.resolve();
  assert.equal(await r1, 1);
  assert.equal(await r2, 2);
  assert.deepEqual(order, ['start 1', 'end 1', 'start 2', 'end 2']);
  await p.close();
});

test('a throwing or rejecting handler answers InternalFailure; replyError answers its kind', async () => {
  const p = pair((s) => {
    s.handle({ channel: 'svc' }, 'request', 'throw', () => {
      throw new Error('boom');
    });
    s.handle({ channel: 'svc' }, 'request', 'reject', async () => {
      throw new Error('async boom');
    });
    s.handle({ channel: 'svc' }, 'request', 'refuse', (turn) => {
      turn.replyError('Rejected', 'not today');
    });
    s.handle({ channel: 'svc' }, 'request', 'silent', () => undefined);
  });
  for (const [packet, kind] of [
    ['throw', 'InternalFailure'],
    ['reject', 'InternalFailure'],
    ['refuse', 'Rejected'],
    ['silent', 'InternalFailure'],
    ['unknown', 'NotFound'],
  ]) {
    const [how, err] = await settle(p.client.requestToChannel('svc').json(packet, {}).timeout(5000).submit());
    assert.equal(how, 'err', packet);
    assert.equal(err.kind, kind, `${packet}: ${err.message}`);
  }
  await p.close();
});

test('metadata and bytes payloads cross; bad arguments are INVALID_ARGUMENT at the setter', async () => {
  const p = pair((s) => {
    s.handle({ channel: 'svc' }, 'request', 'echo', (turn) => {
      turn.respond('echo', Buffer.concat([Buffer.from(turn.metadata('k') + ':'), turn.payload]));
    });
  });
  const reply = await p.client.requestToChannel('svc').payload('echo', Buffer.from([1, 2, 3])).metadata('k', 'v').timeout(5000).submit();
  assert.deepEqual([...reply.payload], [...Buffer.from('v:'), 1, 2, 3]);
  assert.equal(reply.contentType, 'application/octet-stream');
  for (const bad of [0, -1, Infinity]) {
    assert.throws(() => p.client.requestToChannel('svc').timeout(bad), (e) => e.result === 'INVALID_ARGUMENT' && e.kind === undefined);
  }
  await p.close();
});

test('names outside the BMP cross as UTF-8; a string C would cut or change is refused', async () => {
  const packet = 'echo-\u00e9-\u4e2d-\u{1F600}';
  const p = pair((s) => {
    s.handle({ channel: 'svc' }, 'request', packet, (turn) => {
      turn.respond(turn.packet, Buffer.from(turn.packet));
    });
  });
  const reply = await p.client.requestToChannel('svc').payload(packet, Buffer.from('x')).timeout(5000).submit();
  assert.equal(reply.packet, packet);
  assert.equal(reply.payload.toString('utf8'), packet, 'the handler read the packet name the client sent');
  for (const bad of ['ec\u0000ho', 'echo\ud83d', '\ude00echo']) {
    assert.throws(() => p.client.requestToChannel('svc').payload(bad, Buffer.from('x')), TypeError, JSON.stringify(bad));
  }
  // a real U+FFFD is text and goes through
  assert.doesNotThrow(() => p.client.requestToChannel('svc').payload('echo-\ufffd', Buffer.from('x')));
  await p.close();
});

test('a host that never started and the unknown channel are classified by C', async () => {
  const h = new zlink.Host('lonely').addCsClient('svc', 'inproc://nobody-here');
  assert.equal(h.state, 'PREPARING');
  const [how, err] = await settle(h.sendToChannel('svc').json('x', {}).submit());
  assert.equal(how, 'err');
  assert.ok(err instanceof zlink.ZLinkFrameworkError);
  const [how2, err2] = await settle(h.shutdown());
  assert.equal(how2, 'err');
  assert.equal(err2.kind, 'InvalidOperation', 'shutdown of a host that never served');
  h.destroy();
  assert.equal(h.state, 'DESTROYED');
});

test('a completion holds its dispatcher slot until the promise reactions ran', async () => {
  const p = pair((s) => {
    s.handle({ channel: 'svc' }, 'request', 'echo', (turn) => turn.json());
  });
  // a warm-up request: the connection is up, nothing else is pending
  let inWarmUp = -1;
  await p.client.requestToChannel('svc').json('echo', {}).timeout(5000).submit();
  inWarmUp = p.client.status().dispatcherInUse; // an await continuation is a reaction too
  await new Promise((r) => setImmediate(r));
  const idle = p.client.status().dispatcherInUse;
  assert.equal(inWarmUp, idle + 1, 'held in the await continuation');
  let inReaction = -1;
  let inLaterReaction = -1;
  await p.client.requestToChannel('svc').json('echo', { x: 1 }).timeout(5000).submit()
    .then(() => {
      inReaction = p.client.status().dispatcherInUse;
    });
  // the microtask after the reactions gave it back; a macrotask later it is free
  await new Promise((r) => setImmediate(r));
  inLaterReaction = p.client.status().dispatcherInUse;
  assert.equal(inReaction, idle + 1, 'held while the reaction runs');
  assert.equal(inLaterReaction, idle, 'given back after the reactions');
  await p.close();
});

test('nativeHandle is the C host handle value: a non-zero bigint, one per host, stable', () => {
  const a = new zlink.Host('handle-a');
  const b = new zlink.Host('handle-b');
  try {
    assert.equal(typeof a.nativeHandle, 'bigint');
    assert.notEqual(a.nativeHandle, 0n);
    assert.equal(a.nativeHandle, a.nativeHandle);
    assert.notEqual(a.nativeHandle, b.nativeHandle);
  } finally {
    a.destroy();
    b.destroy();
  }
});

test('many requests at once: each turn runs once, each reply reaches its own call once', async () => {
  let turns = 0;
  const p = pair((s) => {
    s.handle({ channel: 'svc' }, 'request', 'echo', (turn) => {
      turns++;
      turn.respond('echo', turn.payload);
    });
  });
  const before = zlink.diagnostics();
  const n = 500;
  const replies = await Promise.all(Array.from({ length: n }, (_, i) =>
    p.client.requestToChannel('svc').payload('echo', Buffer.from(`r${i}`)).timeout(10000).submit()));
  replies.forEach((r, i) => assert.equal(r.text(), `r${i}`, 'each reply settles its own call'));
  const after = zlink.diagnostics();
  assert.equal(turns, n, 'every delivered turn ran its handler once');
  assert.equal(after.turnsDelivered - before.turnsDelivered, n);
  assert.equal(after.completionsDelivered - before.completionsDelivered, n);
  assert.equal(after.completionsPosted - before.completionsPosted, n);
  // A wake-up of the loop delivers one batch or more (the events that
  // arrived while it delivered), never none: at most one wake-up a batch.
  const wakeups = after.wakeups - before.wakeups;
  const batches = after.batches - before.batches;
  assert.ok(wakeups >= 1 && wakeups <= batches, `${wakeups} wake-ups for ${batches} batches`);
  assert.ok(batches <= 2 * n, 'no batch without a record');
  await p.close();
});

test('payloads stay their own across batches: small ones share the slab, large ones are copied alone', async () => {
  const kept = []; // every turn's payload, read again after later batches reused the slab
  const p = pair((s) => {
    s.handle({ channel: 'svc' }, 'request', 'echo', (turn) => {
      kept.push(turn.payload);
      turn.respond('echo', turn.payload);
    });
  });
  const fill = (i, size) => Buffer.alloc(size, i % 251);
  // One at a time (a batch each), then 40 at once of the largest pooled
  // size (a batch wider than one slab), then some past the pooled size.
  const sizes = [];
  for (let i = 0; i < 50; i++) sizes.push(1 + (i * 37) % 200);
  const replies = [];
  for (let i = 0; i < sizes.length; i++) {
    replies.push(await p.client.requestToChannel('svc').payload('echo', fill(i, sizes[i])).timeout(10000).submit());
  }
  const wide = Array.from({ length: 40 }, (_, k) => sizes.push(4096) - 1);
  const big = [4097, 100000].map((n) => sizes.push(n) - 1);
  replies.push(...await Promise.all([...wide, ...big].map((i) =>
    p.client.requestToChannel('svc').payload('echo', fill(i, sizes[i])).timeout(10000).submit())));
  assert.equal(kept.length, sizes.length);
  replies.forEach((r, i) => assert.ok(r.payload.equals(fill(i, sizes[i])), `reply ${i} (${sizes[i]} bytes) intact`));
  // The turns' own payloads, read after every batch: the sequential ones
  // in order, the concurrent ones as a set (each request's exactly once).
  for (let i = 0; i < 50; i++) assert.ok(kept[i].equals(fill(i, sizes[i])), `turn ${i}'s payload intact`);
  const rest = kept.slice(50).map((b) => b.toString('hex')).sort();
  const want = sizes.slice(50).map((n, k) => fill(50 + k, n).toString('hex')).sort();
  assert.deepEqual(rest, want);
  await p.close();
});
