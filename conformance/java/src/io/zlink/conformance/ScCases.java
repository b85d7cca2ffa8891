package io.zlink.conformance;

import static io.zlink.conformance.Sc.*;

import com.fasterxml.jackson.databind.JsonNode;
import io.zlink.Host;
import io.zlink.RequestCall;
import io.zlink.SendCall;
import io.zlink.Tables;
import io.zlink.ZLinkFrameworkException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;

/**
 * The SC cases (seed 000 §17, framework-contract.md §7.1) ported from
 * conformance/c/sc_submit.c and sc_request.c, over the Java binding.
 *
 * Java's terminators: submit() returns a stage; a terminator that C
 * refuses (zlink_call_start non-zero) gives a stage that has already
 * failed when submit() returns (the C callback never runs), and
 * submit_sync() throws. The case checks both.
 */
final class ScCases {
    private ScCases() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("SC-01", p -> each(p, ScCases::oneWayAndErrors));
        m.put("SC-09", p -> each(p, ScCases::firstOutcomeWins));
        m.put("SC-20", p -> each(p, ScCases::outcomesByType));
    }

    interface Round {
        void run(String tr) throws Exception;
    }

    static void each(JsonNode params, Round r) throws Exception {
        for (String tr : transports(params))
            r.run(tr);
    }

    // ------------------------------------------------------------ SC-01

    /** Both terminators refuse with want: submit_sync throws it, submit's stage has failed at return. */
    private static void refusedBothWays(Function<String, Object> make, int want) {
        Object c = make.apply("refused-w");
        int r = waitResult(() -> {
            if (c instanceof SendCall)
                ((SendCall) c).submit_sync();
            else
                ((RequestCall) c).submit_sync();
        });
        Check.result(r, want, "submit_sync");
        Object c2 = make.apply("refused-s");
        CompletionStage<?> st = c2 instanceof SendCall ? ((SendCall) c2).submit() : ((RequestCall) c2).submit();
        Check.that(st.toCompletableFuture().isDone(), "a refused submit() has completed when it returns");
        Done d = new Done().on(st);
        Check.result(d.result, want, "submit");
        Check.eq(d.calls.get(), 1, "completions of a refused submit");
    }

    private static void refusedEachKind(Client a, String channel, String rid, int want) {
        for (int req = 0; req < 2; req++) {
            boolean request = req == 1;
            refusedBothWays(tag -> {
                if (rid != null)
                    return request ? (Object) nodeRequest(a.h, rid, tag) : nodeSend(a.h, rid, tag);
                return request ? (Object) request(a, channel, tag) : send(a, channel, tag);
            }, want);
        }
    }

    private static void oneWayAndErrors(String tr) throws Exception {
        Server b = new Server("B");
        b.zeroChannel = true;
        b.open(Mode.MESH, tr, "sc01");
        Client a = new Client();
        a.extraChannels = true;
        a.open(Mode.MESH, b);

        // A one-way completes at admission, before the gated handler runs.
        b.gated = true;
        SendCall m1 = send(a, null, "m1");
        Done d1 = new Done().on(m1.submit());
        d1.expect(2000);
        Check.result(d1.result, Tables.FW_OK, "m1");
        Check.eq(b.rec.count(), 0, "records handled while the gate is closed");
        Check.eventually(() -> b.gate.waiting() == 1, 2000, "the handler waits at the gate");
        Check.eq(b.rec.count(), 0, "records handled while the gate is closed");
        b.gate.open();
        Check.eventually(() -> b.rec.has("m1") == 1, 2000, "m1 handled");

        // The error table: each call completes once with its kind.
        refusedEachKind(a, "nope", null, Tables.FW_NOT_FOUND);  // unknown channel
        refusedEachKind(a, "none", null, Tables.FW_NOT_FOUND);  // no server at all
        refusedEachKind(a, "zero", null, Tables.FW_NOT_FOUND);  // weight 0 only
        refusedEachKind(a, null, "Z", Tables.FW_NOT_FOUND);     // no such node

        // A second terminator changes nothing.
        SendCall m2 = send(a, null, "m2");
        Done d2 = new Done().on(m2.submit());
        Done again = new Done().on(m2.submit());
        Check.result(again.result, Tables.FW_INVALID_OPERATION, "a second submit()");
        Check.result(waitResult(m2::submit_sync), Tables.FW_INVALID_OPERATION, "submit_sync after submit");
        Done y = new Done().on(m2.yield());
        Check.result(y.result, Tables.FW_INVALID_OPERATION, "yield after submit");
        d2.expect(2000);
        RequestCall w = request(a, null, "w1");
        w.submit_sync();
        Check.result(new Done().on(w.submit()).result, Tables.FW_INVALID_OPERATION, "submit after submit_sync");
        Check.result(waitResult(w::submit_sync), Tables.FW_INVALID_OPERATION, "a second submit_sync");
        w.close();

        // The synchronous terminator inside a handler: InvalidOperation at
        // once (and so is a shutdown from there).
        try (SendCall sy = a.h.sendToChannel("svc").payload("sync", "", b("s"))) {
            sy.submit_sync();
        }
        Check.eventually(() -> b.syncRan.get() == 1, 2000, "the sync handler ran");
        Check.result(b.syncWaitRc.get(), Tables.FW_INVALID_OPERATION, "submit_sync in a handler");
        Check.result(b.syncShutdownRc.get(), Tables.FW_INVALID_OPERATION, "shutdown in a handler");
        Check.eq(b.h.state(), Host.State.SERVING, "B's state");

        // Nothing refused reached B.
        send(a, null, "marker").submit_sync();
        Check.eventually(() -> b.rec.has("marker") == 1, 2000, "the marker arrived");
        Check.eq(b.rec.count(), 4, "records B handled");
        Check.eq(b.rec.has("m1"), 1, "m1 handled");
        Check.eq(b.rec.has("m2"), 1, "m2 handled");
        Check.eq(d1.calls.get(), 1, "m1's completions");
        Check.eq(d2.calls.get(), 1, "m2's completions");
        Check.result(d2.result, Tables.FW_OK, "m2");
        m1.close();
        m2.close();

        // Any call after A's shutdown began: ShuttingDown. A request B holds
        // keeps A draining while the calls are made.
        b.replyMode = ReplyMode.HOLD;
        RequestCall h1 = request(a, null, "h1");
        Done dh = new Done().on(h1.submit());
        Check.eventually(() -> b.nheld() == 1, 2000, "B holds h1");
        int[] shutdownRc = {-1};
        Thread job = new Thread(() -> shutdownRc[0] = Check.resultOf(
            () -> a.h.shutdown(Duration.ofMillis(Check.ms(2000)))));
        job.start();
        Check.eventually(() -> a.h.state() != Host.State.SERVING, 2000, "A is draining");
        refusedEachKind(a, "svc", null, Tables.FW_SHUTTING_DOWN);
        refusedEachKind(a, null, "B", Tables.FW_SHUTTING_DOWN);
        Check.eq(dh.calls.get(), 0, "h1 completions while draining");
        job.join();
        Check.result(shutdownRc[0], Tables.FW_OK, "A's shutdown");
        Check.eq(dh.calls.get(), 1, "h1's completions");
        Check.result(dh.result, Tables.FW_SHUTTING_DOWN, "h1");
        refusedEachKind(a, "svc", null, Tables.FW_SHUTTING_DOWN); // and once stopped
        h1.close();
        a.close();

        // SendToNode to B after B's link is cut: Unavailable.
        Client a2 = new Client().open(Mode.MESH, b);
        send(a2, null, "marker2").submit_sync();
        Check.eventually(() -> b.rec.has("marker2") == 1, 2000, "marker2 arrived");
        Check.eq(b.rec.count(), 6, "records B handled (+ h1, marker2)");
        b.h.shutdown(Duration.ofMillis(1000));
        Check.eventually(() -> a2.h.meshReadyPeers("m") == 0, 5000, "A2 lost B");
        refusedEachKind(a2, null, "B", Tables.FW_UNAVAILABLE);
        refusedEachKind(a2, "svc", null, Tables.FW_UNAVAILABLE);
        a2.close();
        b.close();
    }

    // ------------------------------------------------------------ SC-09

    private static RequestCall requestStart(Client a, String tag, int timeoutMs, Done d) {
        RequestCall c = request(a, null, tag);
        if (timeoutMs > 0)
            c.timeout(Duration.ofMillis(timeoutMs));
        d.on(c.submit());
        return c;
    }

    private static void answeredRequest(Client a, String tag) {
        byte[] r = request(a, null, tag).submit_sync();
        Check.eq(tag(r), tag, "the reply");
    }

    private static void firstOutcomeWins(String tr) throws Exception {
        ScheduledExecutorService timer = timer();
        Server b = new Server("B");
        b.timer = timer;
        b.open(Mode.MESH, tr, "sc09");
        Client a = new Client().open(Mode.MESH, b);

        // (a) B replies at once: the value.
        Done da = new Done();
        RequestCall ca = requestStart(a, "a", 0, da);
        da.expect(2000);
        Check.result(da.result, Tables.FW_OK, "a");
        Check.eq(da.reply, "a", "a's reply");

        // (b) B replies after 500 ms, the timeout is 200 ms.
        b.delayMin = b.delayMax = 500;
        b.replyMode = ReplyMode.DELAY;
        Done db = new Done();
        long t0 = now();
        RequestCall cb = requestStart(a, "b", 200, db);
        db.expect(2000);
        Check.result(db.result, Tables.FW_DEADLINE_EXCEEDED, "b");
        onTime(db.atMs - t0, 200);
        Check.eventually(() -> b.repliesSent.get() == 1, 3000, "the late reply left B");
        Check.eq(b.rec.has("b"), 1, "b handled");
        b.replyMode = ReplyMode.NOW;
        answeredRequest(a, "after-b");
        Check.eq(db.calls.get(), 1, "b's completions");
        inflightBackToZero(a);

        // (c) cancelled at 100 ms; the reply at 300 ms is ignored.
        b.delayMin = b.delayMax = 300;
        b.replyMode = ReplyMode.DELAY;
        Done dc = new Done();
        RequestCall cc = requestStart(a, "c", 0, dc);
        CompletionStage<?> sc = null;
        t0 = now();
        Check.that(!dc.awaitUntil(t0 + 100), "c still pending at 100 ms");
        cc.cancel();
        cc.cancel(); // idempotent
        dc.expect(2000);
        Check.result(dc.result, Tables.FW_CANCELLED, "c");
        Check.eventually(() -> b.repliesSent.get() == 2, 3000, "the late reply left B");
        b.replyMode = ReplyMode.NOW;
        answeredRequest(a, "after-c");
        Check.eq(dc.calls.get(), 1, "c's completions");
        cc.cancel(); // after the end: changes nothing
        Check.eq(dc.calls.get(), 1, "c's completions");
        Check.result(dc.result, Tables.FW_CANCELLED, "c");
        inflightBackToZero(a);

        // (e) B's handler fails: InternalFailure, once.
        b.replyMode = ReplyMode.FAIL;
        Done de = new Done();
        RequestCall ce = requestStart(a, "e", 0, de);
        de.expect(2000);
        Check.result(de.result, Tables.FW_INTERNAL_FAILURE, "e");
        b.replyMode = ReplyMode.NOW;
        answeredRequest(a, "after-e");
        Check.eq(de.calls.get(), 1, "e's completions");

        // (d) A shuts down while a request is pending: ShuttingDown.
        b.replyMode = ReplyMode.HOLD;
        Done dd = new Done();
        RequestCall cd = requestStart(a, "d", 0, dd);
        Check.eventually(() -> b.nheld() == 1, 2000, "B holds d");
        a.h.shutdown(Duration.ofMillis(200));
        Check.eq(dd.calls.get(), 1, "d's completions (decided before shutdown returned)");
        Check.result(dd.result, Tables.FW_SHUTTING_DOWN, "d");
        Check.eq(a.h.status().requestsInflight, 0, "requests in flight");

        a.close();
        b.close();
        timer.shutdown();
        Done[] dones = {da, db, dc, de, dd};
        for (Done d : dones)
            Check.eq(d.calls.get(), 1, "completions of each call");
        for (RequestCall c : new RequestCall[] {ca, cb, cc, ce, cd})
            c.close();
    }

    // ------------------------------------------------------------ SC-20

    private static ZLinkFrameworkException syncFailure(RequestCall c) {
        try {
            c.submit_sync();
        } catch (ZLinkFrameworkException e) {
            return e;
        }
        throw Check.fail("submit_sync returned a value");
    }

    private static void outcomesByType(String tr) throws Exception {
        Server b = new Server("B");
        b.open(Mode.MESH, tr, "sc20");
        Client a = new Client().open(Mode.MESH, b);
        b.replyMode = ReplyMode.HOLD;

        // Timeout: the DeadlineExceeded kind, through both terminators.
        ZLinkFrameworkException e = syncFailure(request(a, null, "t-wait").timeout(Duration.ofMillis(100)));
        Check.eq(e.kind(), Tables.ErrorKind.DEADLINE_EXCEEDED, "a timed-out submit_sync's kind");
        Check.eq(e.remoteCode(), 0, "remote code");
        Done dt = new Done();
        RequestCall ct = requestStart(a, "t-start", 100, dt);
        dt.expect(2000);
        Check.result(dt.result, Tables.ErrorKind.DEADLINE_EXCEEDED.result(), "t-start");

        // Cancel: the cancelled type, which is no error kind.
        Done dc = new Done();
        RequestCall cc = requestStart(a, "c", 0, dc);
        Check.eventually(() -> b.rec.has("c") == 1, 2000, "c reached B");
        cc.cancel();
        dc.expect(2000);
        Check.result(dc.result, Tables.FW_CANCELLED, "c");
        Check.that(Tables.ErrorKind.ofResult(dc.result) == null, "cancelled is no error kind");

        // A handler error that says "cancelled timeout" is InternalFailure.
        b.replyMode = ReplyMode.FAIL;
        e = syncFailure(request(a, null, "boom"));
        Check.eq(e.kind(), Tables.ErrorKind.INTERNAL_FAILURE, "a failed handler's kind");
        Check.eq(e.getMessage(), "cancelled timeout", "the message");
        Check.eq(e.remoteCode(), 105, "the wire's internalError");
        Check.eq(e.kind().displayName(), "InternalFailure", "the kind's name");

        // Shutdown: the ShuttingDown kind.
        b.replyMode = ReplyMode.HOLD;
        Done ds = new Done();
        RequestCall cs = requestStart(a, "s", 0, ds);
        Check.eventually(() -> b.rec.has("s") == 1, 2000, "s reached B");
        a.h.shutdown(Duration.ofMillis(100));
        ds.expect(2000);
        Check.eq(ds.calls.get(), 1, "s's completions");
        Check.eq(Tables.ErrorKind.ofResult(ds.result), Tables.ErrorKind.SHUTTING_DOWN, "s's kind");

        Check.eq(dt.calls.get(), 1, "t-start's completions");
        Check.eq(dc.calls.get(), 1, "c's completions");
        a.close();
        b.close();
        ct.close();
        cc.close();
        cs.close();
    }
}
