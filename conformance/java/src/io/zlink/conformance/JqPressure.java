package io.zlink.conformance;

import static io.zlink.conformance.Sc.*;

import io.zlink.Context;
import io.zlink.Host;
import io.zlink.SendCall;
import io.zlink.Socket;
import io.zlink.Tables;
import io.zlink.Turn;
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
