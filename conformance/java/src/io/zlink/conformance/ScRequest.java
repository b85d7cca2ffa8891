package io.zlink.conformance;

import static io.zlink.conformance.Sc.*;

import io.zlink.Host;
import io.zlink.RequestCall;
import io.zlink.Tables;
import java.time.Duration;
import java.util.Map;

/**
 * SC-11 and SC-19 (seed 000 §17, the ban on resending), ported from
 * conformance/c/sc_request.c. "Never happens" is shown by order: a
 * marker sent later on the same connection arrived, the record did not.
 */
final class ScRequest {
    private ScRequest() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("SC-11", p -> ScCases.each(p, tr -> {
            noResubmit(tr, Mode.MESH);
            noResubmit(tr, Mode.CS);
        }));
        m.put("SC-19", p -> ScCases.each(p, ScRequest::noResendAfterAcceptance));
    }

    private static RequestCall requestStart(Client a, String tag, int timeoutMs, Done d) {
        RequestCall c = request(a, null, tag);
        if (timeoutMs > 0)
            c.timeout(Duration.ofMillis(timeoutMs));
        d.on(c.submit());
        return c;
    }

    /** Server y never saw tag: a marker sent to y after the outcome arrives, y has no tag. */
    private static void neverSeenBy(Client a, Server y, String tag) {
        if (a.mode == Mode.MESH) {
            nodeSend(a.h, y.name, "marker").submit_sync();
            Check.eventually(() -> y.rec.has("marker") >= 1, 2000, "the marker reached " + y.name);
        } else {
            for (int i = 0; y.rec.has("marker") == 0; i++) {
                Check.that(i < 200, "a marker reached " + y.name);
                int rc = waitResult(() -> request(a, null, "marker").submit_sync());
                Check.that(rc == Tables.FW_OK || rc == Tables.FW_DEADLINE_EXCEEDED,
                           "a marker ended " + Tables.resultName(rc));
            }
        }
        Check.eq(y.rec.has(tag), 0, tag + " at " + y.name);
    }

    private static void noResubmit(String tr, Mode mode) {
        Server s1 = new Server("S1"), s2 = new Server("S2");
        s1.open(mode, tr, "sc11");
        s2.open(mode, tr, "sc11");
        Client a = new Client().open(mode, s1, s2);

        // A request with a 300 ms timeout lands on one server, which never
        // replies: DeadlineExceeded, and the other never sees it.
        s1.replyMode = ReplyMode.HOLD;
        s2.replyMode = ReplyMode.HOLD;
        Done dt = new Done();
        long t0 = now();
        RequestCall ct = requestStart(a, "t", 300, dt);
        Check.eventually(() -> s1.rec.has("t") + s2.rec.has("t") == 1, 2000, "t reached one server");
        Server x = s1.rec.has("t") == 1 ? s1 : s2, y = x == s1 ? s2 : s1;
        dt.expect(2000);
        Check.result(dt.result, Tables.FW_DEADLINE_EXCEEDED, "t");
        onTime(dt.atMs - t0, 300);
        x.replyMode = ReplyMode.NOW;
        y.replyMode = ReplyMode.NOW;
        neverSeenBy(a, y, "t");
        Check.eq(x.rec.has("t"), 1, "t at its server");
        Check.eq(dt.calls.get(), 1, "t's completions");

        // Killed after it received the request: exactly one terminal, never resubmitted.
        s1.replyMode = ReplyMode.HOLD;
        s2.replyMode = ReplyMode.HOLD;
        Done dk = new Done();
        RequestCall ck = requestStart(a, "k", (int) Check.ms(3000), dk);
        Check.eventually(() -> s1.rec.has("k") + s2.rec.has("k") == 1, 2000, "k reached one server");
        Server kx = s1.rec.has("k") == 1 ? s1 : s2, ky = kx == s1 ? s2 : s1;
        ky.replyMode = ReplyMode.NOW;
        kx.h.shutdown(Duration.ofMillis(500));
        dk.expect(3000 + 250 + 1000);
        int r = dk.result;
        if (r != Tables.FW_UNAVAILABLE && r != Tables.FW_DEADLINE_EXCEEDED)
            throw Check.fail("the request to a killed server ended " + Tables.resultName(r));
        neverSeenBy(a, ky, "k");
        Check.eq(dk.calls.get(), 1, "k's completions");
        inflightBackToZero(a);

        a.close();
        s1.close();
        s2.close();
        ct.close();
        ck.close();
    }

    /** One probe request: true when answered, false while the weight has not reached A. */
    private static boolean probeAnswered(Client a) {
        int rc = waitResult(() -> request(a, null, "probe").submit_sync());
        if (rc != Tables.FW_OK && rc != Tables.FW_NOT_FOUND && rc != Tables.FW_UNAVAILABLE)
            throw Check.fail("a probe ended " + Tables.resultName(rc));
        return rc == Tables.FW_OK;
    }

    private static void noResendAfterAcceptance(String tr) throws Exception {
        Server s1 = new Server("S1");
        s1.maxJobs = 3;
        Server s2 = new Server("S2");
        s2.weight = 0;
        s1.open(Mode.MESH, tr, "sc19");
        s2.open(Mode.MESH, tr, "sc19");
        Client a = new Client().open(Mode.MESH, s1, s2);

        // S1 saturated: one turn open at the gate, and behind it f1, the
        // one-way marker and the request as queued jobs.
        s1.gated = true;
        send(a, null, "f0").submit_sync();
        Check.eventually(() -> s1.gate.waiting() == 1, 2000, "f0 at S1's gate");
        send(a, null, "f1").submit_sync();
        Check.eventually(() -> s1.h.status().turnsQueued == 1, 2000, "f1 queued");

        Done dm = new Done();
        var mk = send(a, null, "mk");
        dm.on(mk.submit());
        dm.expect(2000);
        Check.result(dm.result, Tables.FW_OK, "mk");
        Done dq = new Done();
        RequestCall rq = requestStart(a, "rq", (int) Check.ms(3000), dq);
        Check.eventually(() -> s1.h.status().turnsQueued == 3, 2000, "three jobs queued at S1");
        Check.eq(s1.h.status().permitsInUse, 3, "S1's permits in use");
        Check.that(!dq.await(100), "rq pending");

        // Kill S1: the drain deadline passes with the gate closed.
        int[] rc = {-1};
        Thread job = new Thread(() -> rc[0] = Check.resultOf(() -> s1.h.shutdown(Duration.ofMillis(300))));
        job.start();
        Check.eventually(() -> s1.h.state() != Host.State.SERVING, 2000, "S1 draining");
        dq.expect(3000 + 250 + 1000);
        s1.gate.open();
        job.join();
        Check.result(rc[0], Tables.FW_OK, "S1's shutdown");
        Check.eq(s1.rec.has("rq") + s1.rec.has("mk"), 0, "rq and mk at S1");
        int r = dq.result;
        if (r != Tables.FW_UNAVAILABLE && r != Tables.FW_DEADLINE_EXCEEDED && r != Tables.FW_SHUTTING_DOWN)
            throw Check.fail("the request queued at a killed server ended " + Tables.resultName(r));

        // S2 becomes eligible: calls reach it, the marker and the request never do.
        Check.eventually(() -> a.h.meshReadyPeers("m") == 1, 5000, "A has one peer");
        s2.h.meshSetWeight("m", "svc", 100);
        Check.eventually(() -> probeAnswered(a), 3000, "S2 answers");
        send(a, null, "after").submit_sync();
        Check.eventually(() -> s2.rec.has("after") == 1, 2000, "after reached S2");
        Check.eq(s2.rec.has("mk"), 0, "mk at S2");
        Check.eq(s2.rec.has("rq"), 0, "rq at S2");
        Check.eq(s2.rec.has("f0") + s2.rec.has("f1"), 0, "f0, f1 at S2");
        Check.eq(dm.calls.get(), 1, "mk's completions");
        Check.eq(dq.calls.get(), 1, "rq's completions");
        inflightBackToZero(a);

        a.close();
        s1.close();
        s2.close();
        mk.close();
        rq.close();
    }
}
