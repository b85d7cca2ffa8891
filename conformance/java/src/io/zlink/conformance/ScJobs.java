package io.zlink.conformance;

import static io.zlink.conformance.Sc.*;

import io.zlink.Host;
import io.zlink.HostCapacity;
import io.zlink.RequestCall;
import io.zlink.SendCall;
import io.zlink.Tables;
import io.zlink.Turn;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * SC-12 and SC-13 (seed 000 §17 cases that meet the job queue of seed
 * 001), ported from conformance/c/sc_jobs.c.
 */
final class ScJobs {
    private ScJobs() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("SC-12", p -> ScCases.each(p, ScJobs::csReplyHeldInFifo));
        m.put("SC-13", p -> ScCases.each(p, ScJobs::meshReplyWhilePaused));
    }

    static final int PAUSED = 1, RUNNING = 0;

    // ------------------------------------------------------------ SC-13

    private static Host meshHost(String name, String tr, boolean listen, long maxJobs) {
        Host h = new Host(name);
        if (maxJobs > 0)
            h.option(Host.Option.MAX_QUEUED_JOBS, maxJobs);
        h.addMeshNode("m", name, listen ? endpoint(tr, "mesh", name) : null);
        return h;
    }

    private static void meshReplyWhilePaused(String tr) {
        Gate gate = new Gate();
        // B serves "back" and answers at once.
        Host b = meshHost("B", tr, true, 0);
        b.meshAddChannelServer("m", "back", 100);
        b.addHandler(Host.OwnerKind.CHANNEL, "back", Turn.Kind.REQUEST, "m", turn -> {
            turn.respond("m", "", turn.payload());
            return null;
        });
        b.start();
        String boundB = b.endpoint("m");
        // A: M = 2 (pause at 2), a gated server of "svc", a client of "back".
        Host a = meshHost("A", tr, true, 2);
        a.meshAddChannelServer("m", "svc", 100);
        a.addHandler(Host.OwnerKind.CHANNEL, "svc", Turn.Kind.SEND, "m", turn -> {
            gate.pass();
            return null;
        });
        a.meshAddChannelClient("m", "back");
        a.meshConnect("m", boundB, "B");
        a.start();
        String boundA = a.endpoint("m");
        // C floods A's "svc".
        Host c = meshHost("C", tr, false, 0);
        c.meshAddChannelClient("m", "svc");
        c.meshOption("m", Host.NodeOption.SEND_TIMEOUT, 30_000_000_000L);
        c.meshConnect("m", boundA, "A");
        c.start();
        Check.eventually(() -> c.meshReadyPeers("m") == 1, 5000, "C's peer ready");
        Check.eventually(() -> a.meshReadyPeers("m") >= 1, 5000, "A's peers ready");

        for (int i = 0; i < 3; i++) {
            c.sendToChannel("svc").payload("m", "", b("f" + i)).submit_sync();
            if (i == 0)
                Check.eventually(() -> gate.waiting() == 1, 5000, "f0 at the gate");
        }
        Check.eventually(() -> a.capacity().queuedJobs == 2, 5000, "two queued jobs at A");
        HostCapacity cap = a.capacity();
        Check.eq(cap.pressureState, PAUSED, "A's pressure state");
        Check.eq(cap.queuedJobs, 2, "A's queued jobs");

        // An application thread on A requests "back" from B: the reply needs no permit.
        RequestCall q = a.requestToChannel("back").payload("m", "", b("q"));
        long t0 = now();
        byte[] reply = q.submit_sync();
        long took = now() - t0;
        Check.eq(new String(reply), "q", "the reply");
        q.close();
        if (took >= Check.ms(100))
            throw Check.fail("the request took " + took + " ms while A was paused (< " + Check.ms(100)
                             + " ms expected)");
        cap = a.capacity();
        Check.eq(cap.pressureState, PAUSED, "A still paused");
        Check.eq(cap.permitsInUse, 2, "A's permits in use");
        Check.eq(cap.transitionsRunning, 0, "A's transitions to running");

        gate.open();
        Check.eventually(() -> a.capacity().permitsInUse == 0, 5000, "A's permits free");
        Check.eq(a.capacity().pressureState, RUNNING, "A running");
        c.shutdown(Duration.ofMillis(2000));
        a.shutdown(Duration.ofMillis(2000));
        b.shutdown(Duration.ofMillis(2000));
        c.close();
        a.close();
        b.close();
    }

    // ------------------------------------------------------------ SC-12

    private static void csReplyHeldInFifo(String tr) {
        final int D = 20;
        Server s = new Server("S");
        s.maxJobs = 1;
        s.open(Mode.CS, tr, "sc12");
        Client c = new Client();
        c.sendTimeout = 60_000_000_000L;
        c.open(Mode.CS, s);
        request(c, null, "warm").submit_sync(); // the connection is up

        // sc_send_gated: d1..d20 one-ways, S paused after d2.
        s.gated = true;
        Done[] dd = new Done[D];
        SendCall[] dc = new SendCall[D];
        for (int i = 0; i < D; i++) {
            dd[i] = new Done();
            dc[i] = send(c, null, "d" + (i + 1));
            dd[i].on(dc[i].submit());
            if (i == 0)
                Check.eventually(() -> s.gate.waiting() == 1, 5000, "d1 at the gate");
            if (i == 1)
                Check.eventually(() -> s.h.capacity().pressureState == PAUSED, 5000, "S paused");
        }
        Done dq = new Done();
        long t0 = now();
        RequestCall q = request(c, null, "q").timeout(Duration.ofMillis(300));
        dq.on(q.submit());
        dq.expect(2000);
        Check.result(dq.result, Tables.FW_DEADLINE_EXCEEDED, "q");
        onTime(dq.atMs - t0, 300);
        Check.eq(s.h.capacity().pressureState, PAUSED, "S's pressure state");

        s.gate.open();
        for (int i = 0; i < D; i++) {
            dd[i].expect(5000);
            Check.result(dd[i].result, Tables.FW_OK, "d" + (i + 1));
        }
        request(c, null, "after").submit_sync(); // behind everything sent before

        List<String> seen = s.rec.snapshot();
        int n = seen.size();
        boolean order = n >= 2 + D && seen.get(0).equals("warm") && seen.get(n - 1).equals("after");
        for (int i = 0; order && i < D; i++)
            order = seen.get(1 + i).equals("d" + (i + 1));
        boolean qOk = n == 2 + D || (n == 3 + D && seen.get(1 + D).equals("q"));
        if (!order || !qOk)
            throw Check.fail("S handled " + n + " records out of FIFO order (warm, d1..d20, [q], after expected): "
                             + seen);
        Check.eq(dq.calls.get(), 1, "q's completions");
        Check.eventually(() -> c.h.metric("zlink.mesh_node.requests.inflight", "") == 0, 2000,
                         "in-flight back to 0");
        for (SendCall x : dc)
            x.close();
        q.close();
        c.close();
        s.close();
    }
}
