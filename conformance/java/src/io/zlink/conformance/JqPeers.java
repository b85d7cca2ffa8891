package io.zlink.conformance;

import static io.zlink.conformance.Sc.*;

import io.zlink.Context;
import io.zlink.Host;
import io.zlink.Socket;
import io.zlink.Tables;
import io.zlink.Turn;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * JQ-09 (conformance/c/jq_raw.c jq09_per_peer_accounting) over the Java
 * binding.
 *
 * <p>Design notes. The C body keeps B RUNNING with free permits and holds
 * B's two host threads inside gated handlers, so nothing receives while P1
 * and P2 queue their records. A Java handler never holds a C thread (the
 * binding's trampoline queues the turn to the Java pump and returns), so
 * here B stops receiving the only other way the public API gives: its
 * single permit (M = 1) is held by a blocker queued behind a "hold" turn
 * that a Java stage keeps open (seed 001 §3: without a permit the next
 * ordinary record is not received). A saturated host is PAUSED, and a Core
 * DEALER peer would then be refused for the pause, not for its HWM; so P1
 * and P2 are raw ZMP peers over plain TCP written here (like
 * core/tests/zltest_rawzmp.h and JqPressure.Raw), which do not apply
 * FLOWSTATE. The per-peer accounting is then B's Core's own: its receive
 * pipe for P1 reaches the RCVHWM and B's Core stops reading P1's
 * connection, so P1's writes stop making progress (the kernel buffers
 * fill) and stay stopped, while P2's records, on another pipe of the same
 * ROUTER, are taken at once and show up in B's Core queue
 * (zlink.host.core_hwm.accounted{state=receive}). Freeing the permit lets
 * B receive with M = 1, and the one ROUTER's fair queue makes P1 and P2
 * take turns, each in its sending order.
 *
 * <p>Threads: the case's thread connects, writes and checks; handlers run
 * on B's Java pump and take the log's monitor.
 */
final class JqPeers {
    private JqPeers() {}

    static final long BLOCKER = 0xFFFFFFFFL, WARM = 0xFFFFFFFEL;

    /** What the handlers saw, in handling order: source index and sequence. */
    static final class Log {
        final int[] src;
        final long[] seq;
        int n, bad, warm;

        Log(int cap) {
            src = new int[cap];
            seq = new long[cap];
        }

        /** ClientServer gives no source: the raw peers write their index as payload byte 4. */
        synchronized void add(Turn t) {
            byte[] p = t.payload();
            long s = p.length >= 4 ? (p[0] & 0xFFL) << 24 | (p[1] & 0xFFL) << 16 | (p[2] & 0xFFL) << 8 | (p[3] & 0xFFL) : -1;
            if (s == WARM) {
                warm++;
            } else if (s < 0 || p.length < 5 || t.source().length != 0 || p[4] > 1 || p[4] < 0 || n == src.length) {
                bad++;
            } else {
                src[n] = p[4];
                seq[n] = s;
                n++;
            }
            notifyAll();
        }

        synchronized int count() {
            return n;
        }

        synchronized int warm() {
            return warm;
        }

        synchronized void await(int want, long ms) throws InterruptedException {
            long end = now() + Check.ms(ms);
            while (n < want && now() < end)
                wait(Math.max(1, end - now()));
            if (n < want)
                throw Check.fail("handlers logged " + n + " of " + want + " records within " + Check.ms(ms) + " ms (bad " + bad + ")");
            Check.eq(bad, 0, "records with an unknown source or a short payload");
        }
    }

    /**
     * A raw ZMP DEALER over a plain TCP connection (doc/protocol.md §2-§7):
     * it does the connecting side's handshake and then only writes, non
     * blocking, so a write that makes no progress is observable; it never
     * reads after the handshake, so FLOWSTATE frames are not applied.
     */
    static final class RawPeer implements AutoCloseable {
        final SocketChannel ch;
        final Selector sel;
        final int index;
        ByteBuffer pending; // the record being written, or null

