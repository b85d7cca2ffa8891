package io.zlink.conformance;

import static io.zlink.conformance.Sc.*;

import io.zlink.Host;
import io.zlink.HostCapacity;
import io.zlink.RequestCall;
import io.zlink.SendCall;
import io.zlink.Tables;
import io.zlink.Turn;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * JQ-02 and JQ-20, ported from conformance/c/jq_permits.c. The owner's
 * one-way handler that "awaits" a request returns the request's stage:
 * the binding keeps the turn open until it completes (the C case ends the
 * turn from the completion callback).
 */
final class JqPermits {
    private JqPermits() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("JQ-02", p -> ScCases.each(p, JqPermits::permitAccounting));
        m.put("JQ-20", p -> ScCases.each(p, JqPermits::completionNeedsNoPermit));
        m.put("JQ-14", p -> ScCases.each(p, JqPermits::replyToPausedClient));
        m.put("JQ-15", p -> ScCases.each(p, JqPermits::noHoldingWhileWaiting));
        m.put("JQ-05", p -> ScCases.each(p, JqPermits::saturatedIngress));
        m.put("JQ-03", p -> ScCases.each(p, tr -> {
            Check.that(tr.equals("tcp"), "JQ-03's raw peer lives in its own context: tcp only, not " + tr);
            noReceiveWithoutPermit();
        }));
    }

    /** A handler owner: records each turn's tag and the capacity at its first instruction. */
    static final class Owner {
        Host h;
        volatile boolean gated;
        final Gate gate = new Gate();
        String awaitPrefix = "";
        String awaitChannel;
        long awaitTimeoutMs;
        int started, ended, awaited; // guarded by this
        final List<String> tags = new ArrayList<>();
        final List<long[]> atStart = new ArrayList<>(); // {in use, reserved}
        final Map<Integer, Integer> awaitResult = new java.util.HashMap<>();
        final Map<Integer, String> awaitReply = new java.util.HashMap<>();
        final Map<Integer, Long> awaitElapsed = new java.util.HashMap<>();

        Owner(boolean gated) {
            this.gated = gated;
        }

        synchronized int started() { return started; }

        synchronized int ended() { return ended; }

        synchronized int awaited() { return awaited; }

        CompletionStage<?> onSend(Turn turn) {
            HostCapacity c = h.capacity(); // the first instruction
            String t = tag(turn.payload());
            int i;
            boolean await;
            synchronized (this) {
                i = started++;
                tags.add(t);
                atStart.add(new long[] {c.permitsInUse, c.reservedSupplyPermits});
                await = !awaitPrefix.isEmpty() && t.startsWith(awaitPrefix);
            }
            if (gated)
                gate.pass();
            if (!await) {
                synchronized (this) {
                    ended++;
                }
                return null;
            }
            CompletableFuture<Void> done = new CompletableFuture<>();
            long t0 = now();
            h.requestToChannel(awaitChannel).payload("m", "", b(t)).timeout(Duration.ofMillis(awaitTimeoutMs))
                .submit().whenComplete((v, e) -> {
                    synchronized (this) {
                        awaitResult.put(i, Check.resultOf(e));
                        awaitReply.put(i, v == null ? "" : tag(v));
                        awaitElapsed.put(i, now() - t0);
                        awaited++;
                        ended++;
                    }
                    done.complete(null);
                });
            return done; // the turn stays open until the reply
        }

        CompletionStage<?> onRequest(Turn turn) {
            if (gated)
                gate.pass();
            synchronized (this) {
                started++;
                ended++;
            }
            turn.respond("m", "", turn.payload());
            return null;
        }

        void expectStart(int i, long queued) {
            long inUse, reserved;
            synchronized (this) {
                inUse = atStart.get(i)[0];
                reserved = atStart.get(i)[1];
            }
            if (inUse - reserved != queued || reserved > 1)
                throw Check.fail("turn " + i + " started with " + inUse + " permits in use (" + reserved
                                 + " reserved), expected " + queued + " jobs (and at most one reservation)");
        }

        void expectOrder(int from, String prefix, int first, int n) {
            synchronized (this) {
                for (int i = 0; i < n; i++) {
                    String want = prefix + (first + i);
                    if (from + i >= tags.size() || !tags.get(from + i).equals(want))
                        throw Check.fail("turn " + (from + i) + " of " + tags.size() + " started is \""
                                         + (from + i < tags.size() ? tags.get(from + i) : "") + "\", expected "
                                         + want + " (each once, in order)");
                }
            }
        }
    }

    private static void serve(Host h, String ch, Owner sendOwner, Owner requestOwner) {
        h.meshAddChannelServer("m", ch, 100);
        if (sendOwner != null) {
            sendOwner.h = h;
            h.addHandler(Host.OwnerKind.CHANNEL, ch, Turn.Kind.SEND, "m", sendOwner::onSend);
        }
        Owner ro = requestOwner != null ? requestOwner : new Owner(false);
        h.addHandler(Host.OwnerKind.CHANNEL, ch, Turn.Kind.REQUEST, "m", ro::onRequest);
    }

    /** B serves "back"; A (M = maxJobs) serves "svc" and is a client of "back"; C floods A. */
    private static Host[] trioOpen(String tr, long maxJobs, Owner oa, Owner ob) {
        Host b = JqCases.meshHost("B", tr, true, 0);
        serve(b, "back", null, ob);
        b.start();
        String boundB = b.endpoint("m");
        Host a = JqCases.meshHost("A", tr, true, maxJobs);
        serve(a, "svc", oa, null);
        a.meshAddChannelClient("m", "back");
        a.meshConnect("m", boundB, "B");
        a.start();
        String boundA = a.endpoint("m");
        Host c = JqCases.meshHost("C", tr, false, 0);
        c.meshAddChannelClient("m", "svc");
        c.meshOption("m", Host.NodeOption.SEND_TIMEOUT, 30_000_000_000L);
        c.meshConnect("m", boundA, "A");
        c.start();
        Check.eventually(() -> c.meshReadyPeers("m") == 1, 5000, "C's peer ready");
        Check.eventually(() -> a.meshReadyPeers("m") == 2, 5000, "A's peers ready");
        return new Host[] {a, b, c};
    }

    private static void sendSync(Host c, String tag) {
        c.sendToChannel("svc").payload("m", "", b(tag)).submit_sync();
    }

    private static void end(Host h) {
        h.shutdown(Duration.ofMillis(2000));
        h.close();
    }

    // ------------------------------------------------------------ JQ-02

    private static void permitAccounting(String tr) {
        Owner oa = new Owner(true), ob = new Owner(true);
        oa.awaitPrefix = "j1";
        oa.awaitChannel = "back";
        oa.awaitTimeoutMs = 10000;
        Host[] t = trioOpen(tr, 4, oa, ob);
        Host a = t[0], b = t[1], c = t[2];

        sendSync(c, "j1");
        Check.eventually(() -> oa.gate.waiting() == 1, 5000, "j1 at A's gate");
        oa.expectStart(0, 0);
        Check.eventually(() -> a.capacity().permitsInUse == 0, 5000, "nothing in use with j1 running");
        for (int i = 2; i <= 4; i++)
            sendSync(c, "j" + i);
        Check.eventually(() -> a.capacity().queuedJobs == 3 && a.capacity().permitsInUse == 3, 5000,
                         "j2..j4 queued");
        HostCapacity cap = a.capacity();
        Check.eq(cap.queuedJobs, 3, "queued jobs");
        Check.eq(cap.pressureState, 0, "running (the pause count is 4)");

        oa.gate.open();
        Check.eventually(() -> ob.gate.waiting() == 1, 5000, "j1's await at B's gate");
        oa.gate.close();
        Check.eventually(() -> a.capacity().permitsInUse == 3, 5000, "the await took no permit");
        Check.eq(a.capacity().queuedJobs, 3, "queued jobs");
        Check.eq(a.status().turnsRunning, 1, "turns running");
        Check.eq(oa.started(), 1, "turns started");

        ob.gate.open();
        Check.eventually(() -> oa.awaited() == 1 && oa.gate.waiting() == 1, 5000, "j1 ended, j2 at the gate");
        synchronized (oa) {
            Check.result(oa.awaitResult.get(0), Tables.FW_OK, "j1's await");
            Check.eq(oa.awaitReply.get(0), "j1", "j1's reply");
        }
        Check.eq(oa.started(), 2, "turns started");
        oa.expectStart(1, 2);
        Check.eventually(() -> a.capacity().permitsInUse == 2, 5000, "two in use");
        Check.eq(a.capacity().queuedJobs, 2, "queued jobs");

        oa.gate.open();
        Check.eventually(() -> oa.ended() == 4, 5000, "every turn ended");
        oa.expectOrder(0, "j", 1, 4);
        oa.expectStart(2, 1);
        oa.expectStart(3, 0);
        Check.eventually(() -> a.capacity().permitsInUse == 0, 5000, "nothing in use");
        end(c);
        end(a);
        end(b);
    }

    // ------------------------------------------------------------ JQ-20

    private static boolean saturated(Host h, Host c) {
        HostCapacity cap = h.capacity();
        return cap.permitsInUse == cap.effectiveMax && cap.pressureState == 1
            && (cap.capacityWaiters >= 1 || c.status().onewayWaiting >= 1);
    }

    private static void completionNeedsNoPermit(String tr) {
        Owner oa = new Owner(false), ob = new Owner(true);
        oa.awaitPrefix = "h";
        oa.awaitChannel = "back";
        oa.awaitTimeoutMs = 10000;
        Host[] t = trioOpen(tr, 1, oa, ob);
        Host a = t[0], b = t[1], c = t[2];

        sendSync(c, "h0");
        Check.eventually(() -> ob.gate.waiting() == 1, 5000, "h0 awaits B");
        final int F = 6;
        Done[] dd = new Done[F + 1];
        SendCall[] fc = new SendCall[F + 1];
        for (int i = 1; i <= F; i++) {
            dd[i] = new Done();
            fc[i] = c.sendToChannel("svc").payload("m", "", b("f" + i));
            dd[i].on(fc[i].submit());
        }
        Check.eventually(() -> saturated(a, c), 5000, "A saturated");
        Check.eq(oa.awaited(), 0, "awaits completed");
        Check.eq(oa.started(), 1, "turns started");

        long t0 = now();
        ob.gate.open();
        Check.eventually(() -> oa.awaited() == 1, 5000, "the reply reached A");
        long took = now() - t0;
        synchronized (oa) {
            Check.result(oa.awaitResult.get(0), Tables.FW_OK, "h0's await");
            Check.eq(oa.awaitReply.get(0), "h0", "h0's reply");
        }
        if (took >= Check.ms(1000))
            throw Check.fail("the reply took " + took + " ms to reach saturated A");
        for (int i = 1; i <= F; i++) {
            dd[i].expect(5000);
            Check.result(dd[i].result, Tables.FW_OK, "f" + i);
            fc[i].close();
        }
        Check.eventually(() -> oa.ended() == F + 1, 5000, "every turn ended");
        synchronized (oa) {
            Check.eq(oa.tags.get(0), "h0", "the first turn");
        }
        oa.expectOrder(1, "f", 1, F);
        Check.eventually(() -> a.capacity().permitsInUse == 0, 5000, "nothing in use");
        Check.eq(a.capacity().pressureState, 0, "A running");
        end(c);
        end(a);
        end(b);
    }

    // ------------------------------------------------------------ JQ-03

    /** The framework HELLO (a request) of mesh node "C" to A; false while not connected. */
    private static boolean rawHello(io.zlink.Socket peer, long[] id) {
        byte[] hello = new JqRaw.Wire().prefix(1, 0).l8("m").l8("C").l8("framework-service-v11").u64(1)
                           .u8(0).u8(0).done(); // lifecycle 1, channel count 0
        id[0] = 0;
        int rc = peer.requestResult(b("A"), io.zlink.Socket.DONTWAIT, (int) Check.ms(5000), id, hello);
        if (rc == Tables.SUBMIT_OK)
            return true;
        Check.result(rc, Tables.SUBMIT_NOT_CONNECTED, "the raw HELLO's submit");
        return false;
    }

    /** CHANNEL_SEND to "svc", payload tag, DONTWAIT; a refusal's wait token in wt[0]. */
    private static int rawSend(io.zlink.Socket peer, String tag, long[] wt) {
        wt[0] = 0;
        return peer.sendToResult(b("A"), io.zlink.Socket.DONTWAIT, wt, JqRaw.record(0, 0, 0, "svc", b(tag)));
    }

    /** The peers pausing peer now, as its monitor sees them (a poll lets the socket take its commands). */
    private static long pausedSeen(io.zlink.Socket peer, io.zlink.Socket.Monitor mon, io.zlink.Poller poller) {
        poller.await(1, 0);
        long[] st = mon.status();
        Check.that((st[1] & io.zlink.Socket.Monitor.DETAIL_FLOW_STATE) != 0, "the monitor reports the flow state");
        return st[6];
    }

    /**
     * JQ-03. M = 2, gated owner; a raw Core ROUTER peer sends r1, then
     * r2..r5 back to back: r1 runs at the gate, r2 and r3 hold both
     * permits (in use 2, queued 2, PAUSED, the peer sees the pause); r4
     * and r5 were not received (a capacity waiter at A, or refused at the
     * peer). open(): r1..r5 each once, in order.
     */
    private static void noReceiveWithoutPermit() throws Exception {
        Owner oa = new Owner(true);
        Host a = JqCases.meshHost("A", "tcp", true, 2);
        serve(a, "svc", oa, null);
        a.start();
        String bound = a.endpoint("m");
        io.zlink.Context ctx = new io.zlink.Context();
        io.zlink.Socket peer = ctx.socket(io.zlink.Socket.ROUTER);
        peer.option(io.zlink.Socket.LINGER, 0);
        peer.option(io.zlink.Socket.RCVTIMEO, (int) Check.ms(5000));
        peer.routingId(b("C"));
        peer.option(io.zlink.Socket.CONNECT_ROUTING_ID, b("A"));
        peer.connect(bound);
        io.zlink.Socket.Monitor mon = peer.monitor();
        io.zlink.Poller poller = new io.zlink.Poller();
        Check.eq(poller.add(peer, 0, io.zlink.Poller.POLLOUT), Tables.CONFIG_OK, "poller add");

        long[] hid = new long[1];
        Check.eventually(() -> rawHello(peer, hid), 5000, "the raw HELLO sent");
        io.zlink.Socket.Completion hc = peer.completion(0);
        Check.result(hc.result, Tables.RECV_OK, "completion_recv");
        Check.eq(hc.kind, 2, "the HELLO's completion kind (REQUEST)");
        Check.eq(hc.id, hid[0], "the HELLO's completion id");
        Check.result(hc.requestResult, Tables.REQUEST_OK, "the HELLO's request result");
        Check.that(hc.replyParts != null && hc.replyParts.length >= 1 && hc.replyParts[0].length > 3,
                   "the HELLO's reply");
        Check.eq(hc.replyParts[0][3], 2, "the reply command (ADMIT)");
        Check.eventually(() -> a.meshReadyPeers("m") == 1, 5000, "A's peer ready");

        long[] wt = new long[1];
        Check.result(rawSend(peer, "r1", wt), Tables.SUBMIT_OK, "r1");
        Check.eventually(() -> oa.gate.waiting() == 1, 5000, "r1 at A's gate");
        int sent = 1;
        for (int i = 2; i <= 5; i++) {
            int rc = rawSend(peer, "r" + i, wt);
            if (rc != Tables.SUBMIT_OK) {
                Check.result(rc, Tables.SUBMIT_BACKPRESSURED, "r" + i + "'s submit");
                Check.that(wt[0] != 0, "a wait token");
                break;
            }
            sent = i;
        }
        Check.that(sent >= 3, "r2 and r3 left the peer (sent " + sent + ")");
        Check.eventually(() -> a.capacity().queuedJobs == 2, 5000, "A holds two queued jobs");
        Check.eventually(() -> pausedSeen(peer, mon, poller) == 1, 5000, "the peer sees PAUSED");
        if (sent >= 4)
            Check.eventually(() -> a.capacity().capacityWaiters >= 1, 5000, "A's ingress waits for a permit");
        HostCapacity cap = a.capacity();
        Check.eq(cap.permitsInUse, 2, "A's permits in use");
        Check.eq(cap.queuedJobs, 2, "A's queued jobs");
        Check.eq(cap.pressureState, 1, "A paused");
        if (sent >= 4)
            Check.that(cap.capacityWaiters >= 1, "r4 waits in A's Core");
        Check.eq(oa.started(), 1, "turns started (only r1)");
        Check.eq(a.status().turnsQueued, 2, "turns queued (r2, r3)");

        oa.gate.open();
        while (sent < 5) {
            if (wt[0] != 0) {
                io.zlink.Socket.Completion c = peer.completion(0);
                Check.result(c.result, Tables.RECV_OK, "completion_recv");
                Check.eq(c.kind, 3, "a WRITABLE completion");
                Check.eq(c.id, wt[0], "the wait token");
                Check.eq(c.sendResult, Tables.SEND_ADMITTED, "ADMITTED");
                wt[0] = 0;
            }
            int rc = rawSend(peer, "r" + (sent + 1), wt);
            if (rc == Tables.SUBMIT_OK) {
                sent++;
                wt[0] = 0;
            } else {
                Check.result(rc, Tables.SUBMIT_BACKPRESSURED, "a submit");
                Check.that(wt[0] != 0, "a wait token");
            }
        }
        Check.eventually(() -> oa.ended() == 5, 5000, "every turn ended");
        oa.expectOrder(0, "r", 1, 5);
        Check.eventually(() -> a.capacity().permitsInUse == 0, 5000, "A's permits free");
        Check.eq(a.capacity().pressureState, 0, "A running");
        Check.eq(dropped(a), 0, "A's dropped records");
        Check.eq(oa.started(), 5, "turns started");
        poller.close();
        mon.close();
        peer.close();
        ctx.close();
        end(a);
    }

    // ------------------------------------------------------------ JQ-05

    /** A request from h to channel ch (timeout 10 s): {result, reply tag, elapsed ms}. */
    private static Object[] requestTimed(Host h, String ch, String packet, String tag) {
        try (RequestCall q = h.requestToChannel(ch).payload(packet, "", b(tag))) {
            q.timeout(Duration.ofMillis(10000));
            long t0 = now();
            try {
                byte[] r = q.submit_sync();
                return new Object[] {Tables.FW_OK, tag(r), now() - t0};
            } catch (RuntimeException e) {
                return new Object[] {Check.resultOf((Throwable) e), "", now() - t0};
            }
        }
    }

    /** C floods A's "svc" (gated owner oa, M = 2) until A is saturated: f1..f39 pending. */
    private static Done[] floodUntilSaturated(Host a, Host c, Owner oa, SendCall[] fc) {
        sendSync(c, "f0");
        Check.eventually(() -> oa.gate.waiting() == 1, 5000, "f0 at A's gate");
        Done[] dd = new Done[fc.length];
        for (int i = 1; i < fc.length; i++) {
            fc[i] = c.sendToChannel("svc").payload("m", "", b("f" + i));
            dd[i] = new Done().on(fc[i].submit());
        }
        Check.eventually(() -> saturated(a, c), 5000, "A saturated");
        return dd;
    }

    /**
     * JQ-05. A (M = 2, gated) is flooded by C until saturated. Part 1: A's
     * requests to B complete (a reply; NotFound for a packet B has no
     * handler for) promptly while A stays PAUSED; A's shutdown with a
     * 500 ms drain deadline returns within it plus the tolerance (the gate
     * opens at the deadline), with no ingress waiting. Part 2 (fresh
     * hosts): open() delivers every flooded record, once, in order, none
     * dropped.
     */
    private static void saturatedIngress(String tr) throws Exception {
        final int flood = 40, d = 500;
        Owner oa = new Owner(true);
        Host[] t = trioOpen(tr, 2, oa, null);
        Host a = t[0], b = t[1], c = t[2];
        SendCall[] fc = new SendCall[flood];
        Done[] dd = floodUntilSaturated(a, c, oa, fc);
        Object[] r = requestTimed(a, "back", "m", "q");
        Check.result((Integer) r[0], Tables.FW_OK, "A's request to B");
        Check.eq(r[1], "q", "the reply");
        if ((Long) r[2] >= Check.ms(200))
            throw Check.fail("the request to B took " + r[2] + " ms while A was saturated");
        r = requestTimed(a, "back", "nope", "u");
        Check.result((Integer) r[0], Tables.FW_NOT_FOUND, "A's request of an unknown packet");
        if ((Long) r[2] >= Check.ms(200))
            throw Check.fail("the unknown packet's NotFound took " + r[2] + " ms");
        Check.eq(a.capacity().pressureState, 1, "A paused");
        Check.eq(a.capacity().transitionsRunning, 0, "A's running transitions");
        java.util.concurrent.ScheduledExecutorService timer = timer();
        long t0 = now();
        timer.schedule(oa.gate::open, d, java.util.concurrent.TimeUnit.MILLISECONDS);
        a.shutdown(Duration.ofMillis(d));
        onTime(now() - t0, d);
        timer.shutdown();
        Check.eq(a.state(), Host.State.STOPPED, "A's state");
        HostCapacity cap = a.capacity();
        Check.eq(cap.capacityWaiters, 0, "A's capacity waiters");
        Check.eq(cap.permitsInUse, 0, "A's permits in use");
        end(c); // ends what still waited for room toward A
        for (int i = 1; i < flood; i++) {
            dd[i].expect(5000);
            fc[i].close();
        }
        a.close();
        end(b);

        // Part 2: no shutdown; open() delivers everything.
        Owner o2 = new Owner(true);
        Host a2 = JqCases.meshHost("A", tr, true, 2);
        serve(a2, "svc", o2, null);
        a2.start();
        Host c2 = JqCases.meshHost("C", tr, false, 0);
        c2.meshAddChannelClient("m", "svc");
        c2.meshOption("m", Host.NodeOption.SEND_TIMEOUT, 30_000_000_000L);
        c2.meshConnect("m", a2.endpoint("m"), "A");
        c2.start();
        Check.eventually(() -> c2.meshReadyPeers("m") == 1, 5000, "C's peer ready");
        dd = floodUntilSaturated(a2, c2, o2, fc);
        o2.gate.open();
        for (int i = 1; i < flood; i++) {
            dd[i].expect(10000);
            Check.result(dd[i].result, Tables.FW_OK, "f" + i);
            fc[i].close();
        }
        Check.eventually(() -> o2.ended() == flood, 10000, "every flooded record handled");
        o2.expectOrder(0, "f", 0, flood);
        Check.eq(dropped(a2), 0, "A's dropped records");
        Check.eventually(() -> a2.capacity().permitsInUse == 0, 5000, "A's permits free");
        Check.eq(a2.capacity().pressureState, 0, "A running");
        end(c2);
        end(a2);
    }

    // ------------------------------------------------------------ JQ-14

    private static void replyToPausedClient(String tr) {
        Host s = new Host("S");
        s.addCsServer("cs-out", endpoint(tr, "jq14", "S"));
        Owner so = new Owner(false);
        s.addHandler(Host.OwnerKind.CHANNEL, "cs-out", Turn.Kind.REQUEST, "m", so::onRequest);
        s.start();
        String boundS = s.endpoint("cs-out");
        Owner oh = new Owner(true);
        Host h = JqCases.meshHost("H", tr, true, 1);
        serve(h, "svc", oh, null);
        h.addCsClient("cs-out", boundS);
        h.start();
        String boundH = h.endpoint("m");
        Host c = JqCases.meshHost("C", tr, false, 0);
        c.meshAddChannelClient("m", "svc");
        c.meshOption("m", Host.NodeOption.SEND_TIMEOUT, 30_000_000_000L);
        c.meshConnect("m", boundH, "H");
        c.start();
        Check.eventually(() -> c.meshReadyPeers("m") == 1, 5000, "C's peer ready");
        h.requestToChannel("cs-out").payload("m", "", b("warm")).timeout(Duration.ofMillis(10000)).submit_sync();

        sendSync(c, "f0");
        Check.eventually(() -> oh.gate.waiting() == 1, 5000, "f0 at the gate");
        Done[] dd = new Done[4];
        SendCall[] fc = new SendCall[4];
        for (int i = 1; i < 4; i++) {
            dd[i] = new Done();
            fc[i] = c.sendToChannel("svc").payload("m", "", b("f" + i));
            dd[i].on(fc[i].submit());
        }
        Check.eventually(() -> saturated(h, c), 5000, "H saturated");
        HostCapacity before = h.capacity();
        long t0 = now();
        byte[] reply = h.requestToChannel("cs-out").payload("m", "", b("q")).timeout(Duration.ofMillis(10000))
                           .submit_sync();
        long took = now() - t0;
        Check.eq(tag(reply), "q", "the reply");
        if (took >= Check.ms(200))
            throw Check.fail("the request to S took " + took + " ms while H was PAUSED");
        HostCapacity after = h.capacity();
        Check.eq(after.pressureState, 1, "H paused");
        Check.eq(after.transitionsRunning, before.transitionsRunning, "paused throughout");
        Check.eq(after.permitsInUse, 1, "H's permits in use");
        oh.gate.open();
        for (int i = 1; i < 4; i++) {
            dd[i].expect(5000);
            Check.result(dd[i].result, Tables.FW_OK, "f" + i);
            fc[i].close();
        }
        Check.eventually(() -> oh.ended() == 4, 5000, "every turn ended");
        oh.expectOrder(0, "f", 0, 4);
        end(c);
        end(h);
        end(s);
    }

    // ------------------------------------------------------------ JQ-15

    private static long dropped(Host h) {
        long sum = 0;
        for (String r : JqCases.DROP_REASONS)
            sum += h.metric("zlink.mesh_node.messages.dropped", r);
        return sum;
    }

    private static void noHoldingWhileWaiting(String tr) throws Exception {
        final int FLOOD = 3;
        Owner oa = new Owner(false), ob = new Owner(false);
        oa.awaitPrefix = "f";
        oa.awaitChannel = "svc-b";
        oa.awaitTimeoutMs = 1000;
        ob.awaitPrefix = "f";
        ob.awaitChannel = "svc-a";
        ob.awaitTimeoutMs = 1000;
        Host b = JqCases.meshHost("B", tr, true, 2);
        serve(b, "svc-b", ob, null);
        b.meshAddChannelClient("m", "svc-a");
        b.start();
        String boundB = b.endpoint("m");
        Host a = JqCases.meshHost("A", tr, true, 2);
        serve(a, "svc-a", oa, null);
        a.meshAddChannelClient("m", "svc-b");
        a.meshConnect("m", boundB, "B");
        a.start();
        String boundA = a.endpoint("m");
        Host c = JqCases.meshHost("C", tr, false, 0);
        c.meshAddChannelClient("m", "svc-a");
        c.meshAddChannelClient("m", "svc-b");
        c.meshOption("m", Host.NodeOption.SEND_TIMEOUT, 30_000_000_000L);
        c.meshConnect("m", boundA, "A");
        c.meshConnect("m", boundB, "B");
        c.start();
        Check.eventually(() -> c.meshReadyPeers("m") == 2, 5000, "C's peers ready");
        Check.eventually(() -> a.meshReadyPeers("m") == 2, 5000, "A's peers ready");
        Check.eventually(() -> b.meshReadyPeers("m") == 2, 5000, "B's peers ready");

        Done[] dd = new Done[2 * FLOOD];
        SendCall[] fc = new SendCall[2 * FLOOD];
        for (int i = 0; i < FLOOD; i++) {
            dd[2 * i] = new Done();
            dd[2 * i + 1] = new Done();
            fc[2 * i] = c.sendToChannel("svc-a").payload("m", "", b("f" + i));
            dd[2 * i].on(fc[2 * i].submit());
            fc[2 * i + 1] = c.sendToChannel("svc-b").payload("m", "", b("f" + i));
            dd[2 * i + 1].on(fc[2 * i + 1].submit());
        }
        // Until every await ended the peers never stop being ready (sampled).
        long until = now() + Check.ms(3 * 1000 + 5000);
        while (oa.awaited() < FLOOD || ob.awaited() < FLOOD) {
            if (now() > until)
                throw Check.fail("awaits ended: A " + oa.awaited() + ", B " + ob.awaited() + " of " + FLOOD);
            Check.eq(a.meshReadyPeers("m"), 2, "A's ready peers");
            Check.eq(b.meshReadyPeers("m"), 2, "B's ready peers");
            Check.eq(c.meshReadyPeers("m"), 2, "C's ready peers");
            Thread.sleep(10); // the sampling interval of the observation
        }
        Owner[] owners = {oa, ob};
        for (int k = 0; k < 2; k++) {
            Owner o = owners[k];
            synchronized (o) {
                for (int i = 0; i < o.tags.size(); i++) {
                    if (!o.tags.get(i).startsWith("f"))
                        continue;
                    int r = o.awaitResult.get(i);
                    long e = o.awaitElapsed.get(i);
                    if (r == Tables.FW_DEADLINE_EXCEEDED)
                        onTime(e, 1000);
                    else if (r != Tables.FW_OK)
                        throw Check.fail("AB".charAt(k) + "'s request " + i + " ended " + Tables.resultName(r));
                    else if (e > 1000 + Check.ms(250))
                        throw Check.fail("AB".charAt(k) + "'s request " + i + " replied after " + e + " ms");
                }
            }
        }
        Check.that(a.capacity().transitionsPaused >= 1, "A was saturated");
        Check.that(b.capacity().transitionsPaused >= 1, "B was saturated");
        for (int i = 0; i < 2 * FLOOD; i++) {
            dd[i].expect(5000);
            Check.result(dd[i].result, Tables.FW_OK, "flood " + i);
            fc[i].close();
        }
        Check.eventually(() -> a.capacity().permitsInUse == 0 && b.capacity().permitsInUse == 0
                             && a.status().turnsRunning == 0 && b.status().turnsRunning == 0,
                         5000, "load over");
        Check.eq(a.capacity().pressureState, 0, "A running");
        Check.eq(b.capacity().pressureState, 0, "B running");
        Check.eq(oa.awaited(), FLOOD, "A's awaits");
        Check.eq(ob.awaited(), FLOOD, "B's awaits");
        Check.eq(dropped(a), 0, "A's drops");
        Check.eq(dropped(b), 0, "B's drops");
        end(c);
        end(a);
        end(b);
    }
}
