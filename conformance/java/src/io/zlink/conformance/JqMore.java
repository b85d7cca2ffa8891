package io.zlink.conformance;

import static io.zlink.conformance.Sc.*;

import io.zlink.Host;
import io.zlink.HostCapacity;
import io.zlink.RequestCall;
import io.zlink.SendCall;
import io.zlink.Tables;
import io.zlink.Turn;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** JQ-06 (conformance/c/jq_flow.c) and JQ-19 (conformance/c/jq_raw.c) over the Java binding. */
final class JqMore {
    private JqMore() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("JQ-06", p -> ScCases.each(p, JqMore::csBypassKeepsFifo));
        m.put("JQ-19", p -> {
            int records = JqFlow.param(p, "records"), size = JqFlow.param(p, "record_size");
            int window = JqFlow.param(p, "window");
            Check.that(records > 0 && size > 0 && window > 0 && window <= records, "parameters in range");
            ScCases.each(p, tr -> {
                backpressureRound(Mode.MESH, tr, records, size, window);
                backpressureRound(Mode.CS, tr, records, size, window);
            });
        });
    }

    // ------------------------------------------------------------ the flow

    /** One-ways started by the caller, counted as they end. */
    static final class Flow {
        int started, ok, failed, firstFailure; // guarded by this

        void start(Host h, String prefix, int i, int size) {
            byte[] t = b(prefix + i);
            byte[] p = new byte[Math.max(size, t.length)];
            System.arraycopy(t, 0, p, 0, t.length);
            SendCall c = h.sendToChannel("svc").payload("m", "", p);
            synchronized (this) {
                started++;
            }
            c.submit().whenComplete((v, e) -> {
                int r = Check.resultOf(e);
                synchronized (this) {
                    if (r == Tables.FW_OK) {
                        ok++;
                    } else {
                        if (failed == 0)
                            firstFailure = r;
                        failed++;
                    }
                    notifyAll();
                }
                c.close();
            });
        }

        synchronized int finished() {
            return ok + failed;
        }

        /** Waits until n ended or the absolute instant untilMs; how many ended. */
        synchronized int await(int n, long untilMs) throws InterruptedException {
            while (ok + failed < n && now() < untilMs)
                wait(Math.max(1, untilMs - now()));
            return ok + failed;
        }

        synchronized void noFailure() {
            if (failed != 0)
                throw Check.fail(failed + " one-way sends failed, the first with " + Tables.resultName(firstFailure));
        }
    }

    // ------------------------------------------------------------ JQ-19

    /**
     * B has M = 1, Core HWMs 16 KiB and a gated handler; A (HWM 16 KiB,
     * SendTimeout 60 s) sends records one-ways of size bytes, at most
     * window outstanding. While the gate is closed the sends pend and none
     * fails; after open() every one completes OK and B handles each once,
     * in order, dropping nothing.
     */
    static void backpressureRound(Mode mode, String tr, int records, int size, int window) throws Exception {
        Server b = new Server("B");
        b.maxJobs = 1;
        b.hwm = 16384;
        b.open(mode, tr, "jq19");
        Client a = new Client();
        a.hwm = 16384;
        a.sendTimeout = 60_000_000_000L;
        a.open(mode, b);
        int base = b.rec.count();
        b.gated = true;
        Flow f = new Flow();
        int next = 0;
        for (; next < window; next++)
            f.start(a.h, "j", next, size);
        Check.eventually(() -> b.gate.waiting() == 1, 5000, "B's handler at the gate");
        Check.eventually(() -> a.h.status().onewayWaiting > 0, 5000, "A's one-ways waiting");
        int before = f.finished();
        // Over tcp the kernel's socket buffers take records too (they grow
        // to megabytes): keep the window full until no send completed for 100 ms.
        long giveUp = now() + Check.ms(30000);
        int held;
        for (;;) {
            while (next < records && next - f.finished() < window)
                f.start(a.h, "j", next++, size);
            held = f.finished();
            if (held >= records)
                throw Check.fail("all " + records + " sends completed while B's gate was closed");
            long t0 = now();
            if (f.await(held + 1, t0 + 100) == held) {
                Check.that(now() - t0 >= 100, "the pending window lasted 100 ms");
                break; // 100 ms without a completion: held by the HWMs
            }
            if (now() > giveUp)
                throw Check.fail("sends kept completing for 30 s while B's gate was closed (" + held + ")");
        }
        f.noFailure();
        System.err.printf("JQ-19 %s %s: %d of %d admitted before open, %d when the flow stood still%n",
                          mode == Mode.MESH ? "mesh" : "cs", tr, before, window, held);
        Check.that(a.h.status().onewayWaiting > 0, "A's one-ways still waiting");
        b.gate.open();
        long end = now() + Check.ms(120000);
        while (next < records) {
            int done = f.await(next - window + 1, end);
            if (done < next - window + 1)
                throw Check.fail("the flow stalled: " + done + " of " + next + " started sends completed");
            f.noFailure();
            while (next < records && next - f.finished() < window)
                f.start(a.h, "j", next++, size);
        }
        if (f.await(records, end) < records)
            throw Check.fail("only " + f.finished() + " of " + records + " sends completed");
        f.noFailure();
        Check.eventually(() -> b.rec.count() == base + records, 30000, "B handled every record");
        List<String> seen = b.rec.snapshot();
        for (int i = 0; i < records; i++) {
            if (!seen.get(base + i).equals("j" + i))
                throw Check.fail("B's record " + i + " is " + seen.get(base + i) + ", j" + i + " expected (order)");
        }
        JqCases.expectNoDrops(b.h, "B");
        Check.eventually(() -> b.h.capacity().permitsInUse == 0, 5000, "B's permits free");
        a.close();
        b.close();
    }

    // ------------------------------------------------------------ JQ-06

    /**
     * Part 1: C is a RouteMesh server of channel "flood" (M = 1, gated
     * handler) flooded by F, and a ClientServer client of S; its request to
     * S completes while C stays saturated, and the reply takes no permit
     * (C's capacity reads the same before and after). Part 2: S (M = 1) is
     * saturated by its gated handler; C sends d1..d5, then a request q;
     * S handles warm, q1, d1..d5, q in that order.
     */
    static void csBypassKeepsFifo(String tr) throws Exception {
        final int flood = 8, nd = 5;
        Server s = new Server("S");
        s.maxJobs = 1;
        s.open(Mode.CS, tr, "jq06");
        Gate cgate = new Gate();
        Host ch = JqCases.meshHost("C", tr, true, 1);
        ch.meshAddChannelServer("m", "flood", 100);
        ch.addHandler(Host.OwnerKind.CHANNEL, "flood", Turn.Kind.SEND, "m", turn -> {
            cgate.pass();
            return null;
        });
        ch.addCsClient("svc", s.bound);
        ch.channelOption("svc", Host.NodeOption.SEND_TIMEOUT, 60_000_000_000L);
        ch.start();
        String cBound = ch.endpoint("m");
        Host fh = JqCases.meshHost("F", tr, false, 0);
        fh.meshAddChannelClient("m", "flood");
        fh.meshOption("m", Host.NodeOption.SEND_TIMEOUT, 60_000_000_000L);
        fh.meshConnect("m", cBound, "C");
        fh.start();
        Check.eventually(() -> fh.meshReadyPeers("m") == 1, 5000, "F's peer ready");
        Check.eventually(() -> ch.meshReadyPeers("m") == 1, 5000, "C's peer ready");
        try (RequestCall w = ch.requestToChannel("svc").payload("m", "", b("warm"))) {
            Check.eq(tag(w.timeout(Duration.ofMillis(Check.ms(5000))).submit_sync()), "warm", "warm's reply");
        }

        // Part 1.
        Done[] fd = new Done[flood];
        SendCall[] fc = new SendCall[flood];
        for (int i = 0; i < flood; i++) {
            fc[i] = fh.sendToChannel("flood").payload("m", "", b("f" + i));
            fd[i] = new Done().on(fc[i].submit());
            if (i == 0)
                Check.eventually(() -> cgate.waiting() == 1, 5000, "f0 at C's gate");
        }
        Check.eventually(() -> ch.capacity().queuedJobs == 1, 5000, "C holds one queued job");
        HostCapacity before = ch.capacity();
        Check.eq(before.pressureState, 1, "C's pressure state (PAUSED)");
        Check.eq(before.permitsInUse, 1, "C's permits in use");
        Check.eq(before.effectiveMax, 1, "C's effective max");
        try (RequestCall q1 = ch.requestToChannel("svc").payload("m", "", b("q1"))) {
            Check.eq(tag(q1.timeout(Duration.ofMillis(Check.ms(2000))).submit_sync()), "q1", "q1's reply");
        }
        HostCapacity after = ch.capacity();
        Check.eq(after.pressureState, 1, "C's pressure state after q1");
        Check.eq(after.permitsInUse, before.permitsInUse, "C's permits in use after q1");
        Check.eq(after.reservedSupplyPermits, before.reservedSupplyPermits, "C's reserved supply permits");
        Check.eq(after.queuedJobs, before.queuedJobs, "C's queued jobs after q1");
        Check.eq(after.peakPermitsInUse, before.peakPermitsInUse, "C's peak permits");
        Check.eq(after.transitionsPaused, before.transitionsPaused, "C's paused transitions");
        Check.eq(after.transitionsRunning, before.transitionsRunning, "C's running transitions");
        Check.eq(cgate.waiting(), 1, "f0 still at C's gate");
        cgate.open();
        for (int i = 0; i < flood; i++) {
            fd[i].expect(5000);
            Check.result(fd[i].result, Tables.FW_OK, "f" + i);
        }
        Check.eventually(() -> ch.capacity().permitsInUse == 0, 5000, "C's permits free");

        // Part 2: S saturated: d1 waits at S's gate, d2 holds S's permit.
        s.gated = true;
        Done[] dd = new Done[nd];
        SendCall[] dc = new SendCall[nd];
        for (int i = 0; i < nd; i++) {
            dc[i] = ch.sendToChannel("svc").payload("m", "", b("d" + (i + 1)));
            dd[i] = new Done().on(dc[i].submit());
            if (i == 0)
                Check.eventually(() -> s.gate.waiting() == 1, 5000, "d1 at S's gate");
            if (i == 1)
                Check.eventually(() -> s.h.capacity().pressureState == 1, 5000, "S paused (d2 holds its permit)");
        }
        RequestCall q = ch.requestToChannel("svc").payload("m", "", b("q"));
        q.timeout(Duration.ofMillis(Check.ms(10000)));
        long t0 = now();
        Done dq = new Done().on(q.submit());
        Check.that(!dq.awaitUntil(t0 + 100), "q completed while S was saturated");
        Check.eq(s.rec.count(), 2, "S's records before its gate opened (warm, q1)");
        Check.eq(s.gate.waiting(), 1, "d1 at S's gate");
        s.gated = false;
        s.gate.open();
        for (int i = 0; i < nd; i++) {
            dd[i].expect(5000);
            Check.result(dd[i].result, Tables.FW_OK, "d" + (i + 1));
        }
        dq.expect(10000);
        Check.result(dq.result, Tables.FW_OK, "q's outcome");
        Check.eq(dq.reply, "q", "q's reply");
        Check.eventually(() -> s.rec.count() >= 3 + nd, 5000, "S handled every record");
        Check.eq(String.join(" ", s.rec.snapshot()), "warm q1 d1 d2 d3 d4 d5 q", "S's records in order");
        Check.eq(dq.calls.get(), 1, "q's completions");
        for (SendCall c : fc)
            c.close();
        for (SendCall c : dc)
            c.close();
        q.close();
        fh.shutdown(Duration.ofMillis(2000));
        fh.close();
        ch.shutdown(Duration.ofMillis(2000));
        ch.close();
        s.close();
    }
}
