package io.zlink.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import io.zlink.Host;
import io.zlink.Reply;
import io.zlink.RequestCall;
import io.zlink.SendCall;
import io.zlink.Tables;
import io.zlink.Turn;
import io.zlink.ZLink;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The SC cases' default harness, as conformance/c/sc.h describes it, over
 * the Java binding's public API: hosts A (the caller) and servers (B, or
 * S1 and S2), a gate handlers pass, a recorder of the tags handlers saw,
 * and a completion collector per call. Handlers run on the binding's
 * handler pump; completions on its completion pump.
 */
final class Sc {
    private Sc() {}

    enum Mode { MESH, CS }

    enum ReplyMode { NOW, HOLD, DELAY, FAIL }

    static List<String> transports(JsonNode params) {
        JsonNode t = params.get("transports");
        Check.that(t != null && t.isArray() && t.size() > 0, "the case needs a \"transports\" array");
        List<String> out = new ArrayList<>();
        for (JsonNode n : t)
            out.add(n.asText());
        return out;
    }

    static long now() {
        return System.nanoTime() / 1_000_000L;
    }

    private static final AtomicInteger seq = new AtomicInteger();

    static String endpoint(String tr, String tag, String name) {
        if (tr.equals("tcp"))
            return "tcp://127.0.0.1:0";
        return "inproc://sc-" + tag + "-" + name + "-" + ProcessHandle.current().pid() + "-"
            + seq.getAndIncrement();
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** The payload's text up to its first NUL, at most 31 bytes. */
    static String tag(byte[] p) {
        int n = 0;
        while (n < p.length && n < 31 && p[n] != 0)
            n++;
        return new String(p, 0, n, StandardCharsets.UTF_8);
    }

    /** A latch handlers wait on; may be closed again. */
    static final class Gate {
        private boolean open;
        private int waiting;

        synchronized void pass() {
            waiting++;
            notifyAll();
            try {
                while (!open)
                    wait();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                waiting--;
            }
        }

        synchronized void open() {
            open = true;
            notifyAll();
        }

        synchronized void close() {
            open = false;
        }

        synchronized int waiting() {
            return waiting;
        }
    }

    /** The tags handlers saw. */
    static final class Rec {
        private final List<String> seen = new ArrayList<>();

        synchronized void add(String t) {
            seen.add(t);
        }

        synchronized int count() {
            return seen.size();
        }

        synchronized List<String> snapshot() {
            return new ArrayList<>(seen);
        }

        synchronized int has(String t) {
            int n = 0;
            for (String s : seen)
                if (s.equals(t))
                    n++;
            return n;
        }
    }

    /** What one call's stage saw: completions, result, time, reply. */
    static final class Done {
        final AtomicInteger calls = new AtomicInteger();
        volatile int result = -1;
        volatile long atMs;
        volatile String reply = "";
        volatile String message = "";
        volatile int remoteCode;
        volatile Thread thread;
        volatile boolean inRuntime;

        <T> Done on(CompletionStage<T> stage) {
            stage.whenComplete((v, t) -> {
                synchronized (this) {
                    if (calls.getAndIncrement() == 0) {
                        atMs = now();
                        thread = Thread.currentThread();
                        inRuntime = ZLink.inRuntimeContext();
                        result = Check.resultOf(t);
                        if (t != null) {
                            Throwable c = t instanceof java.util.concurrent.CompletionException && t.getCause() != null
                                              ? t.getCause() : t;
                            message = String.valueOf(c.getMessage());
                            if (c instanceof io.zlink.ZLinkFrameworkException)
                                remoteCode = ((io.zlink.ZLinkFrameworkException) c).remoteCode();
                        }
                        if (v instanceof byte[])
                            reply = tag((byte[]) v);
                        else if (v instanceof Reply)
                            reply = tag(((Reply) v).payload());
                    }
                    notifyAll();
                }
            });
            return this;
        }

        /** Waits up to ms (scaled) for the first completion; true once it came. */
        synchronized boolean await(long ms) {
            return awaitUntil(now() + Check.ms(ms));
        }

        /** Waits until the absolute instant (not scaled). */
        synchronized boolean awaitUntil(long untilMs) {
            while (calls.get() == 0) {
                long left = untilMs - now();
                if (left <= 0)
                    return false;
                try {
                    wait(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return true;
        }

        void expect(long ms) {
            if (!await(ms))
                throw Check.fail("the call did not complete within " + ms + " ms");
        }
    }

    /** A server host (B, S1, S2). */
    static final class Server {
        final String name;
        int weight = 100;
        int maxJobs;
        long hwm;
        boolean zeroChannel;
        volatile boolean gated;
        volatile ReplyMode replyMode = ReplyMode.NOW;
        volatile int delayMin, delayMax;
        ScheduledExecutorService timer;

        Host h;
        Mode mode;
        String bound;
        final Gate gate = new Gate();
        final Rec rec = new Rec();
        final AtomicInteger pings = new AtomicInteger();
        final AtomicInteger repliesSent = new AtomicInteger();
        final AtomicInteger syncWaitRc = new AtomicInteger(-1);
        final AtomicInteger syncShutdownRc = new AtomicInteger(-1);
        final AtomicInteger syncRan = new AtomicInteger();
        final AtomicInteger yieldRc = new AtomicInteger(-1);
        final AtomicInteger yieldRan = new AtomicInteger();
        final AtomicInteger yieldFnRan = new AtomicInteger();
        final List<Object[]> held = new ArrayList<>(); // {SendCall, tag}
        private final java.util.Random rng = new java.util.Random(0x9E3779B9L);

        Server(String name) {
            this.name = name;
        }

        synchronized int nheld() {
            return held.size();
        }

        synchronized SendCall takeHeld(String tag) {
            for (int i = 0; i < held.size(); i++) {
                if (held.get(i)[1].equals(tag))
                    return (SendCall) held.remove(i)[0];
            }
            return null;
        }

        synchronized void dropHeld() {
            for (Object[] x : held)
                ((SendCall) x[0]).close();
            held.clear();
        }

        private CompletionStage<?> onSend(Turn turn) {
            if (gated)
                gate.pass();
            rec.add(tag(turn.payload()));
            return null;
        }

        private CompletionStage<?> onRequest(Turn turn) {
            if (gated)
                gate.pass();
            String t = tag(turn.payload());
            rec.add(t);
            ReplyMode m = replyMode;
            if (m == ReplyMode.FAIL)
                throw new IllegalStateException("cancelled timeout"); // the text must not decide
            SendCall reply = turn.reply().payload("echo", "", b(t));
            if (m == ReplyMode.NOW) {
                reply.submit();
                reply.close();
            } else if (m == ReplyMode.HOLD) {
                synchronized (this) {
                    held.add(new Object[] {reply, t});
                }
            } else {
                int delay;
                synchronized (this) {
                    delay = delayMin + rng.nextInt(delayMax - delayMin + 1);
                }
                timer.schedule(() -> {
                    reply.submit();
                    reply.close();
                    repliesSent.incrementAndGet();
                }, delay, TimeUnit.MILLISECONDS);
            }
            return null;
        }

        private CompletionStage<?> onSync(Turn turn) {
            if (mode == Mode.MESH) {
                long t0 = now();
                int rc = Check.resultOf(() -> h.sendToNode("m", "A").payload("m", "", b("from-handler"))
                                                  .submit_sync());
                if (now() - t0 > Check.ms(100))
                    rc = -2; // not "at once"
                syncWaitRc.set(rc);
            }
            syncShutdownRc.set(Check.resultOf(() -> h.shutdown(Duration.ofMillis(100))));
            syncRan.incrementAndGet();
            return null;
        }

        /**
         * "yield": a yield inside a handler turn of a channel (no Spot
         * turn): its stage must be failed already when yield returns
         * (-2 otherwise); a completion delivered later counts in yieldFnRan.
         */
        private CompletionStage<?> onYield(Turn turn) {
            if (mode == Mode.MESH) {
                SendCall c = h.sendToNode("m", "A").payload("m", "", b("yield-in-handler"));
                CompletionStage<Void> st = c.yield();
                java.util.concurrent.CompletableFuture<Void> f = st.toCompletableFuture();
                if (!f.isDone()) {
                    yieldRc.set(-2);
                    st.whenComplete((v, t) -> yieldFnRan.incrementAndGet());
                } else {
                    int rc;
                    try {
                        f.join();
                        rc = OK;
                    } catch (RuntimeException e) {
                        rc = Check.resultOf((Throwable) e);
                    }
                    yieldRc.set(rc);
                }
                c.close();
            }
            yieldRan.incrementAndGet();
            return null;
        }

        private CompletionStage<?> onPing(Turn turn) {
            pings.incrementAndGet();
            try (SendCall reply = turn.reply()) {
                reply.payload("pong", "", b(name)).submit();
            } catch (RuntimeException e) {
                // the requester is gone: nothing to answer
            }
            return null;
        }

        private void addHandlers(Host.OwnerKind owner, String ownerName) {
            h.addHandler(owner, ownerName, Turn.Kind.SEND, "m", this::onSend);
            h.addHandler(owner, ownerName, Turn.Kind.REQUEST, "m", this::onRequest);
            h.addHandler(owner, ownerName, Turn.Kind.SEND, "sync", this::onSync);
            h.addHandler(owner, ownerName, Turn.Kind.SEND, "yield", this::onYield);
            h.addHandler(owner, ownerName, Turn.Kind.REQUEST, "ping", this::onPing);
        }

        Server open(Mode mode, String tr, String tag) {
            this.mode = mode;
            String ep = endpoint(tr, tag, name);
            h = new Host(name);
            if (maxJobs > 0)
                h.option(Host.Option.MAX_QUEUED_JOBS, maxJobs);
            String sock = mode == Mode.MESH ? "m" : "svc";
            if (mode == Mode.MESH) {
                h.addMeshNode("m", name, ep);
                h.meshAddChannelServer("m", "svc", weight < 0 ? 100 : weight);
                if (zeroChannel)
                    h.meshAddChannelServer("m", "zero", 0);
                addHandlers(Host.OwnerKind.CHANNEL, "svc");
                addHandlers(Host.OwnerKind.NODE, "m");
            } else {
                h.addCsServer("svc", ep);
                addHandlers(Host.OwnerKind.CHANNEL, "svc");
            }
            if (hwm > 0) {
                if (mode == Mode.MESH) {
                    h.meshOption(sock, Host.NodeOption.SNDHWM, hwm);
                    h.meshOption(sock, Host.NodeOption.RCVHWM, hwm);
                } else {
                    h.channelOption(sock, Host.NodeOption.SNDHWM, hwm);
                    h.channelOption(sock, Host.NodeOption.RCVHWM, hwm);
                }
            }
            h.start();
            bound = h.endpoint(sock);
            return this;
        }

        void close() {
            gate.open();
            Host.State st = h.state();
            if (st == Host.State.SERVING || st == Host.State.DRAINING)
                h.shutdown(Duration.ofMillis(2000));
            dropHeld();
            h.close();
        }
    }

    /** The caller host A. */
    static final class Client {
        long hwm;
        long sendTimeout;
        long rootSendTimeout;
        boolean extraChannels;
        Host h;
        Mode mode;

        Client open(Mode mode, Server... srv) {
            this.mode = mode;
            h = new Host("A");
            if (rootSendTimeout != 0)
                h.option(Host.Option.DEFAULT_SEND_TIMEOUT, rootSendTimeout);
            if (mode == Mode.MESH) {
                h.addMeshNode("m", "A", null);
                h.meshAddChannelClient("m", "svc");
                if (extraChannels) {
                    h.meshAddChannelClient("m", "none");
                    h.meshAddChannelClient("m", "zero");
                }
                for (Server s : srv)
                    h.meshConnect("m", s.bound, s.name);
                if (sendTimeout != 0)
                    h.meshOption("m", Host.NodeOption.SEND_TIMEOUT, sendTimeout);
                if (hwm > 0) {
                    h.meshOption("m", Host.NodeOption.SNDHWM, hwm);
                    h.meshOption("m", Host.NodeOption.RCVHWM, hwm);
                }
            } else {
                for (Server s : srv)
                    h.addCsClient("svc", s.bound);
                if (sendTimeout != 0)
                    h.channelOption("svc", Host.NodeOption.SEND_TIMEOUT, sendTimeout);
                if (hwm > 0) {
                    h.channelOption("svc", Host.NodeOption.SNDHWM, hwm);
                    h.channelOption("svc", Host.NodeOption.RCVHWM, hwm);
                }
            }
            h.start();
            if (mode == Mode.MESH) {
                Check.eventually(() -> h.meshReadyPeers("m") == srv.length, 5000, "A's peers ready");
                for (Server s : srv)
                    Check.eventually(() -> s.h.meshReadyPeers("m") == 1, 5000, s.name + " ready");
                return this;
            }
            // ClientServer has no readiness view: ping until every server answered once.
            for (int round = 0;; round++) {
                boolean all = true;
                for (Server s : srv)
                    all = all && s.pings.get() > 0;
                if (all)
                    break;
                Check.that(round < 500, "every server answered a ping");
                h.requestToChannel("svc").payload("ping", "", b("p"))
                    .timeout(Duration.ofMillis(Check.ms(5000))).submit_sync();
            }
            return this;
        }

        void close() {
            Host.State st = h.state();
            if (st == Host.State.SERVING || st == Host.State.DRAINING)
                h.shutdown(Duration.ofMillis(2000));
            h.close();
        }
    }

    /** A request to channel (null: "svc") whose payload is tag. */
    static RequestCall request(Client a, String channel, String tag) {
        return a.h.requestToChannel(channel == null ? "svc" : channel).payload("m", "", b(tag));
    }

    static SendCall send(Client a, String channel, String tag) {
        return a.h.sendToChannel(channel == null ? "svc" : channel).payload("m", "", b(tag));
    }

    static RequestCall nodeRequest(Host h, String rid, String tag) {
        return h.requestToNode("m", rid).payload("m", "", b(tag));
    }

    static SendCall nodeSend(Host h, String rid, String tag) {
        return h.sendToNode("m", rid).payload("m", "", b(tag));
    }

    /** The result of a synchronous terminator (0 when it returned). */
    static int waitResult(Runnable terminator) {
        return Check.resultOf(terminator);
    }

    /** The elapsed time of an outcome is want .. want + 250 ms (scaled). */
    static void onTime(long elapsed, long wantMs) {
        long late = wantMs + Check.ms(250);
        if (elapsed < wantMs || elapsed > late)
            throw Check.fail("ended after " + elapsed + " ms, expected " + wantMs + ".." + late + " ms");
    }

    static long metric(Host h, String name, String labels) {
        return h.metric(name, labels);
    }

    static void inflightBackToZero(Client a) {
        Check.eventually(() -> a.h.metric("zlink.mesh_node.requests.inflight", "") == 0, 2000,
                         "in-flight back to 0");
        Check.eq(a.h.status().requestsInflight, 0, "requests in flight");
    }

    static ScheduledExecutorService timer() {
        return Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sc-timer");
            t.setDaemon(true);
            return t;
        });
    }

    static final AtomicReference<String> unused = new AtomicReference<>();
    static final int OK = Tables.FW_OK;
}
