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
 * JQ-10 and JQ-22 (conformance/c/jq_raw.c) over the Java binding, with
 * the framework records a raw peer sends encoded by hand (doc/protocol.md
 * §14, as conformance/c/sc_wire.c does): a raw peer is a plain Core socket
 * of a context of its own, so it reaches the host over tcp only. JQ-09's
 * body is JqPeers.java (raw ZMP peers over plain TCP); JQ-08 is missing
 * (Runner.WHY_MISSING says why).
 */
final class JqRaw {
    private JqRaw() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("JQ-09", p -> {
            int hwm = JqFlow.param(p, "hwm"), size = JqFlow.param(p, "record_size");
            int p2 = JqFlow.param(p, "p2_records");
            Check.that(hwm > 0 && size >= 5 && p2 > 0, "parameters in range");
            JqPeers.perPeerAccounting(hwm, size, p2);
        });
        m.put("JQ-10", p -> malformedInput());
        m.put("JQ-22", p -> {
            int pending = JqFlow.param(p, "pending"), window = JqFlow.param(p, "window_ms");
            int ppmMax = JqFlow.param(p, "cpu_ppm_max");
            Check.that(pending > 0 && window > 0 && ppmMax > 0, "parameters in range");
            noRetainedReceiveOrRetry(pending, window, ppmMax);
        });
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

    // ------------------------------------------------------------ JQ-22

    static long u64le(byte[] b, long at) {
        long v = 0;
        for (int i = 7; i >= 0; i--)
            v = v << 8 | (b[(int) at + i] & 0xFF);
        return v;
    }

    static long u32le(byte[] b, long at) {
        return u64le(b, at) & 0xFFFFFFFFL;
    }

    static int u16le(byte[] b, long at) {
        return (b[(int) at] & 0xFF) | (b[(int) at + 1] & 0xFF) << 8;
    }

    /**
     * The loaded libzlink's dynamic symbols (its file's .dynsym: the
     * exported ABI), checked for send-ready, retry and retained-receive
     * hooks; the number of zlink_ symbols read.
     */
    static int checkAbiHooks() throws Exception {
        java.nio.file.Path path = io.zlink.ZLink.loadedLibraryPath();
        Check.that(path != null, "the binding knows the loaded libzlink");
        byte[] img = java.nio.file.Files.readAllBytes(path);
        Check.that(img.length > 64 && img[0] == 0x7F && img[1] == 'E' && img[2] == 'L' && img[3] == 'F' && img[4] == 2,
                   path + " is an ELF64 file");
        long shoff = u64le(img, 0x28);
        int shentsize = u16le(img, 0x3A), shnum = u16le(img, 0x3C);
        Check.that(shoff + (long) shnum * shentsize <= img.length && shentsize == 64, "the section headers fit");
        String[] banned = {"send_ready", "sendready", "retry", "retained", "resubmit"};
        int nsyms = 0;
        boolean sawStart = false;
        for (int i = 0; i < shnum; i++) {
            long sh = shoff + (long) i * 64;
            if (u32le(img, sh + 4) != 11) // SHT_DYNSYM
                continue;
            long off = u64le(img, sh + 24), size = u64le(img, sh + 32), link = u32le(img, sh + 40);
            Check.that(link < shnum && off + size <= img.length, "the dynsym section fits");
            long strs = shoff + link * 64;
            long soff = u64le(img, strs + 24), ssize = u64le(img, strs + 32);
            Check.that(soff + ssize <= img.length, "the string table fits");
            for (long k = 0; k + 24 <= size; k += 24) {
                long name = u32le(img, off + k);
                int shndx = u16le(img, off + k + 6);
                if (shndx == 0 || name >= ssize)
                    continue; // imports are not the library's ABI
                int st = (int) (soff + name), e = st;
                while (e < img.length && img[e] != 0)
                    e++;
                String n = new String(img, st, e - st, StandardCharsets.US_ASCII);
                if (!n.startsWith("zlink_"))
                    continue;
                nsyms++;
                sawStart |= n.equals("zlink_call_start");
                for (String ban : banned)
                    if (n.toLowerCase(java.util.Locale.ROOT).contains(ban))
                        throw Check.fail(path + " exports " + n + ", a send-ready/retry hook");
            }
        }
        Check.that(sawStart, "the symbol table read has zlink_call_start");
        Check.that(nsyms > 50, "more than 50 zlink_ symbols read (" + nsyms + ")");
        return nsyms;
    }

    /** The records R's Core holds unread (its monitor's status). */
    static long rcvPending(Socket.Monitor mon) {
        long[] st = mon.status();
        Check.that((st[1] & Socket.Monitor.DETAIL_RCV_PENDING) != 0, "the monitor reports pending receives");
        return st[4];
    }

    /** This process's CPU time (every thread), in microseconds. */
    static long processCpuUs() {
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        Check.that(os instanceof com.sun.management.OperatingSystemMXBean, "the JVM reports its process CPU time");
        return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime() / 1000;
    }

