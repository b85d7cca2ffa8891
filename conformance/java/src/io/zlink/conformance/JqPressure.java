package io.zlink.conformance;

import static io.zlink.conformance.Sc.*;

import io.zlink.Context;
import io.zlink.Host;
import io.zlink.SendCall;
import io.zlink.Socket;
import io.zlink.Tables;
import io.zlink.Turn;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/**
 * JQ-13 (conformance/c/jq_pressure.c) over the Java binding. An
 * "observer" is a plain Core DEALER of the case's own context connected
 * to one of H's ROUTERs, whose monitor status tells whether that ROUTER
 * asks its peers to pause (flow_paused_connections). H's handler waits
 * at a turnstile that lets one turn through per token. tcp only: the
 * observers live in a context of their own.
 */
final class JqPressure {
    private JqPressure() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("JQ-13", p -> flowStateSockets());
        m.put("JQ-12", p -> {
            try (Context ctx = new Context()) {
                newPeerPaused(ctx);
                toggles(ctx, false);
                toggles(ctx, true);
            }
        });
        m.put("JQ-11", p -> {
            try (Context ctx = new Context()) {
                hysteresis(ctx, 10, 8, 6);
                hysteresis(ctx, 1, 1, 0);
                hysteresis(ctx, 17, 14, 10);
            }
        });
    }

    // monitor status fields (Socket.Monitor.status())
    static final int STATE = 0, DETAIL = 1, FLOW_PAUSED = 6, PAUSE_APPLIED = 7, RESUME_APPLIED = 8;

    /** One turn through per token. */
    static final class Turnstile {
        int tokens, inside, passed;

        io.zlink.Handler handler() {
            return turn -> {
                synchronized (this) {
                    inside++;
                    notifyAll();
                    while (tokens == 0) {
                        try {
                            wait();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            break;
                        }
                    }
                    tokens--;
                    inside--;
                    passed++;
                }
                return null;
            };
        }

        synchronized void give(int n) {
            tokens += n;
            notifyAll();
        }

        synchronized int inside() {
            return inside;
        }

        synchronized int passed() {
            return passed;
        }
    }

    /** A Core DEALER of ctx connected to ep, with its monitor. */
    static final class Observer implements AutoCloseable {
        final Socket sock;
        final Socket.Monitor mon;

        Observer(Context ctx, String ep) {
            sock = ctx.socket(Socket.DEALER);
            sock.connect(ep);
            mon = sock.monitor();
        }

        long[] status() {
            long[] st = mon.status();
            Check.that((st[DETAIL] & Socket.Monitor.DETAIL_FLOW_STATE) != 0, "the monitor reports the flow state");
            return st;
        }

        boolean ready() {
            return (status()[STATE] & Socket.Monitor.STATE_READY) != 0;
        }

        long paused() {
            return status()[FLOW_PAUSED];
        }

        @Override
        public void close() {
            mon.close();
            sock.close();
        }
    }

    static Host meshHost(String name, long maxJobs, Turnstile t) {
        Host h = JqCases.meshHost(name, "tcp", true, maxJobs);
        if (t != null) {
            h.meshAddChannelServer("m", "svc", 100);
            h.addHandler(Host.OwnerKind.CHANNEL, "svc", Turn.Kind.SEND, "m", t.handler());
        }
        return h;
    }

    static Host meshClient(String name, String ep, Host h) {
        Host c = JqCases.meshHost(name, "tcp", false, 0);
        c.meshAddChannelClient("m", "svc");
        c.meshOption("m", Host.NodeOption.SEND_TIMEOUT, 30_000_000_000L);
        c.meshConnect("m", ep, "H");
        c.start();
        Check.eventually(() -> c.meshReadyPeers("m") == 1, 5000, name + "'s peer ready");
        Check.eventually(() -> h.meshReadyPeers("m") >= 1, 5000, "H's peer ready");
        return c;
    }

    static int oneway(Host c, String chan, String tag) {
        try (SendCall k = c.sendToChannel(chan == null ? "svc" : chan).payload("m", "", b(tag))) {
            return Check.resultOf(() -> k.submit_sync());
        }
    }

    static void end(Host h) {
        Host.State st = h.state();
        if (st == Host.State.SERVING || st == Host.State.DRAINING)
            h.shutdown(Duration.ofMillis(2000));
        h.close();
    }

    // ------------------------------------------------------------ JQ-11

    static final String JQ = "zlink.host.application_job_queue.";

    /** H's state at q queued: the host's view, its metric series, and the ROUTER's as the observer sees it. */
    static void expectState(Host h, Observer obs, int q, int want) {
        int got = h.capacity().pressureState;
        if (got != want)
            throw Check.fail("queued " + q + ": pressure state " + got + ", expected " + want);
        boolean paused = want == 1;
        Check.eq(h.metric(JQ + "pressure_state", "state=paused"), paused ? 1 : 0, "state=paused series");
        Check.eq(h.metric(JQ + "pressure_state", "state=running"), paused ? 0 : 1, "state=running series");
        Check.eventually(() -> obs.paused() == (paused ? 1 : 0), 5000,
                         "the peer sees " + (paused ? "PAUSED" : "RUNNING") + " at " + q + " queued");
    }

    /** Waits until H holds q queued jobs (and q permits) with one turn at the turnstile. */
    static void expectQueued(Host h, Turnstile t, int q) {
        Check.eventually(() -> t.inside() == 1 && h.capacity().queuedJobs == q && h.capacity().permitsInUse == q,
                         5000, q + " queued jobs with one turn at the turnstile");
    }

    static void hysteresis(Context ctx, long m, int pause, int resume) {
        Turnstile t = new Turnstile();
        Host h = meshHost("H", m, t);
        h.start();
        String ep = h.endpoint("m");
        Check.eq(h.capacity().pauseCount, pause, "M = " + m + ": pause count");
        Check.eq(h.capacity().resumeCount, resume, "M = " + m + ": resume count");
        Host cl = meshClient("C", ep, h);
        Observer obs = new Observer(ctx, ep);
        Check.eventually(obs::ready, 5000, "the observer connected");

        Check.result(oneway(cl, null, "j0"), Tables.FW_OK, "j0");
        expectQueued(h, t, 0);
        long tp = h.capacity().transitionsPaused, tr = h.capacity().transitionsRunning;
        if (pause == 1)
            Check.that(tp >= 1, "M = 1: the control records paused the host");
        else
            Check.eq(tp, 0, "paused transitions before the case");
        Check.eq(tr, tp, "running transitions before the case");
        expectState(h, obs, 0, 0);
        for (int q = 1; q <= pause; q++) {
            Check.result(oneway(cl, null, "j" + q), Tables.FW_OK, "j" + q);
            expectQueued(h, t, q);
            expectState(h, obs, q, q >= pause ? 1 : 0);
        }
        Check.eq(h.capacity().transitionsPaused, tp + 1, "paused transitions");
        Check.eq(h.capacity().transitionsRunning, tr, "running transitions");
        Check.eq(h.metric(JQ + "pressure_transitions", "state=paused"), tp + 1, "pressure_transitions{paused}");
        for (int q = pause - 1; q >= resume; q--) {
            int passed = t.passed();
            t.give(1);
            Check.eventually(() -> t.passed() == passed + 1, 5000, "one turn through");
            expectQueued(h, t, q);
            expectState(h, obs, q, q <= resume ? 0 : 1);
        }
        Check.eq(h.capacity().transitionsPaused, tp + 1, "paused transitions");
        Check.eq(h.capacity().transitionsRunning, tr + 1, "running transitions");
        Check.eq(h.metric(JQ + "pressure_transitions", "state=running"), tr + 1, "pressure_transitions{running}");
        Check.result(oneway(cl, null, "again"), Tables.FW_OK, "again");
        expectQueued(h, t, resume + 1);
        boolean again = resume + 1 >= pause;
        expectState(h, obs, resume + 1, again ? 1 : 0);
        Check.eq(h.capacity().transitionsPaused, tp + 1 + (again ? 1 : 0), "paused transitions");
        Check.eq(h.capacity().transitionsRunning, tr + 1, "running transitions");
        Check.eq(h.capacity().flowStateConfigFailures, 0, "flow-state config failures");
        t.give(1 << 20);
        obs.close();
        end(cl);
        end(h);
    }

    // ------------------------------------------------------------ JQ-12

    /**
     * A raw wire peer over a plain TCP socket (core/tests/zltest_rawzmp.h
     * in Java): frames are an 8-byte header (magic 0x5A, version 1, flags,
     * kind, u32 size), a u64 sequence for kinds 1..3, then the body.
     */
    static final class Raw implements AutoCloseable {
        static final int F_MORE = 1, F_CONTROL = 2;
        final java.net.Socket s;
        final java.io.DataInputStream in;
        final java.io.OutputStream out;

        Raw(String ep) throws java.io.IOException {
            int port = Integer.parseInt(ep.substring(ep.lastIndexOf(':') + 1));
            s = new java.net.Socket("127.0.0.1", port);
            s.setTcpNoDelay(true);
            s.setSoTimeout((int) Check.ms(5000));
            in = new java.io.DataInputStream(s.getInputStream());
            out = s.getOutputStream();
        }

        static byte[] frame(int flags, byte[] body) {
            JqRaw.Wire w = new JqRaw.Wire().u8(0x5A).u8(0x01).u8(flags).u8(0).u32(body.length);
            return w.bytes(body).done();
        }

        void send(byte[] frame) throws java.io.IOException {
            out.write(frame);
            out.flush();
        }

        void hello(int type, String rid) throws java.io.IOException {
            send(frame(F_CONTROL, new JqRaw.Wire().u8(0x01).u8(type >> 8).u8(type).l8(rid).done()));
        }

        static void prop(JqRaw.Wire w, String name, byte[] v) {
            w.l8(name).u32(v.length).bytes(v);
        }

        void readyDealer(String rid) throws java.io.IOException {
            JqRaw.Wire w = new JqRaw.Wire().u8(0x04);
            prop(w, "Socket-Type", b("DEALER"));
            prop(w, "Routing-Id", b(rid));
            prop(w, "Zlink-Lane-Count", new byte[] {1});
            prop(w, "Zlink-Lane", new byte[] {0});
            prop(w, "Zlink-Weight", new byte[] {0, 0, 0, 100});
            send(frame(F_CONTROL, w.done()));
        }

        /** The next frame: {flags, body}; SocketTimeoutException past the bound. */
        Object[] next() throws java.io.IOException {
            byte[] h = new byte[8];
            in.readFully(h);
            Check.that(h[0] == 0x5A && h[1] == 0x01, "a frame header from the ZLink side");
            int kind = h[3] & 0xFF;
            long size = ((h[4] & 0xFFL) << 24) | ((h[5] & 0xFFL) << 16) | ((h[6] & 0xFFL) << 8) | (h[7] & 0xFFL);
            if (kind >= 1 && kind <= 3)
                in.readFully(new byte[8]);
            byte[] body = new byte[(int) size];
            in.readFully(body);
            return new Object[] {h[2] & 0xFF, body};
        }

        /** The state byte of a FLOWSTATE frame, or -1 for another frame. */
        static int flowstate(Object[] f) {
            byte[] body = (byte[]) f[1];
            if ((Integer) f[0] != F_CONTROL || body.length != 19
                || !new String(body, 0, 9, StandardCharsets.US_ASCII).equals("FLOWSTATE"))
                return -1;
            return body[10];
        }

        @Override
        public void close() throws java.io.IOException {
            s.close();
        }
    }

    /**
     * Part 1: H (a CS server, M = 2) is PAUSED; a peer that connects now
     * is told PAUSED right after its handshake, before it sent anything,
     * and a record it sends anyway stays in the Core, unreceived, until H
     * has room.
     */
    static void newPeerPaused(Context ctx) throws Exception {
        Turnstile t = new Turnstile();
        Host h = new Host("H");
        h.option(Host.Option.MAX_QUEUED_JOBS, 2);
        h.addCsServer("cs", "tcp://127.0.0.1:0");
        h.addHandler(Host.OwnerKind.CHANNEL, "cs", Turn.Kind.SEND, "m", t.handler());
        h.start();
        String ep = h.endpoint("cs");
        Host cl = new Host("C");
        cl.addCsClient("cs", ep);
        cl.start();
        for (int i = 0; i < 3; i++) {
            Check.result(oneway(cl, "cs", "p" + i), Tables.FW_OK, "one-way p" + i);
            if (i == 0)
                Check.eventually(() -> t.inside() == 1, 5000, "p0 in the turnstile");
        }
        Check.eventually(() -> h.capacity().queuedJobs == 2, 5000, "H holds two queued jobs");
        Check.eq(h.capacity().pressureState, 1, "H paused");
        long dropped = h.metric(JqRaw.DROPPED, "reason=decode_error");

        Observer obs = new Observer(ctx, ep);
        Check.eventually(() -> obs.paused() == 1, 5000, "a new Core peer sees PAUSED");
        Check.that(obs.sock.sendResult(Socket.DONTWAIT, null, b("k")) != Tables.SUBMIT_OK,
                   "the paused Core peer holds its record back");

        Raw raw = new Raw(ep);
        raw.hello(Socket.DEALER, "raw");
        raw.readyDealer("raw");
        Object[] f = raw.next();
        Check.that((Integer) f[0] == Raw.F_CONTROL && ((byte[]) f[1])[0] == 0x01, "HELLO from H");
        f = raw.next();
        Check.that((Integer) f[0] == Raw.F_CONTROL && ((byte[]) f[1])[0] == 0x04, "READY from H");
        f = raw.next();
        Check.eq(Raw.flowstate(f), 1, "the raw peer's first frame after READY: FLOWSTATE");
        raw.send(Raw.frame(0, b("ignores the pause")));
        Check.eventually(() -> h.metric("zlink.host.core_hwm.accounted", "state=receive") > 0, 5000,
                         "the raw record waits in H's Core queue");
        Check.eq(h.capacity().queuedJobs, 2, "H's queued jobs");
        Check.eq(h.capacity().permitsInUse, 2, "H's permits in use");
        Check.eq(h.metric(JqRaw.DROPPED, "reason=decode_error"), dropped, "decode-error drops");

        t.give(1 << 20);
        Check.eventually(() -> t.passed() == 3, 5000, "the held jobs ran");
        Check.eventually(() -> h.metric(JqRaw.DROPPED, "reason=decode_error") == dropped + 1, 5000,
                         "the raw record dropped as malformed");
        Check.eventually(() -> h.capacity().pressureState == 0, 5000, "H running");
        Check.eventually(() -> obs.paused() == 0, 5000, "the Core peer sees RUNNING");
        boolean running = false;
        long end = now() + Check.ms(5000);
        while (!running && now() < end) {
            try {
                running = Raw.flowstate(raw.next()) == 0;
            } catch (java.net.SocketTimeoutException e) {
                break;
            }
        }
        Check.that(running, "the raw peer was told RUNNING too");
        Check.eq(h.capacity().flowStateConfigFailures, 0, "flow-state config failures");
        raw.close();
        obs.close();
        end(cl);
        end(h);
    }

    /** A sender thread of part 2: n one-ways from c to chan. */
    static final class Sender extends Thread {
        final Host c;
        final String chan;
        final int n;
        volatile boolean stop;
        final AtomicIntegerPair counts = new AtomicIntegerPair();

        Sender(Host c, String chan, int n) {
            this.c = c;
            this.chan = chan;
            this.n = n;
            setDaemon(true);
        }

        @Override
        public void run() {
            for (int i = 0; i < n && !stop; i++) {
                try (SendCall k = c.sendToChannel(chan).payload("m", "", b("t"))) {
                    k.submit_sync();
                    counts.sent.incrementAndGet();
                } catch (RuntimeException e) {
                    counts.failed.incrementAndGet();
                }
            }
        }
    }

    static final class AtomicIntegerPair {
        final java.util.concurrent.atomic.AtomicInteger sent = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicInteger failed = new java.util.concurrent.atomic.AtomicInteger();
    }

    /**
     * Part 2: H (M = 1, a mesh node and a CS server, handlers that never
     * wait) toggles PAUSED/RUNNING once each way per record: 1,000 records
     * from two sender threads. Peer sockets of H's ROUTERs open and close
     * meanwhile; in the second run H itself shuts down mid-toggle.
     */
    static void toggles(Context ctx, boolean shutdownMid) throws Exception {
        final int per = 500;
        Turnstile t = new Turnstile();
        t.give(1 << 30);
        Host h = meshHost("H", 1, t);
        h.addCsServer("cs", "tcp://127.0.0.1:0");
        h.addHandler(Host.OwnerKind.CHANNEL, "cs", Turn.Kind.SEND, "m", t.handler());
        h.start();
        String mep = h.endpoint("m"), cep = h.endpoint("cs");
        Host mc = meshClient("C1", mep, h);
        Host cc = new Host("C2");
        cc.addCsClient("cs", cep);
        cc.channelOption("cs", Host.NodeOption.SEND_TIMEOUT, 30_000_000_000L);
        cc.start();
        Check.result(oneway(cc, "cs", "warm"), Tables.FW_OK, "warm");
        Check.eventually(() -> t.passed() == 1, 5000, "warm handled");
        io.zlink.HostCapacity c0 = h.capacity();
        Sender[] s = {new Sender(mc, "svc", per), new Sender(cc, "cs", per)};
        for (Sender x : s)
            x.start();
        Observer[] keep = {new Observer(ctx, mep), new Observer(ctx, cep)};
        int churn = 0;
        long churnEnd = now() + Check.ms(30000);
        while (t.passed() < 1 + (shutdownMid ? 200 : 2 * per)) {
            if (now() > churnEnd)
                throw Check.fail("H handled " + (t.passed() - 1) + " of the " + 2 * per + " records within 30 s");
            Observer o = new Observer(ctx, churn % 2 == 0 ? mep : cep);
            Check.eventually(o::ready, 5000, "a churning observer connected");
            o.close();
            churn++;
        }
        if (shutdownMid) {
            h.shutdown(Duration.ofMillis(2000));
            Check.eq(h.state(), Host.State.STOPPED, "H's state");
            io.zlink.HostCapacity c = h.capacity();
            Check.that(c.transitionsPaused >= 200 && c.transitionsPaused - c.transitionsRunning <= 1,
                       "H toggled (" + c.transitionsPaused + " paused, " + c.transitionsRunning + " running)");
            Check.eq(c.flowStateConfigFailures, 0, "flow-state config failures");
            for (Sender x : s)
                x.stop = true;
            mc.shutdown(Duration.ofMillis(2000));
            cc.shutdown(Duration.ofMillis(2000));
            for (Sender x : s)
                x.join(Check.ms(10000));
            Check.that(s[0].counts.sent.get() + s[1].counts.sent.get() >= 200, "the senders sent 200 or more");
        } else {
            for (Sender x : s) {
                x.join(Check.ms(60000));
                Check.that(!x.isAlive(), "a sender finished");
                Check.eq(x.counts.failed.get(), 0, "a sender's failures");
                Check.eq(x.counts.sent.get(), per, "a sender's one-ways");
            }
            Check.eventually(() -> t.passed() == 1 + 2 * per, 10000, "every record handled");
            Check.eventually(() -> h.capacity().permitsInUse == 0, 5000, "H's permits free");
            io.zlink.HostCapacity c = h.capacity();
            Check.eq(c.transitionsPaused - c0.transitionsPaused, 2 * per, "paused transitions");
            Check.eq(c.transitionsRunning - c0.transitionsRunning, 2 * per, "running transitions");
            Check.eq(c.pressureState, 0, "H running");
            Check.eventually(() -> keep[0].paused() == 0 && keep[1].paused() == 0, 5000,
                             "the live peers see RUNNING");
            Observer late = new Observer(ctx, mep);
            Check.eventually(late::ready, 5000, "a late observer connected");
            Check.eq(late.paused(), 0, "a late peer's view");
            late.close();
            Check.eq(c.flowStateConfigFailures, 0, "flow-state config failures");
            Check.that(churn > 0, "observers churned");
            Check.eq(h.metric(JqRaw.DROPPED, "reason=no_handler"), 0, "no-handler drops");
        }
        keep[0].close();
        keep[1].close();
        end(mc);
        end(cc);
        end(h);
    }

    // ------------------------------------------------------------ JQ-13

    /**
     * H has a mesh ROUTER (node "m", serving "svc"), a CS server ROUTER
     * ("cs") and a CS client DEALER ("out") connected to S, a plain Core
     * ROUTER of the case. Saturated (M = 2, gated), H pauses both ROUTERs,
     * as their peers see, and never gives the DEALER a flow state.
     */
    static void flowStateSockets() throws Exception {
        Context ctx = new Context();
        Socket srv = ctx.socket(Socket.ROUTER);
        srv.bind("tcp://127.0.0.1:0");
        String sep = srv.lastEndpoint();
        Socket.Monitor smon = srv.monitor();
        Turnstile t = new Turnstile();
        Host h = meshHost("H", 2, t);
        h.addCsServer("cs", "tcp://127.0.0.1:0");
        h.addHandler(Host.OwnerKind.CHANNEL, "cs", Turn.Kind.SEND, "m", t.handler());
        h.addCsClient("out", sep);
        h.start();
        String mep = h.endpoint("m"), cep = h.endpoint("cs");
        Observer om = new Observer(ctx, mep), oc = new Observer(ctx, cep);
        Check.eventually(() -> om.ready() && oc.ready(), 5000, "the observers connected");
        Check.eventually(() -> (smon.status()[STATE] & Socket.Monitor.STATE_READY) != 0, 5000,
                         "H's DEALER connected to S");

        Host cl = meshClient("C", mep, h);
        for (int i = 0; i < 3; i++) {
            Check.result(oneway(cl, null, "s" + i), Tables.FW_OK, "one-way s" + i);
            if (i == 0)
                Check.eventually(() -> t.inside() == 1, 5000, "s0 in the turnstile");
        }
        Check.eventually(() -> h.capacity().queuedJobs == 2, 5000, "H holds two queued jobs");
        Check.eq(h.capacity().pressureState, 1, "H paused");
        Check.eventually(() -> om.paused() == 1 && oc.paused() == 1, 5000, "both ROUTERs pause their peers");
        long[] st = smon.status();
        Check.that((st[DETAIL] & Socket.Monitor.DETAIL_FLOW_STATE) != 0, "S's monitor reports the flow state");
        Check.eq(st[FLOW_PAUSED], 0, "S's paused connections");
        Check.eq(st[PAUSE_APPLIED], 0, "PAUSED transitions applied at S");
        Check.result(oneway(h, "out", "out"), Tables.FW_OK, "H's one-way to S while paused");
        srv.option(Socket.RCVTIMEO, (int) Check.ms(5000));
        Socket.Record rec = srv.routerRecv(0);
        Check.that(rec.ok() && rec.parts != null && rec.parts.length >= 1, "S received H's record: " + rec);
        Check.eq(h.capacity().pressureState, 1, "H still paused");
        Check.eq(smon.status()[PAUSE_APPLIED], 0, "PAUSED transitions applied at S");
        Check.eq(h.capacity().flowStateConfigFailures, 0, "H's flow-state config failures");

        t.give(1 << 20);
        Check.eventually(() -> h.capacity().pressureState == 0, 5000, "H running");
        Check.eventually(() -> om.paused() == 0 && oc.paused() == 0, 5000, "both ROUTERs resume their peers");
        st = smon.status();
        Check.eq(st[PAUSE_APPLIED], 0, "PAUSED transitions applied at S");
        Check.eq(st[RESUME_APPLIED], 0, "RUNNING transitions applied at S");

        om.close();
        oc.close();
        end(cl);
        end(h);
        smon.close();
        srv.close();
        ctx.close();
    }
}
