package io.zlink.conformance;

import static io.zlink.conformance.Sc.*;

import io.zlink.Host;
import io.zlink.HostCapacity;
import io.zlink.OwnerStatus;
import io.zlink.Tables;
import io.zlink.Turn;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * JQ cases (seed 001 §10) ported from conformance/c/jq_*.c over the Java
 * binding: JQ-04 (jq_owner.c), JQ-18 (jq_flow.c) and JQ-21 (the SC-12
 * body, as the C runner registers it).
 */
final class JqCases {
    private JqCases() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("JQ-04", p -> ScCases.each(p, JqCases::failedCheckLeavesNoTrace));
        m.put("JQ-18", p -> ScCases.each(p, tr -> {
            noHandlerOnlyRecorded(tr, Mode.MESH);
            noHandlerOnlyRecorded(tr, Mode.CS);
        }));
        m.put("JQ-21", Runner.registry0().get("SC-12"));
    }

    static final String[] DROP_REASONS = {"reason=no_handler", "reason=decode_error", "reason=shutdown",
                                          "reason=backpressure", "reason=stale_target"};

    static void expectNoDrops(Host h, String who) {
        for (String r : DROP_REASONS) {
            long v = h.metric("zlink.mesh_node.messages.dropped", r);
            if (v != 0)
                throw Check.fail(who + " dropped " + v + " records (" + r + ")");
        }
    }

    static Host meshHost(String name, String tr, boolean listen, long maxJobs) {
        Host h = new Host(name);
        if (maxJobs > 0)
            h.option(Host.Option.MAX_QUEUED_JOBS, maxJobs);
        h.addMeshNode("m", name, listen ? endpoint(tr, "mesh", name) : null);
        return h;
    }

    // ------------------------------------------------------------ JQ-04

    private static int refused(Host a, String packet) {
        return waitResult(() -> a.requestToChannel("svc").payload(packet, "", b("x"))
                                     .timeout(Duration.ofMillis(5000)).submit_sync());
    }

    private static void failedCheckLeavesNoTrace(String tr) {
        List<Object[]> seen = new ArrayList<>(); // {tag, seq}
        Host x = meshHost("X", tr, true, 0);
        x.meshAddChannelServer("m", "svc", 100);
        x.addHandler(Host.OwnerKind.CHANNEL, "svc", Turn.Kind.SEND, "m", turn -> {
            synchronized (seen) {
                seen.add(new Object[] {tag(turn.payload()), turn.sequence()});
            }
            return null;
        });
        x.start();
        String bound = x.endpoint("m");
        Host a = meshHost("A", tr, false, 0);
        a.meshAddChannelClient("m", "svc");
        a.meshConnect("m", bound, "X");
        a.start();
        Check.eventually(() -> a.meshReadyPeers("m") == 1, 5000, "A's peer ready");

        a.sendToChannel("svc").payload("m", "", b("v1")).submit_sync();
        Check.eventually(() -> x.ownerStatus(Host.OwnerKind.CHANNEL, "svc").handled == 1, 5000, "v1 handled");
        OwnerStatus before = x.ownerStatus(Host.OwnerKind.CHANNEL, "svc");
        Check.eq(before.acceptedSeq, 1, "accepted_seq");

        Check.result(refused(a, "nope"), Tables.FW_NOT_FOUND, "a packet nobody handles");
        Check.result(refused(a, "m"), Tables.FW_NOT_FOUND, "the right packet as the wrong kind");
        OwnerStatus mid = x.ownerStatus(Host.OwnerKind.CHANNEL, "svc");
        Check.eq(mid.acceptedSeq, before.acceptedSeq, "accepted_seq");
        Check.eq(mid.queuedRecords, before.queuedRecords, "queued_records");
        Check.eq(mid.queuedBytes, before.queuedBytes, "queued_bytes");
        Check.eq(mid.runningRecords, before.runningRecords, "running_records");
        Check.eq(mid.runningBytes, before.runningBytes, "running_bytes");
        Check.eq(mid.handled, before.handled, "handled");

        a.sendToChannel("svc").payload("m", "", b("v2")).submit_sync();
        Check.eventually(() -> x.ownerStatus(Host.OwnerKind.CHANNEL, "svc").handled == 2, 5000, "v2 handled");
        synchronized (seen) {
            Check.eq(seen.size(), 2, "records handled");
            Check.eq(seen.get(0)[0], "v1", "first");
            Check.eq(seen.get(1)[0], "v2", "second");
            long s1 = (Long) seen.get(0)[1], s2 = (Long) seen.get(1)[1];
            Check.eq(s1, 1, "v1's sequence");
            Check.eq(s2, s1 + 1, "v2's sequence (the refusals took no number)");
        }
        OwnerStatus end = x.ownerStatus(Host.OwnerKind.CHANNEL, "svc");
        Check.eq(end.acceptedSeq, 2, "accepted_seq");
        Check.eq(end.queuedRecords + end.queuedBytes + end.runningRecords + end.runningBytes, 0, "queued and running");
        HostCapacity cap = x.capacity();
        Check.eq(cap.permitsInUse, 0, "permits in use");
        Check.eq(cap.queuedJobs, 0, "queued jobs");
        a.shutdown(Duration.ofMillis(2000));
        x.shutdown(Duration.ofMillis(2000));
        a.close();
        x.close();
    }

    // ------------------------------------------------------------ JQ-18

    private static void noHandlerOnlyRecorded(String tr, Mode mode) {
        Server b = new Server("B");
        b.open(mode, tr, mode == Mode.MESH ? "jq18m" : "jq18c");
        Client a = new Client().open(mode, b);
        expectNoDrops(b.h, "B");
        a.h.sendToChannel("svc").payload("nohandler", "", b("x")).submit_sync();
        Check.eventually(() -> b.h.metric("zlink.mesh_node.messages.dropped", "reason=no_handler") == 1, 5000,
                         "B recorded the drop");
        request(a, null, "after").submit_sync();
        Check.eq(b.h.metric("zlink.mesh_node.messages.dropped", "reason=no_handler"), 1, "no_handler drops");
        for (int i = 1; i < DROP_REASONS.length; i++)
            Check.eq(b.h.metric("zlink.mesh_node.messages.dropped", DROP_REASONS[i]), 0, DROP_REASONS[i]);
        Check.eq(b.rec.has("x"), 0, "x at B");
        Check.eq(b.rec.count(), 1, "records at B (after only)");
        expectNoDrops(a.h, "A");
        a.close();
        b.close();
    }
}
