// core.test.js — the Core surface: sockets, send / receive, errors named
// from the generated table, request / reply through the completion queue,
// the poller with sockets and timers, zlink_poll.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { zlink } = require('./helpers');

test('PAIR over inproc: a multipart record, then NO_DATA/EAGAIN', () => {
  const ctx = new zlink.Context();
  const a = ctx.socket('PAIR');
  const b = ctx.socket(zlink.SocketType.PAIR);
  a.bind('inproc://core-pair');
  b.connect('inproc://core-pair');
  b.setOption('RCVTIMEO', 5000);
  a.send(['hello', Buffer.from([0, 1, 2])]);
  const { parts } = b.recv();
  assert.equal(parts.length, 2);
  assert.equal(parts[0].toString(), 'hello');
  assert.deepEqual([...parts[1]], [0, 1, 2]);
  assert.throws(() => b.recv({ dontwait: true }), (e) => e instanceof zlink.ZLinkError && e.result === 'ZLINK_RECV_NO_DATA' && e.errno === 'EAGAIN');
  assert.equal(b.getOption('RCVTIMEO'), 5000);
  a.close();
  b.close();
  ctx.close();
});

test('DEALER request, ROUTER reply, REQUEST record in the completion queue', () => {
  const ctx = new zlink.Context();
  const router = ctx.socket('ROUTER');
  const dealer = ctx.socket('DEALER');
  router.bind('inproc://core-rr');
  dealer.connect('inproc://core-rr');
  router.setOption('RCVTIMEO', 5000);
  dealer.setOption('RCVTIMEO', 5000);
  const cid = dealer.request(['ping'], { timeoutMs: 5000, userContext: 42 });
  assert.ok(cid > 0n);
  const got = router.routerRecv();
  assert.ok(got.token > 0n, 'a REQUEST has a reply token');
  assert.equal(got.parts[0].toString(), 'ping');
  router.reply(got.rid, got.token, ['pong']);
  const rec = dealer.completionRecv();
  assert.equal(rec.kind, zlink.CompletionKind.REQUEST);
  assert.equal(rec.completionId, cid);
  assert.equal(rec.userContext, 42);
  assert.equal(rec.replyParts[0].toString(), 'pong');
  assert.throws(() => dealer.completionRecv({ dontwait: true }), (e) => e.result === 'ZLINK_RECV_NO_DATA');
  dealer.close();
  router.close();
  ctx.close();
});

test('poller: sockets, timers, CONFLICT/EEXIST on a second add, user data back', async () => {
  const ctx = new zlink.Context();
  const a = ctx.socket('PAIR');
  const b = ctx.socket('PAIR');
  a.bind('inproc://core-poll');
  b.connect('inproc://core-poll');
  const poller = new zlink.Poller();
  const marker = { name: 'b' };
  poller.add(b, zlink.Poll.IN, marker);
  assert.throws(() => poller.add(b, zlink.Poll.IN), (e) => e.result === 'ZLINK_CONFIG_CONFLICT' && e.errno === 'EEXIST');
  assert.deepEqual(poller.wait(4, 0), [], 'nothing ready: 0 events at once');
  a.send('x');
  const ev = poller.wait(4, 5000);
  assert.equal(ev.length, 1);
  assert.equal(ev[0].user, marker);
  assert.equal(ev[0].socket, b.id);
  assert.equal(ev[0].events & zlink.Poll.IN, zlink.Poll.IN);
  b.recv();
  poller.modify(b, 0);
  const timer = new zlink.Timer();
  poller.addTimer(timer, 'tick');
  const waiting = poller.waitAsync(4, 5000);
  timer.start(1000000n, 1); // 1 ms, once
  const tev = await waiting;
  assert.equal(tev.length, 1);
  assert.equal(tev[0].user, 'tick');
  assert.equal(tev[0].timer, timer.id);
  assert.equal(tev[0].sourceKind, zlink.SourceKind.TIMER);
  assert.equal(timer.recv(), 1);
  assert.equal(poller.size(), 2);
  poller.removeTimer(timer);
  poller.remove(b);
  assert.equal(poller.size(), 0);
  poller.close();
  timer.close();
  assert.throws(() => poller.remove(b), (e) => e instanceof zlink.ZLinkError);
  const { count, revents } = zlink.poll([{ socket: a, events: zlink.Poll.OUT }], 0);
  assert.equal(count, 1);
  assert.equal(revents[0] & zlink.Poll.OUT, zlink.Poll.OUT);
  a.close();
  b.close();
  ctx.close();
});

test('monitor snapshot: READY, then the ROUTER peer\'s PAUSED and RUNNING seen as flow state', async () => {
  const ctx = new zlink.Context();
  const router = ctx.socket('ROUTER');
  router.setOption('LINGER', 0);
  router.bind('tcp://127.0.0.1:0');
  const ep = router.getOption('LAST_ENDPOINT').toString().replace(/\0+$/, '');
  const dealer = ctx.socket('DEALER');
  dealer.setOption('LINGER', 0);
  dealer.connect(ep);
  // Each look first lets the DEALER take its commands (a zero-timeout poll).
  const look = () => {
    zlink.poll([{ socket: dealer, events: zlink.Poll.IN }], 0);
    return dealer.pendingStatus();
  };
  const until = async (cond, what) => {
    const end = Date.now() + 5000;
    while (!cond(look())) {
      assert.ok(Date.now() < end, what);
      await new Promise((r) => setTimeout(r, 1));
    }
  };
  await until((st) => (st.stateFlags & zlink.MonitorState.READY) !== 0, 'the DEALER ready');
  let st = look();
  assert.equal(st.detailFlags & zlink.MonitorDetail.FLOW_STATE, zlink.MonitorDetail.FLOW_STATE);
  assert.equal(st.flowPausedConnections, 0n);
  assert.equal(st.flowPauseAppliedTotal, 0n);
  router.setReceiveFlowState('PAUSED');
  await until((s) => s.flowPausedConnections === 1n, 'the DEALER sees PAUSED');
  st = look();
  assert.equal(st.flowPauseAppliedTotal, 1n);
  assert.equal(st.flowResumeAppliedTotal, 0n);
  router.setReceiveFlowState(zlink.ReceiveFlowState.RUNNING);
  await until((s) => s.flowPausedConnections === 0n, 'the DEALER sees RUNNING');
  st = look();
  assert.equal(st.flowPauseAppliedTotal, 1n);
  assert.equal(st.flowResumeAppliedTotal, 1n);
  assert.equal(typeof st.flowStateStaleTotal, 'bigint');
  dealer.close();
  router.close();
  ctx.close();
});
