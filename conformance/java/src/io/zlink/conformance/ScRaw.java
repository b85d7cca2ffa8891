package io.zlink.conformance;

import io.zlink.Context;
import io.zlink.Socket;
import io.zlink.Tables;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

/**
 * SC-14 and SC-15 (Core: raw replies under backpressure), ported from
 * conformance/c/sc_raw.c, through the binding's Core classes.
 */
final class ScRaw {
    private ScRaw() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("SC-14", p -> ScCases.each(p, tr -> {
            replyToDealer(tr, false);
            replyToDealer(tr, true);
        }));
        m.put("SC-15", p -> ScCases.each(p, ScRaw::replyToRouter));
    }

    static final int TIMEO_MS = 2000;
    private static int seq;

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** The usual test socket: LINGER 0, send and receive timeouts. */
    private static Socket sock(Context ctx, int type) {
        Socket s = ctx.socket(type);
        s.option(Socket.LINGER, 0);
        s.option(Socket.SNDTIMEO, (int) Check.ms(TIMEO_MS));
        s.option(Socket.RCVTIMEO, (int) Check.ms(TIMEO_MS));
        return s;
    }

    private static String bind(Socket s, String tr) {
        if (tr.equals("tcp")) {
            s.bind("tcp://127.0.0.1:0");
            return s.lastEndpoint();
        }
        String ep = "inproc://scraw-" + ProcessHandle.current().pid() + "-" + (seq++);
        s.bind(ep);
        return ep;
    }

    private static final class Req {
        byte[] rid;
        long token;
    }

    private static Req recvRequest(Socket r, String want) {
        Socket.Record rec = r.routerRecv(0);
        Check.result(rec.result, Tables.RECV_OK, "router_recv");
        Check.that(rec.token != 0, "a request token");
        Check.eq(rec.parts.length, 1, "parts");
        Check.eq(new String(rec.parts[0], StandardCharsets.UTF_8), want, "the request");
        Req q = new Req();
        q.rid = rec.routingId;
        q.token = rec.token;
        return q;
    }

    private static long request(Socket s, byte[] to, String text) {
        long[] id = new long[1];
        Check.result(s.requestResult(to, 0, (int) Check.ms(10000), id, b(text)), Tables.SUBMIT_OK, "request");
        Check.that(id[0] != 0, "a completion id");
        return id[0];
    }

    private static int fill(Socket r, String to, int size, long[] wt) {
        byte[] body = new byte[size];
        Arrays.fill(body, (byte) 'd');
        long end = Sc.now() + Check.ms(10000);
        for (int n = 0;; n++) {
            wt[0] = 0;
            int rc = r.sendToResult(b(to), Socket.DONTWAIT, wt, body);
            if (rc == Tables.SUBMIT_BACKPRESSURED) {
                Check.eq(Socket.lastErrno(), Tables.ERRNO_EAGAIN, "errno");
                Check.that(wt[0] != 0, "a wait token");
                return n;
            }
            Check.result(rc, Tables.SUBMIT_OK, "send_rid");
            if (Sc.now() > end || n > 1000000)
                throw Check.fail("sends to '" + to + "' were never refused");
        }
    }

    private static int fillStable(Socket r, String to, int size, long[] wt) {
        int total = 0;
        r.option(Socket.RCVTIMEO, (int) Check.ms(100));
        for (int round = 0;; round++) {
            Check.that(round < 100000, "the refusal holds");
            total += fill(r, to, size, wt);
            Socket.Completion rec = r.completion(0);
            if (rec.result != Tables.RECV_OK)
                break; // quiet: the refusal holds
            Check.eq(rec.kind, 3, "a WRITABLE record");
            Check.eq(rec.sendResult, Tables.SEND_ADMITTED, "send_result");
            Check.eq(rec.id, wt[0], "the token");
        }
        r.option(Socket.RCVTIMEO, (int) Check.ms(TIMEO_MS));
        return total;
    }

    private static void noRecord(Socket s) {
        Check.result(s.completion(Socket.DONTWAIT).result, Tables.RECV_NO_DATA, "completion_recv");
    }

    private static void expectWritable(Socket s, long wt, long... other) {
        for (;;) {
            Socket.Completion rec = s.completion(0);
            Check.result(rec.result, Tables.RECV_OK, "completion_recv");
            Check.eq(rec.kind, 3, "a WRITABLE record");
            Check.eq(rec.sendResult, Tables.SEND_ADMITTED, "send_result");
            if (rec.id == wt)
                return;
            boolean known = false;
            for (long o : other)
                known = known || rec.id == o;
            if (!known)
                throw Check.fail("a WRITABLE record of an unknown token " + rec.id);
        }
    }

    private static void expectReply(Socket s, long id, String text) {
        Socket.Completion rec = s.completion(0);
        Check.result(rec.result, Tables.RECV_OK, "completion_recv");
        Check.eq(rec.kind, 2, "a REQUEST record");
        Check.eq(rec.id, id, "the completion id");
        Check.result(rec.requestResult, Tables.REQUEST_OK, "request_result");
        Check.eq(rec.replyParts.length, 1, "reply parts");
        Check.eq(new String(rec.replyParts[0], StandardCharsets.UTF_8), text, "the reply");
    }

    private static void drainData(Socket d, int n, int size) {
        for (int i = 0; i < n; i++) {
            Socket.Record rec = d.recv(0);
            Check.result(rec.result, Tables.RECV_OK, "recv");
            Check.eq(rec.parts.length, 1, "parts");
            Check.eq(rec.parts[0].length, size, "size");
        }
    }

    private static void replyToDealer(String tr, boolean paused) {
        try (Context ctx = new Context()) {
            Socket r = sock(ctx, Socket.ROUTER);
            r.routingId(b("R"));
            Socket d = sock(ctx, Socket.DEALER);
            d.routingId(b("D"));
            if (!paused) {
                r.option(Socket.SNDHWM, 4096L);
                d.option(Socket.RCVHWM, 4096L);
                if (tr.equals("tcp")) {
                    r.option(Socket.SNDBUF, 4096);
                    d.option(Socket.RCVBUF, 4096);
                }
            }
            String ep = bind(r, tr);
            d.connect(ep);
            long id = request(d, null, "q");
            Req q = recvRequest(r, "q");
            int size = paused ? 1 : 1024;
            long[] dataWt = {0};
            if (paused)
                Check.result(d.receiveFlowResult(true), Tables.CONFIG_OK, "PAUSED");
            int n = fillStable(r, "D", size, dataWt);
            long[] emptyWt = {0};
            int empties = paused ? 0 : fillStable(r, "D", 0, emptyWt);

            long[] wt = {0};
            Check.result(r.replySubmitResult(q.rid, q.token, 0, Socket.DONTWAIT, wt, b("reply")),
                         Tables.SUBMIT_BACKPRESSURED, "the async reply");
            Check.eq(Socket.lastErrno(), Tables.ERRNO_EAGAIN, "errno");
            Check.that(wt[0] != 0 && wt[0] != dataWt[0] && wt[0] != emptyWt[0], "a new wait token");
            noRecord(r);
            r.option(Socket.SNDTIMEO, 50);
            long t0 = Sc.now();
            int src = r.replyResult(q.rid, q.token, b("reply"));
            if (src != Tables.SUBMIT_BACKPRESSURED)
                throw Check.fail(tr + (paused ? " paused" : " full") + ": sync reply " + src + " after "
                                 + (Sc.now() - t0) + " ms");
            Check.eq(Socket.lastErrno(), Tables.ERRNO_EAGAIN, "errno");
            Check.that(Sc.now() - t0 >= 50, "the sync reply waited its SNDTIMEO");
            noRecord(r);
            r.option(Socket.SNDTIMEO, (int) Check.ms(TIMEO_MS));

            if (paused) {
                Check.result(d.receiveFlowResult(false), Tables.CONFIG_OK, "RUNNING");
            } else {
                drainData(d, n, size);
                drainData(d, empties, 0);
            }
            if (paused)
                expectWritable(r, wt[0], dataWt[0]);
            else
                expectWritable(r, wt[0], dataWt[0], emptyWt[0]);
            Check.result(r.replySubmitResult(q.rid, q.token, 0, Socket.DONTWAIT, wt, b("reply")),
                         Tables.SUBMIT_OK, "the async reply");
            if (paused)
                drainData(d, n, size);
            expectReply(d, id, "reply");
            Check.result(r.closeResult(), Tables.CLOSE_OK, "close");
            Check.result(d.closeResult(), Tables.CLOSE_OK, "close");
        }
    }

    private static boolean tryRequest(Socket s, String to, String text, long[] id) {
        id[0] = 0;
        int rc = s.requestResult(b(to), Socket.DONTWAIT, (int) Check.ms(10000), id, b(text));
        if (rc == Tables.SUBMIT_OK)
            return true;
        Check.result(rc, Tables.SUBMIT_NOT_CONNECTED, "request");
        return false;
    }

    private static void replyToRouter(String tr) {
        try (Context ctx = new Context()) {
            Socket a = sock(ctx, Socket.ROUTER);
            a.routingId(b("A"));
            a.option(Socket.SNDHWM, 4096L);
            Socket bs = sock(ctx, Socket.ROUTER);
            bs.routingId(b("B"));
            bs.option(Socket.RCVHWM, 4096L);
            if (tr.equals("tcp")) {
                a.option(Socket.SNDBUF, 4096);
                bs.option(Socket.RCVBUF, 4096);
            }
            String ep = bind(a, tr);
            bs.connect(ep);
            long[] id1 = {0};
            Check.eventually(() -> tryRequest(bs, "A", "q1", id1), 5000, "B reaches A");
            long id2 = request(bs, b("A"), "q2");
            Req q1 = recvRequest(a, "q1");
            Req q2 = recvRequest(a, "q2");

            Check.result(bs.receiveFlowResult(true), Tables.CONFIG_OK, "PAUSED");
            long[] dataWt = {0};
            int n = fillStable(a, "B", 1024, dataWt);
            long[] moreWt = {0};
            Check.eq(fill(a, "B", 1024, moreWt), 0, "sends still refused");

            long[] wt = {0};
            Check.result(a.replySubmitResult(q1.rid, q1.token, 0, Socket.DONTWAIT, wt, b("r1")),
                         Tables.SUBMIT_OK, "the async reply");
            Check.eq(wt[0], 0, "no wait token");
            a.option(Socket.SNDTIMEO, 0);
            Check.result(a.replyResult(q2.rid, q2.token, b("r2")), Tables.SUBMIT_OK, "the sync reply");
            expectReply(bs, id1[0], "r1");
            expectReply(bs, id2, "r2");
            Check.result(bs.receiveFlowResult(false), Tables.CONFIG_OK, "RUNNING");
            for (int i = 0; i < n; i++) {
                Socket.Record rec = bs.routerRecv(0);
                Check.result(rec.result, Tables.RECV_OK, "router_recv");
                Check.eq(rec.token, 0, "DATA");
                Check.eq(rec.parts[0].length, 1024, "size");
            }
            Check.result(a.closeResult(), Tables.CLOSE_OK, "close");
            Check.result(bs.closeResult(), Tables.CLOSE_OK, "close");
        }
    }
}
