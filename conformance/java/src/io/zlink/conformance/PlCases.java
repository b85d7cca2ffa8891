package io.zlink.conformance;

import io.zlink.Context;
import io.zlink.Poller;
import io.zlink.Socket;
import io.zlink.Tables;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The PL cases (seed 004 §9) the Java runner implements, ported from
 * conformance/c/pl_registration.c and pl_completion.c over the binding's
 * Poller and Socket: PL-06, PL-16, PL-18. The binding's Core request
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
