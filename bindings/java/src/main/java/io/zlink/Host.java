package io.zlink;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A framework host (zlink_host_*): configure it while PREPARING, start()
 * it, build calls from it, shut it down, close it. Handlers run on the
 * framework's own worker threads (HANDLER_THREADS of them, each a runtime
 * context), which the JNI library attaches to the JVM as daemon threads
 * named "zlink-handler". close() shuts a serving host down (an
 * application thread is needed for that) and destroys it.
 */
public final class Host implements AutoCloseable {
    /** Host options (zlink_host_set_option), int64 values; durations in ns. */
    public enum Option {
        DEFAULT_REQUEST_TIMEOUT(1), DEFAULT_SEND_TIMEOUT(2), SHUTDOWN_TIMEOUT(3),
        ADMISSION_WAITERS(4), MAX_QUEUED_JOBS(5), HANDLER_THREADS(6), JOB_QUEUE_PROFILE(7),
        PAUSE_PERCENT(8), RESUME_PERCENT(9), EFFECTIVE_PROCESSORS(10), CORE_HWM_PROFILE(11),
        CORE_BUDGET_BYTES(12), CORE_MEMORY_LIMIT_BYTES(13);

        final int value;

        Option(int value) {
            this.value = value;
        }
    }

    /** Channel and mesh-node options (zlink_channel/mesh_set_option). */
    public enum NodeOption {
        SEND_TIMEOUT(1), REQUEST_TIMEOUT(2), SNDHWM(3), RCVHWM(4);

        final int value;

        NodeOption(int value) {
            this.value = value;
        }
    }

    /** Handler owners (zlink_owner_kind_t). */
    public enum OwnerKind {
        CHANNEL(1), NODE(2);

        final int value;

        OwnerKind(int value) {
            this.value = value;
        }
    }

    /** zlink_host_state_t. */
    public enum State { PREPARING, SERVING, DRAINING, STOPPED, FAILED, INVALID }

    private static final AtomicLong handlerIds = new AtomicLong(1);

    private final long handle;
    private final String name;
    private final long queue;
    private final Map<Long, Handler> handlers = new ConcurrentHashMap<>();
    private boolean closed;     // guarded by this

    /** A new host in PREPARING (zlink_host_new). */
    public Host(String name) {
        ZLink.load();
        int[] res = new int[1];
        long h = Native.hostNew(name, res);
        if (h == 0)
            throw ZLink.failure(res[0] == 0 ? Tables.FW_INVALID_ARGUMENT : res[0], 0, null, "host");
        long q = Native.queueNew();
        if (q == 0) {
            Native.hostDo(1, h);
            throw new OutOfMemoryError("zlink: no memory for the host's queue");
        }
        this.handle = h;
        this.name = name;
        this.queue = q;
    }

    public String name() { return name; }

    /**
     * The zlink_host_t pointer this host wraps, for native code of the
     * application's own that calls the C ABI on the same host (for example
     * zlink_host_add_handler while PREPARING). The binding keeps owning
     * it: valid until close(), never to be destroyed by the caller; the
     * C functions' thread rules (doc/abi.md) apply to such calls.
     */
    public long nativeHandle() { return handle; }

    public Host option(Option option, long value) {
        ZLink.check(Native.hostSetOption(handle, option.value, value), "option " + option);
        return this;
    }

    public Host option(Option option, Duration value) {
        return option(option, value.toNanos());
    }

    public long option(Option option) {
        long[] v = new long[1];
        ZLink.check(Native.hostGetOption(handle, option.value, v), "option " + option);
        return v[0];
    }

    public Host addCsServer(String channel, String endpoint) {
        ZLink.check(Native.hostAdd(0, handle, channel, endpoint), "addCsServer");
        return this;
    }

    public Host addCsClient(String channel, String endpoint) {
        ZLink.check(Native.hostAdd(1, handle, channel, endpoint), "addCsClient");
        return this;
    }

