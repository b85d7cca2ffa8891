package io.zlink;

import java.lang.ref.Cleaner;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * What every call object shares: the C call handle, its payload and
 * metadata setters, and the terminators' plumbing.
 *
 * <p>Lifetime: the C call is released when the Java object is closed or
 * becomes unreachable (a Cleaner), never while an operation is pending
 * (the outcome the pump reads belongs to the call): a close() that comes
 * while the call is pending is carried out right after the completion was
 * delivered. A second terminator reaches C, which refuses it with
 * InvalidOperation. A call is built by one thread (doc/abi.md).
 */
abstract class CallBase implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    /** Releases the C call once. */
    private static final class Release implements Runnable {
        private final long handle;
        private boolean done;

        Release(long handle) {
            this.handle = handle;
        }

        @Override
        public synchronized void run() {
            if (!done) {
                done = true;
                Native.callRelease(handle);
            }
        }
    }

    final long handle;
    private final Release release;
    private final Cleaner.Cleanable cleanable;
    private int pending;            // terminators in flight; guarded by this
    private boolean closeRequested; // guarded by this

    CallBase(long handle) {
        this.handle = handle;
        this.release = new Release(handle);
        this.cleanable = CLEANER.register(this, release);
    }

    static long build(int which, long host, String name, byte[] rid, String what) {
        int[] res = new int[1];
        long h = Native.callNew(which, host, name, rid, res);
        if (h == 0)
            throw ZLink.failure(res[0] == 0 ? Tables.FW_INVALID_ARGUMENT : res[0], 0, null, what);
        return h;
    }

    final void setPayload(String packet, String contentType, byte[] data) {
        ZLink.check(Native.callSetPayload(handle, packet, contentType == null ? "" : contentType,
                                          data == null ? new byte[0] : data),
                    "payload");
    }

    final void setMetadata(String key, String value) {
        ZLink.check(Native.callSetMetadata(handle, key, value), "metadata");
    }

    /** zlink_call_cancel: before a terminator it is remembered by C. */
    final void cancelNative() {
        Native.callCancel(handle);
    }

    /**
     * zlink_call_start (or zlink_call_yield): the returned stage completes
     * once, on the completion pump, with decode(reply) for result OK.
     */
    final <T> CompletionStage<T> startAsync(Function<Reply, T> decode, boolean yield) {
        return startAsync(decode, yield, false);
    }

    /** names: the decoder reads the reply's packet and content type (else they are ""). */
    final <T> CompletionStage<T> startAsync(Function<Reply, T> decode, boolean yield,
                                            boolean names) {
        CallFuture<T> future = new CallFuture<>(this);
        long id = Pump.register((ev, result, remote, payload) -> deliver(ev, result, remote, payload,
                                                                         names, future, decode));
        synchronized (this) {
            pending++;
        }
        int r = Native.callStart(handle, id, yield ? 1 : 0);
        if (r != Tables.FW_OK) {
            Pump.unregister(id);
            donePending();
            future.fail(ZLink.failure(r, 0, null, yield ? "yield" : "submit"));
        }
        return future;
    }

    private <T> void deliver(long ev, int result, int remoteCode, byte[] payload, boolean names,
                             CallFuture<T> future, Function<Reply, T> decode) {
        Throwable failure = null;
        T value = null;
        if (result == Tables.FW_OK) {
            try {
                if (payload == null)
                    payload = Native.eventPayload(ev); // not made in the batch (no memory then)
                value = decode.apply(payload == null ? null
                                         : names ? new Reply(Native.eventPacket(ev),
                                                             Native.eventContentType(ev), payload)
                                                 : new Reply("", "", payload));
            } catch (RuntimeException | OutOfMemoryError e) {
                failure = e;
            }
        } else {
            failure = ZLink.failure(result, remoteCode, Native.eventMessage(ev), "call");
        }
        // The stage's dependent actions run here, on the completion pump;
        // the call is released (if close() asked for it) only after they
        // returned, as the held dispatcher slot is (Pump).
        try {
            if (failure != null)
                future.fail(failure);
            else
                future.settle(value);
        } finally {
            donePending();
        }
    }

    /** zlink_call_wait: blocks this application thread; the reply or an exception. */
    final Reply waitSync() {
        int[] res = new int[1];
        long ev = Native.callWait(handle, res);
        try {
            int result = res[0] != Tables.FW_OK ? res[0] : Native.eventResult(ev);
            if (result != Tables.FW_OK)
                throw ZLink.failure(result, Native.eventRemoteCode(ev), Native.eventMessage(ev),
                                    "submit_sync");
            byte[] payload = Native.eventPayload(ev);
            return payload == null ? null
                                   : new Reply(Native.eventPacket(ev), Native.eventContentType(ev),
                                               payload);
        } finally {
            Native.eventFree(ev);
        }
    }

    private void donePending() {
        boolean releaseNow;
        synchronized (this) {
            pending--;
            releaseNow = pending == 0 && closeRequested;
        }
        if (releaseNow)
            cleanable.clean();
    }

    /** Releases the call (deferred while an operation is pending). */
    @Override
    public void close() {
        synchronized (this) {
            if (pending > 0) {
                closeRequested = true;
                return;
            }
        }
        cleanable.clean();
    }
}
