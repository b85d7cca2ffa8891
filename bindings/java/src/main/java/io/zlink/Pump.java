package io.zlink;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The binding's completion pump: one dedicated platform thread that runs
 * every completion (seed 000 §4.1). Handler turns do not come here: they
 * run on the framework's worker threads, attached to the JVM
 * (zlink_jni.c, Host.runTurn).
 *
 * <p>Design notes. The C completion function of a held start
 * (zlink_call_start_held) queues the outcome natively and returns, so the
 * C dispatcher never waits for Java. The call's dispatcher slot stays
 * reserved until this pump has completed the stage and the dependent
 * actions that stage runs synchronously, and then frees the event
 * (Native.eventFree calls zlink_call_callback_done): a Java completion
 * blocked in user code still counts against the dispatcher's capacity and
 * shutdown still waits for it, as for a C callback. The daemon thread
 * "zlink-completions" pulls every completion of the process and delivers
 * it to the operation registered under its id (exactly once: the id is
 * removed from the map by the one delivery; an id that is not there is
 * counted as stray, which the tests assert stays 0). It enters the
 * runtime context first (zlink_runtime_context_enter), so a synchronous
 * terminator or a shutdown called there fails with InvalidOperation in C.
 * The pump holds no timer and decides nothing: it only moves events.
 */
final class Pump {
    private Pump() {}

    /** What a started operation does with its outcome, on the completion pump. */
    interface Operation {
        void complete(long event, int result, int remoteCode, byte[] payload);
    }

    private static final Map<Long, Operation> pending = new ConcurrentHashMap<>();
    private static final AtomicLong nextId = new AtomicLong(1);
    private static final AtomicLong delivered = new AtomicLong();
    private static final AtomicLong stray = new AtomicLong();
    private static Thread completions;

    static long register(Operation op) {
        long id = nextId.getAndIncrement();
        pending.put(id, op);
        return id;
    }

    /** Drops an operation whose terminator refused it (no event will come). */
    static void unregister(long id) {
        pending.remove(id);
    }

    /** Completions delivered so far (test hook). */
    static long delivered() { return delivered.get(); }

    /** Completion events that found no operation (test hook; must stay 0). */
    static long stray() { return stray.get(); }

    /** Operations started and not yet completed (test hook). */
    static int pendingCount() { return pending.size(); }

    static synchronized void startCompletions() {
        if (completions != null)
            return;
        long queue = Native.completionQueue();
        completions = new Thread(() -> run(queue), "zlink-completions");
        completions.setDaemon(true);
        completions.start();
    }

    /** Events taken per crossing (Native.takeBatch: address, id, result, remote code, payload). */
    private static final int BATCH = 64;

    private static void run(long queue) {
        Native.runtimeContextEnter();
        long[] batch = new long[4 * BATCH];
        byte[][] payloads = new byte[BATCH][];
        try {
            for (;;) {
                int n = Native.takeBatch(queue, batch, payloads);
                if (n == 0)
                    return;
                for (int i = 0; i < n; i++) {
                    byte[] payload = payloads[i];
                    payloads[i] = null;
                    deliver(batch[4 * i], batch[4 * i + 1], (int) batch[4 * i + 2],
                            (int) batch[4 * i + 3], payload);
                }
            }
        } finally {
            Native.runtimeContextLeave();
        }
    }

    /** One completion, then zlink_call_callback_done (eventFree) on every path. */
    private static void deliver(long ev, long id, int result, int remoteCode, byte[] payload) {
        try {
            Operation op = pending.remove(id);
            if (op == null) {
                stray.incrementAndGet();
            } else {
                delivered.incrementAndGet();
                op.complete(ev, result, remoteCode, payload);
            }
        } catch (Throwable t) {
            t.printStackTrace();
        } finally {
            Native.eventFree(ev);
        }
    }
}