    public Host channelOption(String channel, NodeOption option, long value) {
        ZLink.check(Native.nodeSetOption(0, handle, channel, option.value, value), "channelOption");
        return this;
    }

    public long channelOption(String channel, NodeOption option) {
        long[] v = new long[1];
        ZLink.check(Native.nodeGetOption(0, handle, channel, option.value, v), "channelOption");
        return v[0];
    }

    /** A mesh node with its routing id; listen may be null (connect only). */
    public Host addMeshNode(String mesh, byte[] routingId, String listen) {
        ZLink.check(Native.addMeshNode(handle, mesh, routingId, listen), "addMeshNode");
        return this;
    }

    public Host addMeshNode(String mesh, String routingId, String listen) {
        return addMeshNode(mesh, routingId.getBytes(StandardCharsets.UTF_8), listen);
    }

    public Host meshConnect(String mesh, String endpoint, byte[] peerRoutingId) {
        ZLink.check(Native.meshConnect(handle, mesh, endpoint, peerRoutingId), "meshConnect");
        return this;
    }

    public Host meshConnect(String mesh, String endpoint, String peerRoutingId) {
        return meshConnect(mesh, endpoint, peerRoutingId.getBytes(StandardCharsets.UTF_8));
    }

    public Host meshOption(String mesh, NodeOption option, long value) {
        ZLink.check(Native.nodeSetOption(1, handle, mesh, option.value, value), "meshOption");
        return this;
    }

    public long meshOption(String mesh, NodeOption option) {
        long[] v = new long[1];
        ZLink.check(Native.nodeGetOption(1, handle, mesh, option.value, v), "meshOption");
        return v[0];
    }

    public Host meshAddChannelClient(String mesh, String channel) {
        ZLink.check(Native.hostAdd(2, handle, mesh, channel), "meshAddChannelClient");
        return this;
    }

    public Host meshAddChannelServer(String mesh, String channel, int weight) {
        ZLink.check(Native.meshWeight(0, handle, mesh, channel, weight), "meshAddChannelServer");
        return this;
    }

    public Host meshSetWeight(String mesh, String channel, int weight) {
        ZLink.check(Native.meshWeight(1, handle, mesh, channel, weight), "meshSetWeight");
        return this;
    }

    /** A handler for (owner, ownerName, kind, packet); PREPARING only. */
    public Host addHandler(OwnerKind owner, String ownerName, Turn.Kind kind, String packet,
                           Handler handler) {
        long id = handlerIds.getAndIncrement();
        handlers.put(id, handler);
        int r = Native.addHandler(handle, queue, this, owner.value, ownerName,
                                  kind == Turn.Kind.REQUEST ? 2 : 1, packet, id);
        if (r != Tables.FW_OK) {
            handlers.remove(id);
            ZLink.check(r, "addHandler");
        }
        return this;
    }

    /** A request handler of a channel. */
    public Host onRequest(String channel, String packet, Handler handler) {
        return addHandler(OwnerKind.CHANNEL, channel, Turn.Kind.REQUEST, packet, handler);
    }

    /** A one-way handler of a channel. */
    public Host onSend(String channel, String packet, Handler handler) {
        return addHandler(OwnerKind.CHANNEL, channel, Turn.Kind.SEND, packet, handler);
    }

    /** PREPARING -> SERVING. */
    public synchronized Host start() {
        ZLink.check(Native.hostDo(0, handle), "start");
        return this;
    }

    /** Graceful shutdown with deadline (zero: the SHUTDOWN_TIMEOUT option). Application thread only. */
    public void shutdown(Duration deadline) {
        ZLink.check(Native.hostShutdown(handle, deadline.toNanos()), "shutdown");
    }

    public void shutdown() {
        shutdown(Duration.ZERO);
    }

    public State state() {
        int s = Native.hostDo(2, handle);
        return s >= 0 && s < 5 ? State.values()[s] : State.INVALID;
    }

