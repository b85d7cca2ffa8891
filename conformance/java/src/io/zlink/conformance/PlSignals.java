package io.zlink.conformance;

import static io.zlink.conformance.PlCases.b;
import static io.zlink.conformance.PlCases.expectStr;
import static io.zlink.conformance.PlCases.now;

import io.zlink.Context;
import io.zlink.Poller;
import io.zlink.Socket;
import io.zlink.Tables;
import io.zlink.Timer;
import io.zlink.ZLinkException;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * PL-15 and PL-23 (conformance/c/pl_wait_events.c, pl_lifetime.c) with
 * PlNative's test-only help around the binding:
 *
 * PL-15: SIGUSR1 gets a handler installed without SA_RESTART; the waiting
 * thread's kernel id comes from gettid on that thread, each signal goes to
 * it by tgkill once /proc shows it asleep in the kernel (futex, poll,
 * ppoll: best effort, as zt_wait_blocked), and its delivery is counted by
 * the handler. The thread must not block SIGUSR1 (checked in /proc).
 *
 * PL-23: allocation failure needs PlNative's malloc to be the process's,
 * so the case body runs in a JVM started with the library in LD_PRELOAD
 * (this class's main); the case's own JVM starts it and checks it ended
 * with its completion line.
 */
final class PlSignals {
    private PlSignals() {}

    static final String DONE = "pl-preloaded: done ";

    static void register(Map<String, Runner.Case> m) {
        m.put("PL-15", p -> signalsDoNotInterrupt(JqFlow.param(p, "timeout_ms"), JqFlow.param(p, "signals")));
        m.put("PL-23", p -> inPreloadedJvm("PL-23"));
    }

    // ------------------------------------------------------------ PL-15

    private static long statusMask(int tid, String key) throws Exception {
        for (String l : Files.readAllLines(Path.of("/proc/self/task/" + tid + "/status")))
            if (l.startsWith(key + ":"))
                return Long.parseUnsignedLong(l.substring(key.length() + 1).trim(), 16);
        throw Check.fail("/proc/self/task/" + tid + "/status has no " + key);
    }

    /** Until tid sleeps in futex (WAIT, WAIT_BITSET), poll or ppoll; at most 2 s (best effort). */
    private static void waitBlocked(int tid) {
        long until = now() + 2000;
        while (now() < until) {
            String[] f;
            try {
                f = Files.readString(Path.of("/proc/self/task/" + tid + "/syscall")).trim().split(" ");
            } catch (Exception e) {
                return;
            }
            try {
                long nr = Long.parseLong(f[0]);
                if (nr == 7 || nr == 271)
                    return;
                if (nr == 202 && f.length > 2) {
                    long op = Long.parseLong(f[2].replace("0x", ""), 16) & 0x7F;
                    if (op == 0 || op == 9)
                        return;
                }
            } catch (NumberFormatException e) {
                // "running": look again
            }
            Thread.onSpinWait();
        }
    }

    /** Signals w's thread times times while it waits; returns early when the wait ended (the caller checks how). */
    private static void pester(Sleeper w, int times) throws Exception {
        int tid = w.tid;
        long bit = 1L << (10 - 1); // SIGUSR1
        Check.that((statusMask(tid, "SigBlk") & bit) == 0, "the waiting thread does not block SIGUSR1");
        for (int i = 0; i < times; i++) {
            waitBlocked(tid);
            long before = PlNative.delivered();
            int rc = PlNative.signalThread(tid);
            if (rc != 0 && !w.isAlive())
                return;
            Check.eq(rc, 0, "tgkill SIGUSR1");
            Check.eventually(() -> PlNative.delivered() > before, 2000, "signal " + (i + 1) + " delivered");
        }
    }

    /** A thread running body; its kernel id is known when this returns. */
    static final class Sleeper extends Thread {
        volatile int tid;
        final java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
        final Runnable body;

        Sleeper(Runnable body) {
            this.body = body;
            setDaemon(true);
            start();
            try {
                started.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void run() {
            tid = PlNative.gettid();
            started.countDown();
            body.run();
        }

        void finish(long ms, String what) throws InterruptedException {
            join(ms);
            Check.that(!isAlive(), what);
        }
    }

    /** PL-15: signals without SA_RESTART do not make zlink_poller_wait or zlink_poll fail with EINTR. */
    static void signalsDoNotInterrupt(int timeoutParam, int signals) throws Exception {
        long timeout = Check.ms(timeoutParam), longWait = Check.ms(30000);
        Check.that(signals >= 1, "signals >= 1");
        PlNative.load();
        Check.eq(PlNative.installNoRestart(), 0, "sigaction(SIGUSR1) without SA_RESTART");
        Context ctx = new Context();
        Socket[] ab = PlCases.pairLink(ctx, "inproc");
        Socket a = ab[0], bs = ab[1];
        Timer t = new Timer();
        int[] fds = PlNative.pipe();
        for (int variant = 0; variant < 3; variant++) {
            Poller p = new Poller();
            Check.eq(p.add(bs, 1, Poller.POLLIN), Tables.CONFIG_OK, "add b");
            if (variant == 1) {
                Check.eq(p.addTimer(t, 2), Tables.CONFIG_OK, "add_timer");
                Check.eq(t.start(3_600_000L * 1_000_000L, 0), Tables.CONFIG_OK, "an hour's timer");
            }
            if (variant == 2)
                Check.eq(p.addFd(fds[0], 3, Poller.POLLIN), Tables.CONFIG_OK, "add_fd");
            int[] n = {-2}, res = {-2};
            long[] took = {0};
            Sleeper w = new Sleeper(() -> {
                long s = now();
                n[0] = p.wait(new Poller.Event[4], timeout, res);
                took[0] = now() - s;
            });
            pester(w, signals);
            w.finish(timeout * 10 + 5000, "the wait ended");
            Check.that(n[0] == 0 && res[0] == Tables.CONFIG_OK, "poller variant " + variant + ": wait returned " + n[0]
                       + " (" + Tables.resultName(res[0]) + ")");
            Check.that(took[0] >= timeout, "poller variant " + variant + ": 0 after the whole timeout (" + took[0] + " ms)");
            Poller.Event[] ev = new Poller.Event[4];
            w = new Sleeper(() -> n[0] = p.wait(ev, longWait, res));
            pester(w, signals);
            a.send(b("x"));
            w.finish(longWait + 5000, "the wait ended at the event");
            Check.that(n[0] == 1 && ev[0].sourceKind == Poller.SOURCE_SOCKET && ev[0].events == Poller.POLLIN,
                       "poller variant " + variant + ": " + n[0] + " event(s) (" + Tables.resultName(res[0]) + ")");
            expectStr(bs, "x");
            if (variant == 1) {
                Check.eq(t.stop(), Tables.CONFIG_OK, "timer stop");
                Check.eq(p.removeTimer(t), Tables.CONFIG_OK, "remove_timer");
            }
            Check.result(p.destroy(), Tables.CLOSE_OK, "destroy");
        }
        Check.result(t.destroy(), Tables.CLOSE_OK, "timer destroy");

        for (int variant = 0; variant < 3; variant++) {
            List<Poller.Item> list = new ArrayList<>();
            if (variant != 1)
                list.add(new Poller.Item(bs, Poller.POLLIN));
            if (variant != 0)
                list.add(Poller.Item.fd(fds[0], Poller.POLLIN));
            Poller.Item[] items = list.toArray(new Poller.Item[0]);
            int[] n = {-2}, res = {-2};
            long[] took = {0};
            Sleeper w = new Sleeper(() -> {
                long s = now();
                n[0] = Poller.poll(items, timeout, res);
                took[0] = now() - s;
            });
            pester(w, signals);
            w.finish(timeout * 10 + 5000, "the poll ended");
            Check.that(n[0] == 0 && res[0] == Tables.CONFIG_OK, "zlink_poll variant " + variant + ": returned " + n[0]
                       + " (" + Tables.resultName(res[0]) + ")");
            Check.that(took[0] >= timeout, "zlink_poll variant " + variant + ": after the whole timeout (" + took[0] + " ms)");
            w = new Sleeper(() -> n[0] = Poller.poll(items, longWait, res));
            pester(w, signals);
            if (variant == 1)
                PlNative.write(fds[1]);
            else
                a.send(b("x"));
            w.finish(longWait + 5000, "the poll ended at the event");
            Check.that(n[0] == 1, "zlink_poll variant " + variant + ": returned " + n[0] + " at the event ("
                       + Tables.resultName(res[0]) + ")");
            if (variant == 1)
                PlNative.read(fds[0]);
            else
                expectStr(bs, "x");
        }
        PlNative.closeAll(fds);
        PlMore.finish(ctx, a, bs);
    }

    // ------------------------------------------------------------ PL-23

    /** Runs case id's body in a JVM with PlNative in LD_PRELOAD; passes when it completes. */
    static void inPreloadedJvm(String id) throws Exception {
        PlNative.load();
        String lib = System.getenv(PlNative.ENV);
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        for (String p : new String[] {"zlink.library", "zlink.jni", "java.io.tmpdir"}) {
            String v = System.getProperty(p);
            if (v != null)
                cmd.add("-D" + p + "=" + v);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), PlSignals.class.getName(), id));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("LD_PRELOAD", lib);
        Process proc = pb.start();
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        Thread reader = new Thread(() -> {
            try (InputStream in = proc.getInputStream()) {
                in.transferTo(buf);
            } catch (java.io.IOException e) {
                // gone: what was read stays
            }
        });
        reader.start();
        boolean exited = proc.waitFor((long) (50 * Check.mult()), TimeUnit.SECONDS);
        if (!exited)
            proc.destroyForcibly().waitFor();
        reader.join(5000);
        String out;
        synchronized (buf) {
            out = buf.toString(StandardCharsets.UTF_8);
        }
        for (String l : out.split("\n"))
            if (!l.isEmpty())
                System.out.println("preloaded| " + l);
        Check.that(exited && proc.exitValue() == 0 && out.contains(DONE + id),
                   "the preloaded JVM completed " + id + " (" + (exited ? "exit " + proc.exitValue() : "timeout") + ")");
    }

    /** The preloaded JVM: runs one case body, prints its completion line. */
    public static void main(String[] args) {
        try {
            if (!args[0].equals("PL-23"))
                throw Check.fail("no preloaded body for " + args[0]);
            newEnomemAndDestroyNulls();
        } catch (Check.Failure f) {
            Runtime.getRuntime().halt(1);
        } catch (Throwable t) {
            System.out.println("FAIL " + t);
            t.printStackTrace(System.out);
            System.out.flush();
            Runtime.getRuntime().halt(1);
        }
        System.out.println(DONE + args[0]);
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }

    /** PL-23: zlink_poller_new fails with NULL/ENOMEM on allocation failure; a successful destroy sets NULL. */
    static void newEnomemAndDestroyNulls() {
        PlNative.load();
        Check.that(PlNative.preloaded(), "the test library is the process's malloc (LD_PRELOAD)");
        Check.result(new Poller().destroy(), Tables.CLOSE_OK, "a poller before the failure (libzlink loaded)");
        Check.eq(PlNative.allocFailBegin(), 0, "allocation failure armed (libzlink.so.1 found)");
        ZLinkException refused = null;
        Poller none = null;
        try {
            none = new Poller();
        } catch (ZLinkException e) {
            refused = e;
        }
        int failed = PlNative.allocFailEnd();
        if (failed == 0)
            throw Check.fail("zlink_poller_new allocated nothing through malloc/calloc: the failure injection did not "
                             + "reach it (" + (none != null ? "it returned a poller" : "NULL") + ")");
        Check.that(none == null && refused != null, "new Poller() failed (zlink_poller_new returned NULL)");
        Check.eq(refused.errno(), Tables.ERRNO_ENOMEM, "errno ENOMEM");
        Poller p = new Poller(), q = new Poller();
        Check.that(p.handle() != 0 && q.handle() != 0 && p.handle() != q.handle(), "two pollers");
        Check.result(p.destroy(), Tables.CLOSE_OK, "destroy");
        Check.eq(p.handle(), 0, "destroy set the handle to NULL");
        Check.result(p.destroy(), Tables.CLOSE_INVALID_HANDLE, "destroy of NULL");
        Check.eq(Socket.lastErrno(), Tables.ERRNO_EFAULT, "errno");
        Context ctx = new Context();
        Socket s = PlMore.sock(ctx, Socket.ROUTER);
        Timer t = new Timer();
        Check.eq(q.add(s, 0, Poller.POLLIN | Poller.POLLCOMPLETION | Poller.POLLROUTE), Tables.CONFIG_OK, "add");
        Check.eq(q.addTimer(t, 0), Tables.CONFIG_OK, "add_timer");
        Check.eq(q.addFd(0, 0, Poller.POLLIN), Tables.CONFIG_OK, "add_fd");
        Check.result(q.destroy(), Tables.CLOSE_OK, "destroy with registrations");
        Check.eq(q.handle(), 0, "NULL");
        Check.result(t.destroy(), Tables.CLOSE_OK, "the timer was released");
        Poller r = new Poller();
        Check.eq(r.add(s, 0, Poller.POLLCOMPLETION), Tables.CONFIG_OK, "the completion bit is free");
        Check.result(r.destroy(), Tables.CLOSE_OK, "destroy");
        PlMore.finish(ctx, s);
    }
}