        /** sndbuf: the connection's SO_SNDBUF, or 0 for the OS default. */
        RawPeer(String ep, String rid, int index, int sndbuf) throws IOException {
            this.index = index;
            int port = Integer.parseInt(ep.substring(ep.lastIndexOf(':') + 1));
            ch = SocketChannel.open();
            if (sndbuf > 0)
                ch.setOption(StandardSocketOptions.SO_SNDBUF, sndbuf);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ch.connect(new InetSocketAddress("127.0.0.1", port));
            ch.configureBlocking(false);
            sel = Selector.open();
            ch.register(sel, 0);
            writeAll(JqPressure.Raw.frame(JqPressure.Raw.F_CONTROL,
                                          new JqRaw.Wire().u8(0x01).u8(Socket.DEALER >> 8).u8(Socket.DEALER).l8(rid).done()));
            byte[] hello = readFrame();
            Check.that(hello.length > 0 && hello[0] == 0x01, "HELLO from B");
            JqRaw.Wire w = new JqRaw.Wire().u8(0x04);
            JqPressure.Raw.prop(w, "Socket-Type", b("DEALER"));
            JqPressure.Raw.prop(w, "Routing-Id", b(rid));
            JqPressure.Raw.prop(w, "Zlink-Lane-Count", new byte[] {1});
            JqPressure.Raw.prop(w, "Zlink-Lane", new byte[] {0});
            JqPressure.Raw.prop(w, "Zlink-Weight", new byte[] {0, 0, 0, 100});
            writeAll(JqPressure.Raw.frame(JqPressure.Raw.F_CONTROL, w.done()));
            byte[] ready = readFrame();
            Check.that(ready.length > 0 && ready[0] == 0x04, "READY from B");
        }

        /** Waits (bounded) until the channel is ready for ops. */
        boolean ready(int ops, long ms) throws IOException {
            SelectionKey k = ch.keyFor(sel);
            k.interestOps(ops);
            sel.selectedKeys().clear();
            int n = sel.select(Math.max(1, ms));
            k.interestOps(0);
            sel.selectedKeys().clear();
            return n > 0;
        }

        void writeAll(byte[] bytes) throws IOException {
            ByteBuffer bb = ByteBuffer.wrap(bytes);
            long end = now() + Check.ms(5000);
            while (bb.hasRemaining()) {
                if (ch.write(bb) == 0 && !ready(SelectionKey.OP_WRITE, end - now()) && now() >= end)
                    throw Check.fail("a raw peer's write made no progress in 5 s");
            }
        }

        void readFully(ByteBuffer bb) throws IOException {
            long end = now() + Check.ms(5000);
            while (bb.hasRemaining()) {
                int r = ch.read(bb);
                if (r < 0)
                    throw Check.fail("B closed a raw peer's connection during the handshake");
                if (r == 0 && !ready(SelectionKey.OP_READ, end - now()) && now() >= end)
                    throw Check.fail("a raw peer read nothing from B in 5 s");
            }
        }

        /** The next frame's body (8-byte header; kinds 1..3 carry a sequence). */
        byte[] readFrame() throws IOException {
            ByteBuffer h = ByteBuffer.allocate(8);
            readFully(h);
            byte[] hb = h.array();
            Check.that(hb[0] == 0x5A && hb[1] == 0x01, "a ZMP frame header from B");
            if ((hb[3] & 0xFF) >= 1 && (hb[3] & 0xFF) <= 3)
                readFully(ByteBuffer.allocate(8));
            ByteBuffer body = ByteBuffer.allocate((int) (h.getInt(4) & 0xFFFFFFFFL));
            readFully(body);
            return body.array();
        }

        /** One one-way framework record to channel: payload seq (4 bytes BE), index, zero padding to size. */
        static byte[] record(String channel, int index, long seq, int size) {
            byte[] p = new byte[Math.max(5, size)];
            for (int i = 0; i < 4; i++)
                p[i] = (byte) (seq >>> (24 - 8 * i));
            p[4] = (byte) index;
            byte[][] parts = JqRaw.record(0, 0, 1 + index * 1_000_000L + (seq & 0xFFFFF), channel, p);
            JqRaw.Wire w = new JqRaw.Wire();
            w.bytes(JqPressure.Raw.frame(JqPressure.Raw.F_MORE, parts[0]));
            w.bytes(JqPressure.Raw.frame(0, parts[1]));
            return w.done();
        }

        /** Starts record bytes: true when the kernel took it whole at once, else it stays pending. */
        boolean offer(byte[] rec) throws IOException {
            Check.that(pending == null, "one record pending at a time");
            ByteBuffer bb = ByteBuffer.wrap(rec);
            ch.write(bb);
            if (bb.hasRemaining()) {
                pending = bb;
                return false;
            }
            return true;
        }

        /** Pushes the pending record on without waiting: true when it completed. */
        boolean push() throws IOException {
            ch.write(pending);
            if (pending.hasRemaining())
                return false;
            pending = null;
            return true;
        }

