package io.zlink.conformance;

import static io.zlink.conformance.Sc.*;

import io.zlink.Context;
import io.zlink.Host;
import io.zlink.Socket;
import io.zlink.Tables;
import io.zlink.Turn;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * JQ-10 (conformance/c/jq_raw.c) over the Java binding, with the
 * framework records a raw peer sends encoded by hand (doc/protocol.md
 * §14, as conformance/c/sc_wire.c does): a raw peer is a plain Core socket
 * of a context of its own, so it reaches the host over tcp only.
 */
final class JqRaw {
    private JqRaw() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("JQ-10", p -> malformedInput());
    }

    // ------------------------------------------------------------ the wire

    /** A frame written big-endian, byte by byte. */
    static final class Wire {
        final ByteArrayOutputStream b = new ByteArrayOutputStream();

        Wire u8(int v) {
            b.write(v & 0xFF);
            return this;
        }

        Wire u32(long v) {
            for (int s = 24; s >= 0; s -= 8)
                u8((int) (v >>> s));
            return this;
        }

        Wire u64(long v) {
            u32(v >>> 32);
            return u32(v & 0xFFFFFFFFL);
        }

        Wire bytes(byte[] p) {
            b.write(p, 0, p.length);
            return this;
        }

        Wire l8(String s) {
            byte[] p = s.getBytes(StandardCharsets.UTF_8);
            Check.that(p.length <= 255, "an l8 string of at most 255 bytes");
            return u8(p.length).bytes(p);
        }

        /** The frame prefix: magic "ZM", version 1, the command and the flags. */
        Wire prefix(int command, int flags) {
            return u8(0x5A).u8(0x4D).u8(0x01).u8(command).u8(flags);
        }

        byte[] done() {
            return b.toByteArray();
        }
    }

    /**
     * A record's frames: frame 0 CHANNEL_SEND (18), or CHANNEL_REQUEST (19)
     * with its correlation and timeout_ms 0 when correlation != 0; frame 1
     * the payload envelope (packet "m", content type "").
     */
    static byte[][] record(int flags, long correlation, long op, String channel, byte[] payload) {
        Wire f0 = new Wire().prefix(correlation != 0 ? 19 : 18, flags);
        if (correlation != 0)
            f0.u64(correlation);
        f0.u64(0).u64(op); // op_high, op_low
        if (correlation != 0)
            f0.u32(0);
        f0.l8(channel);
        Wire f1 = new Wire().u8(0x01).u32(payload.length).u8(1).u8('m').u8(0).bytes(payload);
        return new byte[][] {f0.done(), f1.done()};
    }

    /** A raw DEALER of ctx with routing id rid, connected to ep. */
    static Socket rawDealer(Context ctx, String rid, String ep) {
        Socket d = ctx.socket(Socket.DEALER);
        d.routingId(b(rid));
        d.option(Socket.LINGER, 0);
        d.connect(ep);
        return d;
    }

    /** The request result of completion id on d (other completions are skipped). */
    static int requestResult(Socket d, long id) {
        for (;;) {
            Socket.Completion c = d.completion(0);
            Check.result(c.result, Tables.RECV_OK, "completion_recv");
            if (c.kind == 2 && c.id == id)
                return c.requestResult;
        }
    }

    // ------------------------------------------------------------ JQ-10

    static final String[] BAD = {"undefined flag 0x10", "an extra frame", "no envelope", "five frames"};

    /** The frames of malformed shape bad; a request when correlation != 0. */
    static byte[][] bad(int bad, long correlation, long op) {
        byte[][] p = record(bad == 0 ? 0x10 : 0x00, correlation, op, "svc", b("bad"));
        switch (bad) {
        case 1: // frame count 3 without META
            return new byte[][] {p[0], p[1], b("x")};
        case 2:
            return new byte[][] {p[0]};
        case 3:
            return new byte[][] {p[0], p[1], b("x"), b("x"), b("x")};
        default:
            return p;
        }
    }

    static final String DROPPED = "zlink.mesh_node.messages.dropped";

    /**
     * B: a CS server "svc" with M = 1, so one permit that malformed input
     * kept would stop B for good. A raw DEALER sends each malformed shape
     * as a request (ProtocolError, no handler) and as a one-way (dropped
     * as a decode error, no handler), then valid ones, which reach their
     * handlers.
     */
    static void malformedInput() throws Exception {
        AtomicInteger sends = new AtomicInteger(), requests = new AtomicInteger();
        Host b = new Host("B");
        b.option(Host.Option.MAX_QUEUED_JOBS, 1);
        b.addCsServer("svc", "tcp://127.0.0.1:0");
        b.addHandler(Host.OwnerKind.CHANNEL, "svc", Turn.Kind.SEND, "m", turn -> {
            sends.incrementAndGet();
            return null;
        });
        b.addHandler(Host.OwnerKind.CHANNEL, "svc", Turn.Kind.REQUEST, "m", turn -> {
            requests.incrementAndGet();
            turn.respond("m", "", turn.payload());
            return null;
        });
        b.start();
        String ep = b.endpoint("svc");
        Context ctx = new Context();
        Socket d = rawDealer(ctx, "raw", ep);
        d.option(Socket.RCVTIMEO, (int) Check.ms(5000));
        long dropped0 = b.metric(DROPPED, "reason=decode_error");
        long proto0 = b.metric("zlink.host.protocol_errors", "");
        for (int k = 0; k < BAD.length; k++) {
            long[] id = new long[1];
            Check.result(d.requestResult(null, 0, (int) Check.ms(5000), id, bad(k, 100 + k, 200 + k)),
                         Tables.SUBMIT_OK, "request with " + BAD[k]);
            int r = requestResult(d, id[0]);
            if (r != Tables.REQUEST_PROTOCOL_ERROR)
                throw Check.fail("a request with " + BAD[k] + ": request_result " + Tables.resultName(r)
                                 + ", ProtocolError expected");
            Check.result(d.sendResult(0, null, bad(k, 0, 300 + k)), Tables.SUBMIT_OK, "one-way with " + BAD[k]);
            final long want = dropped0 + k + 1;
            Check.eventually(() -> b.metric(DROPPED, "reason=decode_error") == want, 5000,
                             "the one-way with " + BAD[k] + " dropped as a decode error");
            Check.eventually(() -> b.capacity().permitsInUse == 0, 5000, "the permit came back");
        }
        Check.eq(b.metric("zlink.host.protocol_errors", ""), proto0 + 2 * BAD.length, "protocol errors");
        Check.result(d.sendResult(0, null, record(0, 0, 400, "svc", b("ok"))), Tables.SUBMIT_OK, "a valid one-way");
        long[] id = new long[1];
        Check.result(d.requestResult(null, 0, (int) Check.ms(5000), id, record(0, 401, 402, "svc", b("ok"))),
                     Tables.SUBMIT_OK, "a valid request");
        Check.result(requestResult(d, id[0]), Tables.REQUEST_OK, "the valid request's result");
        Check.eventually(() -> sends.get() == 1, 5000, "the valid one-way handled");
        Check.eq(requests.get(), 1, "requests handled");
        Check.eq(b.metric(DROPPED, "reason=decode_error"), dropped0 + BAD.length, "decode-error drops");
        Check.eventually(() -> b.capacity().permitsInUse == 0, 5000, "B's permits free");
        Check.eq(b.capacity().reservedSupplyPermits, 0, "reserved supply permits");
        Check.eq(b.capacity().queuedJobs, 0, "queued jobs");
        d.close();
        ctx.close();
        b.shutdown(Duration.ofMillis(2000));
        b.close();
    }

    static String hex(byte[] p) {
        return Arrays.toString(p);
    }
}
