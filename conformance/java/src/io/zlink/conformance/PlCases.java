package io.zlink.conformance;

import io.zlink.Context;
import io.zlink.Poller;
import io.zlink.Socket;
import io.zlink.Tables;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The PL cases (seed 004 §9) the Java runner implements, ported from
 * conformance/c/pl_registration.c over the binding's Poller: PL-06.
 */
final class PlCases {
    private PlCases() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("PL-06", p -> ScCases.each(p, PlCases::socketInTwoPollers));
    }

    private static int seq;

    /** A PAIR a bound and a PAIR b connected to it over tr; returns {a, b}. */
    static Socket[] pairLink(Context ctx, String tr) {
        Socket a = ctx.socket(Socket.PAIR), b = ctx.socket(Socket.PAIR);
        a.option(Socket.LINGER, 0);
        b.option(Socket.LINGER, 0);
        String ep;
        if (tr.equals("tcp")) {
            a.bind("tcp://127.0.0.1:0");
            ep = a.lastEndpoint();
        } else {
            ep = "inproc://pl-" + ProcessHandle.current().pid() + "-" + (seq++);
            a.bind(ep);
        }
        b.connect(ep);
        return new Socket[] {a, b};
    }

    /** A wait of p on a thread of its own. */
    static final class Waiter extends Thread {
        final Poller p;
        final long ms;
        final AtomicReference<Poller.Wait> got = new AtomicReference<>();

        Waiter(Poller p, long ms) {
            this.p = p;
            this.ms = ms;
            setDaemon(true);
            start();
        }

        @Override
        public void run() {
            got.set(p.await(4, ms));
        }

        Poller.Wait join(String what) throws InterruptedException {
            join(Check.ms(10000) + ms);
            Check.that(!isAlive(), what + ": the wait returned");
            return got.get();
        }
    }

    /** One socket in two pollers for readiness bits: both work, each reports on its own. */
    static void socketInTwoPollers(String tr) throws Exception {
        try (Context ctx = new Context(); Poller p1 = new Poller(); Poller p2 = new Poller()) {
            Socket[] ab = pairLink(ctx, tr);
            Socket a = ab[0], b = ab[1];
            Check.eq(p1.add(b, 1, Poller.POLLIN), Tables.CONFIG_OK, "p1 add");
            Check.eq(p2.add(b, 2, Poller.POLLIN | Poller.POLLOUT), Tables.CONFIG_OK, "p2 add");
            // p2 sees OUT once the peer is there; p1 asked for IN only: nothing.
            Check.eventually(() -> p2.await(4, 0).count == 1, 5000, "p2 sees POLLOUT");
            Check.eq(p1.await(4, 0).count, 0, "p1's events");
            Poller.Wait w = p2.await(4, 0);
            Check.eq(w.count, 1, "p2's events");
            Check.eq(w.events[0].events, Poller.POLLOUT, "p2's bits");
            Check.eq(w.events[0].user, 2, "p2's user value");
            Check.eq(p2.modify(b, Poller.POLLIN), Tables.CONFIG_OK, "p2 modify");

            // Both wait on other threads; one record wakes both.
            Waiter w1 = new Waiter(p1, Check.ms(5000)), w2 = new Waiter(p2, Check.ms(5000));
            a.send("x".getBytes(StandardCharsets.UTF_8));
            for (Object[] x : new Object[][] {{w1.join("p1"), 1L}, {w2.join("p2"), 2L}}) {
                Poller.Wait got = (Poller.Wait) x[0];
                Check.eq(got.count, 1, "a waiter's events");
                Check.eq(got.events[0].sourceKind, Poller.SOURCE_SOCKET, "a waiter's source kind");
                Check.eq(got.events[0].events, Poller.POLLIN, "a waiter's bits");
                Check.eq(got.events[0].user, (long) (Long) x[1], "a waiter's user value");
            }
            // Independent registrations: removing one leaves the other.
            Check.eq(p1.remove(b), Tables.CONFIG_OK, "p1 remove");
            Check.eq(p1.await(4, 0).count, 0, "p1's events after the remove");
            Check.eq(p2.await(4, 0).count, 1, "p2's events after p1's remove");
            Socket.Record r = b.recv(0);
            Check.that(r.ok() && r.parts.length == 1 && new String(r.parts[0], StandardCharsets.UTF_8).equals("x"),
                       "b received x: " + r);
            Check.eq(p2.await(4, 0).count, 0, "p2's events after the receive");
            Check.eq(p2.remove(b), Tables.CONFIG_OK, "p2 remove");
            a.close();
            b.close();
        }
    }
}
