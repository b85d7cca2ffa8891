// cases_x.js — framework-contract.md §7.3 extras X-1 (terminator surface)
// and X-2 (isolation) for Node, registered by id.
'use strict';
const { ok, eq, eventually, settle, resultOf } = require('./check');
const { zlink, Server, Client, syncTerminators, track } = require('./harness');

async function pairOpen(tag) {
  const b = new Server({ name: 'B', weight: 100 }).open('mesh', 'inproc', tag);
  const a = await new Client().open('mesh', [b]);
  return { a, b };
}

// submit and yield exist and return Promises; no synchronous
// terminator on any framework call object (proved absent); a second
// terminator is InvalidOperation; yield outside a Spot turn too.
async function x1() {
  const { a, b } = await pairOpen('x1');
  const calls = [a.h.sendToChannel('svc'), a.h.requestToChannel('svc'), a.h.sendToNode('m', 'B'), a.h.requestToNode('m', 'B')];
  let replyCall = null;
  b.replyMode = 'hold';
  const held = settle(a.call(true, null, 'r').submit());
  await eventually(() => b.held.length === 1, 2000, 'a reply call taken');
  replyCall = b.held[0].reply;
  for (const c of [...calls, replyCall]) {
    eq(typeof c.submit, 'function', 'submit');
    eq(typeof c.yield, 'function', 'yield');
    eq(syncTerminators(c).length, 0, 'synchronous terminators');
  }
  eq(resultOf(await settle(replyCall.submit())), 'OK', 'the reply');
  eq(resultOf(await held), 'OK', 'the held request');
  b.replyMode = 'now';
  const c = a.call(true, null, 'twice');
  const first = c.submit();
  ok(first instanceof Promise, 'submit returns a Promise');
  const second = c.submit();
  ok(second instanceof Promise, 'a second submit returns a Promise');
  eq(resultOf(await settle(second)), 'INVALID_OPERATION', 'second terminator');
  eq(resultOf(await settle(c.yield())), 'INVALID_OPERATION', 'yield after submit');
  eq(resultOf(await settle(first)), 'OK', 'the first terminator is untouched');
  const y = a.call(true, null, 'y').yield();
  ok(y instanceof Promise, 'yield returns a Promise');
  eq(resultOf(await settle(y)), 'INVALID_OPERATION', 'yield outside a Spot turn');
  eq(b.recHas('y'), 0, 'a refused yield sent nothing');
  await a.close();
  await b.close();
}

// aborting or consuming one returned Promise never affects another
// call, even an already-resolved one.
async function x2() {
  const { a, b } = await pairOpen('x2');
  const done = await settle(a.call(true, null, 'done').submit());
  eq(resultOf(done), 'OK', 'done');
  b.replyMode = 'hold';
  const acHeld = new AbortController();
  const pending = track(a.call(true, null, 'pending').submit(acHeld.signal));
  await eventually(() => b.held.length === 1, 2000, 'pending held');
  const ac = new AbortController();
  const victim = track(a.call(true, null, 'victim').submit(ac.signal));
  await eventually(() => b.held.length === 2, 2000, 'victim held');
  ac.abort();
  await victim.done;
  eq(victim.result, 'CANCELLED', 'the aborted call');
  eq(pending.calls, 0, 'another pending call is untouched by the abort');
  // Consuming a settled Promise again changes nothing.
  b.replyMode = 'now';
  const again = a.call(true, null, 'again').submit();
  const v1 = await again;
  const v2 = await again;
  ok(v1 === v2, 'the same value each time');
  // Aborting after a call resolved does not touch it, nor the pending one.
  const acDone = new AbortController();
  const late = await settle(a.call(false, null, 'oneway').submit(acDone.signal));
  eq(resultOf(late), 'OK', 'oneway');
  acDone.abort();
  eq(pending.calls, 0, 'the pending call after another signal aborted');
  b.takeHeld('pending').submit();
  await pending.done;
  eq(pending.result, 'OK', 'the pending call completes with its reply');
  eq(pending.value.payload.toString(), 'pending', 'its own reply');
  eq(victim.calls, 1, 'the aborted call completed once');
  b.held = [];
  await a.close();
  await b.close();
}

module.exports.extras = { 'X-1': x1, 'X-2': x2 };
