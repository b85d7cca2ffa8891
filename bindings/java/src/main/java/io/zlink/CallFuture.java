package io.zlink;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The stage a terminator returns. It completes only from the C outcome:
 * cancel() asks C (zlink_call_cancel) and returns at once; the stage then
 * completes with a CancellationException only if C decided the call as
 * CANCELLED (a reply that won the race completes it normally). Completing
 * it from outside (complete, completeExceptionally, obtrude*, the Java
 * timeouts) is refused: timeouts belong to the call (timeout(Duration)).
 * Stages derived from it are ordinary CompletableFutures.
 */
final class CallFuture<T> extends CompletableFuture<T> {
    private final CallBase call;

    CallFuture(CallBase call) {
        this.call = call;
    }

    /** Asks C to cancel; true only if the stage is already cancelled. */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        if (!isDone())
            call.cancelNative();
        return isCancelled();
    }

    @Override
    public boolean complete(T value) {
        throw refused();
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        throw refused();
    }

    @Override
    public void obtrudeValue(T value) {
        throw refused();
    }

    @Override
    public void obtrudeException(Throwable ex) {
        throw refused();
    }

    @Override
    public CompletableFuture<T> orTimeout(long timeout, TimeUnit unit) {
        throw new UnsupportedOperationException("a call's timeout is set on the call: timeout(Duration)");
    }

    @Override
    public CompletableFuture<T> completeOnTimeout(T value, long timeout, TimeUnit unit) {
        throw new UnsupportedOperationException("a call's timeout is set on the call: timeout(Duration)");
    }

    @Override
    public CompletableFuture<T> completeAsync(Supplier<? extends T> supplier, Executor executor) {
        throw refused();
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
        return new CompletableFuture<>();
    }

    void settle(T value) {
        super.complete(value);
    }

    void fail(Throwable ex) {
        super.completeExceptionally(ex);
    }

    private static UnsupportedOperationException refused() {
        return new UnsupportedOperationException("a call's stage completes only from its outcome");
    }
}