    /**
     * A (a CS client of "svc", SNDHWM 16 KiB, SendTimeout 60 s) sends 4 KiB
     * one-ways to R, a raw Core ROUTER that does not read (RCVHWM 16 KiB):
     * admitted until the HWMs are full, then pending more wait. Over the
     * blocked window R's Core receives nothing new, the waiting sends stay
     * pending and the process uses under cpuPpmMax of one CPU. R then
     * reads: every started send arrives exactly once, in order, and each
     * completes OK.
     */
    static void noRetainedReceiveOrRetry(int pending, int windowMs, int cpuPpmMax) throws Exception {
        final int size = 4096;
        int nsyms = checkAbiHooks();
        System.err.println("JQ-22: " + nsyms + " exported zlink_ symbols, none a send-ready/retry hook");
        Context ctx = new Context();
        Socket r = ctx.socket(Socket.ROUTER);
        r.option(Socket.LINGER, 0);
        r.option(Socket.RCVHWM, 16384L);
        r.option(Socket.RCVTIMEO, (int) Check.ms(5000));
        r.bind("tcp://127.0.0.1:0");
        String ep = r.lastEndpoint();
        Socket.Monitor mon = r.monitor();
        Host a = new Host("A");
        a.addCsClient("svc", ep);
        a.channelOption("svc", Host.NodeOption.SNDHWM, 16384);
        a.channelOption("svc", Host.NodeOption.SEND_TIMEOUT, 60_000_000_000L);
        a.start();

        JqMore.Flow f = new JqMore.Flow();
        int started = 0;
        for (;;) {
            f.start(a, "k", started, size);
            started++;
            if (f.await(started, now() + Check.ms(100)) < started)
                break;
            f.noFailure();
            Check.that(started < 100000, "the HWMs filled");
        }
        for (int i = 0; i < pending; i++)
            f.start(a, "k", started++, size);
        int accepted = f.finished();
        final int waiting = started - accepted;
        Check.eventually(() -> a.status().onewayWaiting == waiting, 5000, waiting + " one-ways waiting");

        long held = rcvPending(mon);
        long cpu0 = processCpuUs(), w0 = now();
        Thread.sleep(windowMs); // the measured window itself, not a wait for a condition
        long cpu = processCpuUs() - cpu0, wall = now() - w0;
        Check.eq(rcvPending(mon), held, "R's pending records after the window");
        Check.eq(f.finished(), accepted, "sends completed during the window");
        Check.eq(a.status().onewayWaiting, waiting, "one-ways waiting after the window");
        long ppm = cpu * 1000 / Math.max(wall, 1);
        System.err.printf("JQ-22: blocked %d ms: %d admitted, %d waiting, R holds %d; CPU %d us (%d ppm)%n", wall,
                          accepted, waiting, held, cpu, ppm);
        if (ppm >= cpuPpmMax)
            throw Check.fail("the process used " + cpu + " us of CPU over a " + wall + " ms blocked window (" + ppm
                             + " ppm, < " + cpuPpmMax + " expected)");

        long lastHigh = 0, lastLow = 0;
        for (int got = 0; got < started; got++) {
            Socket.Record rec = r.routerRecv(0);
            Check.result(rec.result, Tables.RECV_OK, "R's router_recv " + got);
            Check.eq(rec.token, 0, "a one-way's token");
            Check.eq(rec.parts.length, 2, "parts");
            byte[] f0 = rec.parts[0];
            Check.that(f0.length >= 21 && f0[0] == 0x5A && f0[3] == 18, "a CHANNEL_SEND frame");
            long high = 0, low = 0;
            for (int i = 0; i < 8; i++) {
                high = high << 8 | (f0[5 + i] & 0xFF);
                low = low << 8 | (f0[13 + i] & 0xFF);
            }
            Check.that(high != 0 || low != 0, "an OperationId");
            byte[] env = rec.parts[1];
            Check.that(env.length >= 8 + size && env[0] == 1, "a payload envelope");
            int e = 8;
            while (e < env.length && env[e] != 0)
                e++;
            String payload = new String(env, 8, e - 8, StandardCharsets.UTF_8);
            if (!payload.equals("k" + got))
                throw Check.fail("R's record " + got + " is " + payload + ", k" + got + " expected (each send once, in order)");
            Check.that(got == 0 || high != lastHigh || low != lastLow, "one OperationId per record");
            lastHigh = high;
            lastLow = low;
        }
        if (f.await(started, now() + Check.ms(10000)) < started)
            throw Check.fail(f.finished() + " of " + started + " sends completed after R read them all");
        f.noFailure();
        try (io.zlink.Poller poller = new io.zlink.Poller()) {
            Check.eq(poller.add(r, 0, io.zlink.Poller.POLLIN), Tables.CONFIG_OK, "poller add");
            Check.eq(poller.await(1, Check.ms(100)).count, 0, "records after the last one");
        }
        Check.eq(rcvPending(mon), 0, "R's pending records at the end");
        a.shutdown(Duration.ofMillis(2000));
        a.close();
        mon.close();
        r.close();
        ctx.close();
    }

    static String hex(byte[] p) {
        return Arrays.toString(p);
    }
}
