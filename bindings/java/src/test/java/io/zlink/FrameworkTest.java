package io.zlink;

import static org.junit.jupiter.api.Assertions.*;

import io.zlink.Tables.ErrorKind;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The framework surface over a ClientServer channel between two hosts of
 * this process: completions counted exactly once, cancellation and
 * timeouts decided in C, the runtime context of the pump, typed payloads.
 * Every wait ends on an event; timeouts are failure bounds only.
 */
class FrameworkTest {
    /** A typed payload (Jackson). */
    public static final class Point {
        public int x;
        public int y;

        public Point() {}

        Point(int x, int y) {
            this.x = x;
            this.y = y;
        }
    }

    private static final long BOUND_S = 20;

    private Host server;
    private Host client;
    /** Turns of "hold" requests, each with the stage that keeps it open. */
    private final BlockingQueue<Object[]> held = new LinkedBlockingQueue<>();
    /** Every stage a "hold" handler returned, completed at the end so shutdown can finish. */
    private final java.util.List<CompletableFuture<Void>> keeps =
        java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    private final BlockingQueue<String> notes = new LinkedBlockingQueue<>();
    private final AtomicReference<Throwable> syncInHandler = new AtomicReference<>();
    private final AtomicReference<Boolean> handlerInContext = new AtomicReference<>();
    private final AtomicReference<Thread> handlerThread = new AtomicReference<>();
    private final CountDownLatch syncRan = new CountDownLatch(1);
    private long stray0;
    private volatile boolean closing;

