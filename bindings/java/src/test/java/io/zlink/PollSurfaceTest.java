package io.zlink;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The poll surface through the public API: zlink_poll items and revents,
 * the caller-owned event array and its fields, error_out and errno as C
 * reports them (null arrays and outputs passed on as NULL), destroy
 * setting the handle to NULL, raw-handle views.
 */
class PollSurfaceTest {
    private static final long JUNK = 0x00007ffc0000a000L; // no handle carries this value
    private static int seq;

    private static byte[] b(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    /** a bound, c connected to it on inproc (both closed by try-with-resources, before their context). */
    private static void link(Socket a, Socket c) {
        a.option(Socket.LINGER, 0);
        c.option(Socket.LINGER, 0);
        String ep = "inproc://poll-surface-" + (seq++);
        a.bind(ep);
        c.connect(ep);
    }

    @Test
    void pollWritesEveryItemsReventsAsCLeftThem() {
        try (Context ctx = new Context(); Socket a = ctx.socket(Socket.PAIR); Socket c = ctx.socket(Socket.PAIR)) {
            link(a, c);
            Poller.Item[] items = {new Poller.Item(a, Poller.POLLIN), new Poller.Item(c, Poller.POLLOUT),
                                   new Poller.Item(a, 0)};
            items[0].revents = 0x7777;
            items[2].revents = 0x5555;
            int[] err = {-1};
            assertEquals(1, Poller.poll(items, 0, err), "c can send");
            assertEquals(Tables.CONFIG_OK, err[0]);
            assertEquals(0, items[0].revents, "cleared on entry by C");
            assertEquals(Poller.POLLOUT, items[1].revents);
            assertEquals(0, items[2].revents, "cleared on an item without events too");
            c.send(b("x"));
            assertEquals(2, Poller.poll(items, 5000, null));
            assertEquals(Poller.POLLIN, items[0].revents);
            assertEquals(1, Poller.poll(items, 1, 0, null), "count 1: only the first item");
            assertEquals(Poller.POLLIN, items[0].revents);
            assertEquals(Poller.POLLOUT, items[1].revents, "an item beyond the count is not passed");
            assertTrue(a.recv(0).ok());
        }
    }

    @Test
    void pollFailuresAreCsResultAndErrno() {
        try (Context ctx = new Context(); Socket s = ctx.socket(Socket.PAIR)) {
            int[] err = {0};
            assertEquals(-1, Poller.poll(null, 1, 0, err), "NULL items with a count");
            assertEquals(Tables.CONFIG_INVALID_ARGUMENT, err[0]);
            assertEquals(Tables.ERRNO_EINVAL, Socket.lastErrno());
            Poller.Item[] one = {new Poller.Item(s, Poller.POLLIN)};
            err[0] = 0;
            assertEquals(-1, Poller.poll(one, -1, 0, err), "a negative count");
            assertEquals(Tables.CONFIG_INVALID_ARGUMENT, err[0]);
            assertEquals(-1, Poller.poll(new Poller.Item[] {new Poller.Item(JUNK, -1, Poller.POLLIN)}, 0, err));
            assertEquals(Tables.CONFIG_INVALID_HANDLE, err[0]);
            assertEquals(Tables.ERRNO_EFAULT, Socket.lastErrno());
            assertEquals(-1, Poller.poll(new Poller.Item[] {new Poller.Item(s, Poller.POLLCOMPLETION)}, 0, null),
                         "COMPLETION in an item; error_out NULL");
            assertEquals(Tables.ERRNO_EINVAL, Socket.lastErrno());
            assertEquals(0, Poller.poll(null, 0, -1, null), "NULL, 0: nothing to wait for");
            assertThrows(IndexOutOfBoundsException.class, () -> Poller.poll(one, 2, 0, null));
        }
    }

    @Test
    void waitWritesOnlyTheReturnedEntriesWithTheirFields() {
        try (Context ctx = new Context(); Timer t = new Timer(); Poller p = new Poller();
             Socket a = ctx.socket(Socket.PAIR); Socket c = ctx.socket(Socket.PAIR)) {
            link(a, c);
            assertEquals(Tables.CONFIG_OK, p.addTimer(t, -5));
            assertEquals(Tables.CONFIG_OK, t.start(1_000_000L, 1));
            Poller.Event[] ev = new Poller.Event[3];
            assertEquals(1, p.wait(ev, 5000, null), "the timer");
            assertEquals(Poller.SOURCE_TIMER, ev[0].sourceKind);
            assertEquals(t.handle(), ev[0].timer);
            assertEquals(0, ev[0].socket);
            assertEquals(-1, ev[0].fd);
            assertEquals(-5, ev[0].user);
            assertEquals(Poller.POLLIN, ev[0].events);
            assertEquals(Tables.CONFIG_OK, p.add(a, 77, Poller.POLLIN));
            c.send(b("x"));
            Poller.Event mark = new Poller.Event();
            ev[1] = mark;
            ev[2] = mark;
            assertEquals(1, p.wait(ev, 1, 5000, null), "capacity 1 of 2 ready sources");
            assertSame(mark, ev[1], "beyond the count: the caller's entry");
            assertSame(mark, ev[2]);
            int[] err = {-1};
            assertEquals(2, p.wait(ev, 0, err));
            assertEquals(Tables.CONFIG_OK, err[0]);
            Poller.Event s = ev[0].sourceKind == Poller.SOURCE_SOCKET ? ev[0] : ev[1];
            assertEquals(Poller.SOURCE_SOCKET, s.sourceKind);
            assertEquals(a.handle(), s.socket);
            assertEquals(0, s.timer);
            assertEquals(-1, s.fd);
            assertEquals(77, s.user);
            assertSame(mark, ev[2]);
            assertTrue(a.recv(0).ok());
            assertTrue(t.recv(0) >= 1);
            assertEquals(Tables.CONFIG_OK, p.removeTimer(t));
        }
    }

    @Test
    void waitArgumentsGoToC() {
        try (Poller p = new Poller()) {
            int[] err = {0};
            assertEquals(-1, p.wait(null, 2, 0, err), "NULL events");
            assertEquals(Tables.CONFIG_INVALID_ARGUMENT, err[0]);
            assertEquals(Tables.ERRNO_EINVAL, Socket.lastErrno());
            err[0] = 0;
            assertEquals(-1, p.wait(new Poller.Event[0], 0, err), "an empty array: capacity 0");
            assertEquals(Tables.CONFIG_INVALID_ARGUMENT, err[0]);
            err[0] = 0;
            assertEquals(-1, p.wait(new Poller.Event[2], -3, -1, err), "capacity -3 (and no limit: not waited)");
            assertEquals(Tables.CONFIG_INVALID_ARGUMENT, err[0]);
            assertEquals(-1, p.wait(null, 0, null), "error_out NULL");
            assertEquals(Tables.ERRNO_EINVAL, Socket.lastErrno());
            assertEquals(-1, Poller.ofHandle(0).wait(new Poller.Event[1], 0, err), "a NULL poller");
            assertEquals(Tables.CONFIG_INVALID_HANDLE, err[0]);
            assertThrows(IndexOutOfBoundsException.class, () -> p.wait(new Poller.Event[1], 2, 0, null));
        }
    }

    @Test
    void sizeReportsTheCountOrMinusOneWithErrorOut() {
        try (Context ctx = new Context(); Poller p = new Poller(); Socket s = ctx.socket(Socket.PAIR)) {
            int[] err = {-1};
            assertEquals(0, p.size(err));
            assertEquals(Tables.CONFIG_OK, err[0]);
            assertEquals(Tables.CONFIG_OK, p.add(s, 0, 0));
            assertEquals(1, p.size(null));
            assertEquals(-1, Poller.ofHandle(JUNK).size(err));
            assertEquals(Tables.CONFIG_INVALID_HANDLE, err[0]);
            assertEquals(Tables.ERRNO_EFAULT, Socket.lastErrno());
            assertEquals(-1, Poller.ofHandle(0).size(null));
            assertEquals(Tables.ERRNO_EFAULT, Socket.lastErrno());
            assertEquals(Tables.CONFIG_OK, p.remove(s));
        }
    }

    @Test
    void destroySetsTheHandleToNullAsCDoes() {
        Poller p = new Poller();
        long h = p.handle();
        assertNotEquals(0, h);
        Poller view = Poller.ofHandle(h);
        view.close(); // a view does not own the poller
        assertEquals(0, p.size(null));
        assertEquals(Tables.CLOSE_OK, p.destroy());
        assertEquals(0, p.handle());
        assertEquals(Tables.CLOSE_INVALID_HANDLE, p.destroy(), "the NULL it left");
        assertEquals(Tables.ERRNO_EFAULT, Socket.lastErrno());
        assertEquals(Tables.CLOSE_INVALID_HANDLE, view.destroy(), "the old value is stale");
        assertEquals(h, view.handle(), "a failed destroy leaves the value");
        p.close();

        try (Poller q = new Poller()) {
            Timer t = new Timer();
            long th = t.handle();
            assertEquals(Tables.CONFIG_OK, q.addTimer(t, 0));
            assertEquals(Tables.CLOSE_BUSY, t.destroy());
            assertEquals(Tables.ERRNO_EBUSY, Socket.lastErrno());
            assertEquals(th, t.handle(), "busy: unchanged");
            assertEquals(Tables.CONFIG_OK, q.remove(t), "the generic remove of a timer");
            assertEquals(Tables.CLOSE_OK, t.destroy());
            assertEquals(0, t.handle());
            t.close();
            assertEquals(Tables.CONFIG_INVALID_HANDLE, q.addTimer(Timer.ofHandle(th), 0), "a destroyed timer");
        }
    }
}
