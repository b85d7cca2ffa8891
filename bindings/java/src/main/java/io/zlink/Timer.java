package io.zlink;

/** A Core timer (zlink_timer_*): counts fires, runs no code, owns no thread. */
public final class Timer implements AutoCloseable {
    /** The C handle; zlink_timer_destroy sets it to 0 (NULL) on success. */
    volatile long handle;
    private final boolean owned;

    public Timer() {
        ZLink.load();
        long h = Native.timerNew();
        if (h == 0)
            throw new ZLinkException("timer_new", Tables.CONFIG_INTERNAL, Native.lastErrno());
        handle = h;
        owned = true;
    }

    private Timer(long raw) {
        handle = raw;
        owned = false;
    }

    /** A view of a raw timer handle value, unchecked (C decides what it is); close() leaves it alone. */
    public static Timer ofHandle(long raw) {
        ZLink.load();
        return new Timer(raw);
    }

    /** The raw handle value (what Poller events carry in timer); 0 once destroyed. */
    public long handle() { return handle; }

    /** zlink_timer_start; the config result. */
    public int start(long intervalNs, long repeat) {
        return Native.timerStart(handle, intervalNs, repeat);
    }

    public int stop() {
        return Native.timerStop(handle);
    }

    /** zlink_timer_recv: the fire count (>= 1), or -result when nothing was received. */
    public long recv(int flags) {
        long[] n = new long[1];
        int r = Native.timerRecv(handle, flags, n);
        return r == 0 ? n[0] : -r;
    }

    /** zlink_timer_destroy; the close result. On success handle() is 0, as C sets the pointer to NULL. */
    public synchronized int destroy() {
        long[] slot = {handle};
        int r = Native.timerDestroy(slot);
        handle = slot[0];
        return r;
    }

    /** Destroys an owned timer not destroyed yet. */
    @Override
    public synchronized void close() {
        if (owned && handle != 0)
            destroy();
    }
}
