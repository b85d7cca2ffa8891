package io.zlink;

/**
 * A Core poller (zlink_poller_*) over sockets, file descriptors and
 * timers, and the one-shot zlink_poll. Registrations carry a long user
 * value handed back in each event (C's user_data). The methods return the
 * C result (Tables.CONFIG_*) as it came; zlink_errno() (Socket.lastErrno)
 * tells the errno right after. An int[] errorOut may be null: the binding
 * then passes NULL as C's error_out.
 */
public final class Poller implements AutoCloseable {
    public static final int POLLIN = 1, POLLOUT = 2, POLLERR = 4, POLLPRI = 8,
                            POLLCOMPLETION = 32, POLLROUTE = 64;
    public static final int SOURCE_SOCKET = 1, SOURCE_FD = 2, SOURCE_TIMER = 3;

    /** The C handle; zlink_poller_destroy sets it to 0 (NULL) on success. */
    volatile long handle;
    private final boolean owned;

    public Poller() {
        ZLink.load();
        long h = Native.pollerNew();
        if (h == 0)
            throw new ZLinkException("poller_new", Tables.CONFIG_INTERNAL, Native.lastErrno());
        handle = h;
        owned = true;
    }

    private Poller(long raw) {
        handle = raw;
        owned = false;
    }

    /** A view of a raw poller handle value, unchecked (C decides what it is); close() leaves it alone. */
    public static Poller ofHandle(long raw) {
        ZLink.load();
        return new Poller(raw);
    }

    /** The raw handle value (0 once destroyed). */
    public long handle() { return handle; }

    public int add(Socket s, long user, int events) { return Native.pollerCtl(0, handle, s.handle, 0, user, events); }
    public int modify(Socket s, int events) { return Native.pollerCtl(1, handle, s.handle, 0, 0, events); }
    public int remove(Socket s) { return Native.pollerCtl(2, handle, s.handle, 0, 0, 0); }
    /** The generic zlink_poller_add / modify / remove with a timer as the source. */
    public int add(Timer t, long user, int events) { return Native.pollerCtl(0, handle, t.handle, 0, user, events); }
    public int modify(Timer t, int events) { return Native.pollerCtl(1, handle, t.handle, 0, 0, events); }
    public int remove(Timer t) { return Native.pollerCtl(2, handle, t.handle, 0, 0, 0); }
    public int addFd(int fd, long user, int events) { return Native.pollerCtl(3, handle, 0, fd, user, events); }
    public int modifyFd(int fd, int events) { return Native.pollerCtl(4, handle, 0, fd, 0, events); }
    public int removeFd(int fd) { return Native.pollerCtl(5, handle, 0, fd, 0, 0); }
    public int addTimer(Timer t, long user) { return Native.pollerCtl(6, handle, t.handle, 0, user, 0); }
    public int removeTimer(Timer t) { return Native.pollerCtl(7, handle, t.handle, 0, 0, 0); }

    /** zlink_poller_size: the count, or -1 with errorOut[0] (if given) the result. */
    public int size(int[] errorOut) {
        return Native.pollerSize(handle, errorOut);
    }

    /** The count, or -result on failure. */
    public int size() {
        int[] res = new int[1];
        int n = Native.pollerSize(handle, res);
        return n < 0 ? -res[0] : n;
    }

    /** One ready source (zlink_poller_event_t by value: no pointer into the library). */
    public static final class Event {
        public int sourceKind;
        /** The socket's raw handle (SOCKET events), else 0. */
        public long socket;
        /** The FD (FD events), else -1. */
        public int fd;
        /** The timer's raw handle (TIMER events), else 0. */
        public long timer;
        /** The user value given at registration. */
        public long user;
        public int events;
    }

    /**
     * zlink_poller_wait into the caller's array, capacity = its length
     * (null: C's NULL events, capacity 0). See wait(events, capacity, ...).
     */
    public int wait(Event[] events, long timeoutMs, int[] errorOut) {
        return wait(events, events == null ? 0 : events.length, timeoutMs, errorOut);
    }

