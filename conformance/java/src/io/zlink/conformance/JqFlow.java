package io.zlink.conformance;

import static io.zlink.conformance.Sc.*;

import com.fasterxml.jackson.databind.JsonNode;
import io.zlink.Host;
import io.zlink.HostCapacity;
import io.zlink.RequestCall;
import io.zlink.SendCall;
import io.zlink.Tables;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** JQ-16 and JQ-17, ported from conformance/c/jq_flow.c. */
final class JqFlow {
    private JqFlow() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("JQ-16", p -> {
            int batch = param(p, "batch"), send = param(p, "send_timeout_ms"), req = param(p, "request_timeout_ms");
            Check.that(batch > 0 && send > 0 && req > 0 && req != send, "parameters in range");
            ScCases.each(p, tr -> {
                roomIsNotAnError(tr, Mode.MESH, batch, send, req);
                roomIsNotAnError(tr, Mode.CS, batch, send, req);
                roomIsNotAnError(tr, Mode.MESH, batch, req, send); // swapped
            });
        });
        m.put("JQ-07", p -> {
            int oneways = param(p, "oneways"), window = param(p, "window"), requests = param(p, "requests");
            int timeout = param(p, "timeout_ms"), p99 = param(p, "p99_ms");
            Check.that(oneways > 0 && window > 0 && requests > 0 && timeout > 0 && p99 > 0,
                       "parameters in range");
            ScCases.each(p, tr -> crossConnectionProgress(tr, oneways, window, requests, timeout, p99));
        });
        m.put("JQ-17", p -> {
            int oneways = param(p, "oneways"), window = param(p, "window");
            Check.that(oneways > 0 && window > 0, "parameters in range");
            ScCases.each(p, tr -> fifoNeverRejects(tr, oneways, window));
        });
    }

    static int param(JsonNode p, String name) {
        JsonNode n = p.get(name);
        Check.that(n != null && n.isInt(), "the case needs the integer parameter \"" + name + "\"");
        return n.asInt();
    }

    // ------------------------------------------------------------ the flood

    /** count one-ways "f0", "f1" ... to "svc" from a thread of their own, window in flight. */
    static final class Flood {
        final int count, window;
        int started, inflight, done, ok; // guarded by this
        int badResult, badIndex = -1;
        final Thread thread;

        Flood(Host h, int count, int window) {
            this.count = count;
            this.window = window;
            thread = new Thread(() -> {
                for (int i = 0; i < count; i++) {
                    synchronized (this) {
                        while (inflight >= window) {
                            try {
                                wait();
                            } catch (InterruptedException e) {
                                return;
                            }
                        }
                        inflight++;
                        started++;
                    }
                    final int idx = i;
                    SendCall c = h.sendToChannel("svc").payload("m", "", b("f" + i));
                    c.submit().whenComplete((v, t) -> {
                        int r = Check.resultOf(t);
                        synchronized (this) {
                            inflight--;
                            done++;
                            if (r == Tables.FW_OK)
                                ok++;
                            else if (badIndex < 0) {
                                badIndex = idx;
                                badResult = r;
                            }
                            notifyAll();
                        }
                        c.close();
                    });
                }
            }, "jq-flood");
            thread.start();
        }

        /** Waits up to ms (scaled) until mark sends ended; the number that ended. */
        synchronized int waitDone(int mark, long ms) throws InterruptedException {
            long until = now() + Check.ms(ms);
            while (done < mark && now() < until)
                wait(Math.max(1, until - now()));
            return done;
        }

        synchronized void finishAll(long ms) throws InterruptedException {
            long until = now() + Check.ms(ms);
            while (done < count && now() < until)
                wait(Math.max(1, until - now()));
            if (done < count)
                throw Check.fail("flood: " + done + " of " + count + " sends ended within " + ms + " ms ("
                                 + started + " started)");
            if (ok != count)
                throw Check.fail("flood: " + (count - ok) + " of " + count + " sends failed; the first, f"
                                 + badIndex + ", with " + Tables.resultName(badResult));
        }
    }

    // ------------------------------------------------------------ JQ-16

    private static void checkRoomOutcome(String tr, String what, int i, Done d, long started, long wantMs,
                                         boolean oneway) {
        d.expect(5000);
        int r = d.result;
        if (r == Tables.FW_CAPACITY_EXCEEDED || r == Tables.FW_REJECTED || r == Tables.FW_UNAVAILABLE)
            throw Check.fail(tr + ": " + what + " " + i + " ended " + Tables.resultName(r) + " for lack of room");
        if (oneway && r == Tables.FW_OK)
            return;
        if (r != Tables.FW_DEADLINE_EXCEEDED)
            throw Check.fail(tr + ": " + what + " " + i + " ended " + Tables.resultName(r) + ", expected "
                             + (oneway ? "OK or DEADLINE_EXCEEDED" : "DEADLINE_EXCEEDED"));
        onTime(d.atMs - started, wantMs);
        Check.eq(d.calls.get(), 1, "completions");
    }

    private static void roomIsNotAnError(String tr, Mode mode, int batch, int sendMs, int requestMs) {
        Server b = new Server("B");
        b.maxJobs = 1;
        b.hwm = ScSubmit.SAT_HWM;
        b.open(mode, tr, mode == Mode.MESH ? "jq16m" : "jq16c");
        Client a = new Client();
        a.hwm = ScSubmit.SAT_HWM;
        a.sendTimeout = sendMs * 1_000_000L;
        a.open(mode, b);
        ScSubmit.Sat sat = ScSubmit.saturate(a, b);
        Done[] dd = new Done[2 * batch];
        AutoCloseable[] cc = new AutoCloseable[2 * batch];
        long[] t0 = new long[2 * batch];
        for (int i = 0; i < 2 * batch; i++) {
            boolean request = i % 2 == 1;
            String tag = (request ? "q" : "w") + (i / 2);
            dd[i] = new Done();
            if (request) {
                RequestCall c = request(a, null, tag).timeout(Duration.ofMillis(requestMs));
                cc[i] = c;
                t0[i] = now();
                dd[i].on(c.submit());
            } else {
                SendCall c = send(a, null, tag);
                cc[i] = c;
                t0[i] = now();
                dd[i].on(c.submit());
            }
        }
        checkRoomOutcome(tr, "the pending one-way", 0, sat.done, sat.startedMs, sendMs, true);
        int admitted = 0, timedOut = 0;
        for (int i = 0; i < 2 * batch; i++) {
            boolean request = i % 2 == 1;
            checkRoomOutcome(tr, request ? "request" : "one-way", i / 2, dd[i], t0[i],
                             request ? requestMs : sendMs, !request);
            if (!request && dd[i].result == Tables.FW_OK)
                admitted++;
            else if (!request)
                timedOut++;
        }
        System.err.printf("JQ-16 %s %s: %d saturating sends accepted; batch one-ways: %d admitted, %d DeadlineExceeded%n",
                          tr, mode == Mode.MESH ? "mesh" : "cs", sat.accepted, admitted, timedOut);
        for (AutoCloseable c : cc) {
            try {
                c.close();
            } catch (Exception e) {
                throw Check.fail("close: " + e);
            }
        }
        sat.pending.close();
        a.close();
        b.close();
    }

    // ------------------------------------------------------------ JQ-07

    /**
     * JQ-07: A1 floods B (fast handlers) with oneways one-ways, window in
     * flight; A2, a host of its own on another connection, makes requests
     * requests (timeout timeoutMs) spread over the first half of the flood:
     * each succeeds and their p99 (nearest rank) stays below p99Ms (both
     * scaled).
     */
    private static void crossConnectionProgress(String tr, int oneways, int window, int requests,
                                                int timeoutMs, int p99Ms) throws Exception {
        Server b = new Server("B");
        b.open(Mode.MESH, tr, "jq07");
        Client a1 = new Client();
        a1.sendTimeout = 60_000_000_000L;
        a1.open(Mode.MESH, b);
        Host a2 = new Host("A2");
        a2.addMeshNode("m", "A2", null);
        a2.meshAddChannelClient("m", "svc");
        a2.meshConnect("m", b.bound, "B");
        a2.start();
        Check.eventually(() -> a2.meshReadyPeers("m") == 1, 5000, "A2's peer ready");
        Check.eventually(() -> b.h.meshReadyPeers("m") == 2, 5000, "B's two peers ready");
        long floodT0 = now();
        Flood f = new Flood(a1.h, oneways, window);
        long[] lat = new long[requests];
        int doneAtLast = 0;
        for (int k = 0; k < requests; k++) {
            int mark = (int) ((long) oneways * (k + 1) / (2L * requests));
            if (f.waitDone(mark, 30000) < mark)
                throw Check.fail(tr + ": the flood did not reach " + mark + " of " + oneways + " sends");
            String tag = "r" + k;
            try (RequestCall r = a2.requestToChannel("svc").payload("m", "", b(tag))) {
                r.timeout(Duration.ofMillis(Check.ms(timeoutMs)));
                long t0 = now();
                int res;
                byte[] reply = null;
                try {
                    reply = r.submit_sync();
                    res = Tables.FW_OK;
                } catch (RuntimeException e) {
                    res = Check.resultOf((Throwable) e);
                }
                lat[k] = now() - t0;
                if (res != Tables.FW_OK)
                    throw Check.fail(tr + ": A2's request " + k + " ended " + Tables.resultName(res) + " after "
                                     + lat[k] + " ms, B in use " + b.h.capacity().permitsInUse + ", state "
                                     + b.h.capacity().pressureState);
                Check.eq(tag(reply), tag, "A2's reply");
            }
            if (k == requests - 1)
                doneAtLast = f.waitDone(0, 0);
        }
        if (doneAtLast >= oneways)
            throw Check.fail(tr + ": the flood of " + oneways + " ended before A2's last request");
        f.finishAll(120000);
        f.thread.join();
        long floodMs = now() - floodT0;
        Check.eventually(() -> b.rec.count() == oneways + requests, 30000, "B handled every record");
        java.util.Arrays.sort(lat);
        int at = (requests * 99 + 99) / 100 - 1;
        long p99 = lat[at];
        HostCapacity bc = b.h.capacity();
        System.err.printf("JQ-07 %s: %d one-ways in %d ms; A2 latency ms min %d median %d p99 %d; B paused %d times, "
                          + "peak permits %d of %d%n", tr, oneways, floodMs, lat[0], lat[requests / 2], p99,
                          bc.transitionsPaused, bc.peakPermitsInUse, bc.effectiveMax);
        if (p99 >= Check.ms(p99Ms))
            throw Check.fail(tr + ": A2's request p99 " + p99 + " ms, bound " + Check.ms(p99Ms) + " ms (B paused "
                             + bc.transitionsPaused + " times)");
        JqCases.expectNoDrops(b.h, "B");
        a2.shutdown(Duration.ofMillis(2000));
        a2.close();
        a1.close();
        b.close();
    }

    // ------------------------------------------------------------ JQ-17

    private static void fifoNeverRejects(String tr, int oneways, int window) throws Exception {
        Server b = new Server("B");
        b.maxJobs = 2 * oneways;
        b.open(Mode.MESH, tr, "jq17");
        Client a = new Client();
        a.sendTimeout = 60_000_000_000L;
        a.open(Mode.MESH, b);
        b.gated = true;
        long t0 = now();
        Flood f = new Flood(a.h, oneways, window);
        f.finishAll(60000); // every send OK, with the gate closed
        f.thread.join();
        long sentMs = now() - t0;
        Check.eventually(() -> b.h.capacity().queuedJobs == oneways - 1, 30000, "B holds the jobs");
        HostCapacity bc = b.h.capacity();
        Check.eq(b.gate.waiting(), 1, "f0 at the gate");
        Check.eq(b.rec.count(), 0, "records handled");
        Check.eq(bc.pressureState, 0, "B running");
        b.gate.open();
        Check.eventually(() -> b.rec.count() == oneways, 60000, "every record handled");
        Check.eventually(() -> b.h.capacity().permitsInUse == 0, 5000, "permits free");
        long allMs = now() - t0;
        List<String> seen = b.rec.snapshot();
        for (int i = 0; i < oneways; i++) {
            if (!seen.get(i).equals("f" + i))
                throw Check.fail(tr + ": record " + i + " is '" + seen.get(i) + "', not f" + i);
        }
        System.err.printf("JQ-17 %s: %d one-ways completed in %d ms, handled by %d ms; peak %d%n", tr, oneways,
                          sentMs, allMs, bc.peakPermitsInUse);
        JqCases.expectNoDrops(b.h, "B");
        JqCases.expectNoDrops(a.h, "A");
        a.close();
        b.close();
    }
}
