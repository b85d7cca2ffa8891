package io.zlink;

/** A Core timer (zlink_timer_*): counts fires, runs no code, owns no thread. */
public final class Timer implements AutoCloseable {
    final long handle;
    private boolean closed;

    public Timer() {
        ZLink.load();
        long h = Native.timerNew();
        if (h == 0)
            throw new ZLinkException("timer_new", Tables.CONFIG_INTERNAL, Native.lastErrno());
        handle = h;
    }

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

    /** zlink_timer_destroy; the close result. */
    public synchronized int destroy() {
        int r = Native.timerDestroy(handle);
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