    /**
     * zlink_poller_wait(events, capacity): the count n (entries [0, n) are
     * written, the others left as they were), 0 on timeout, or -1 with
     * errorOut[0] (if given) the result; timeoutMs < 0 waits without limit.
     * null events and any capacity go to C as they are (C answers EINVAL
     * for NULL or capacity <= 0); a capacity beyond a non-null array's
     * length is IndexOutOfBoundsException (C could not see the overrun).
     */
    public int wait(Event[] events, int capacity, long timeoutMs, int[] errorOut) {
        if (events != null && capacity > events.length)
            throw new IndexOutOfBoundsException("capacity " + capacity + " > events.length " + events.length);
        long[] out = events == null ? null : new long[6 * Math.max(capacity, 1)];
        int n = Native.pollerWait(handle, capacity, timeoutMs, out, errorOut);
        for (int i = 0; i < n; i++) {
            Event e = events[i] = new Event();
            e.sourceKind = (int) out[6 * i];
            e.socket = out[6 * i + 1];
            e.fd = (int) out[6 * i + 2];
            e.timer = out[6 * i + 3];
            e.user = out[6 * i + 4];
            e.events = (int) out[6 * i + 5];
        }
        return n;
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
        Event[] ev = new Event[capacity];
        int[] res = new int[1];
        int n = wait(ev, timeoutMs, res);
        return new Wait(n, n < 0 ? res[0] : 0, java.util.Arrays.copyOf(ev, Math.max(0, n)));
    }

    /** One item of zlink_poll (zlink_pollitem_t): a socket or an FD, its events, its revents. */
    public static final class Item {
        public long socket;
        public int fd;
        public int events;
        /** Written by zlink_poll (which clears it on entry), failures included. */
        public int revents;

        /** An item of a raw socket handle value (0: an FD item). */
        public Item(long socket, int fd, int events) {
            this.socket = socket;
            this.fd = fd;
            this.events = events;
        }

        public Item(Socket s, int events) { this(s.handle, -1, events); }

        public static Item fd(int fd, int events) { return new Item(0, fd, events); }
    }

    /** zlink_poll over all of items (null: C's NULL, count 0). See poll(items, count, ...). */
    public static int poll(Item[] items, long timeoutMs, int[] errorOut) {
        return poll(items, items == null ? 0 : items.length, timeoutMs, errorOut);
    }

    /**
     * zlink_poll(items, count): the number of items with nonzero revents,
     * 0 on timeout, or -1 with errorOut[0] (if given) the result. null
     * items and any count go to C as they are (C answers EINVAL for NULL
     * with a count, or a negative count); a count beyond a non-null
     * array's length is IndexOutOfBoundsException.
     */
    public static int poll(Item[] items, int count, long timeoutMs, int[] errorOut) {
        ZLink.load();
        if (items != null && count > items.length)
            throw new IndexOutOfBoundsException("count " + count + " > items.length " + items.length);
        int n = items == null ? 0 : Math.max(count, 0);
        long[] v = items == null ? null : new long[4 * n];
        for (int i = 0; i < n; i++) {
            v[4 * i] = items[i].socket;
            v[4 * i + 1] = items[i].fd;
            v[4 * i + 2] = items[i].events;
            v[4 * i + 3] = items[i].revents;
        }
        int r = Native.poll(v, count, timeoutMs, errorOut);
        for (int i = 0; i < n; i++)
            items[i].revents = (int) v[4 * i + 3];
        return r;
    }

    /** zlink_poller_destroy; the close result. On success handle() is 0, as C sets the pointer to NULL. */
    public synchronized int destroy() {
        long[] slot = {handle};
        int r = Native.pollerDestroy(slot);
        handle = slot[0];
        return r;
    }

    /** Destroys an owned poller not destroyed yet. */
    @Override
    public synchronized void close() {
        if (owned && handle != 0)
            destroy();
    }
}