        @Override
        public void close() throws IOException {
            sel.close();
            ch.close();
        }
    }

    /**
     * B: CS server "svc" over tcp (HANDLER_THREADS 1), M = 1, RCVHWM hwm,
     * a logging handler; CS server "hold" whose first turn a stage keeps
     * open. P1 and P2 are raw peers of "svc"; H a Core DEALER of "hold".
     */
    /** B's Core receive bytes once they stayed the same for 20 ms. */
    private static long settled(Host b) throws InterruptedException {
        long end = now() + Check.ms(5000);
        for (;;) {
            long a = b.metric("zlink.host.core_hwm.accounted", "state=receive");
            Thread.sleep(20);
            if (b.metric("zlink.host.core_hwm.accounted", "state=receive") == a)
                return a;
            Check.that(now() < end, "B's Core receive bytes settled within 5 s");
        }
    }

    /** P1 offers its next records until no write makes progress for
     *  100 ms; returns how many whole records the kernel took meanwhile.
     *  A partly written record stays pending (sent after the open). */
    private static int pushUntilStuck(RawPeer p1, int size, int seq) throws IOException {
        int took = 0;
        for (;;) {
            boolean whole = p1.pending == null ? p1.offer(RawPeer.record("svc", 0, seq + took, size)) : p1.push();
            if (whole) {
                took++;
                continue;
            }
            if (!p1.ready(SelectionKey.OP_WRITE, Check.ms(100)))
                return took;
        }
    }