    /** The endpoint a CS server channel or mesh node listens on (port resolved). */
    public String endpoint(String channelOrMesh) {
        int[] res = new int[1];
        String ep = Native.hostEndpoint(handle, channelOrMesh, res);
        ZLink.check(res[0], "endpoint");
        return ep;
    }

    public int meshReadyPeers(String mesh) {
        int[] res = new int[1];
        int n = Native.meshReadyPeers(handle, mesh, res);
        if (n < 0)
            ZLink.check(res[0], "meshReadyPeers");
        return n;
    }

    public RequestCall requestToChannel(String channel) {
        return new RequestCall(CallBase.build(1, handle, channel, null, "requestToChannel"));
    }

    public SendCall sendToChannel(String channel) {
        return new SendCall(CallBase.build(0, handle, channel, null, "sendToChannel"));
    }

    public RequestCall requestToNode(String mesh, byte[] routingId) {
        return new RequestCall(CallBase.build(3, handle, mesh, routingId, "requestToNode"));
    }

    public SendCall sendToNode(String mesh, byte[] routingId) {
        return new SendCall(CallBase.build(2, handle, mesh, routingId, "sendToNode"));
    }

    public RequestCall requestToNode(String mesh, String routingId) {
        return requestToNode(mesh, routingId.getBytes(StandardCharsets.UTF_8));
    }

    public SendCall sendToNode(String mesh, String routingId) {
        return sendToNode(mesh, routingId.getBytes(StandardCharsets.UTF_8));
    }

    /** zlink_host_status, as one snapshot. */
    public HostStatus status() {
        long[] v = new long[12];
        ZLink.check(Native.hostStatus(handle, v), "status");
        return new HostStatus(v);
    }

    /** zlink_host_capacity, as one snapshot. */
    public HostCapacity capacity() {
        long[] v = new long[21];
        ZLink.check(Native.hostCapacity(handle, v), "capacity");
        return new HostCapacity(v);
    }

    /** zlink_host_owner_status of (owner, name). */
    public OwnerStatus ownerStatus(OwnerKind owner, String ownerName) {
        long[] v = new long[7];
        ZLink.check(Native.ownerStatus(handle, owner.value, ownerName, v), "ownerStatus");
        return new OwnerStatus(v);
    }

    /** One metric series' value; labels "" for none, else "key=value". */
    public long metric(String name, String labels) {
        long[] v = new long[1];
        ZLink.check(Native.hostMetric(handle, name, labels == null ? "" : labels, v), "metric");
        return v[0];
    }

    public void resetMetrics() {
        ZLink.check(Native.hostDo(3, handle), "resetMetrics");
    }

    /** Shuts a serving host down and destroys it; idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed)
                return;
        }
        State s = state();
        if (s == State.SERVING || s == State.DRAINING)
            shutdown();
        synchronized (this) {
            if (closed)
                return;
            closed = true;
        }
        Native.hostDo(1, handle);
        Native.queueFree(queue);
    }

    /** Runs one turn on a framework worker (called by zlink_jni.c). */
    void runTurn(long handlerId, long turnHandle) {
        try {
            runTurnChecked(handlerId, turnHandle);
        } catch (Throwable t) {
            t.printStackTrace();
        }
    }

    private void runTurnChecked(long handlerId, long turnHandle) {
        Turn turn = new Turn(turnHandle);
        Handler h = handlers.get(handlerId);
        if (h == null) {
            turn.end(true, "no Java handler");
            return;
        }
        CompletionStage<?> stage;
        try {
            stage = h.handle(turn);
        } catch (Throwable t) {
            turn.end(true, describe(t));
            return;
        }
        if (stage == null) {
            turn.end(false, null);
            return;
        }
        stage.whenComplete((v, t) -> turn.end(t != null, t == null ? null : describe(t)));
    }

    private static String describe(Throwable t) {
        String m = t.getMessage();
        return m == null ? t.getClass().getName() : m;
    }
}
