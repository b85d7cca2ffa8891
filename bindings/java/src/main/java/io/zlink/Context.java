package io.zlink;

/** A Core context (zlink_ctx_new / zlink_ctx_term). */
public final class Context implements AutoCloseable {
    final long handle;
    private boolean closed;

    public Context() {
        ZLink.load();
        long h = Native.ctxNew();
        if (h == 0)
            throw new ZLinkException("ctx_new", Tables.CONFIG_INTERNAL, Native.lastErrno());
        handle = h;
    }

    /** zlink_ctx_set; throws ZLinkException on a refused value. */
    public Context option(int option, int value) {
        int r = Native.ctxSet(handle, option, value);
        if (r != 0)
            throw new ZLinkException("ctx_set", r, Native.lastErrno());
        return this;
    }

    /** A new socket of type (Socket.PAIR, DEALER, ROUTER, PUB, SUB, STREAM ...). */
    public Socket socket(int type) {
        long s = Native.socketNew(handle, type);
        if (s == 0)
            throw new ZLinkException("socket", Tables.CONFIG_INVALID_ARGUMENT, Native.lastErrno());
        return new Socket(s);
    }

    /** zlink_ctx_shutdown: blocked calls of this context return TERMINATED. */
    public int shutdown() {
        return Native.ctxEnd(1, handle);
    }

    /** zlink_ctx_term; the result (close family). */
    @Override
    public synchronized void close() {
        if (closed)
            return;
        closed = true;
        Native.ctxEnd(0, handle);
    }
}
