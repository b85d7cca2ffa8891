package io.zlink.conformance;

import static io.zlink.conformance.PlCases.b;
import static io.zlink.conformance.PlCases.expectConfig;
import static io.zlink.conformance.PlCases.expectStr;
import static io.zlink.conformance.PlCases.now;

import io.zlink.Context;
import io.zlink.Poller;
import io.zlink.Socket;
import io.zlink.Tables;
import io.zlink.Timer;
import java.util.Arrays;
import java.util.Map;

/**
 * PL cases ported from conformance/c/pl_poll.c, pl_registration.c,
 * pl_wait_events.c and pl_lifetime.c over the binding's Poller, Socket
 * and Timer: PL-01..05, 07..09, 12..14, 24, 25, 27 (PL-15 and PL-23 are in
 * PlSignals). Where C passes a pointer the Java surface passes a value:
 * a registration's user data is a long, an event's socket and timer are
 * raw handle values (Socket.handle(), Timer.handle()), a forged handle is
 * a view of a value no handle has (Socket/Poller/Timer.ofHandle(JUNK)),
 * NULL is null (events, items, error_out) or a view of 0. File
 * descriptors come from PlNative (test-only).
 */
final class PlMore {
    private PlMore() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("PL-01", p -> pollReturnsCount(JqFlow.param(p, "timeout_ms")));
        m.put("PL-02", p -> pollInfiniteAndImmediate(JqFlow.param(p, "late_edge_ms")));
        m.put("PL-03", p -> pollReventsIsASnapshot());
        m.put("PL-04", p -> addTwiceIsConflict());
        m.put("PL-05", p -> timerOwnerAndDestroyBusy());
        m.put("PL-07", p -> missingSourceIsNotFound());
        m.put("PL-08", p -> badAndUnsupportedBits());
        m.put("PL-09", p -> completionBitSourcesAndKinds());
        m.put("PL-12", p -> fdPriAndErrorBits());
        m.put("PL-13", p -> eventFieldsPerKind());
        m.put("PL-14", p -> eventArrayIsCallerOwned());
        m.put("PL-24", p -> sizeCountsRegistrations());
        m.put("PL-25", p -> waitResults(JqFlow.param(p, "timeout_ms")));
        m.put("PL-27", p -> errorOutMayBeNull());
    }

    /** A value that is no handle (no handle-table magic): C's uint64_t junk[16]. */
    static final long JUNK = 0x00007ffc0000a000L;
    static final int EINVAL = Tables.ERRNO_EINVAL, EFAULT = Tables.ERRNO_EFAULT;
    static final long LONG_WAIT = 5000;

    // ------------------------------------------------------------ helpers

    /** zlink_poll that must succeed: its count. */
    static int pollOk(Poller.Item[] items, long ms) {
        int[] res = {-1};
        int n = Poller.poll(items, ms, res);
        Check.that(n >= 0, "zlink_poll failed: " + Tables.resultName(res[0]) + " errno " + Socket.lastErrno());
        Check.result(res[0], Tables.CONFIG_OK, "zlink_poll's error_out on success");
        return n;
    }

    /** zlink_poll(items, count) that must fail with result and errno. */
    static void pollFails(Poller.Item[] items, int count, long ms, int result, int err, String what) {
        int[] res = {Tables.CONFIG_OK};
        int n = Poller.poll(items, count, ms, res);
        int e = Socket.lastErrno();
        Check.eq(n, -1, what + ": zlink_poll's return");
        Check.result(res[0], result, what + ": error_out");
        Check.eq(e, err, what + ": errno");
    }

    static void pollFails(Poller.Item[] items, long ms, int result, int err, String what) {
        pollFails(items, items == null ? 0 : items.length, ms, result, err, what);
    }

    /** zlink_poller_wait that must succeed: its count. */
    static int waitOk(Poller p, Poller.Event[] ev, long ms) {
        int[] res = {-1};
        int n = p.wait(ev, ms, res);
        Check.that(n >= 0, "zlink_poller_wait failed: " + Tables.resultName(res[0]) + " errno " + Socket.lastErrno());
        Check.result(res[0], Tables.CONFIG_OK, "zlink_poller_wait's error_out on success");
        return n;
    }

    static void waitFails(Poller p, Poller.Event[] ev, int cap, long ms, int result, int err, String what) {
        int[] res = {Tables.CONFIG_OK};
        int n = p.wait(ev, cap, ms, res);
        int e = Socket.lastErrno();
        Check.eq(n, -1, what + ": zlink_poller_wait's return");
        Check.result(res[0], result, what + ": error_out");
        Check.eq(e, err, what + ": errno");
    }

    static Socket sock(Context ctx, int type) {
        Socket s = ctx.socket(type);
        s.option(Socket.LINGER, 0);
        return s;
    }

    static void finish(Context ctx, Socket... socks) {
        for (Socket s : socks)
            Check.result(s.closeResult(), Tables.CLOSE_OK, "close");
        ctx.close();
    }

    // ------------------------------------------------------------ zlink_poll

    /** PL-01: zlink_poll returns the ready count, 0 on timeout, -1 with error_out and errno. */
    static void pollReturnsCount(int timeoutMs) {
        long quiet = Check.ms(timeoutMs);
        Context ctx = new Context();
        Socket[] ab = PlCases.pairLink(ctx, "inproc");
        Socket a = ab[0], bs = ab[1];
        int[] fds = PlNative.pipe();
        Poller.Item[] items = {new Poller.Item(bs, Poller.POLLIN), Poller.Item.fd(fds[0], Poller.POLLIN),
                               new Poller.Item(a, Poller.POLLOUT)};
        Check.eq(pollOk(items, 0), 1, "one ready (a can send)");
        Check.eq(items[2].revents, Poller.POLLOUT, "a's revents");
        a.send(b("x"));
        PlNative.write(fds[1]);
        Check.eq(pollOk(items, 0), 3, "three ready");
        Check.eq(items[0].revents, Poller.POLLIN, "b's revents");
        Check.eq(items[1].revents, Poller.POLLIN, "the pipe's revents");
        Poller.Item[] q = {new Poller.Item(a, Poller.POLLIN)};
        long t0 = now();
        Check.eq(pollOk(q, quiet), 0, "0 on timeout");
        Check.that(now() - t0 >= quiet, "returned after the timeout");
        pollFails(null, 1, 0, Tables.CONFIG_INVALID_ARGUMENT, EINVAL, "NULL items, count 1");
        pollFails(items, -1, 0, Tables.CONFIG_INVALID_ARGUMENT, EINVAL, "count -1");
        pollFails(new Poller.Item[] {new Poller.Item(JUNK, -1, Poller.POLLIN)}, 0, Tables.CONFIG_INVALID_HANDLE,
                  EFAULT, "a forged socket");
        pollFails(new Poller.Item[] {new Poller.Item(bs, Poller.POLLIN | 16)}, 0, Tables.CONFIG_INVALID_ARGUMENT,
                  EINVAL, "ITEMS_DFLT as a bit");
        pollFails(new Poller.Item[] {Poller.Item.fd(-1, Poller.POLLIN)}, 0, Tables.CONFIG_INVALID_ARGUMENT, EINVAL,
                  "fd -1");
        pollFails(new Poller.Item[] {new Poller.Item(JUNK, -1, Poller.POLLIN), Poller.Item.fd(fds[0], 256)}, 0,
                  Tables.CONFIG_INVALID_ARGUMENT, EINVAL, "arguments before handles");
        expectStr(bs, "x");
        PlNative.closeAll(fds);
        finish(ctx, a, bs);
    }

    /** PL-02: timeout -1 waits without limit, 0 returns at once. */
    static void pollInfiniteAndImmediate(int lateMs) throws Exception {
        Context ctx = new Context();
        Socket[] ab = PlCases.pairLink(ctx, "inproc");
        Socket a = ab[0], bs = ab[1];
        Poller.Item[] items = {new Poller.Item(bs, Poller.POLLIN)};
        long t0 = now();
        Check.eq(pollOk(items, 0), 0, "timeout 0");
        Check.that(now() - t0 < PlCases.EDGE_BOUND_MS, "returned at once");
        int[] got = {-2};
        long[] took = {0};
        Thread th = new Thread(() -> {
            long s = now();
            got[0] = Poller.poll(items, -1, null);
            took[0] = now() - s;
        });
        th.start();
        Thread.sleep(lateMs); // the late edge: the only delay in the case, as in C
        a.send(b("x"));
        th.join(Check.ms(10000));
        Check.that(!th.isAlive(), "the -1 poll returned at the record");
        Check.eq(got[0], 1, "the -1 poll's count");
        Check.eq(items[0].revents, Poller.POLLIN, "its revents");
        Check.that(took[0] >= lateMs, "it waited for the record (" + took[0] + " ms)");
        expectStr(bs, "x");
        finish(ctx, a, bs);
    }

    /** PL-03: revents is cleared on entry (failures too) and is a snapshot. */
    static void pollReventsIsASnapshot() {
        Context ctx = new Context();
        Socket[] ab = PlCases.pairLink(ctx, "inproc");
        Socket a = ab[0], bs = ab[1];
        Poller.Item[] items = {new Poller.Item(bs, Poller.POLLIN), new Poller.Item(a, 0)};
        items[0].revents = 0x7777;
        items[1].revents = 0x5555;
        Check.eq(pollOk(items, 0), 0, "nothing ready");
        Check.eq(items[0].revents, 0, "garbage cleared");
        Check.eq(items[1].revents, 0, "garbage cleared on an item with no events");
        a.send(b("x"));
        Check.eq(pollOk(items, 0), 1, "b ready");
        Check.eq(items[0].revents, Poller.POLLIN, "b's revents");
        Check.eq(items[1].revents, 0, "the no-events item's revents");
        expectStr(bs, "x");
        Check.eq(items[0].revents, Poller.POLLIN, "a snapshot: unchanged by the receive");
        Check.eq(pollOk(items, 0), 0, "nothing ready after the receive");
        Check.eq(items[0].revents, 0, "the next call's snapshot");
        items[0].revents = 9;
        items[1].events = 1024;
        pollFails(items, 0, Tables.CONFIG_INVALID_ARGUMENT, EINVAL, "a bad bit");
        Check.eq(items[0].revents, 0, "cleared by a failing call too");
        finish(ctx, a, bs);
    }

    // ---------------------------------------------------------- registration

    /** PL-04: adding a registered socket, fd or timer again is CONFLICT/EEXIST. */
    static void addTwiceIsConflict() {
        Context ctx = new Context();
        Socket s = sock(ctx, Socket.PAIR);
        Timer t = new Timer();
        int[] fds = PlNative.pipe();
        Poller p = new Poller();
        Check.eq(p.add(s, 0, Poller.POLLIN), Tables.CONFIG_OK, "add");
        expectConfig(p.add(s, 0, Poller.POLLOUT), Tables.CONFIG_CONFLICT, Tables.ERRNO_EEXIST, "add again");
        Check.eq(p.addFd(fds[0], 0, Poller.POLLIN), Tables.CONFIG_OK, "add_fd");
        expectConfig(p.addFd(fds[0], 0, Poller.POLLOUT), Tables.CONFIG_CONFLICT, Tables.ERRNO_EEXIST, "add_fd again");
        Check.eq(p.addTimer(t, 0), Tables.CONFIG_OK, "add_timer");
        expectConfig(p.addTimer(t, 0), Tables.CONFIG_CONFLICT, Tables.ERRNO_EEXIST, "add_timer again");
        expectConfig(p.add(t, 0, Poller.POLLIN), Tables.CONFIG_CONFLICT, Tables.ERRNO_EEXIST, "add of the timer");
        Check.eq(p.size(null), 3, "size");
        Check.result(p.destroy(), Tables.CLOSE_OK, "destroy");
        Check.result(t.destroy(), Tables.CLOSE_OK, "timer destroy");
        PlNative.closeAll(fds);
        finish(ctx, s);
    }

    /** PL-05: a timer another poller holds is INVALID_STATE/EBUSY; destroying a registered one CLOSE_BUSY/EBUSY. */
    static void timerOwnerAndDestroyBusy() {
        Timer t = new Timer();
        Poller p1 = new Poller(), p2 = new Poller();
        Check.eq(p1.addTimer(t, 0), Tables.CONFIG_OK, "p1 add_timer");
        expectConfig(p2.addTimer(t, 0), Tables.CONFIG_INVALID_STATE, Tables.ERRNO_EBUSY, "p2 add_timer");
        expectConfig(p2.add(t, 0, Poller.POLLIN), Tables.CONFIG_INVALID_STATE, Tables.ERRNO_EBUSY, "p2 add");
        Check.eq(p2.size(null), 0, "p2's size");
        Check.eq(p1.removeTimer(t), Tables.CONFIG_OK, "p1 lets go");
        Check.eq(p2.addTimer(t, 0), Tables.CONFIG_OK, "p2 takes it");
        Check.result(p2.destroy(), Tables.CLOSE_OK, "p2 destroy");
        Check.eq(p1.addTimer(t, 0), Tables.CONFIG_OK, "p1 takes it after p2's destroy");
        Check.result(p1.destroy(), Tables.CLOSE_OK, "p1 destroy");
        Check.result(t.destroy(), Tables.CLOSE_OK, "timer destroy");

        Timer u = new Timer();
        Poller p = new Poller();
        Check.eq(p.addTimer(u, 0), Tables.CONFIG_OK, "add_timer");
        long keep = u.handle();
        Check.result(u.destroy(), Tables.CLOSE_BUSY, "destroying a registered timer");
        Check.eq(Socket.lastErrno(), Tables.ERRNO_EBUSY, "errno");
        Check.eq(u.handle(), keep, "the handle is left as it was");
        Check.eq(u.start(1_000_000L, 1), Tables.CONFIG_OK, "still working: start");
        Poller.Event[] ev = new Poller.Event[2];
        Check.eq(waitOk(p, ev, Check.ms(LONG_WAIT)), 1, "the timer's event");
        Check.eq(ev[0].timer, keep, "the event's timer");
        Check.eq(p.remove(u), Tables.CONFIG_OK, "the generic remove");
        Check.result(u.destroy(), Tables.CLOSE_OK, "destroy");
        Check.eq(u.handle(), 0, "the handle is NULL");
        Check.result(p.destroy(), Tables.CLOSE_OK, "destroy");
    }

    /** PL-07: modify or remove of a missing source is NOT_FOUND/ENOENT; a non-source INVALID_HANDLE/EFAULT. */
    static void missingSourceIsNotFound() {
        int NF = Tables.CONFIG_NOT_FOUND, ENOENT = Tables.ERRNO_ENOENT;
        Context ctx = new Context();
        Socket s = sock(ctx, Socket.PAIR), other = sock(ctx, Socket.PAIR);
        Timer t = new Timer();
        Poller p = new Poller();
        Check.eq(p.add(other, 0, Poller.POLLIN), Tables.CONFIG_OK, "add other");
        expectConfig(p.modify(s, Poller.POLLIN), NF, ENOENT, "modify");
        expectConfig(p.remove(s), NF, ENOENT, "remove");
        expectConfig(p.modifyFd(0, Poller.POLLIN), NF, ENOENT, "modify_fd");
        expectConfig(p.removeFd(0), NF, ENOENT, "remove_fd");
        expectConfig(p.removeTimer(t), NF, ENOENT, "remove_timer");
        expectConfig(p.modify(t, Poller.POLLIN), NF, ENOENT, "modify of a timer");
        expectConfig(p.remove(t), NF, ENOENT, "remove of a timer");
        expectConfig(p.remove(Socket.ofHandle(JUNK)), Tables.CONFIG_INVALID_HANDLE, EFAULT, "remove of a forged handle");
        expectConfig(p.remove(Socket.ofHandle(0)), Tables.CONFIG_INVALID_HANDLE, EFAULT, "remove of NULL");
        expectConfig(p.removeTimer(Timer.ofHandle(s.handle())), Tables.CONFIG_INVALID_HANDLE, EFAULT,
                     "remove_timer of a socket");
        Check.eq(p.remove(other), Tables.CONFIG_OK, "remove other");
        expectConfig(p.remove(other), NF, ENOENT, "remove other again");
        Check.eq(p.size(null), 0, "size");
        Check.result(p.destroy(), Tables.CLOSE_OK, "destroy");
        Check.result(t.destroy(), Tables.CLOSE_OK, "timer destroy");
        finish(ctx, s, other);
    }

    /** PL-08: invalid bits INVALID_ARGUMENT/EINVAL, unsupported ones NOT_SUPPORTED/ENOTSUP, nothing changed. */
    static void badAndUnsupportedBits() {
        int IA = Tables.CONFIG_INVALID_ARGUMENT, NS = Tables.CONFIG_NOT_SUPPORTED, ENOTSUP = Tables.ERRNO_ENOTSUP;
        Context ctx = new Context();
        Socket s = sock(ctx, Socket.PAIR);
        Timer t = new Timer();
        int[] fds = PlNative.pipe();
        Poller p = new Poller();
        int[] bad = {16, Poller.POLLIN | 16, 128, 0x100, (short) 0x8000, -1};
        for (int x : bad) {
            expectConfig(p.add(s, 0, x), IA, EINVAL, "add with bits " + x);
            expectConfig(p.addFd(fds[0], 0, x), IA, EINVAL, "add_fd with bits " + x);
        }
        expectConfig(p.addFd(-1, 0, Poller.POLLIN), IA, EINVAL, "add_fd of -1");
        Check.eq(p.add(s, 0, Poller.POLLIN), Tables.CONFIG_OK, "add");
        Check.eq(p.addFd(fds[0], 0, Poller.POLLIN), Tables.CONFIG_OK, "add_fd");
        Check.eq(p.addTimer(t, 0), Tables.CONFIG_OK, "add_timer");
        for (int x : bad) {
            expectConfig(p.modify(s, x), IA, EINVAL, "modify with bits " + x);
            expectConfig(p.modifyFd(fds[0], x), IA, EINVAL, "modify_fd with bits " + x);
            expectConfig(p.modify(t, x), IA, EINVAL, "modify of the timer with bits " + x);
        }
        expectConfig(Poller.ofHandle(0).add(s, 0, 128), IA, EINVAL, "the argument before the handle");
        expectConfig(Poller.ofHandle(0).add(s, 0, Poller.POLLIN), Tables.CONFIG_INVALID_HANDLE, EFAULT, "a NULL poller");
        expectConfig(Poller.ofHandle(JUNK).add(s, 0, Poller.POLLIN), Tables.CONFIG_INVALID_HANDLE, EFAULT,
                     "a forged poller");
        expectConfig(p.add(Socket.ofHandle(0), 0, Poller.POLLIN), Tables.CONFIG_INVALID_HANDLE, EFAULT, "a NULL socket");
        expectConfig(p.add(Socket.ofHandle(JUNK), 0, Poller.POLLIN), Tables.CONFIG_INVALID_HANDLE, EFAULT,
                     "a forged socket");
        expectConfig(p.addTimer(Timer.ofHandle(JUNK), 0), Tables.CONFIG_INVALID_HANDLE, EFAULT, "a forged timer");
        expectConfig(p.addTimer(Timer.ofHandle(s.handle()), 0), Tables.CONFIG_INVALID_HANDLE, EFAULT,
                     "add_timer of a socket");
        Socket closed = sock(ctx, Socket.PAIR);
        Check.result(closed.closeResult(), Tables.CLOSE_OK, "close");
        expectConfig(p.add(closed, 0, Poller.POLLIN), Tables.CONFIG_INVALID_STATE, Tables.ERRNO_ESHUTDOWN,
                     "add of a closed socket");
        Check.eq(p.size(null), 3, "nothing changed on any failure");
        Check.result(p.destroy(), Tables.CLOSE_OK, "destroy");
        Check.result(t.destroy(), Tables.CLOSE_OK, "timer destroy");
        PlNative.closeAll(fds);
        finish(ctx, s);

        ctx = new Context();
        Socket pair = sock(ctx, Socket.PAIR), dealer = sock(ctx, Socket.DEALER), router = sock(ctx, Socket.ROUTER),
               sub = sock(ctx, Socket.SUB);
        t = new Timer();
        fds = PlNative.pipe();
        p = new Poller();
        expectConfig(p.add(pair, 0, Poller.POLLIN | Poller.POLLPRI), NS, ENOTSUP, "PRI on a socket");
        expectConfig(p.add(pair, 0, Poller.POLLROUTE), NS, ENOTSUP, "ROUTE on a PAIR");
        expectConfig(p.add(dealer, 0, Poller.POLLIN | Poller.POLLROUTE), NS, ENOTSUP, "ROUTE on a DEALER");
        expectConfig(p.add(sub, 0, Poller.POLLROUTE), NS, ENOTSUP, "ROUTE on a SUB");
        expectConfig(p.addFd(fds[0], 0, Poller.POLLROUTE), NS, ENOTSUP, "ROUTE on an fd");
        Check.eq(p.add(router, 0, Poller.POLLIN | Poller.POLLROUTE), Tables.CONFIG_OK, "ROUTE on a ROUTER");
        Check.eq(p.addTimer(t, 0), Tables.CONFIG_OK, "add_timer");
        expectConfig(p.modify(t, Poller.POLLOUT), NS, ENOTSUP, "OUT on a timer");
        expectConfig(p.modify(t, Poller.POLLIN | Poller.POLLPRI), NS, ENOTSUP, "PRI on a timer");
        expectConfig(p.modify(t, Poller.POLLROUTE), NS, ENOTSUP, "ROUTE on a timer");
        Check.eq(p.modify(t, 0), Tables.CONFIG_OK, "a timer's zero mask");
        Check.eq(p.modify(t, Poller.POLLIN | Poller.POLLERR), Tables.CONFIG_OK, "a timer's IN|ERR");
        Check.eq(p.add(pair, 0, Poller.POLLIN), Tables.CONFIG_OK, "add pair");
        expectConfig(p.modify(pair, Poller.POLLROUTE), NS, ENOTSUP, "modify to ROUTE");
        Check.eq(waitOk(p, new Poller.Event[4], 0), 0, "pair kept IN only: no OUT reported");
        Check.eq(p.size(null), 3, "size");
        Check.result(p.destroy(), Tables.CLOSE_OK, "destroy");
        Check.result(t.destroy(), Tables.CLOSE_OK, "timer destroy");
        PlNative.closeAll(fds);
        finish(ctx, pair, dealer, router, sub);
    }

    /** PL-09: COMPLETION on PAIR, DEALER, ROUTER, STREAM; EINVAL elsewhere and in zlink_poll; REQUEST and WRITABLE records. */
    static void completionBitSourcesAndKinds() {
        int IA = Tables.CONFIG_INVALID_ARGUMENT, C = Poller.POLLCOMPLETION;
        Context ctx = new Context();
        Poller p = new Poller();
        int[] types = {Socket.PAIR, Socket.DEALER, Socket.ROUTER, Socket.STREAM};
        Socket[] socks = new Socket[4];
        for (int i = 0; i < 4; i++) {
            socks[i] = sock(ctx, types[i]);
            Check.eq(p.add(socks[i], 0, C), Tables.CONFIG_OK, "add alone, type " + types[i]);
            Check.eq(p.modify(socks[i], Poller.POLLIN), Tables.CONFIG_OK, "modify off");
            Check.eq(p.modify(socks[i], Poller.POLLIN | Poller.POLLOUT | C), Tables.CONFIG_OK, "modify on, OR'ed");
            Check.eq(p.remove(socks[i]), Tables.CONFIG_OK, "remove");
            Check.eq(p.add(socks[i], 0, Poller.POLLIN | C), Tables.CONFIG_OK, "add OR'ed");
        }
        Check.eq(waitOk(p, new Poller.Event[8], 0), 0, "nothing queued: no COMPLETION readiness");
        Socket pub = sock(ctx, Socket.PUB), sub = sock(ctx, Socket.SUB);
        Timer t = new Timer();
        int[] fds = PlNative.pipe();
        expectConfig(p.add(pub, 0, C), IA, EINVAL, "COMPLETION on a PUB");
        expectConfig(p.add(sub, 0, Poller.POLLIN | C), IA, EINVAL, "COMPLETION on a SUB");
        expectConfig(p.addFd(fds[0], 0, C), IA, EINVAL, "COMPLETION on an fd");
        expectConfig(p.add(t, 0, C), IA, EINVAL, "COMPLETION on a timer (add)");
        Check.eq(p.addTimer(t, 0), Tables.CONFIG_OK, "add_timer");
        expectConfig(p.modify(t, C), IA, EINVAL, "COMPLETION on a timer (modify)");
        Check.eq(p.addFd(fds[0], 0, Poller.POLLIN), Tables.CONFIG_OK, "add_fd");
        expectConfig(p.modifyFd(fds[0], Poller.POLLIN | C), IA, EINVAL, "COMPLETION on an fd (modify)");
        Check.result(p.destroy(), Tables.CLOSE_OK, "destroy");
        Check.result(t.destroy(), Tables.CLOSE_OK, "timer destroy");
        PlNative.closeAll(fds);
        finish(ctx, socks[0], socks[1], socks[2], socks[3], pub, sub);

        ctx = new Context();
        Socket s = sock(ctx, Socket.DEALER);
        fds = PlNative.pipe();
        pollFails(new Poller.Item[] {new Poller.Item(s, C)}, 0, IA, EINVAL, "zlink_poll: COMPLETION alone");
        pollFails(new Poller.Item[] {new Poller.Item(s, Poller.POLLIN | C)}, 0, IA, EINVAL, "zlink_poll: OR'ed");
        pollFails(new Poller.Item[] {Poller.Item.fd(fds[0], C)}, 0, IA, EINVAL, "zlink_poll: on an fd");
        PlNative.closeAll(fds);
        finish(ctx, s);

        ctx = new Context();
        Socket[] dr = PlCases.dealerRouter(ctx);
        Socket d = dr[0], r = dr[1];
        p = new Poller();
        Check.eq(p.add(d, 11, C), Tables.CONFIG_OK, "add d");
        long id = PlCases.requestAnswered(d, r, "q");
        PlCases.expectEvent(p, 11, Check.ms(LONG_WAIT), C);
        PlCases.expectRecord(d, id, "q");
        PlCases.expectNoRecord(d);
        Check.eq(waitOk(p, new Poller.Event[2], 0), 0, "no event once read");
        // WRITABLE: a refused PAIR send whose target recovers.
        Socket pa = sock(ctx, Socket.PAIR), pb = sock(ctx, Socket.PAIR);
        pa.option(Socket.SNDHWM, 100L);
        String ep = "inproc://pl09-" + ProcessHandle.current().pid();
        pa.bind(ep);
        pb.connect(ep);
        long[] token = new long[1];
        Check.result(PlCases.sendDontwait(pa, "fills the queue", token), Tables.SUBMIT_OK, "the first send");
        Check.result(PlCases.sendDontwait(pa, "refused", token), Tables.SUBMIT_BACKPRESSURED, "the refused send");
        Check.that(token[0] != 0, "a wait token");
        Check.eq(p.add(pa, 12, C), Tables.CONFIG_OK, "add pa");
        expectStr(pb, "fills the queue");
        PlCases.expectEvent(p, 12, Check.ms(LONG_WAIT), C);
        PlCases.expectWritable(pa, token[0]);
        PlCases.expectNoRecord(pa);
        Check.result(p.destroy(), Tables.CLOSE_OK, "destroy");
        finish(ctx, pa, pb, d, r);
    }

    // ------------------------------------------------------ wait and events

    /** PL-12: platform POLLPRI on an fd is ZLINK_POLLPRI; POLLERR and POLLHUP are ZLINK_POLLERR. */
    static void fdPriAndErrorBits() {
        Poller p = new Poller();
        Poller.Event[] ev = new Poller.Event[4];
        int[] cs = PlNative.tcpPair();
        int c = cs[0], s = cs[1];
        Check.eq(p.addFd(s, 5, Poller.POLLPRI), Tables.CONFIG_OK, "add_fd PRI");
        Check.eq(waitOk(p, ev, 0), 0, "no urgent data yet");
        Check.eq(PlNative.writeByte(c, true), 1, "send MSG_OOB");
        Check.eq(waitOk(p, ev, Check.ms(LONG_WAIT)), 1, "the urgent data's event");
        Check.eq(ev[0].sourceKind, Poller.SOURCE_FD, "source kind");
        Check.eq(ev[0].fd, s, "fd");
        Check.that((ev[0].events & Poller.POLLPRI) != 0, "PRI set: " + ev[0].events);
        Check.eq(ev[0].events & ~(Poller.POLLPRI | Poller.POLLIN), 0, "no other bits");
        Check.eq(p.removeFd(s), Tables.CONFIG_OK, "remove_fd");
        PlNative.closeAll(c, s);

        int[] fds = PlNative.pipe();
        PlNative.closeAll(fds[0]);
        Check.eq(p.addFd(fds[1], 5, Poller.POLLOUT), Tables.CONFIG_OK, "add_fd of a pipe without reader");
        Check.eq(waitOk(p, ev, 0), 1, "its event");
        Check.eq(ev[0].fd, fds[1], "fd");
        Check.that((ev[0].events & Poller.POLLERR) != 0, "ERR set: " + ev[0].events);
        Check.eq(ev[0].events & ~(Poller.POLLERR | Poller.POLLOUT), 0, "no other bits");
        Check.eq(p.modifyFd(fds[1], Poller.POLLERR), Tables.CONFIG_OK, "modify_fd to ERR only");
        Check.eq(waitOk(p, ev, 0), 1, "ERR with an ERR-only mask");
        Check.eq(ev[0].events, Poller.POLLERR, "bits");
        Check.eq(p.removeFd(fds[1]), Tables.CONFIG_OK, "remove_fd");
        PlNative.closeAll(fds[1]);

        fds = PlNative.pipe();
        PlNative.closeAll(fds[1]);
        Check.eq(p.addFd(fds[0], 5, Poller.POLLIN), Tables.CONFIG_OK, "add_fd of a pipe without writer");
        Check.eq(waitOk(p, ev, 0), 1, "its event");
        Check.eq(ev[0].events, Poller.POLLERR, "HUP is ERR");
        Check.eq(p.removeFd(fds[0]), Tables.CONFIG_OK, "remove_fd");
        PlNative.closeAll(fds[0]);
        Check.result(p.destroy(), Tables.CLOSE_OK, "destroy");
    }

    /** PL-13: socket, fd and timer are set for their own kind only; user values come back unchanged. */
    static void eventFieldsPerKind() {
        Context ctx = new Context();
        Socket[] ab = PlCases.pairLink(ctx, "inproc");
        Socket a = ab[0], bs = ab[1];
        a.send(b("x"));
        Timer t = new Timer();
        Check.eq(t.start(1_000_000L, 1), Tables.CONFIG_OK, "timer start");
        int[] fds = PlNative.pipe();
        PlNative.write(fds[1]);
        long udSock = 0x5eed0001L, udFd = -7L;
        Poller p = new Poller();
        Check.eq(p.addTimer(t, 0), Tables.CONFIG_OK, "add_timer with user 0 (NULL)");
        Poller.Event[] ev = new Poller.Event[8];
        Check.eq(waitOk(p, ev, Check.ms(LONG_WAIT)), 1, "the timer alone");
        Check.eq(p.add(bs, udSock, Poller.POLLIN), Tables.CONFIG_OK, "add");
        Check.eq(p.addFd(fds[0], udFd, Poller.POLLIN), Tables.CONFIG_OK, "add_fd");
        Check.eq(waitOk(p, ev, 0), 3, "three sources ready");
        int seen = 0;
        for (int i = 0; i < 3; i++) {
            Poller.Event e = ev[i];
            Check.eq(e.events, Poller.POLLIN, "event " + i + "'s bits");
            switch (e.sourceKind) {
            case Poller.SOURCE_SOCKET:
                Check.that(e.socket == bs.handle() && e.user == udSock && e.timer == 0 && e.fd == -1,
                           "the socket event's fields");
                seen |= 1;
                break;
            case Poller.SOURCE_FD:
                Check.that(e.fd == fds[0] && e.user == udFd && e.socket == 0 && e.timer == 0, "the fd event's fields");
                seen |= 2;
                break;
            case Poller.SOURCE_TIMER:
                Check.that(e.timer == t.handle() && e.user == 0 && e.socket == 0 && e.fd == -1,
                           "the timer event's fields");
                seen |= 4;
                break;
            default:
                throw Check.fail("unknown source kind " + e.sourceKind);
            }
        }
        Check.eq(seen, 7, "one event of each kind");
        expectStr(bs, "x");
        PlNative.read(fds[0]);
        Check.that(t.recv(Socket.DONTWAIT) >= 1, "the timer's fire count");
        Check.eq(waitOk(p, ev, 0), 0, "drained");
        Check.result(p.destroy(), Tables.CLOSE_OK, "destroy");
        Check.result(t.destroy(), Tables.CLOSE_OK, "timer destroy");
        PlNative.closeAll(fds);
        finish(ctx, a, bs);
    }

    /** PL-14: the event array is the caller's: only the returned entries are written, and they hold values. */
    static void eventArrayIsCallerOwned() {
        int[] fds = PlNative.pipe();
        PlNative.write(fds[1]);
        long ud = 0x0DDBA11L;
        Poller p = new Poller();
        Check.eq(p.addFd(fds[0], ud, Poller.POLLIN), Tables.CONFIG_OK, "add_fd");
        Poller.Event[] ev = new Poller.Event[4];
        for (int i = 0; i < 4; i++) {
            ev[i] = new Poller.Event();
            ev[i].sourceKind = ev[i].fd = ev[i].events = 0xA5A5;
            ev[i].socket = ev[i].timer = ev[i].user = 0xA5A5A5A5A5A5A5A5L;
        }
        Poller.Event[] before = ev.clone();
        Check.eq(waitOk(p, ev, 0), 1, "one event");
        for (int i = 1; i < 4; i++) {
            Check.that(ev[i] == before[i], "entry " + i + " is the caller's object, left alone");
            Check.that(ev[i].sourceKind == 0xA5A5 && ev[i].fd == 0xA5A5 && ev[i].events == 0xA5A5
                       && ev[i].socket == 0xA5A5A5A5A5A5A5A5L && ev[i].timer == 0xA5A5A5A5A5A5A5A5L
                       && ev[i].user == 0xA5A5A5A5A5A5A5A5L, "entry " + i + " unwritten");
        }
        Poller.Event e = ev[0];
        Check.result(p.destroy(), Tables.CLOSE_OK, "destroy");
        Check.eq(e.sourceKind, Poller.SOURCE_FD, "after the destroy: source kind");
        Check.eq(e.fd, fds[0], "fd");
        Check.that(e.user == ud && e.socket == 0 && e.timer == 0 && e.events == Poller.POLLIN, "user, socket, timer, bits");
        PlNative.closeAll(fds);
    }

    // ---------------------------------------------------------- lifetime

    /** PL-24: zlink_poller_size is the registration count, or -1 with error_out. */
    static void sizeCountsRegistrations() {
        Context ctx = new Context();
        Socket s = sock(ctx, Socket.PAIR);
        Timer t = new Timer();
        Poller p = new Poller();
        int[] err = {-1};
        Check.eq(p.size(err), 0, "empty");
        Check.result(err[0], Tables.CONFIG_OK, "error_out");
        Check.eq(p.add(s, 0, 0), Tables.CONFIG_OK, "a zero mask is a registration");
        Check.eq(p.addFd(0, 0, Poller.POLLIN), Tables.CONFIG_OK, "add_fd");
        Check.eq(p.addTimer(t, 0), Tables.CONFIG_OK, "add_timer");
        Check.eq(p.size(err), 3, "three");
        Check.eq(p.removeFd(0), Tables.CONFIG_OK, "remove_fd");
        Check.eq(p.size(err), 2, "two");
        err[0] = Tables.CONFIG_OK;
        Check.eq(Poller.ofHandle(JUNK).size(err), -1, "a forged poller");
        Check.result(err[0], Tables.CONFIG_INVALID_HANDLE, "error_out");
        Check.eq(Socket.lastErrno(), EFAULT, "errno");
        Check.eq(Poller.ofHandle(0).size(err), -1, "a NULL poller");
        Check.result(err[0], Tables.CONFIG_INVALID_HANDLE, "error_out");
        Check.result(p.destroy(), Tables.CLOSE_OK, "destroy");
        Check.result(t.destroy(), Tables.CLOSE_OK, "timer destroy");
        finish(ctx, s);
    }

    /** PL-25: zlink_poller_wait's count, 0 on timeout, -1 on failure; NULL events or capacity <= 0 EINVAL. */
    static void waitResults(int timeoutMs) throws Exception {
        long quiet = Check.ms(timeoutMs);
        int[] fds = PlNative.pipe();
        Poller p = new Poller();
        Check.eq(p.addFd(fds[0], 0, Poller.POLLIN), Tables.CONFIG_OK, "add_fd");
        Poller.Event[] ev = new Poller.Event[2];
        int IA = Tables.CONFIG_INVALID_ARGUMENT;
        waitFails(p, null, 2, 0, IA, EINVAL, "NULL events");
        waitFails(p, ev, 0, 0, IA, EINVAL, "capacity 0");
        waitFails(p, ev, -3, -1, IA, EINVAL, "capacity -3");
        waitFails(p, new Poller.Event[0], 0, 0, IA, EINVAL, "an empty array");
        waitFails(Poller.ofHandle(0), null, 0, 0, IA, EINVAL, "arguments before the handle");
        waitFails(Poller.ofHandle(0), ev, 2, 0, Tables.CONFIG_INVALID_HANDLE, EFAULT, "a NULL poller");
        long t0 = now();
        Check.eq(waitOk(p, ev, 0), 0, "timeout 0");
        Check.that(now() - t0 < PlCases.EDGE_BOUND_MS, "at once");
        t0 = now();
        Check.eq(waitOk(p, ev, quiet), 0, "timeout " + quiet);
        Check.that(now() - t0 >= quiet, "after the timeout");
        PlNative.write(fds[1]);
        Check.eq(waitOk(p, ev, -1), 1, "the count of events");
        PlNative.read(fds[0]);
        Poller.Wait[] got = new Poller.Wait[1];
        Thread w = new Thread(() -> got[0] = p.await(4, -7));
        w.start();
        Check.eventually(() -> p.size() == -Tables.CONFIG_BUSY, 5000, "the -7 wait is active");
        PlNative.write(fds[1]);
        w.join(Check.ms(10000));
        Check.that(!w.isAlive(), "the -7 wait returned at the edge");
        Check.that(got[0].count == 1 && got[0].events[0].sourceKind == Poller.SOURCE_FD
                   && got[0].events[0].events == Poller.POLLIN, "the -7 wait's event");
        Check.result(p.destroy(), Tables.CLOSE_OK, "destroy");
        PlNative.closeAll(fds);
    }

    /** PL-27: error_out of zlink_poll, zlink_poller_size and zlink_poller_wait may be NULL (null); errno tells. */
    static void errorOutMayBeNull() {
        int[] fds = PlNative.pipe();
        PlNative.write(fds[1]);
        Poller p = new Poller();
        Poller.Event[] ev = new Poller.Event[2];
        Check.eq(p.size(null), 0, "size");
        Check.eq(p.addFd(fds[0], 0, Poller.POLLIN), Tables.CONFIG_OK, "add_fd");
        Check.eq(p.wait(ev, 0, null), 1, "wait");
        Check.eq(Poller.ofHandle(0).size(null), -1, "size of NULL");
        Check.eq(Socket.lastErrno(), EFAULT, "errno");
        Check.eq(p.wait(null, 2, 0, null), -1, "wait with NULL events");
        Check.eq(Socket.lastErrno(), EINVAL, "errno");
        Check.result(p.destroy(), Tables.CLOSE_OK, "destroy");
        Poller.Item[] items = {Poller.Item.fd(fds[0], Poller.POLLIN), Poller.Item.fd(fds[1], 0)};
        Check.eq(Poller.poll(items, 0, null), 1, "zlink_poll");
        Check.eq(Poller.poll(null, 3, 0, null), -1, "zlink_poll of NULL, 3");
        Check.eq(Socket.lastErrno(), EINVAL, "errno");
        long t0 = now();
        items[0].events = 0;
        Check.eq(Poller.poll(items, -1, null), 0, "nothing to wait for");
        Check.eq(Poller.poll(null, 0, -1, null), 0, "NULL, 0");
        Check.that(now() - t0 < PlCases.EDGE_BOUND_MS, "at once");
        PlNative.closeAll(fds);
    }
}