    static void perPeerAccounting(int hwm, int size, int p2Records) throws Exception {
        Log log = new Log(1_000_000);
        CompletableFuture<Void> gate = new CompletableFuture<>();
        AtomicInteger holdTurns = new AtomicInteger();
        Host b = new Host("B");
        b.option(Host.Option.HANDLER_THREADS, 1);
        b.option(Host.Option.MAX_QUEUED_JOBS, 1);
        b.addCsServer("svc", "tcp://127.0.0.1:0");
        b.channelOption("svc", Host.NodeOption.RCVHWM, hwm);
        b.addCsServer("hold", "tcp://127.0.0.1:0");
        b.addHandler(Host.OwnerKind.CHANNEL, "svc", Turn.Kind.SEND, "m", turn -> {
            log.add(turn);
            return null;
        });
        b.addHandler(Host.OwnerKind.CHANNEL, "hold", Turn.Kind.SEND, "m", turn -> holdTurns.getAndIncrement() == 0 ? gate : null);
        b.start();
        String ep = b.endpoint("svc"), holdEp = b.endpoint("hold");
        Check.eq(b.capacity().effectiveMax, 1, "M");

        // P1's small send buffer only keeps its fill short; P2 has the OS's.
        RawPeer p1 = new RawPeer(ep, "P1", 0, 4096), p2 = new RawPeer(ep, "P2", 1, 0);
        // Both connected: a record of each reached the handler.
        p1.writeAll(RawPeer.record("svc", 0, WARM, 5));
        p2.writeAll(RawPeer.record("svc", 1, WARM, 5));
        Check.eventually(() -> log.warm() == 2, 5000, "both raw peers' first records handled");

        // The blockers: the first "hold" turn stays open (its stage), the
        // second queues behind it and keeps B's single permit.
        Context ctx = new Context();
        Socket hd = JqRaw.rawDealer(ctx, "H", holdEp);
        hd.option(Socket.SNDTIMEO, (int) Check.ms(5000));
        Check.result(hd.sendResult(0, null, JqRaw.record(0, 0, 7, "hold", b("one"))), Tables.SUBMIT_OK, "blocker 1");
        Check.eventually(() -> holdTurns.get() == 1, 5000, "the first hold turn open");
        Check.result(hd.sendResult(0, null, JqRaw.record(0, 0, 8, "hold", b("two"))), Tables.SUBMIT_OK, "blocker 2");
        Check.eventually(() -> b.capacity().queuedJobs == 1 && b.capacity().permitsInUse == 1, 5000,
                         "the second blocker queued with B's one permit");
        Check.eq(b.capacity().pressureState, 1, "B saturated (M = 1) is PAUSED");
        long base = b.metric("zlink.host.core_hwm.accounted", "state=receive");

        // P1 fills its pipe: each record while the kernel takes it whole;
        // a record it takes in part waits for a writable edge, until none
        // comes for 100 ms while B's Core holds P1's pipe at its mark:
        // then B's Core reads P1 no more, so nothing can move.
        int p1Sent = 0;
        long fillEnd = now() + Check.ms(20000);
        for (;;) {
            Check.that(now() < fillEnd, "P1's pipe filled within 20 s");
            Check.that(p1Sent < 1_000_000, "P1's pipe filled");
            if ((p1Sent & 63) == 0 && log.count() != 0)
                throw Check.fail("B handled P1's records while it had no permit (" + log.count() + " after " + p1Sent + " sent)");
            if (p1.pending == null) {
                if (p1.offer(RawPeer.record("svc", 0, p1Sent, size))) {
                    p1Sent++;
                    continue;
                }
            } else if (p1.push()) {
                p1Sent++;
                continue;
            }
            if (!p1.ready(SelectionKey.OP_WRITE, Check.ms(100))
                && b.metric("zlink.host.core_hwm.accounted", "state=receive") - base >= hwm)
                break; // the refusal holds: P1's pipe and the kernel buffers are full
        }
        Check.that(p1Sent > 0, "P1 sent records before it was refused");
        long p1Held = b.metric("zlink.host.core_hwm.accounted", "state=receive") - base;
        Check.that(p1Held >= hwm, "B's Core holds P1's records up to its pipe's mark (" + p1Held + " bytes, RCVHWM " + hwm + ")");
        // P1 is still refused: B's Core takes no more of it. (Its kernel
        // buffers may still take a record or two, which is not B's
        // refusal: the check is on B's Core, the per-peer mark.)
        p1Sent += pushUntilStuck(p1, size, p1Sent);
        Check.eq(b.metric("zlink.host.core_hwm.accounted", "state=receive") - base, p1Held,
                 "B's Core bytes after P1 kept sending (P1 refused at its pipe's mark)");
        // P2, another peer of the same ROUTER, is not refused.
        for (int i = 0; i < p2Records; i++)
            Check.that(p2.offer(RawPeer.record("svc", 1, i, size)), "P2's record " + i + " admitted at once");
        final long want = p1Held + (long) p2Records * size;
        Check.eventually(() -> b.metric("zlink.host.core_hwm.accounted", "state=receive") - base >= want, 5000,
                         "P2's records in B's Core queue beside P1's");
        long withP2 = settled(b); // P2's last records may still be arriving
        p1Sent += pushUntilStuck(p1, size, p1Sent);
        Check.eq(b.metric("zlink.host.core_hwm.accounted", "state=receive"), withP2,
                 "B's Core bytes after P1 kept sending beside P2 (P1 still refused)");
        Check.eq(log.count(), 0, "records handled before the permit came back");
        Check.eq(b.capacity().permitsInUse, 1, "B's permits in use (the queued blocker)");
        Check.eq(b.capacity().queuedJobs, 1, "B's queued jobs (the blocker)");

        // The permit comes back: B receives with M = 1; P1's refused record
        // follows its others once B reads again.
        gate.complete(null);
        long end = now() + Check.ms(10000);
        while (!p1.push()) {
            if (!p1.ready(SelectionKey.OP_WRITE, end - now()) && now() >= end)
                throw Check.fail("P1's refused record did not leave within 10 s of the open");
        }
        int p1Total = p1Sent + 1;
        log.await(p1Total + p2Records, 30000);
        synchronized (log) {
            Check.eq(log.n, p1Total + p2Records, "records handled");
            long[] next = {0, 0};
            int p2Left = p2Records;
            for (int i = 0; i < log.n; i++) {
                int s = log.src[i];
                if (log.seq[i] != next[s])
                    throw Check.fail("record " + i + " of P" + (s + 1) + " has seq " + log.seq[i] + ", expected " + next[s]);
                next[s]++;
                if (p2Left > 0 && i > 0 && log.src[i - 1] == s)
                    throw Check.fail("record " + i + ": P" + (s + 1) + " twice in a row while P2 still had " + p2Left + " records");
                if (s == 1)
                    p2Left--;
            }
            System.err.println("JQ-09: P1 sent " + p1Sent + " whole records before refusal (" + p1Held
                               + " bytes in B's Core); first handled after open: P" + (log.src[0] + 1));
        }
        Check.eq(holdTurns.get(), 2, "hold turns");
        Check.eventually(() -> b.capacity().permitsInUse == 0, 5000, "B's permit back");
        p1.close();
        p2.close();
        hd.close();
        ctx.close();
        b.shutdown(Duration.ofMillis(2000));
        b.close();
    }
}