    private static byte[] b(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    private static String s(byte[] b) { return new String(b, StandardCharsets.UTF_8); }

    @BeforeEach
    void open() throws Exception {
        stray0 = Pump.stray();
        server = new Host("B");
        server.addCsServer("svc", "tcp://127.0.0.1:0");
        server.onRequest("svc", "echo", turn -> {
            handlerInContext.set(ZLink.inRuntimeContext());
            handlerThread.set(Thread.currentThread());
            turn.respond("echo", turn.payload());
            return null;
        });
        server.onRequest("svc", "point", turn -> {
            Point p = turn.payload(Point.class);
            turn.respond("point", new Point(p.x + 1, p.y * 2));
            return null;
        });
        server.onRequest("svc", "hold", turn -> {
            CompletableFuture<Void> keep = new CompletableFuture<>();
            synchronized (keeps) {
                if (closing)
                    return null;
                keeps.add(keep);
            }
            held.add(new Object[] {turn, keep});
            return keep;
        });
        server.onRequest("svc", "sync", turn -> {
            // a one-way A could send from an application thread (note)
            try (SendCall inner = client.sendToChannel("svc")) {
                inner.payload("note", b("from-handler")).submit_sync();
            } catch (Throwable t) {
                syncInHandler.set(t);
            } finally {
                syncRan.countDown();
            }
            turn.respond("sync", b("done"));
            return null;
        });
        server.onSend("svc", "note", turn -> {
            notes.add(s(turn.payload()));
            return null;
        });
        server.start();
        client = new Host("A");
        client.addCsClient("svc", server.endpoint("svc"));
        client.start();
        // ClientServer has no readiness view: the first request waits for the connection.
        assertEquals("hi", s(client.requestToChannel("svc").payload("echo", b("hi"))
                                   .timeout(Duration.ofSeconds(BOUND_S)).submit_sync()));
    }

    @AfterEach
    void close() {
        synchronized (keeps) {
            closing = true;
            for (CompletableFuture<Void> k : keeps)
                k.complete(null);
        }
        if (client != null)
            client.close();
        if (server != null)
            server.close();
        assertEquals(stray0, Pump.stray(), "no completion arrived for an unknown operation");
    }

    private Object[] nextHeld() throws InterruptedException {
        Object[] h = held.poll(BOUND_S, TimeUnit.SECONDS);
        assertNotNull(h, "the held request reached its handler");
        return h;
    }

    /** Counts the completions of a stage and waits for the first. */
    private static final class Counted<T> {
        final AtomicInteger count = new AtomicInteger();
        final CompletableFuture<T> seen = new CompletableFuture<>();
        final AtomicReference<Thread> thread = new AtomicReference<>();

        Counted(CompletionStage<T> stage) {
            stage.whenComplete((v, t) -> {
                count.incrementAndGet();
                thread.set(Thread.currentThread());
                if (t != null)
                    seen.completeExceptionally(t);
                else
                    seen.complete(v);
            });
        }

        Throwable failure() throws InterruptedException {
            try {
                seen.get(BOUND_S, TimeUnit.SECONDS);
                return null;
            } catch (CancellationException e) {
                return e;
            } catch (ExecutionException e) {
                return e.getCause();
            } catch (java.util.concurrent.TimeoutException e) {
                throw new AssertionError("the stage did not complete");
            }
        }

        T value() throws Exception {
            return seen.get(BOUND_S, TimeUnit.SECONDS);
        }
    }

    /** After the outcome, a second (late) event must not complete anything. */
    private static void settle(Host h) {
        HostStatus st = h.status();
        assertEquals(0, st.requestsInflight, "nothing pending on " + h.name());
    }

    @Test
    void successCompletesOnceOnThePumpAndFreesTheOperation() throws Exception {
        long live0 = ZLink.liveOperations();
        // "hold": the reply comes after Counted registered its action, which then
        // runs on the completion pump
        RequestCall call = client.requestToChannel("svc").payload("hold", b("one"));
        Counted<byte[]> c = new Counted<>(call.submit());
        Object[] h = nextHeld();
        handlerInContext.set(ZLink.inRuntimeContext() ? Boolean.FALSE : null);
        ((Turn) h[0]).respond("one", b("one"));
        assertEquals("one", s(c.value()));
        assertEquals("one", s(client.requestToChannel("svc").payload("echo", b("one")).submit_sync()));
        assertEquals(1, c.count.get());
        assertTrue(c.thread.get().getName().startsWith("zlink-completions"), c.thread.get().getName());
        assertEquals(Boolean.TRUE, handlerInContext.get(), "the handler pump is a runtime context");
        settle(client);
        // the C completion function frees the operation once the pump delivered it;
        // shutdown waits for running completion functions
        client.shutdown();
        assertEquals(live0, ZLink.liveOperations(), "the operation's native memory was freed");
    }

    @Test
    void cancelBeforeTheReplyCompletesOnceCancelled() throws Exception {
        long live0 = ZLink.liveOperations();
        RequestCall call = client.requestToChannel("svc").payload("hold", b("c1"));
        CompletionStage<byte[]> stage = call.submit();
        Counted<byte[]> c = new Counted<>(stage);
        Object[] h = nextHeld();
        CompletableFuture<byte[]> f = stage.toCompletableFuture();
        assertFalse(f.isDone());
        f.cancel(false);
        Throwable t = c.failure();
        assertTrue(t instanceof CancellationException, String.valueOf(t));
        assertTrue(f.isCancelled());
        // the late reply after the cancel completes nothing more
        Turn turn = (Turn) h[0];
        turn.respond("late", b("late"));
        ((CompletableFuture<?>) h[1]).complete(null);
        assertEquals("x", s(client.requestToChannel("svc").payload("echo", b("x")).submit_sync()));
        assertEquals(1, c.count.get());
        client.shutdown();
        assertEquals(live0, ZLink.liveOperations());
    }

    @Test
    void aMarkedThreadRefusesSubmitSyncUntilItLeaves() throws Exception {
        RequestCall call = client.requestToChannel("svc").payload("echo", b("m"));
        assertFalse(ZLink.inRuntimeContext());
        ZLink.enterRuntimeContext();
        ZLink.enterRuntimeContext();
        try {
            assertTrue(ZLink.inRuntimeContext());
            ZLinkFrameworkException e = assertThrows(ZLinkFrameworkException.class, call::submit_sync);
            assertEquals(ErrorKind.INVALID_OPERATION, e.kind());
            ZLink.leaveRuntimeContext();
            assertTrue(ZLink.inRuntimeContext(), "nested marks count");
            assertThrows(ZLinkFrameworkException.class, call::submit_sync);
        } finally {
            ZLink.leaveRuntimeContext();
        }
        assertFalse(ZLink.inRuntimeContext());
        // the refused call stayed unfinished: it completes now
        assertEquals("m", s(call.submit_sync()));
        ZLinkFrameworkException e = assertThrows(ZLinkFrameworkException.class, ZLink::leaveRuntimeContext);
        assertEquals(ErrorKind.INVALID_OPERATION, e.kind(), "a leave without an enter");
        call.close();
    }

    @Test
    void cancelAfterTheReplyChangesNothing() throws Exception {
        CompletionStage<byte[]> stage = client.requestToChannel("svc").payload("echo", b("v")).submit();
        Counted<byte[]> c = new Counted<>(stage);
        assertEquals("v", s(c.value()));
        CompletableFuture<byte[]> f = stage.toCompletableFuture();
        assertFalse(f.cancel(false));
        assertFalse(f.isCancelled());
        assertEquals("v", s(f.get()));
        assertEquals(1, c.count.get());
    }

    @Test
    void timeoutIsDecidedInCAndCompletesOnce() throws Exception {
        long live0 = ZLink.liveOperations();
        Counted<byte[]> c = new Counted<>(client.requestToChannel("svc").payload("hold", b("t"))
                                              .timeout(Duration.ofMillis(200)).submit());
        Object[] h = nextHeld();
        Throwable t = c.failure();
        assertTrue(t instanceof ZLinkFrameworkException, String.valueOf(t));
        assertEquals(ErrorKind.DEADLINE_EXCEEDED, ((ZLinkFrameworkException) t).kind());
        ((Turn) h[0]).respond("late", b("late"));
        ((CompletableFuture<?>) h[1]).complete(null);
        assertEquals("y", s(client.requestToChannel("svc").payload("echo", b("y")).submit_sync()));
        assertEquals(1, c.count.get());
        client.shutdown();
        assertEquals(live0, ZLink.liveOperations());
    }

    /** Waits (bounded) until the process-wide dispatcher_in_use is n. */
    private void awaitInUse(long n) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_S);
        long v;
        while ((v = client.status().dispatcherInUse) != n) {
            if (System.nanoTime() > end)
                fail("dispatcher_in_use stayed " + v + ", expected " + n);
            Thread.sleep(1);
        }
    }

    @Test
    void aStageBlockedInUserCodeHoldsItsSlotButNotTheDispatcher() throws Exception {
        awaitInUse(0);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch gate = new CountDownLatch(1);
        // "hold": the reply comes only after the action is registered, so it
        // runs on the completion pump (an action registered after completion
        // would run here, on the test's thread, and block it)
        CompletableFuture<Void> after = client.requestToChannel("svc").payload("hold", b("blocked"))
            .timeout(Duration.ofSeconds(BOUND_S)).submit()
            .thenAccept(v -> {
                entered.countDown();
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }).toCompletableFuture();
        Object[] h = nextHeld();
        ((Turn) h[0]).respond("blocked", b("blocked"));
        ((CompletableFuture<?>) h[1]).complete(null);
        try {
            assertTrue(entered.await(BOUND_S, TimeUnit.SECONDS), "the stage's action runs");
            // The C dispatcher does not wait for Java: a synchronous request
            // (its reply is taken by the dispatcher thread) completes while
            // the completion pump is blocked in user code.
            CompletableFuture<String> sync = CompletableFuture.supplyAsync(
                () -> s(client.requestToChannel("svc").payload("echo", b("meanwhile"))
                              .timeout(Duration.ofSeconds(BOUND_S)).submit_sync()));
            assertEquals("meanwhile", sync.get(BOUND_S, TimeUnit.SECONDS));
            // ... and the blocked completion still holds its dispatcher slot
            awaitInUse(1);
            assertFalse(after.isDone());
        } finally {
            gate.countDown();
        }
        after.get(BOUND_S, TimeUnit.SECONDS);
        // given back once the action returned
        awaitInUse(0);
    }

    @Test
    void shutdownDuringARequestCompletesItOnceShuttingDown() throws Exception {
        long live0 = ZLink.liveOperations();
        Counted<byte[]> c = new Counted<>(client.requestToChannel("svc").payload("hold", b("s"))
                                              .timeout(Duration.ofSeconds(BOUND_S)).submit());
        nextHeld();
        client.shutdown(Duration.ofMillis(100));
        // shutdown waits for running completion callbacks: the Java one ran before it returned
        assertEquals(1, c.count.get(), "delivered before shutdown returned");
        Throwable t = c.failure();
        assertTrue(t instanceof ZLinkFrameworkException, String.valueOf(t));
        assertEquals(ErrorKind.SHUTTING_DOWN, ((ZLinkFrameworkException) t).kind());
        assertEquals(Host.State.STOPPED, client.state());
        // a send after shutdown is refused by C, once
        Counted<Void> late = new Counted<>(client.sendToChannel("svc").payload("note", b("z")).submit());
        Throwable t2 = late.failure();
        assertTrue(t2 instanceof ZLinkFrameworkException, String.valueOf(t2));
        assertEquals(ErrorKind.SHUTTING_DOWN, ((ZLinkFrameworkException) t2).kind());
        assertEquals(1, c.count.get());
        assertEquals(1, late.count.get());
        assertEquals(live0, ZLink.liveOperations());
    }

    @Test
    void aOneWayCompletesAtAdmissionAndIsHandledOnce() throws Exception {
        Counted<Void> c = new Counted<>(client.sendToChannel("svc").payload("note", b("n1")).submit());
        assertNull(c.value());
        assertEquals("n1", notes.poll(BOUND_S, TimeUnit.SECONDS));
        assertEquals(1, c.count.get());
        client.sendToChannel("svc").payload("note", b("n2")).submit_sync();
        assertEquals("n2", notes.poll(BOUND_S, TimeUnit.SECONDS));
        assertTrue(notes.isEmpty());
    }

    @Test
    void handlersRunOnAttachedWorkersThatLeaveTheJvmWithTheHost() throws Exception {
        assertEquals("w", s(client.requestToChannel("svc").payload("echo", b("w")).submit_sync()));
        Thread worker = handlerThread.get();
        assertNotNull(worker);
        assertTrue(worker.getName().startsWith("zlink-handler"), worker.getName());
        assertTrue(worker.isDaemon());
        assertEquals(Boolean.TRUE, handlerInContext.get());
        client.close();
        server.close();
        // the worker exits with its host and is detached from the JVM on the way
        worker.join(TimeUnit.SECONDS.toMillis(BOUND_S));
        assertFalse(worker.isAlive(), "the attached worker was detached");
    }

    @Test
    void submitSyncInAHandlerIsInvalidOperation() throws Exception {
        assertEquals("done", s(client.requestToChannel("svc").payload("sync", b("")).submit_sync()));
        assertTrue(syncRan.await(BOUND_S, TimeUnit.SECONDS));
        Throwable t = syncInHandler.get();
        assertTrue(t instanceof ZLinkFrameworkException, String.valueOf(t));
        assertEquals(ErrorKind.INVALID_OPERATION, ((ZLinkFrameworkException) t).kind());
    }

    @Test
    void submitSyncInACompletionIsInvalidOperation() throws Exception {
        CompletableFuture<Throwable> seen = new CompletableFuture<>();
        AtomicReference<Thread> ran = new AtomicReference<>();
        // "hold": the reply comes only after the action is registered, so it
        // runs on the completion pump (an action registered after completion
        // would run on the registering thread)
        CompletionStage<byte[]> st = client.requestToChannel("svc").payload("hold", b("q")).submit();
        st.thenRun(() -> {
            ran.set(Thread.currentThread());
            try {
                client.requestToChannel("svc").payload("echo", b("r")).submit_sync();
                seen.complete(null);
            } catch (Throwable t) {
                seen.complete(t);
            }
        });
        Object[] h = nextHeld();
        ((Turn) h[0]).respond("q", b("q"));
        Throwable t = seen.get(BOUND_S, TimeUnit.SECONDS);
        assertTrue(ran.get().getName().startsWith("zlink-completions"), ran.get().getName());
        assertTrue(t instanceof ZLinkFrameworkException, String.valueOf(t));
        assertEquals(ErrorKind.INVALID_OPERATION, ((ZLinkFrameworkException) t).kind());
    }

    /** Names go to C as UTF-8 and come back from it as the same Java strings. */
    @Test
    void namesOutsideTheBmpRoundTripAsUtf8() throws Exception {
        String packet = "echo-\u00e9-\u4e2d-\ud83d\ude00"; // é, 中, an emoji (a surrogate pair)
        server.shutdown();
        server.close();
        server = new Host("B-\ud83d\ude00");
        server.addCsServer("svc", "tcp://127.0.0.1:0");
        server.onRequest("svc", packet, turn -> {
            turn.respond(turn.packet(), b(turn.packet()));
            return null;
        });
        server.start();
        assertEquals("B-\ud83d\ude00", server.name());
        try (Host c = new Host("C")) {
            c.addCsClient("svc", server.endpoint("svc")).start();
            Reply r = c.requestToChannel("svc").payload(packet, b("x"))
                       .timeout(Duration.ofSeconds(BOUND_S)).submitReply()
                       .toCompletableFuture().get(BOUND_S, TimeUnit.SECONDS);
            assertEquals(packet, r.packet(), "the reply's packet name");
            assertArrayEquals(packet.getBytes(StandardCharsets.UTF_8), r.payload(),
                              "the handler read the packet name the client sent");
            c.shutdown();
        }
    }

    /** A string C cannot take as text (a NUL, a lone surrogate) is refused, never cut short. */
    @Test
    void namesCWouldCutOrMisreadAreRefused() {
        for (String bad : new String[] {"ec\u0000ho", "echo\ud83d", "\ude00echo"}) {
            ZLinkArgumentException e = assertThrows(ZLinkArgumentException.class,
                () -> client.requestToChannel("svc").payload(bad, b("x")), bad);
            assertEquals(Tables.FW_INVALID_ARGUMENT, e.result(), bad);
        }
        // and the same names as a handler's packet
        for (String bad : new String[] {"ec\u0000ho", "echo\ud83d"}) {
            try (Host h = new Host("H")) {
                ZLinkArgumentException e = assertThrows(ZLinkArgumentException.class,
                    () -> h.addCsServer("svc", "tcp://127.0.0.1:0").onRequest("svc", bad, t -> null), bad);
                assertEquals(Tables.FW_INVALID_ARGUMENT, e.result(), bad);
            }
        }
    }

    @Test
    void typedRequestAndReplyWithJackson() throws Exception {
        Point p = client.requestToChannel("svc").payload("point", new Point(3, 4))
                      .submit(Point.class).toCompletableFuture().get(BOUND_S, TimeUnit.SECONDS);
        assertEquals(4, p.x);
        assertEquals(8, p.y);
        Point q = client.requestToChannel("svc").payload("point", new Point(10, 1)).submit_sync(Point.class);
        assertEquals(11, q.x);
        assertEquals(2, q.y);
        // a reply that is not a Point is a TypeMismatch of the stage
        Counted<Point> bad = new Counted<>(client.requestToChannel("svc").payload("echo", b("[1,")).submit(Point.class));
        Throwable t = bad.failure();
        assertTrue(t instanceof ZLinkFrameworkException, String.valueOf(t));
        assertEquals(ErrorKind.TYPE_MISMATCH, ((ZLinkFrameworkException) t).kind());
    }

    @Test
    void aHandlerStageKeepsItsTurnUntilItCompletes() throws Exception {
        Counted<byte[]> c = new Counted<>(client.requestToChannel("svc").payload("hold", b("k")).submit());
        Object[] h = nextHeld();
        assertTrue(server.ownerStatus(Host.OwnerKind.CHANNEL, "svc").busy, "the turn is open");
        Counted<Void> replied = new Counted<>(((Turn) h[0]).reply().payload("hold", b("kept")).submit());
        assertNull(replied.value());
        assertEquals("kept", s(c.value()));
        assertTrue(server.ownerStatus(Host.OwnerKind.CHANNEL, "svc").busy,
                   "the reply went, the handler's stage still holds the turn");
        ((CompletableFuture<?>) h[1]).complete(null);
        // The turn ends from the stage's completion, on this thread or, when
        // the pump registered its action after the completion, on the pump:
        // the next record of the same gate is handled only once it ended.
        assertEquals("next", s(client.requestToChannel("svc").payload("echo", b("next"))
                                     .timeout(java.time.Duration.ofSeconds(BOUND_S)).submit_sync()),
                     "the stage completed: the turn ended and the gate took the next record");
        assertFalse(server.ownerStatus(Host.OwnerKind.CHANNEL, "svc").busy,
                    "the stage completed: the turn ended");
        assertEquals(1, replied.count.get());
    }

    @Test
    void theTerminatorSurface() throws Exception {
        // a second terminator: C refuses it
        RequestCall call = client.requestToChannel("svc").payload("echo", b("1"));
        assertEquals("1", s(call.submit_sync()));
        Counted<byte[]> second = new Counted<>(call.submit());
        Throwable t = second.failure();
        assertEquals(ErrorKind.INVALID_OPERATION, ((ZLinkFrameworkException) t).kind());
        // yield outside a Spot turn
        Counted<Point> y = new Counted<>(client.requestToChannel("svc").payload("echo", b("{}")).yield(Point.class));
        t = y.failure();
        assertEquals(ErrorKind.INVALID_OPERATION, ((ZLinkFrameworkException) t).kind());
        // a pre-cancelled call: the terminator gives CANCELLED, nothing is sent
        RequestCall pre = client.requestToChannel("svc").payload("note", b("never")).cancel();
        assertThrows(CancellationException.class, pre::submit_sync);
        // the stage cannot be completed from outside
        CompletableFuture<byte[]> f = client.requestToChannel("svc").payload("echo", b("2")).submit()
                                          .toCompletableFuture();
        assertThrows(UnsupportedOperationException.class, () -> f.complete(b("forged")));
        assertThrows(UnsupportedOperationException.class, () -> f.orTimeout(1, TimeUnit.MILLISECONDS));
        assertEquals("2", s(f.get(BOUND_S, TimeUnit.SECONDS)));
    }

    @Test
    void cancellingOneStageLeavesAnotherAlone() throws Exception {
        CompletionStage<byte[]> done = client.requestToChannel("svc").payload("echo", b("d")).submit();
        assertEquals("d", s(done.toCompletableFuture().get(BOUND_S, TimeUnit.SECONDS)));
        CompletionStage<byte[]> a = client.requestToChannel("svc").payload("hold", b("a")).submit();
        CompletionStage<byte[]> bb = client.requestToChannel("svc").payload("hold", b("b")).submit();
        Object[] h1 = nextHeld();
        a.toCompletableFuture().cancel(false);
        Throwable t = new Counted<>(a).failure();
        assertTrue(t instanceof CancellationException);
        assertFalse(bb.toCompletableFuture().isDone());
        assertFalse(done.toCompletableFuture().isCancelled());
        ((Turn) h1[0]).respond("r", b("first"));
        ((CompletableFuture<?>) h1[1]).complete(null);
        Object[] h2 = nextHeld();
        ((Turn) h2[0]).respond("r", b("second"));
        ((CompletableFuture<?>) h2[1]).complete(null);
        String got = s(bb.toCompletableFuture().get(BOUND_S, TimeUnit.SECONDS));
        assertTrue(got.equals("first") || got.equals("second"), got);
    }
}
