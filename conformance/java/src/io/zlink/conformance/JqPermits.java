package io.zlink.conformance;

import static io.zlink.conformance.Sc.*;

import io.zlink.Host;
import io.zlink.HostCapacity;
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
            h.requestToChannel(awaitChannel).payload("m", "", b(t)).timeout(Duration.ofMillis(awaitTimeoutMs))
                .submit().whenComplete((v, e) -> {
                    synchronized (this) {
                        awaitResult.put(i, Check.resultOf(e));
                        awaitReply.put(i, v == null ? "" : tag(v));
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
}
