package io.zlink;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The binding's pump threads: dedicated platform threads that run every
 * completion and every handler turn (seed 000 §4.1).
 *
 * <p>Design notes. No C thread is ever attached to the JVM: the C handler
 * trampoline only queues the turn natively (zlink_jni.c) and returns; the
 * C completion function of a held start (zlink_call_start_held) queues the
 * outcome and returns too, so the C dispatcher never waits for Java. The
 * call's dispatcher slot stays reserved until this pump has completed the
 * stage and the dependent actions that stage runs synchronously, and
 * then frees the event (Native.eventFree calls zlink_call_callback_done):
 * a Java completion blocked in user code still counts against the
 * dispatcher's capacity and shutdown still waits for it, as for a C
 * callback. One daemon thread, "zlink-completions", pulls
 * every completion of the process and delivers it to the operation
 * registered under its id (exactly once: the id is removed from the map by
 * the one delivery; an id that is not there is counted as stray, which
 * the tests assert stays 0). Each started Host has its own handler pump of
 * HANDLER_THREADS threads pulling that host's turns; C opens a gate's next
 * turn only after the previous one ended, so the order of a gate's turns
 * holds whichever pump thread runs them. Every pump thread enters the
 * runtime context first (zlink_runtime_context_enter), so a synchronous
 * terminator or a shutdown called there fails with InvalidOperation in C.
 * The pumps hold no timer and decide nothing: they only move events.
 */
final class Pump {
    private Pump() {}

    /** What a started operation does with its outcome, on the completion pump. */
    interface Operation {
        void complete(long event);
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
        completions = new Thread(() -> run(queue, null), "zlink-completions");
        completions.setDaemon(true);
        completions.start();
    }

    /** A host's handler pump: threads pulling one native queue of turns. */
    static final class Handlers {
        final long queue;
        private final Thread[] threads;

        Handlers(long queue, int count, String hostName, Host host) {
            this.queue = queue;
            threads = new Thread[count];
            for (int i = 0; i < count; i++) {
                threads[i] = new Thread(() -> run(queue, host), "zlink-handler-" + hostName + "-" + i);
                threads[i].setDaemon(true);
            }
        }

        void start() {
            for (Thread t : threads)
                t.start();
        }

        /** Closes the queue and waits for the threads (not from one of them). */
        void stop() {
            Native.queueClose(queue);
            for (Thread t : threads) {
                if (t == Thread.currentThread())
                    continue;
                boolean interrupted = false;
                while (t.isAlive()) {
                    try {
                        t.join();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
                if (interrupted)
                    Thread.currentThread().interrupt();
            }
        }
    }

    private static void run(long queue, Host host) {
        Native.runtimeContextEnter();
        try {
            for (;;) {
                long ev = Native.take(queue);
                if (ev == 0)
                    return;
                try {
                    if (Native.eventType(ev) == Native.EV_TURN) {
                        long handlerId = Native.eventId(ev);
                        long turn = Native.eventHandle(ev);
                        Native.eventFree(ev);
                        ev = 0;
                        host.runTurn(handlerId, turn);
                    } else {
                        Operation op = pending.remove(Native.eventId(ev));
                        if (op == null) {
                            stray.incrementAndGet();
                        } else {
                            delivered.incrementAndGet();
                            op.complete(ev);
                        }
                    }
                } catch (Throwable t) {
                    t.printStackTrace();
                } finally {
                    // a completion's: zlink_call_callback_done, on every path
                    if (ev != 0)
                        Native.eventFree(ev);
                }
            }
        } finally {
            Native.runtimeContextLeave();
        }
    }
}
