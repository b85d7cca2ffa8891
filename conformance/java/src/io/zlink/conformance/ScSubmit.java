package io.zlink.conformance;

import static io.zlink.conformance.Sc.*;

import io.zlink.Host;
import io.zlink.SendCall;
import io.zlink.Tables;
import java.time.Duration;
import java.util.Map;

/**
 * SC-02, SC-03 and SC-06 (seed 000 §17 "Submit and admission",
 * "Deadline"), ported from conformance/c/sc_submit.c, with the harness's
 * "Saturate B" (sc_saturate) in Java.
 */
final class ScSubmit {
    private ScSubmit() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("SC-02", p -> ScCases.each(p, tr -> {
            capacityWait(tr, true);
            capacityWait(tr, false);
        }));
        m.put("SC-03", p -> ScCases.each(p, ScSubmit::waiterPoolFull));
        m.put("SC-06", p -> {
            settersValidate();
            ScCases.each(p, tr -> {
                pendingSendTimesOut(tr, Mode.MESH, 0, 0, 1000);
                pendingSendTimesOut(tr, Mode.CS, 0, 0, 1000);
                pendingSendTimesOut(tr, Mode.MESH, 0, ms(300), 300);
                pendingSendTimesOut(tr, Mode.CS, ms(400), ms(3000), 400);
            });
        });
    }

    static long ms(long v) {
        return v * 1_000_000L;
    }

    static final int SAT_HWM = 16 * 1024;
    static final int SAT_PAYLOAD = 4096;

    /** A one-way to "svc" whose payload is tag padded with zeros to size bytes. */
    static SendCall sized(Client a, String tag, int size) {
        byte[] t = b(tag);
        byte[] p = new byte[Math.max(size, t.length)];
        System.arraycopy(t, 0, p, 0, t.length);
        return a.h.sendToChannel("svc").payload("m", "", p);
    }

    /** B saturated: one-ways until one waits for room (sc_saturate). */
    static final class Sat {
        SendCall pending;
        Done done;
        long startedMs;
        String tag;
        int accepted;
    }

    static Sat saturate(Client a, Server b) {
        Sat sat = new Sat();
        b.gated = true;
        for (int i = 0;; i++) {
            Check.that(i < 100000, "B saturates");
            sat.tag = "f" + i;
            sat.done = new Done();
            sat.pending = sized(a, sat.tag, SAT_PAYLOAD);
            sat.startedMs = now();
            sat.done.on(sat.pending.submit());
            // the harness's 100 ms, not scaled; the status confirms it
            if (!sat.done.awaitUntil(sat.startedMs + 100) && a.h.status().onewayWaiting == 1)
                return sat;
            if (!sat.done.await(5000))
                throw Check.fail("send " + sat.tag + " neither completed nor waited for room: A oneway_waiting "
                                 + a.h.status().onewayWaiting);
            Check.result(sat.done.result, Tables.FW_OK, sat.tag);
            sat.pending.close();
            sat.accepted++;
        }
    }

    // ------------------------------------------------------------ SC-02

    private static void capacityWait(String tr, boolean openEarly) {
        Server b = new Server("B");
        b.maxJobs = 1;
        b.hwm = SAT_HWM;
        b.open(Mode.MESH, tr, openEarly ? "sc02a" : "sc02b");
        Client a = new Client();
        a.hwm = SAT_HWM;
        a.sendTimeout = ms(2000);
        a.open(Mode.MESH, b);
        Sat sat = saturate(a, b);
        if (openEarly) {
            // (a) open() at 500 ms: m* is admitted then, once.
            Check.that(!sat.done.awaitUntil(sat.startedMs + 500), "m* pending at 500 ms");
            b.gate.open();
            sat.done.expect(3000);
            Check.result(sat.done.result, Tables.FW_OK, "m*");
            Check.that(sat.done.atMs - sat.startedMs < 2000, "m* admitted before its send timeout");
        } else {
            // (b) never opened: DeadlineExceeded at the send timeout.
            sat.done.expect(2000 + 250 + 1000);
            Check.result(sat.done.result, Tables.FW_DEADLINE_EXCEEDED, "m*");
            onTime(sat.done.atMs - sat.startedMs, 2000);
            b.gate.open();
        }
        send(a, null, "marker").submit_sync();
        Check.eventually(() -> b.rec.has("marker") == 1, 5000, "the marker reached B");
        Check.eq(b.rec.has(sat.tag), openEarly ? 1 : 0, "m* at B");
        Check.eq(b.rec.count(), sat.accepted + (openEarly ? 2 : 1), "records at B");
        Check.eq(sat.done.calls.get(), 1, "m*'s completions");
        sat.pending.close();
        a.close();
        b.close();
    }

    // ------------------------------------------------------------ SC-03

    private static void waiterPoolFull(String tr) {
        Server b = new Server("B");
        b.maxJobs = 1;
        b.hwm = SAT_HWM;
        b.open(Mode.MESH, tr, "sc03");
        Client a = new Client();
        a.hwm = SAT_HWM;
        a.sendTimeout = ms(Check.ms(10000));
        a.open(Mode.MESH, b);
        long w = a.h.option(Host.Option.ADMISSION_WAITERS);
        Check.that(w > 0 && w < 100000, "ADMISSION_WAITERS in range");
        Check.eq(a.h.status().admissionWaitersMax, w, "admission_waiters_max");
        Sat sat = saturate(a, b); // the first of the W parked sends
        Done[] d = new Done[(int) w];
        SendCall[] c = new SendCall[(int) w];
        for (int i = 1; i < w; i++) {
            d[i] = new Done();
            c[i] = sized(a, "p" + i, 4096);
            d[i].on(c[i].submit());
        }
        Check.eventually(() -> a.h.status().onewayWaiting == w, 2000, "W sends waiting");
        for (int i = 1; i < w; i++)
            Check.eq(d[i].calls.get(), 0, "completions of p" + i);
        Check.eq(sat.done.calls.get(), 0, "m*'s completions");

        // W + 1: DeadlineExceeded at once, nothing kept.
        Done dx = new Done();
        SendCall x = sized(a, "overflow", 4096);
        long t0 = now();
        dx.on(x.submit());
        dx.expect(50);
        Check.result(dx.result, Tables.FW_DEADLINE_EXCEEDED, "overflow");
        Check.that(dx.atMs - t0 <= Check.ms(50), "overflow ended at once");
        Check.eq(a.h.status().onewayWaiting, w, "sends waiting");

        // open(): every parked send is admitted once; the overflow never.
        b.gate.open();
        sat.done.expect(10000);
        Check.result(sat.done.result, Tables.FW_OK, "m*");
        for (int i = 1; i < w; i++) {
            d[i].expect(10000);
            Check.result(d[i].result, Tables.FW_OK, "p" + i);
        }
        send(a, null, "marker").submit_sync();
        Check.eventually(() -> b.rec.has("marker") == 1, 10000, "the marker reached B");
        Check.eq(b.rec.has("overflow"), 0, "overflow at B");
        Check.eq(b.rec.count(), sat.accepted + w + 1, "records at B");
        Check.eq(b.rec.has(sat.tag), 1, "m* at B");
        Check.eq(b.rec.has("p1"), 1, "p1 at B");
        Check.eq(dx.calls.get(), 1, "overflow's completions");
        for (int i = 1; i < w; i++) {
            Check.eq(d[i].calls.get(), 1, "completions of p" + i);
            c[i].close();
        }
        x.close();
        sat.pending.close();
        a.close();
        b.close();
    }

    // ------------------------------------------------------------ SC-06

    /** One send-timeout owner: 0 the host's root fallback, 1 a mesh node, 2 a channel. */
    private static final class Owner {
        final String what;
        final Host h;
        final int kind;
        final String name;

        Owner(String what, Host h, int kind, String name) {
            this.what = what;
            this.h = h;
            this.kind = kind;
            this.name = name;
        }

        int set(long v) {
            return Check.resultOf(() -> {
                if (kind == 0)
                    h.option(Host.Option.DEFAULT_SEND_TIMEOUT, v);
                else if (kind == 1)
                    h.meshOption(name, Host.NodeOption.SEND_TIMEOUT, v);
                else
                    h.channelOption(name, Host.NodeOption.SEND_TIMEOUT, v);
            });
        }

        long get() {
            if (kind == 0)
                return h.option(Host.Option.DEFAULT_SEND_TIMEOUT);
            if (kind == 1)
                return h.meshOption(name, Host.NodeOption.SEND_TIMEOUT);
            return h.channelOption(name, Host.NodeOption.SEND_TIMEOUT);
        }
    }

    private static void ownerValidation(Owner o, long want) {
        long[] bad = {0, ms(-1), -1, Long.MAX_VALUE, ms((long) Integer.MAX_VALUE + 1), Long.MIN_VALUE};
        long before = o.get();
        for (long v : bad) {
            int rc = o.set(v);
            if (rc != Tables.FW_INVALID_ARGUMENT)
                throw Check.fail(o.what + ": send timeout " + v + " ns gave " + Tables.resultName(rc)
                                 + ", expected INVALID_ARGUMENT");
            Check.eq(o.get(), before, o.what + " after a refused value");
        }
        Check.result(o.set(400 * 1000), Tables.FW_OK, o.what + " 0.4 ms");
        Check.eq(o.get(), ms(1), o.what + " 0.4 ms reads");
        Check.result(o.set(ms(1) + 1), Tables.FW_OK, o.what + " 1 ms + 1 ns");
        Check.eq(o.get(), ms(2), o.what + " rounded up");
        Check.result(o.set(ms(Integer.MAX_VALUE)), Tables.FW_OK, o.what + " INT_MAX ms");
        Check.eq(o.get(), ms(Integer.MAX_VALUE), o.what + " INT_MAX ms reads");
        Check.result(o.set(want), Tables.FW_OK, o.what + " want");
        Check.eq(o.get(), want, o.what + " want reads");
    }

    private static void settersValidate() {
        Host h = new Host("V");
        h.addMeshNode("m", "V", "inproc://sc06-validate");
        h.addCsServer("cs-server", "inproc://sc06-server");
        h.addCsClient("cs-client", "inproc://sc06-server");
        Owner root = new Owner("root fallback", h, 0, null);
        Owner mesh = new Owner("mesh node ROUTER", h, 1, "m");
        Owner cli = new Owner("ClientServer client DEALER", h, 2, "cs-client");
        Owner srv = new Owner("ClientServer server ROUTER", h, 2, "cs-server");
        long dflt = ms(1000);
        Check.eq(root.get(), dflt, "root unset");
        Check.eq(mesh.get(), dflt, "mesh unset");
        Check.eq(cli.get(), dflt, "client unset");
        Check.eq(srv.get(), dflt, "server unset");
        ownerValidation(root, ms(1500));
        Check.eq(mesh.get(), ms(1500), "mesh follows the root");
        ownerValidation(mesh, ms(700));
        ownerValidation(cli, ms(800));
        ownerValidation(srv, ms(900));
        Check.eq(root.get(), ms(1500), "root kept");
        h.start();
        Check.eq(h.state(), Host.State.SERVING, "V serves");
        ownerValidation(root, ms(1500));
        ownerValidation(mesh, ms(700));
        ownerValidation(cli, ms(800));
        h.shutdown(Duration.ofMillis(1000));
        h.close();
    }

    private static void pendingSendTimesOut(String tr, Mode mode, long sockTimeout, long rootTimeout,
                                            long wantMs) {
        Server b = new Server("B");
        b.maxJobs = 1;
        b.hwm = SAT_HWM;
        b.open(mode, tr, "sc06");
        Client a = new Client();
        a.hwm = SAT_HWM;
        a.sendTimeout = sockTimeout;
        a.rootSendTimeout = rootTimeout;
        a.open(mode, b);
        Sat sat = saturate(a, b);
        sat.done.expect(wantMs + 250 + 1000);
        Check.result(sat.done.result, Tables.FW_DEADLINE_EXCEEDED, "m*");
        onTime(sat.done.atMs - sat.startedMs, wantMs);
        sat.pending.close();
        a.close();
        b.close();
    }
}
