package io.zlink.conformance;

import io.zlink.Context;
import io.zlink.Poller;
import io.zlink.Socket;
import io.zlink.Tables;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * PL cases (seed 004 §9) ported from conformance/c/pl_registration.c,
 * pl_completion.c, pl_wait_events.c and pl_lifetime.c over the binding's
 * Poller and Socket: PL-06, 10, 11, 16..22, 26 (the others are in PlMore
 * and PlSignals, registered from here). The binding's Core request
 * carries no user context (its completion id is the handle a Java caller
 * keeps), so a record is matched by kind, id, result and reply.
 */
final class PlCases {
    private PlCases() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("PL-06", p -> ScCases.each(p, PlCases::socketInTwoPollers));
        m.put("PL-16", p -> completionLevelAndCallsConsumeNothing(JqFlow.param(p, "records")));
        m.put("PL-18", p -> completionLastReadClears(JqFlow.param(p, "records")));
        m.put("PL-19", p -> completionsBeyondEventCapacity(JqFlow.param(p, "sockets"),
                                                           JqFlow.param(p, "records_per_socket"),
                                                           JqFlow.param(p, "event_capacity")));
        m.put("PL-20", p -> ScCases.each(p, PlCases::replyBehindDataWaits));
        m.put("PL-10", p -> completionBitHasOneOwner());
        m.put("PL-11", p -> closedSocketPinned());
        m.put("PL-21", p -> destroyDuringWaitIsBusy());
        m.put("PL-22", p -> callsDuringWaitAreBusy());
        m.put("PL-26", p -> nothingWaitableReturnsAtOnce());
        m.put("PL-17", p -> writableRecordHoldsOutAndCompletion(JqFlow.param(p, "credit_race_rounds"),
                                                                 JqFlow.param(p, "attach_race_rounds")));
        PlMore.register(m);
        PlSignals.register(m);
    }

    private static int seq;

    /** A PAIR a bound and a PAIR b connected to it over tr; returns {a, b}. */
    static Socket[] pairLink(Context ctx, String tr) {
        Socket a = ctx.socket(Socket.PAIR), b = ctx.socket(Socket.PAIR);
        a.option(Socket.LINGER, 0);
        b.option(Socket.LINGER, 0);
        String ep;
        if (tr.equals("tcp")) {
            a.bind("tcp://127.0.0.1:0");
            ep = a.lastEndpoint();
        } else {
            ep = "inproc://pl-" + ProcessHandle.current().pid() + "-" + (seq++);
            a.bind(ep);
        }
        b.connect(ep);
        return new Socket[] {a, b};
    }

    /** A DEALER "D" connected to a ROUTER on inproc: {d, r}. */
    static Socket[] dealerRouter(Context ctx) {
        return dealerRouter(ctx, "inproc");
    }

    /** A DEALER "D" connected to a ROUTER over tr: {d, r}. */
    static Socket[] dealerRouter(Context ctx, String tr) {
        Socket r = ctx.socket(Socket.ROUTER);
        r.option(Socket.LINGER, 0);
        String ep = bindRouter(r, tr);
        return new Socket[] {dealerTo(ctx, ep, "D"), r};
    }

    static String bindRouter(Socket r, String tr) {
        if (tr.equals("tcp")) {
            r.bind("tcp://127.0.0.1:0");
            return r.lastEndpoint();
        }
        String ep = "inproc://pl-dr-" + ProcessHandle.current().pid() + "-" + (seq++);
        r.bind(ep);
        return ep;
    }

    static Socket dealerTo(Context ctx, String ep, String rid) {
        Socket d = ctx.socket(Socket.DEALER);
        d.option(Socket.LINGER, 0);
        d.routingId(b(rid));
        d.connect(ep);
        return d;
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** d sends the request text, r receives it and replies with it; the request's completion id. */
    static long requestAnswered(Socket d, Socket r, String text) {
        long[] id = new long[1];
        Check.result(d.requestResult(null, 0, 0, id, b(text)), Tables.SUBMIT_OK, "request");
        Check.that(id[0] != 0, "a completion id");
        Socket.Record q = r.routerRecv(0);
        Check.result(q.result, Tables.RECV_OK, "router_recv");
        Check.that(q.token != 0 && q.routingId != null, "a request token and its source");
        Check.eq(q.parts.length, 1, "request parts");
        Check.eq(new String(q.parts[0], StandardCharsets.UTF_8), text, "the request");
        Check.result(r.replyResult(q.routingId, q.token, b(text)), Tables.SUBMIT_OK, "reply");
        return id[0];
    }

    /** A DONTWAIT completion_recv on s gives the REQUEST record of id, result OK, reply. */
    static void expectRecord(Socket s, long id, String reply) {
        Socket.Completion c = s.completion(Socket.DONTWAIT);
        Check.result(c.result, Tables.RECV_OK, "completion_recv for record " + id);
        Check.eq(c.kind, 2, "the record's kind (REQUEST)");
        Check.eq(c.id, id, "the record's id");
        Check.result(c.requestResult, Tables.REQUEST_OK, "the record's request result");
        Check.that(c.replyParts != null && c.replyParts.length == 1
                   && new String(c.replyParts[0], StandardCharsets.UTF_8).equals(reply),
                   "the record's reply is \"" + reply + "\"");
    }

    /** A DONTWAIT completion_recv on s gives NO_DATA/EAGAIN. */
    static void expectNoRecord(Socket s) {
        Socket.Completion c = s.completion(Socket.DONTWAIT);
        int e = Socket.lastErrno();
        Check.that(c.result != Tables.RECV_OK, "no record expected, got id " + c.id);
        Check.result(c.result, Tables.RECV_NO_DATA, "completion_recv");
        Check.eq(e, 11, "errno (EAGAIN)");
    }

    /** One wait of p (timeout ms) returns exactly one event, of user value user, with exactly the bits want. */
    static void expectEvent(Poller p, long user, long ms, int want) {
        Poller.Wait w = p.await(8, ms);
        Check.that(w.count == 1 && w.events[0].user == user && w.events[0].events == want,
                   "wait: " + w.count + " event(s)" + (w.count > 0 ? ", first of user " + w.events[0].user
                   + " with bits " + w.events[0].events : "") + "; expected one of user " + user + " with bits " + want);
    }

    /** PL-16: a wait returns COMPLETION while a record is queued; wait, add, modify and remove consume nothing. */
    static void completionLevelAndCallsConsumeNothing(int records) {
        Check.that(records >= 1 && records <= 64, "records in 1..64");
        try (Context ctx = new Context(); Poller p = new Poller()) {
            Socket[] dr = dealerRouter(ctx);
            Socket d = dr[0], r = dr[1];
            Check.eq(p.add(d, 7, Poller.POLLCOMPLETION), Tables.CONFIG_OK, "add");
            long[] ids = new long[records];
            for (int i = 0; i < records; i++)
                ids[i] = requestAnswered(d, r, "q");
            for (int i = 0; i < 3; i++)
                expectEvent(p, 7, i == 0 ? Check.ms(5000) : 0, Poller.POLLCOMPLETION);
            Check.eq(p.modify(d, Poller.POLLIN | Poller.POLLCOMPLETION), Tables.CONFIG_OK, "modify");
            expectEvent(p, 7, 0, Poller.POLLCOMPLETION);
            Check.eq(p.modify(d, Poller.POLLIN), Tables.CONFIG_OK, "modify");
            Check.eq(p.await(4, 0).count, 0, "events not asked for");
            Check.eq(p.modify(d, Poller.POLLCOMPLETION), Tables.CONFIG_OK, "modify");
            Check.eq(p.remove(d), Tables.CONFIG_OK, "remove");
            Check.eq(p.add(d, 7, Poller.POLLCOMPLETION), Tables.CONFIG_OK, "add again");
            expectEvent(p, 7, 0, Poller.POLLCOMPLETION);
            for (int i = 0; i < records; i++)
                expectRecord(d, ids[i], "q");
            expectNoRecord(d);
            Check.eq(p.await(4, 0).count, 0, "events once drained");
            Check.eq(p.remove(d), Tables.CONFIG_OK, "remove");
            d.close();
            r.close();
        }
    }

    /** PL-18: reading the last record (DONTWAIT) clears COMPLETION; while records remain it stays set. */
    static void completionLastReadClears(int records) {
        Check.that(records >= 2 && records <= 64, "records in 2..64");
        try (Context ctx = new Context(); Poller p = new Poller()) {
            Socket[] dr = dealerRouter(ctx);
            Socket d = dr[0], r = dr[1];
            Check.eq(p.add(d, 9, Poller.POLLIN | Poller.POLLCOMPLETION), Tables.CONFIG_OK, "add");
            long[] ids = new long[records];
            for (int i = 0; i < records; i++)
                ids[i] = requestAnswered(d, r, "q");
            expectEvent(p, 9, Check.ms(5000), Poller.POLLCOMPLETION);
            for (int i = 0; i < records; i++) {
                expectRecord(d, ids[i], "q");
                if (i + 1 < records)
                    expectEvent(p, 9, 0, Poller.POLLCOMPLETION);
                else
                    Check.eq(p.await(4, 0).count, 0, "events after the last record");
            }
            expectNoRecord(d);
            long id = requestAnswered(d, r, "again");
            expectEvent(p, 9, Check.ms(5000), Poller.POLLCOMPLETION);
            expectRecord(d, id, "again");
            Check.eq(p.await(4, 0).count, 0, "events after the next record");
            Check.eq(p.remove(d), Tables.CONFIG_OK, "remove");
            d.close();
            r.close();
        }
    }

    /**
     * PL-19: more sockets with records than the event array holds: each
     * wait reports up to its capacity, the rest come in later waits;
     * draining every ready socket to NO_DATA gets every record once.
     */
    static void completionsBeyondEventCapacity(int nsock, int nrec, int cap) {
        Check.that(nsock >= 2 && nsock <= 8 && nrec >= 2 && nrec <= 16, "sockets and records in range");
        Check.that(cap >= 1 && cap < nsock, "event capacity in range");
        try (Context ctx = new Context(); Poller p = new Poller()) {
            Socket r = ctx.socket(Socket.ROUTER);
            r.option(Socket.LINGER, 0);
            String ep = bindRouter(r, "inproc");
            Socket[] d = new Socket[nsock];
            long[][] ids = new long[nsock][nrec];
            int[] next = new int[nsock];
            for (int i = 0; i < nsock; i++) {
                d[i] = dealerTo(ctx, ep, "D" + i);
                Check.eq(p.add(d[i], 100 + i, Poller.POLLCOMPLETION), Tables.CONFIG_OK, "add D" + i);
            }
            for (int k = 0; k < nrec; k++)
                for (int i = 0; i < nsock; i++)
                    ids[i][k] = requestAnswered(d[i], r, "q");
            int total = 0, waits = 0;
            while (total < nsock * nrec) {
                Poller.Wait w = p.await(cap, waits == 0 ? Check.ms(5000) : 0);
                waits++;
                if (w.count < 1 || w.count > cap)
                    throw Check.fail("wait " + waits + " returned " + w.count + " events with " + (nsock * nrec - total)
                                     + " records left (capacity " + cap + ")");
                for (int e = 0; e < w.count; e++) {
                    Check.eq(w.events[e].events, Poller.POLLCOMPLETION, "an event's bits");
                    int i = (int) (w.events[e].user - 100);
                    Check.that(i >= 0 && i < nsock, "an event's user value");
                    while (next[i] < nrec) {
                        expectRecord(d[i], ids[i][next[i]], "q");
                        next[i]++;
                        total++;
                    }
                    expectNoRecord(d[i]);
                }
            }
            Check.that(waits >= (nsock + cap - 1) / cap, "several waits (" + waits + ")");
            Check.eq(p.await(cap, 0).count, 0, "events once drained");
            for (Socket x : d) {
                Check.eq(p.remove(x), Tables.CONFIG_OK, "remove");
                x.close();
            }
            r.close();
        }
    }

    /**
     * PL-20: a multipart DATA record at the head of a DEALER's connection
     * holds back the REPLY behind it: POLLIN is ready, POLLCOMPLETION is
     * not, until the DATA is received.
     */
    static void replyBehindDataWaits(String tr) {
        try (Context ctx = new Context(); Poller p = new Poller()) {
            Socket[] dr = dealerRouter(ctx, tr);
            Socket d = dr[0], r = dr[1];
            Check.eq(p.add(d, 5, Poller.POLLIN | Poller.POLLCOMPLETION), Tables.CONFIG_OK, "add");
            long[] id = new long[1];
            Check.result(d.requestResult(null, 0, 0, id, b("q")), Tables.SUBMIT_OK, "request");
            Socket.Record q = r.routerRecv(0);
            Check.result(q.result, Tables.RECV_OK, "router_recv");
            Check.that(q.token != 0, "a request token");
            Check.result(r.sendToResult(q.routingId, 0, null, b("d1"), b("d2")), Tables.SUBMIT_OK, "the DATA");
            Check.result(r.replyResult(q.routingId, q.token, b("reply")), Tables.SUBMIT_OK, "the REPLY");
            expectEvent(p, 5, Check.ms(5000), Poller.POLLIN);
            expectEvent(p, 5, 0, Poller.POLLIN);
            expectNoRecord(d);
            Socket.Record data = d.recv(0);
            Check.that(data.ok() && data.parts.length == 2
                       && new String(data.parts[0], StandardCharsets.UTF_8).equals("d1")
                       && new String(data.parts[1], StandardCharsets.UTF_8).equals("d2"),
                       "the DATA d1 d2: " + data);
            expectEvent(p, 5, Check.ms(5000), Poller.POLLCOMPLETION);
            expectRecord(d, id[0], "reply");
            Check.eq(p.await(2, 0).count, 0, "events once read");
            Check.eq(p.remove(d), Tables.CONFIG_OK, "remove");
            d.close();
            r.close();
        }
    }

    static final int EBUSY = 16, ESHUTDOWN = 108, EDGE_BOUND_MS = 1000;

    /** r's result is want and this thread's errno is err. */
    static void expectConfig(int r, int want, int err, String what) {
        int e = Socket.lastErrno();
        Check.result(r, want, what);
        Check.eq(e, err, what + ": errno");
    }

    /** The waiter's one event: source kind, bits and user value. */
    static void gotOne(Waiter w, int kind, int bits, long user) throws InterruptedException {
        Poller.Wait got = w.join("the waiter");
        Check.eq(got.count, 1, "the waiter's events");
        Check.eq(got.events[0].sourceKind, kind, "the waiter's source kind");
        Check.eq(got.events[0].events, bits, "the waiter's bits");
        Check.eq(got.events[0].user, user, "the waiter's user value");
    }

    /** PL-10: one completion-bit owner per socket; ownership moves without losing records or readiness. */
    static void completionBitHasOneOwner() {
        try (Context ctx = new Context()) {
            Socket[] dr = dealerRouter(ctx);
            Socket s = dr[0], r = dr[1];
            Poller p1 = new Poller(), p2 = new Poller();
            Check.eq(p1.add(s, 1, Poller.POLLCOMPLETION), Tables.CONFIG_OK, "p1 add");
            expectConfig(p2.add(s, 2, Poller.POLLIN | Poller.POLLCOMPLETION), Tables.CONFIG_INVALID_STATE, EBUSY,
                         "p2 add with the bit");
            Check.eq(p2.size(), 0, "p2's size");
            Check.eq(p2.add(s, 2, Poller.POLLIN), Tables.CONFIG_OK, "p2 add without the bit");
            expectConfig(p2.modify(s, Poller.POLLIN | Poller.POLLCOMPLETION), Tables.CONFIG_INVALID_STATE, EBUSY,
                         "p2 modify to the bit");
            Check.eq(p2.size(), 1, "p2's size");
            Check.result(r.sendToResult(b("D"), 0, null, b("data")), Tables.SUBMIT_OK, "data to D");
            expectEvent(p2, 2, Check.ms(5000), Poller.POLLIN);
            Socket.Record data = s.recv(0);
            Check.that(data.ok() && new String(data.parts[0], StandardCharsets.UTF_8).equals("data"), "D got data");

            long id1 = requestAnswered(s, r, "one"), id2 = requestAnswered(s, r, "two");
            expectEvent(p1, 1, Check.ms(5000), Poller.POLLCOMPLETION);
            Check.eq(p1.modify(s, Poller.POLLIN), Tables.CONFIG_OK, "p1 drops the bit");
            Check.eq(p2.modify(s, Poller.POLLCOMPLETION), Tables.CONFIG_OK, "p2 takes the bit");
            expectConfig(p1.modify(s, Poller.POLLCOMPLETION), Tables.CONFIG_INVALID_STATE, EBUSY, "p1 takes it back");
            expectEvent(p2, 2, 0, Poller.POLLCOMPLETION);
            expectRecord(s, id1, "one");
            Check.eq(p2.remove(s), Tables.CONFIG_OK, "p2 remove");
            Check.eq(p1.modify(s, Poller.POLLCOMPLETION), Tables.CONFIG_OK, "p1 takes the bit");
            expectEvent(p1, 1, 0, Poller.POLLCOMPLETION);
            Check.eq(p1.destroy(), Tables.CLOSE_OK, "p1 destroy");
            Check.eq(p2.add(s, 2, Poller.POLLCOMPLETION), Tables.CONFIG_OK, "p2 add with the bit");
            expectEvent(p2, 2, 0, Poller.POLLCOMPLETION);
            expectRecord(s, id2, "two");
            expectNoRecord(s);
            Check.eq(p2.await(2, 0).count, 0, "events once drained");
            Check.eq(p2.destroy(), Tables.CLOSE_OK, "p2 destroy");
            s.close();
            r.close();
        }
    }

    /** PL-11: a socket closed while registered reports POLLERR once and stays registered. */
    static void closedSocketPinned() throws Exception {
        Context ctx = new Context();
        Socket[] ab = pairLink(ctx, "inproc");
        Socket a = ab[0], bs = ab[1];
        Poller p = new Poller();
        Check.eq(p.add(bs, 3, Poller.POLLIN), Tables.CONFIG_OK, "add");
        Waiter w = new Waiter(p, Check.ms(5000));
        Check.eventually(() -> p.size() == -Tables.CONFIG_BUSY, 5000, "the wait is active");
        Check.result(bs.closeResult(), Tables.CLOSE_OK, "close while registered");
        gotOne(w, Poller.SOURCE_SOCKET, Poller.POLLERR, 3);
        long t0 = now();
        Check.eq(p.await(4, -1).count, 0, "a second wait after the POLLERR");
        Check.that(now() - t0 < EDGE_BOUND_MS, "the second wait returned at once");
        Check.eq(p.size(), 1, "still registered");
        Check.eq(p.modify(bs, Poller.POLLIN | Poller.POLLOUT), Tables.CONFIG_OK, "modify of the closed socket");
        expectConfig(p.add(bs, 4, Poller.POLLIN), Tables.CONFIG_INVALID_STATE, ESHUTDOWN, "add of the closed socket");
        try (io.zlink.Timer t = new io.zlink.Timer()) {
            Check.eq(p.addTimer(t, 3), Tables.CONFIG_OK, "add timer");
            Check.eq(t.start(1_000_000L, 1), Tables.CONFIG_OK, "timer start");
            Poller.Wait tw = p.await(4, Check.ms(5000));
            Check.eq(tw.count, 1, "the timer's events");
            Check.eq(tw.events[0].sourceKind, Poller.SOURCE_TIMER, "the timer's source kind");
            Check.eq(p.removeTimer(t), Tables.CONFIG_OK, "remove timer");
            Check.eq(t.destroy(), Tables.CLOSE_OK, "timer destroy");
        }
        Check.eq(p.remove(bs), Tables.CONFIG_OK, "remove of the closed socket");
        Check.eq(p.size(), 0, "size");
        Socket c = ctx.socket(Socket.PAIR);
        Check.eq(p.add(c, 6, Poller.POLLIN), Tables.CONFIG_OK, "add c");
        Check.result(c.closeResult(), Tables.CLOSE_OK, "close c before the first wait");
        Poller.Wait cw = p.await(4, -1);
        Check.eq(cw.count, 1, "c's events");
        Check.eq(cw.events[0].events, Poller.POLLERR, "c's bits");
        Check.eq(cw.events[0].user, 6, "c's user value");
        Check.eq(p.await(4, -1).count, 0, "a second wait after c's POLLERR");
        Check.eq(p.destroy(), Tables.CLOSE_OK, "destroy (unpins c)");
        a.close();
        ctx.close();

        // The pin keeps a closed socket after the context ended; the poller's last reference frees it.
        Context ctx2 = new Context();
        Socket s = ctx2.socket(Socket.DEALER);
        Poller p2 = new Poller();
        Check.eq(p2.add(s, 8, Poller.POLLIN | Poller.POLLOUT), Tables.CONFIG_OK, "add");
        Check.result(s.closeResult(), Tables.CLOSE_OK, "close");
        ctx2.close();
        Poller.Wait sw = p2.await(2, -1);
        Check.eq(sw.count, 1, "the pinned socket's events");
        Check.eq(sw.events[0].events, Poller.POLLERR, "the pinned socket's bits");
        Check.eq(p2.await(2, 0).count, 0, "a second wait");
        Check.eq(p2.remove(s), Tables.CONFIG_OK, "remove (frees the socket)");
        Check.eq(p2.destroy(), Tables.CLOSE_OK, "destroy");
    }

    /** PL-21: destroying a poller while a wait is active is CLOSE_BUSY/EBUSY. */
    static void destroyDuringWaitIsBusy() throws Exception {
        try (Context ctx = new Context()) {
            Socket[] ab = pairLink(ctx, "inproc");
            Poller p = new Poller();
            Check.eq(p.add(ab[1], 4, Poller.POLLIN), Tables.CONFIG_OK, "add");
            Waiter w = new Waiter(p, Check.ms(5000));
            // the wait is active once a call on the poller is refused as busy
            Check.eventually(() -> p.size() == -Tables.CONFIG_BUSY, 5000, "the wait is active");
            int r = p.destroy();
            expectConfig(r, Tables.CLOSE_BUSY, EBUSY, "destroy during the wait");
            ab[0].send(b("x"));
            gotOne(w, Poller.SOURCE_SOCKET, Poller.POLLIN, 4);
            Check.eq(p.destroy(), Tables.CLOSE_OK, "destroy after the wait");
            ab[0].close();
            ab[1].close();
        }
    }

    /** PL-22: size, add, modify, remove (also _fd, _timer) and wait during an active wait are CONFIG_BUSY/EBUSY. */
    static void callsDuringWaitAreBusy() throws Exception {
        try (Context ctx = new Context()) {
            Socket[] ab = pairLink(ctx, "inproc");
            Socket a = ab[0], bs = ab[1];
            Socket other = ctx.socket(Socket.PAIR);
            io.zlink.Timer t = new io.zlink.Timer(), t2 = new io.zlink.Timer();
            Poller p = new Poller();
            Check.eq(p.add(bs, 1, Poller.POLLIN), Tables.CONFIG_OK, "add b");
            Check.eq(p.addFd(0, 2, Poller.POLLIN), Tables.CONFIG_OK, "add fd 0");
            Check.eq(p.addTimer(t, 3), Tables.CONFIG_OK, "add timer");
            Waiter w = new Waiter(p, Check.ms(5000));
            Check.eventually(() -> p.size() == -Tables.CONFIG_BUSY, 5000, "the wait is active");
            int sz = p.size();
            Check.eq(Socket.lastErrno(), EBUSY, "size: errno");
            Check.eq(sz, -Tables.CONFIG_BUSY, "size during the wait");
            expectConfig(p.add(other, 9, Poller.POLLIN), Tables.CONFIG_BUSY, EBUSY, "add");
            expectConfig(p.modify(bs, Poller.POLLOUT), Tables.CONFIG_BUSY, EBUSY, "modify");
            expectConfig(p.remove(bs), Tables.CONFIG_BUSY, EBUSY, "remove");
            expectConfig(p.addFd(2, 9, Poller.POLLIN), Tables.CONFIG_BUSY, EBUSY, "add_fd");
            expectConfig(p.modifyFd(0, Poller.POLLOUT), Tables.CONFIG_BUSY, EBUSY, "modify_fd");
            expectConfig(p.removeFd(0), Tables.CONFIG_BUSY, EBUSY, "remove_fd");
            expectConfig(p.addTimer(t2, 9), Tables.CONFIG_BUSY, EBUSY, "add_timer");
            expectConfig(p.removeTimer(t), Tables.CONFIG_BUSY, EBUSY, "remove_timer");
            Poller.Wait second = p.await(4, 0);
            int e = Socket.lastErrno();
            Check.eq(second.count, -1, "a second wait");
            Check.result(second.result, Tables.CONFIG_BUSY, "a second wait's result");
            Check.eq(e, EBUSY, "a second wait: errno");
            a.send(b("x"));
            gotOne(w, Poller.SOURCE_SOCKET, Poller.POLLIN, 1);
            Check.eq(p.size(), 3, "size after the wait");
            Check.eq(t2.destroy(), Tables.CLOSE_OK, "t2 was not taken");
            Check.eq(t.destroy(), Tables.CLOSE_BUSY, "t was not released");
            Socket.Record r = bs.recv(0);
            Check.that(r.ok() && new String(r.parts[0], StandardCharsets.UTF_8).equals("x"), "b got x");
            Check.eq(p.destroy(), Tables.CLOSE_OK, "destroy");
            Check.eq(t.destroy(), Tables.CLOSE_OK, "t destroy");
            a.close();
            bs.close();
            other.close();
        }
    }

    /** PL-26: a wait with nothing waitable returns at once: a pending POLLERR, else 0. */
    static void nothingWaitableReturnsAtOnce() {
        Context ctx = new Context();
        Socket s = ctx.socket(Socket.PAIR);
        Poller p = new Poller();
        long t0 = now();
        Check.eq(p.await(2, -1).count, 0, "an empty poller's wait");
        Check.eq(p.add(s, 1, 0), Tables.CONFIG_OK, "add with a zero mask");
        Check.eq(p.addFd(0, 2, 0), Tables.CONFIG_OK, "add_fd with a zero mask");
        Check.eq(p.await(2, -1).count, 0, "a wait on zero masks only");
        Check.that(now() - t0 < EDGE_BOUND_MS, "returned at once");
        Check.result(s.closeResult(), Tables.CLOSE_OK, "close");
        Poller.Wait w = p.await(2, -1);
        Check.eq(w.count, 1, "the closed socket's events");
        Check.eq(w.events[0].events, Poller.POLLERR, "the closed socket's bits");
        Check.eq(p.await(2, -1).count, 0, "a wait after the POLLERR");
        Check.that(now() - t0 < EDGE_BOUND_MS, "returned at once");
        Check.eq(p.destroy(), Tables.CLOSE_OK, "destroy");
        ctx.close();
    }

    // ------------------------------------------------------------ PL-17

    /** A DONTWAIT send of text; the result, the wait token in token[0]. */
    static int sendDontwait(Socket s, String text, long[] token) {
        token[0] = 0;
        return s.sendResult(Socket.DONTWAIT, token, b(text));
    }

    /** A DONTWAIT completion_recv on s gives the WRITABLE record of token, ADMITTED. */
    static void expectWritable(Socket s, long token) {
        Socket.Completion c = s.completion(Socket.DONTWAIT);
        Check.result(c.result, Tables.RECV_OK, "completion_recv for token " + token);
        Check.eq(c.kind, 3, "the record's kind (WRITABLE)");
        Check.eq(c.id, token, "the record's id");
        Check.result(c.sendResult, Tables.SEND_ADMITTED, "the record's send result");
    }

    static void expectStr(Socket s, String want) {
        Socket.Record r = s.recv(0);
        Check.that(r.ok() && r.parts.length == 1 && new String(r.parts[0], StandardCharsets.UTF_8).equals(want),
                   "received \"" + want + "\": " + r);
    }

    /**
     * PL-17: a refused DONTWAIT send's token comes back as one WRITABLE
     * record when the target gets credit; POLLOUT and POLLCOMPLETION both
     * hold until it is read; an edge racing the refusal is not lost.
     */
    static void writableRecordHoldsOutAndCompletion(int creditRounds, int attachRounds) throws Exception {
        try (Context ctx = new Context(); Poller p = new Poller()) {
            Socket a = ctx.socket(Socket.PAIR), bs = ctx.socket(Socket.PAIR);
            a.option(Socket.LINGER, 0);
            bs.option(Socket.LINGER, 0);
            a.option(Socket.SNDHWM, 100L);
            String ep = "inproc://pl17-" + ProcessHandle.current().pid() + "-" + (seq++);
            a.bind(ep);
            bs.connect(ep);
            long[] token = new long[1];
            Check.result(sendDontwait(a, "fills the queue", token), Tables.SUBMIT_OK, "the first send");
            Check.result(sendDontwait(a, "refused", token), Tables.SUBMIT_BACKPRESSURED, "the second send");
            long tok = token[0];
            Check.that(tok != 0, "a wait token");
            Check.eq(p.add(a, 1, Poller.POLLOUT | Poller.POLLCOMPLETION), Tables.CONFIG_OK, "add");
            Check.eq(p.await(4, 0).count, 0, "full, no record");
            Waiter w = new Waiter(p, Check.ms(5000));
            Check.eventually(() -> p.size() == -Tables.CONFIG_BUSY, 5000, "the wait is active");
            expectStr(bs, "fills the queue");
            gotOne(w, Poller.SOURCE_SOCKET, Poller.POLLOUT | Poller.POLLCOMPLETION, 1);
            Check.result(sendDontwait(a, "fills the queue", token), Tables.SUBMIT_OK, "the pipe fills again");
            for (int i = 0; i < 2; i++)
                expectEvent(p, 1, 0, Poller.POLLOUT | Poller.POLLCOMPLETION);
            expectWritable(a, tok);
            expectNoRecord(a);
            Check.eq(p.await(4, 0).count, 0, "events once the record was read");
            expectStr(bs, "fills the queue");
            expectEvent(p, 1, Check.ms(5000), Poller.POLLOUT);
            Check.eq(bs.recv(Socket.DONTWAIT).result, Tables.RECV_NO_DATA, "the refused record was not kept");
            Check.eq(p.remove(a), Tables.CONFIG_OK, "remove");
            a.close();
            bs.close();
        }
        creditRace(creditRounds);
        attachRace(attachRounds);
    }

    /** A thread drains b while a sends DONTWAIT until refused; every token comes back as a WRITABLE. */
    static void creditRace(int rounds) throws Exception {
        try (Context ctx = new Context(); Poller p = new Poller()) {
            Socket a = ctx.socket(Socket.PAIR), bs = ctx.socket(Socket.PAIR);
            a.option(Socket.LINGER, 0);
            bs.option(Socket.LINGER, 0);
            a.option(Socket.SNDHWM, 100L);
            bs.option(Socket.RCVTIMEO, -1);
            String ep = "inproc://pl17c-" + ProcessHandle.current().pid() + "-" + (seq++);
            a.bind(ep);
            bs.connect(ep);
            Check.eq(p.add(a, 2, Poller.POLLCOMPLETION), Tables.CONFIG_OK, "add");
            java.util.concurrent.atomic.AtomicLong got = new java.util.concurrent.atomic.AtomicLong();
            AtomicReference<String> bad = new AtomicReference<>();
            Thread drainer = new Thread(() -> {
                for (;;) {
                    Socket.Record r = bs.recv(0);
                    if (!r.ok()) {
                        bad.set(r.toString());
                        return;
                    }
                    if (new String(r.parts[0], StandardCharsets.UTF_8).equals("END"))
                        return;
                    got.incrementAndGet();
                }
            }, "pl17-drainer");
            drainer.setDaemon(true);
            drainer.start();
            long sent = 0;
            long[] token = new long[1];
            for (int i = 0; i < rounds; i++) {
                for (long tries = 0;; tries++) {
                    int rc = sendDontwait(a, "r", token);
                    if (rc == Tables.SUBMIT_BACKPRESSURED)
                        break;
                    Check.result(rc, Tables.SUBMIT_OK, "a send");
                    sent++;
                    Check.that(tries < 1_000_000, "round " + i + ": refused at last");
                }
                Check.that(token[0] != 0, "a wait token");
                expectEvent(p, 2, Check.ms(5000), Poller.POLLCOMPLETION);
                expectWritable(a, token[0]);
                expectNoRecord(a);
            }
            a.option(Socket.SNDTIMEO, (int) Check.ms(10000));
            a.send(b("END"));
            drainer.join(Check.ms(10000));
            Check.that(!drainer.isAlive(), "the drainer ended");
            Check.that(bad.get() == null, "the drainer's receives: " + bad.get());
            Check.eq(got.get(), sent, "records drained");
            System.err.println("PL-17 credit race: " + rounds + " refusals, " + sent + " records");
            Check.eq(p.remove(a), Tables.CONFIG_OK, "remove");
            a.close();
            bs.close();
        }
    }

    /** A PAIR with no peer sends DONTWAIT while another thread connects its peer: admitted, or refused with a token whose WRITABLE comes. */
    static void attachRace(int rounds) throws Exception {
        int refused = 0;
        for (int i = 0; i < rounds; i++) {
            try (Context ctx = new Context(); Poller p = new Poller()) {
                Socket a = ctx.socket(Socket.PAIR), bs = ctx.socket(Socket.PAIR);
                a.option(Socket.LINGER, 0);
                bs.option(Socket.LINGER, 0);
                String ep = "inproc://pl17a-" + ProcessHandle.current().pid() + "-" + (seq++);
                a.bind(ep);
                Check.eq(p.add(a, 3, Poller.POLLCOMPLETION), Tables.CONFIG_OK, "add");
                java.util.concurrent.atomic.AtomicBoolean connecting = new java.util.concurrent.atomic.AtomicBoolean();
                Thread c = new Thread(() -> {
                    connecting.set(true);
                    bs.connect(ep);
                });
                c.start();
                while (!connecting.get())
                    Thread.onSpinWait();
                for (int spin = (i * 7919) % 1500; spin > 0; spin--)
                    Thread.onSpinWait();
                long[] token = new long[1];
                int rc = sendDontwait(a, "r", token);
                c.join();
                if (rc == Tables.SUBMIT_BACKPRESSURED) {
                    refused++;
                    Check.that(token[0] != 0, "a wait token");
                    expectEvent(p, 3, Check.ms(5000), Poller.POLLCOMPLETION);
                    expectWritable(a, token[0]);
                } else {
                    Check.result(rc, Tables.SUBMIT_OK, "the send");
                    Check.eq(token[0], 0, "no wait token");
                    expectStr(bs, "r");
                }
                expectNoRecord(a);
                Check.eq(p.remove(a), Tables.CONFIG_OK, "remove");
                a.close();
                bs.close();
            }
        }
        System.err.println("PL-17 attach race: " + rounds + " rounds, " + refused + " refused before the attach");
    }

    static long now() {
        return System.nanoTime() / 1_000_000L;
    }

    /** A wait of p on a thread of its own. */
    static final class Waiter extends Thread {
        final Poller p;
        final long ms;
        final AtomicReference<Poller.Wait> got = new AtomicReference<>();

        Waiter(Poller p, long ms) {
            this.p = p;
            this.ms = ms;
            setDaemon(true);
            start();
        }

        @Override
        public void run() {
            got.set(p.await(4, ms));
        }

        Poller.Wait join(String what) throws InterruptedException {
            join(Check.ms(10000) + ms);
            Check.that(!isAlive(), what + ": the wait returned");
            return got.get();
        }
    }

    /** One socket in two pollers for readiness bits: both work, each reports on its own. */
    static void socketInTwoPollers(String tr) throws Exception {
        try (Context ctx = new Context(); Poller p1 = new Poller(); Poller p2 = new Poller()) {
            Socket[] ab = pairLink(ctx, tr);
            Socket a = ab[0], b = ab[1];
            Check.eq(p1.add(b, 1, Poller.POLLIN), Tables.CONFIG_OK, "p1 add");
            Check.eq(p2.add(b, 2, Poller.POLLIN | Poller.POLLOUT), Tables.CONFIG_OK, "p2 add");
            // p2 sees OUT once the peer is there; p1 asked for IN only: nothing.
            Check.eventually(() -> p2.await(4, 0).count == 1, 5000, "p2 sees POLLOUT");
            Check.eq(p1.await(4, 0).count, 0, "p1's events");
            Poller.Wait w = p2.await(4, 0);
            Check.eq(w.count, 1, "p2's events");
            Check.eq(w.events[0].events, Poller.POLLOUT, "p2's bits");
            Check.eq(w.events[0].user, 2, "p2's user value");
            Check.eq(p2.modify(b, Poller.POLLIN), Tables.CONFIG_OK, "p2 modify");

            // Both wait on other threads; one record wakes both.
            Waiter w1 = new Waiter(p1, Check.ms(5000)), w2 = new Waiter(p2, Check.ms(5000));
            a.send("x".getBytes(StandardCharsets.UTF_8));
            for (Object[] x : new Object[][] {{w1.join("p1"), 1L}, {w2.join("p2"), 2L}}) {
                Poller.Wait got = (Poller.Wait) x[0];
                Check.eq(got.count, 1, "a waiter's events");
                Check.eq(got.events[0].sourceKind, Poller.SOURCE_SOCKET, "a waiter's source kind");
                Check.eq(got.events[0].events, Poller.POLLIN, "a waiter's bits");
                Check.eq(got.events[0].user, (long) (Long) x[1], "a waiter's user value");
            }
            // Independent registrations: removing one leaves the other.
            Check.eq(p1.remove(b), Tables.CONFIG_OK, "p1 remove");
            Check.eq(p1.await(4, 0).count, 0, "p1's events after the remove");
            Check.eq(p2.await(4, 0).count, 1, "p2's events after p1's remove");
            Socket.Record r = b.recv(0);
            Check.that(r.ok() && r.parts.length == 1 && new String(r.parts[0], StandardCharsets.UTF_8).equals("x"),
                       "b received x: " + r);
            Check.eq(p2.await(4, 0).count, 0, "p2's events after the receive");
            Check.eq(p2.remove(b), Tables.CONFIG_OK, "p2 remove");
            a.close();
            b.close();
        }
    }
}
