package io.zlink.conformance;

import static io.zlink.conformance.Sc.*;

import io.zlink.Reply;
import io.zlink.RequestCall;
import io.zlink.SendCall;
import io.zlink.Tables;
import io.zlink.ZLink;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;

/**
 * X-1 (the terminator surface) and X-2 (isolation of the stages the
 * terminators return), framework-contract.md §7.3, ported from
 * conformance/c/x_terminators.c over the default harness in mesh mode (A
 * calls channel "svc" of B, whose handlers echo a request's payload as the
 * reply with packet "echo").
 *
 * The Java terminators: submit() (the general async terminator: a
 * CompletionStage), submit_sync() (the synchronous one) and yield(). A
 * refused terminator is a stage already failed when the call returns (or,
 * for submit_sync, an exception thrown at once); C's "return code" of a
 * start is therefore "failed at once or not". Every wait ends on its
 * event; timeouts only bound a failure.
 */
final class XCases {
    private XCases() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("X-1", p -> ScCases.each(p, XCases::x1Round));
        m.put("X-2", p -> ScCases.each(p, XCases::x2Round));
    }

    static final int INVALID = Tables.FW_INVALID_OPERATION;

    /** One stage's completions: count, value, failure, context. */
    static final class Seen {
        int calls;
        Object value;
        Throwable failure;
        boolean inRuntime;

        Seen on(CompletionStage<?> st) {
            st.whenComplete((v, t) -> {
                synchronized (this) {
                    if (calls++ == 0) {
                        value = v;
                        failure = t;
                        inRuntime = ZLink.inRuntimeContext();
                    }
                    notifyAll();
                }
            });
            return this;
        }

        synchronized int calls() {
            return calls;
        }

        synchronized void expect(long ms) {
            long end = now() + Check.ms(ms);
            while (calls == 0) {
                long left = end - now();
                Check.that(left > 0, "the stage did not complete within " + ms + " ms");
                try {
                    wait(left);
                } catch (InterruptedException e) {
                    throw Check.fail("interrupted");
                }
            }
        }

        synchronized int result() {
            return Check.resultOf(failure);
        }
    }

    /** The result of a stage that must be complete when the terminator returned; -2 if it is not. */
    static int atOnce(CompletionStage<?> st) {
        CompletableFuture<?> f = st.toCompletableFuture();
        if (!f.isDone())
            return -2;
        try {
            f.join();
            return Tables.FW_OK;
        } catch (RuntimeException e) {
            return Check.resultOf((Throwable) e);
        }
    }

    static String text(Object v) {
        if (v instanceof Reply)
            return new String(((Reply) v).payload(), java.nio.charset.StandardCharsets.UTF_8);
        if (v instanceof byte[])
            return new String((byte[]) v, java.nio.charset.StandardCharsets.UTF_8);
        return String.valueOf(v);
    }

    /** s completed once with OK and no value (a one-way's admission). */
    static void admitted(Seen s) {
        s.expect(5000);
        Check.result(s.result(), Tables.FW_OK, "one-way outcome");
        Check.that(s.value == null, "a one-way's stage has no value");
    }

    /** s completed with OK and the reply "echo"/want. */
    static void replied(Seen s, String want) {
        s.expect(5000);
        Check.result(s.result(), Tables.FW_OK, "request outcome of " + want);
        Check.eq(text(s.value), want, "reply");
        if (s.value instanceof Reply)
            Check.eq(((Reply) s.value).packet(), "echo", "reply packet");
    }

    static void cancelled(Seen s) {
        s.expect(5000);
        Check.result(s.result(), Tables.FW_CANCELLED, "cancelled outcome");
        Check.that(s.value == null, "a cancelled stage has no value");
    }

    /** A one-way marker from a, finished, then seen by b. */
    static void marker(Client a, Server b, String tag) {
        try (SendCall mk = send(a, null, tag)) {
            mk.submit_sync();
        }
        Check.eventually(() -> b.rec.has(tag) == 1, 5000, "B saw " + tag);
    }

    static SendCall packetCall(Client a, String packet) {
        return a.h.sendToChannel("svc").payload(packet, "", b(packet));
    }

    static void answerHeld(Server b, String tag) {
        SendCall reply = b.takeHeld(tag);
        Check.that(reply != null, "B holds a reply for " + tag);
        reply.submit();
        reply.close();
    }

    /* ------------------------------------------------------------ */

    /** What the completion callback saw (terminators inside it). */
    static final class InCallback {
        volatile boolean inRuntime;
        volatile int waitRc = -1, yieldRc = -1, startRc = -1;
        volatile long waitMs = -1;
        final Seen inner = new Seen();
        final Seen outer = new Seen();
    }

    /** What the marked thread saw. */
    static final class Marked {
        boolean before, inside, nested, after;
        int refusedRc = -1, refusedNestedRc = -1;
        long refusedMs = -1;
        String reply;
    }

    static void x1Round(String tr) throws Exception {
        Server b = new Server("B").open(Mode.MESH, tr, "x1");
        Client a = null;
        try {
            a = new Client().open(Mode.MESH, b);
            x1Body(a, b);
        } finally {
            if (a != null)
                a.close();
            b.close();
        }
    }

    static void x1Body(Client a, Server b) throws Exception {
        // General async, one-way: admitted while B's gated handler has not run it.
        b.gated = true;
        SendCall o1 = send(a, null, "o1");
        Seen so1 = new Seen().on(o1.submit());
        admitted(so1);
        Check.eq(b.rec.count(), 0, "records B handled before its gate opened");
        Check.eventually(() -> b.gate.waiting() == 1, 5000, "B's handler at the gate");
        Check.eq(b.rec.count(), 0, "records B handled before its gate opened");
        b.gated = false;
        b.gate.open();
        Check.eventually(() -> b.rec.has("o1") == 1, 5000, "B handled o1");

        // General async, request: its reply.
        RequestCall r1 = request(a, null, "r1");
        Seen sr1 = new Seen().on(r1.submitReply());
        replied(sr1, "r1");

        // Synchronous on this application thread.
        SendCall w1 = send(a, null, "w1");
        w1.submit_sync();
        RequestCall w2 = request(a, null, "w2");
        Check.eq(text(w2.submit_sync()), "w2", "w2's synchronous reply");
        Check.eventually(() -> b.rec.has("w1") == 1, 5000, "B handled w1");

        // A second terminator is InvalidOperation and changes nothing: on a
        // request in flight (B holds its reply) ...
        b.replyMode = ReplyMode.HOLD;
        RequestCall t1 = request(a, null, "t1");
        Seen st1 = new Seen().on(t1.submitReply());
        Check.eventually(() -> b.nheld() == 1, 5000, "B holds t1's reply");
        Check.result(atOnce(t1.submitReply()), INVALID, "second submit on a request in flight");
        Check.result(Check.resultOf(() -> t1.submit_sync()), INVALID, "submit_sync on a request in flight");
        Check.result(atOnce(t1.yield(byte[].class)), INVALID, "yield on a request in flight");
        Check.eq(st1.calls(), 0, "t1's completions while its reply is held");
        Check.eq(a.h.status().requestsInflight, 1, "A's requests in flight");
        answerHeld(b, "t1");
        b.replyMode = ReplyMode.NOW;
        replied(st1, "t1");
        // ... on a completed one-way ...
        SendCall t2 = send(a, null, "t2");
        Seen st2 = new Seen().on(t2.submit());
        admitted(st2);
        Check.result(atOnce(t2.submit()), INVALID, "second submit on a completed one-way");
        Check.result(Check.resultOf(() -> t2.submit_sync()), INVALID, "submit_sync on a completed one-way");
        Check.result(atOnce(t2.yield()), INVALID, "yield on a completed one-way");
        // ... and on a request submit_sync finished: its reply stays.
        RequestCall t3 = request(a, null, "t3");
        byte[] r3 = t3.submit_sync();
        Check.eq(text(r3), "t3", "t3's reply");
        Check.result(atOnce(t3.submitReply()), INVALID, "submit on a completed request");
        Check.result(Check.resultOf(() -> t3.submit_sync()), INVALID, "second submit_sync on a completed request");
        Check.result(atOnce(t3.yield(byte[].class)), INVALID, "yield on a completed request");
        Check.eq(text(r3), "t3", "t3's reply after the refused terminators");

        // submit_sync in a runtime context fails at once: in B's handler
        // turn (the handler's shutdown too) ...
        try (SendCall sy = packetCall(a, "sync")) {
            sy.submit_sync();
        }
        Check.eventually(() -> b.syncRan.get() == 1, 5000, "B's sync handler ran");
        Check.result(b.syncWaitRc.get(), INVALID, "submit_sync in a handler turn (-2: not at once)");
        Check.result(b.syncShutdownRc.get(), INVALID, "shutdown in a handler turn");
        Check.eq(b.h.state(), io.zlink.Host.State.SERVING, "B's state");

        // ... in a completion callback, where the refused call is still
        // unfinished and is then submitted, and a yield sends nothing ...
        InCallback cb = new InCallback();
        final Client fa = a;
        b.replyMode = ReplyMode.HOLD; // the callback is registered before the outcome exists
        RequestCall outer = request(a, null, "outer");
        CompletionStage<byte[]> ost = outer.submit();
        CompletionStage<byte[]> afterCb = ost.whenComplete((v, t) -> {
            cb.inRuntime = ZLink.inRuntimeContext();
            SendCall inner = send(fa, null, "in-cb");
            long t0 = now();
            cb.waitRc = Check.resultOf(() -> inner.submit_sync());
            cb.waitMs = now() - t0;
            CompletionStage<Void> ist = inner.submit();
            cb.startRc = atOnce(ist) == -2 ? Tables.FW_OK : atOnce(ist);
            cb.inner.on(ist);
            inner.close();
            SendCall y = send(fa, null, "yield-in-cb");
            cb.yieldRc = atOnce(y.yield());
            y.close();
        });
        cb.outer.on(afterCb); // completes once the callback above returned
        Check.eventually(() -> b.nheld() == 1, 5000, "B holds outer's reply");
        answerHeld(b, "outer");
        b.replyMode = ReplyMode.NOW;
        replied(cb.outer, "outer");
        Check.that(cb.outer.inRuntime, "the completion ran in a runtime context");
        Check.that(cb.inRuntime, "zlink_in_runtime_context() in the callback");
        Check.result(cb.waitRc, INVALID, "submit_sync in a completion callback");
        Check.that(cb.waitMs <= Check.ms(100), "the refused submit_sync took " + cb.waitMs + " ms (at once expected)");
        Check.result(cb.startRc, Tables.FW_OK, "submit of the refused call in the callback");
        admitted(cb.inner);
        Check.result(cb.yieldRc, INVALID, "yield in a completion callback");
        Check.eventually(() -> b.rec.has("in-cb") == 1, 5000, "B handled in-cb");

        // ... and on a thread this case marked, until it leaves (nesting counts).
        Marked mk = new Marked();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread th = new Thread(() -> {
            try (RequestCall q = request(fa, null, "marked").timeout(Duration.ofMillis(Check.ms(5000)))) {
                mk.before = ZLink.inRuntimeContext();
                ZLink.enterRuntimeContext();
                mk.inside = ZLink.inRuntimeContext();
                long t0 = now();
                mk.refusedRc = Check.resultOf(() -> q.submit_sync());
                mk.refusedMs = now() - t0;
                ZLink.enterRuntimeContext();
                ZLink.leaveRuntimeContext();
                mk.nested = ZLink.inRuntimeContext();
                mk.refusedNestedRc = Check.resultOf(() -> q.submit_sync());
                ZLink.leaveRuntimeContext();
                mk.after = ZLink.inRuntimeContext();
                mk.reply = text(q.submit_sync());
            } catch (Throwable t) {
                thrown.set(t);
            }
        }, "x1-marked");
        th.start();
        th.join(Check.ms(10000));
        Check.that(!th.isAlive(), "the marked thread finished");
        if (thrown.get() != null)
            throw Check.fail("the marked thread threw " + thrown.get());
        Check.that(!mk.before, "in a runtime context before the mark");
        Check.that(mk.inside, "in a runtime context once marked");
        Check.result(mk.refusedRc, INVALID, "submit_sync on a marked thread");
        Check.that(mk.refusedMs <= Check.ms(100), "the refused submit_sync took " + mk.refusedMs + " ms (at once expected)");
        Check.that(mk.nested, "still marked after one of two leaves");
        Check.result(mk.refusedNestedRc, INVALID, "submit_sync on a thread still marked once");
        Check.that(!mk.after, "in a runtime context after the last leave");
        Check.eq(mk.reply, "marked", "the refused call's reply once the thread left");
        Check.that(!ZLink.inRuntimeContext(), "the mark was that thread's only");

        // yield outside a Spot turn: refused at once, nothing sent; on this
        // application thread (the calls stay unfinished) ...
        SendCall y1 = send(a, null, "y1");
        RequestCall y2 = request(a, null, "y2");
        Check.result(atOnce(y1.yield()), INVALID, "yield of a one-way on an application thread");
        Check.result(atOnce(y2.yield(byte[].class)), INVALID, "yield of a request on an application thread");
        // ... and in B's handler turn of a channel.
        try (SendCall yh = packetCall(a, "yield")) {
            yh.submit_sync();
        }
        Check.eventually(() -> b.yieldRan.get() == 1, 5000, "B's yield handler ran");
        Check.result(b.yieldRc.get(), INVALID, "yield in a handler turn (-2: not at once)");
        marker(a, b, "mk1");
        Check.eq(b.rec.has("y1"), 0, "B's records of y1");
        Check.eq(b.rec.has("y2"), 0, "B's records of y2");
        Check.eq(b.rec.has("yield-in-cb"), 0, "B's records of yield-in-cb");
        Check.eq(b.yieldFnRan.get(), 0, "completions of the handler's refused yield");
        y1.submit_sync();
        Check.eq(text(y2.submit_sync()), "y2", "y2's reply after the refused yield");

        // Every call completed once and reached B once.
        marker(a, b, "mk2");
        for (String t : new String[] {"o1", "r1", "w1", "w2", "t1", "t2", "t3", "in-cb", "y1", "y2", "marked"})
            Check.eq(b.rec.has(t), 1, "B's records of " + t);
        Check.eq(so1.calls(), 1, "o1's completions");
        Check.eq(sr1.calls(), 1, "r1's completions");
        Check.eq(st1.calls(), 1, "t1's completions");
        Check.eq(st2.calls(), 1, "t2's completions");
        Check.eq(cb.outer.calls(), 1, "outer's completions");
        Check.eq(cb.inner.calls(), 1, "in-cb's completions");
        Check.eq(a.h.status().requestsInflight, 0, "A's requests in flight");
        for (AutoCloseable c : new AutoCloseable[] {o1, r1, w1, w2, t1, t2, t3, outer, y1, y2})
            c.close();
    }

    /* ------------------------------------------------------------ */

    static void x2Round(String tr) throws Exception {
        Server b = new Server("B").open(Mode.MESH, tr, "x2");
        Client a = null;
        try {
            a = new Client().open(Mode.MESH, b);
            x2Body(a, b);
        } finally {
            if (a != null)
                a.close();
            b.close();
        }
    }

    static String join(CompletionStage<byte[]> st) {
        return text(st.toCompletableFuture().join());
    }

    static void x2Body(Client a, Server b) throws Exception {
        // Two requests in flight; cancelling one (through its stage) ends
        // it CANCELLED and leaves the other pending, which gets its own
        // reply; the cancelled one's late reply completes nothing.
        b.replyMode = ReplyMode.HOLD;
        RequestCall q1 = request(a, null, "q1");
        RequestCall q2 = request(a, null, "q2");
        CompletionStage<Reply> sq1 = q1.submitReply();
        Seen s1 = new Seen().on(sq1);
        Seen s2 = new Seen().on(q2.submitReply());
        Check.eventually(() -> b.nheld() == 2, 5000, "B holds both replies");
        Check.eq(a.h.status().requestsInflight, 2, "A's requests in flight");
        sq1.toCompletableFuture().cancel(true);
        cancelled(s1);
        Check.that(sq1.toCompletableFuture().isCancelled(), "q1's stage is cancelled");
        Check.eq(s2.calls(), 0, "q2's completions after q1 was cancelled");
        Check.eq(a.h.status().requestsInflight, 1, "A's requests in flight");
        answerHeld(b, "q2");
        replied(s2, "q2");
        answerHeld(b, "q1"); // late
        b.replyMode = ReplyMode.NOW;
        // A request behind the late reply: once answered, the late one reached A.
        RequestCall after = request(a, null, "after");
        Check.eq(text(after.submit_sync()), "after", "after's reply");
        Check.eq(s1.calls(), 1, "q1's completions");
        Check.result(s1.result(), Tables.FW_CANCELLED, "q1's outcome");
        Check.eq(s2.calls(), 1, "q2's completions");
        Check.eq(a.h.status().requestsInflight, 0, "A's requests in flight");

        // Two outcomes never share storage: each stage's bytes are its own,
        // intact after the other completed, was released (and its bytes
        // overwritten) and after a third call completed.
        RequestCall c1 = request(a, null, "pa-1111");
        RequestCall c2 = request(a, null, "pb-2222");
        CompletionStage<byte[]> st1 = c1.submit();
        Seen p1 = new Seen().on(st1);
        replied(p1, "pa-1111");
        CompletionStage<byte[]> st2 = c2.submit();
        Seen p2 = new Seen().on(st2);
        replied(p2, "pb-2222");
        Check.that(p1.value != p2.value, "two calls' replies are one array");
        c2.close();
        Check.eq(join(st1), "pa-1111", "c1's reply after c2 was released");
        Arrays.fill((byte[]) p2.value, (byte) 'x');
        Check.eq(join(st1), "pa-1111", "c1's reply after c2's bytes were overwritten");
        RequestCall c3 = request(a, null, "pc-3333");
        CompletionStage<byte[]> st3 = c3.submit();
        Seen p3 = new Seen().on(st3);
        replied(p3, "pc-3333");
        Check.that(p1.value != p3.value, "c1's and c3's replies are one array");
        Check.eq(join(st1), "pa-1111", "c1's reply after c3 completed");
        c1.close();
        Check.eq(join(st3), "pc-3333", "c3's reply after c1 was released");
        c3.close();
        // The same through submit_sync, the first released first.
        RequestCall v1 = request(a, null, "wa-1111");
        RequestCall v2 = request(a, null, "wb-2222");
        byte[] ov1 = v1.submit_sync();
        byte[] ov2 = v2.submit_sync();
        Check.that(ov1 != ov2, "two synchronous replies are one array");
        Check.eq(text(ov1), "wa-1111", "v1's reply");
        v1.close();
        Check.eq(text(ov2), "wb-2222", "v2's reply after v1 was released");
        v2.close();
        // Reply objects hand out copies: changing one changes no stage.
        RequestCall v3 = request(a, null, "wc-3333");
        CompletionStage<Reply> sv3 = v3.submitReply();
        Seen p4 = new Seen().on(sv3);
        replied(p4, "wc-3333");
        Arrays.fill(((Reply) p4.value).payload(), (byte) 'x');
        Check.eq(text(sv3.toCompletableFuture().join()), "wc-3333", "v3's reply after a copy was changed");
        v3.close();

        // A completed call's stage, read again after another call was
        // cancelled, after cancelling the completed call itself and after a
        // second terminator on it, is unchanged; none of that changes
        // another call.
        RequestCall d5 = request(a, null, "done-5");
        CompletionStage<byte[]> st5 = d5.submit();
        Seen s5 = new Seen().on(st5);
        replied(s5, "done-5");
        b.replyMode = ReplyMode.HOLD;
        RequestCall c6 = request(a, null, "c6");
        RequestCall c7 = request(a, null, "c7");
        CompletionStage<byte[]> st6 = c6.submit();
        Seen s6 = new Seen().on(st6);
        Seen s7 = new Seen().on(c7.submit());
        Check.eventually(() -> b.nheld() == 2, 5000, "B holds c6's and c7's replies");
        st6.toCompletableFuture().cancel(true);
        cancelled(s6);
        Check.eq(join(st5), "done-5", "d5's stage after c6 was cancelled");
        Check.that(!st5.toCompletableFuture().cancel(true), "cancel() of a completed stage reports it not cancelled");
        d5.cancel();
        Check.eq(join(st5), "done-5", "d5's stage after d5 was cancelled");
        Check.that(!st5.toCompletableFuture().isCancelled(), "d5's stage is not cancelled");
        CompletionStage<byte[]> again = d5.submit();
        Check.result(atOnce(again), INVALID, "a second submit on d5");
        Check.result(Check.resultOf(() -> d5.submit_sync()), INVALID, "submit_sync on d5");
        Check.eq(join(st5), "done-5", "d5's stage after the second terminators");
        Check.eq(s5.calls(), 1, "d5's completions");
        Check.eq(s7.calls(), 0, "c7's completions while its reply is held");
        answerHeld(b, "c7");
        replied(s7, "c7");
        answerHeld(b, "c6"); // late
        b.replyMode = ReplyMode.NOW;
        RequestCall after2 = request(a, null, "after2");
        Check.eq(text(after2.submit_sync()), "after2", "after2's reply");
        Check.eq(join(st5), "done-5", "d5's stage at the end");
        Check.eq(s6.calls(), 1, "c6's completions");
        Check.result(s6.result(), Tables.FW_CANCELLED, "c6's outcome");
        Check.eq(s7.calls(), 1, "c7's completions");
        Check.eq(a.h.status().requestsInflight, 0, "A's requests in flight");
        for (AutoCloseable c : new AutoCloseable[] {q1, q2, after, d5, c6, c7, after2})
            c.close();
    }
}
