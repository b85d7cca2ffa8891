package io.zlink;

/**
 * A Core poller (zlink_poller_*) over sockets, file descriptors and
 * timers. Registrations carry a long user value handed back by wait().
 * The methods return the C result (Tables.CONFIG_*) as it came.
 */
public final class Poller implements AutoCloseable {
    public static final int POLLIN = 1, POLLOUT = 2, POLLERR = 4, POLLPRI = 8,
                            POLLCOMPLETION = 32, POLLROUTE = 64;
    public static final int SOURCE_SOCKET = 1, SOURCE_FD = 2, SOURCE_TIMER = 3;

    final long handle;
    private boolean closed;

    public Poller() {
        ZLink.load();
        long h = Native.pollerNew();
        if (h == 0)
            throw new ZLinkException("poller_new", Tables.CONFIG_INTERNAL, Native.lastErrno());
        handle = h;
    }

    public int add(Socket s, long user, int events) { return Native.pollerCtl(0, handle, s.handle, 0, user, events); }
    public int modify(Socket s, int events) { return Native.pollerCtl(1, handle, s.handle, 0, 0, events); }
    public int remove(Socket s) { return Native.pollerCtl(2, handle, s.handle, 0, 0, 0); }
    public int addFd(int fd, long user, int events) { return Native.pollerCtl(3, handle, 0, fd, user, events); }
    public int modifyFd(int fd, int events) { return Native.pollerCtl(4, handle, 0, fd, 0, events); }
    public int removeFd(int fd) { return Native.pollerCtl(5, handle, 0, fd, 0, 0); }
    public int addTimer(Timer t, long user) { return Native.pollerCtl(6, handle, t.handle, 0, user, 0); }
    public int removeTimer(Timer t) { return Native.pollerCtl(7, handle, t.handle, 0, 0, 0); }

    public int size() {
        int[] res = new int[1];
        int n = Native.pollerSize(handle, res);
        return n < 0 ? -res[0] : n;
    }

    /** One ready source. */
    public static final class Event {
        public final int sourceKind;
        public final long user;
        public final int fd;
        public final int events;

        Event(long[] v, int i) {
            sourceKind = (int) v[4 * i];
            user = v[4 * i + 1];
            fd = (int) v[4 * i + 2];
            events = (int) v[4 * i + 3];
        }
    }

    /** The result of one wait: the events, or the failure's result. */
    public static final class Wait {
        public final int count;
        public final int result;
        public final Event[] events;

        Wait(int count, int result, Event[] events) {
            this.count = count;
            this.result = result;
            this.events = events;
        }
    }

    /** zlink_poller_wait for up to capacity events (timeout < 0: no limit). */
    public Wait await(int capacity, long timeoutMs) {
        long[] out = new long[4 * Math.max(1, Math.min(capacity, 256))];
        int[] res = new int[1];
        int n = Native.pollerWait(handle, capacity, timeoutMs, out, res);
        Event[] ev = new Event[Math.max(0, n)];
        for (int i = 0; i < ev.length; i++)
            ev[i] = new Event(out, i);
        return new Wait(n, n < 0 ? res[0] : 0, ev);
    }

    public synchronized int destroy() {
        int r = Native.pollerDestroy(handle);
        if (r == 0)
            closed = true;
        return r;
    }

    @Override
    public synchronized void close() {
        if (!closed)
            destroy();
    }
}
