package io.zlink;

/**
 * The JNI entry points of native/zlink_jni.c, one for one. Handles are the
 * C ABI's opaque values carried as longs; results are the C results as
 * they came. Package-private: the public classes are the API.
 */
final class Native {
    private Native() {}

    static native String init(String libzlinkPath, String[] exports, int major);
    static native String missingExport(String[] names);
    static native int[] version();
    static native long liveOperations();
    static native String resultName(int value);
    static native String errorKindName(int kind);
    static native int lastErrno();
    static native String strerror(int errnum);
    static native int runtimeContextEnter();
    static native int runtimeContextLeave();
    static native boolean inRuntimeContext();

    // queues and events
    static native long completionQueue();
    static native long queueNew();
    static native void queueFree(long queue);
    static native int takeBatch(long queue, long[] out, byte[][] payloads);
    static native int eventResult(long ev);
    static native int eventRemoteCode(long ev);
    static native String eventMessage(long ev);
    static native byte[] eventPayload(long ev);
    static native String eventPacket(long ev);
    static native String eventContentType(long ev);
    static native void eventFree(long ev);

    // hosts
    static native long hostNew(String name, int[] result);
    static native int hostSetOption(long host, int option, long value);
    static native int hostGetOption(long host, int option, long[] value);
    static native int hostAdd(int which, long host, String a, String b);
    static native int nodeSetOption(int which, long host, String name, int option, long value);
    static native int nodeGetOption(int which, long host, String name, int option, long[] value);
    static native int addMeshNode(long host, String mesh, byte[] rid, String listen);
    static native int meshConnect(long host, String mesh, String endpoint, byte[] peerRid);
    static native int meshWeight(int which, long host, String mesh, String channel, int weight);
    static native String hostEndpoint(long host, String name, int[] result);
    static native int meshReadyPeers(long host, String mesh, int[] result);
    static native int addHandler(long host, long queue, Host self, int owner, String ownerName,
                                 int kind, String packet, long id);
    static native int hostDo(int which, long host);
    static native int hostShutdown(long host, long deadlineNs);
    static native int hostStatus(long host, long[] out);
    static native int hostCapacity(long host, long[] out);
    static native int ownerStatus(long host, int owner, String name, long[] out);
    static native int hostMetric(long host, String name, String labels, long[] value);

    // calls
    static native long callNew(int which, long host, String name, byte[] rid, int[] result);
    static native int callSetPayload(long call, String packet, String contentType, byte[] data);
    static native int callSetTimeout(long call, long ns);
    static native int callSetMetadata(long call, String key, String value);
    static native int callStart(long call, long id, int yield);
    static native long callWait(long call, int[] result);
    static native int callCancel(long call);
    static native int callRelease(long call);

    // turns
    static native int turnKind(long turn);
    static native String turnPacket(long turn);
    static native String turnContentType(long turn);
    static native byte[] turnPayload(long turn);
    static native String turnMetadata(long turn, String key);
    static native byte[] turnSource(long turn);
    static native long turnSequence(long turn);
    static native long turnReply(long turn, int kind, String message, int[] result);
    static native int turnEnd(long turn, boolean failed, String message);
    static native int turnRespond(long turn, String packet, String contentType, byte[] data);

    // Core
    static native long ctxNew();
    static native int ctxEnd(int which, long ctx);
    static native int ctxSet(long ctx, int option, int value);
    static native long socketNew(long ctx, int type);
    static native long monitorOpen(long socket);
    static native int monitorStatus(long monitor, long[] out);
    static native int monitorClose(long monitor);
    static native int socketClose(long socket);
    static native int setsockopt(long socket, int option, byte[] value);
    static native int getsockopt(long socket, int option, int cap, Object[] out);
    static native int setRoutingId(long socket, byte[] id);
    static native int endpoint(int which, long socket, String endpoint);
    static native int send(long socket, byte[] rid, byte[][] parts, int flags, long[] idOut);
    static native int request(long socket, byte[] rid, byte[][] parts, int flags, int timeoutMs,
                              long[] idOut);
    static native int reply(long socket, byte[] rid, long token, byte[][] parts);
    static native int replySubmit(long socket, byte[] rid, long token, int error, byte[][] parts,
                                  int flags, long[] idOut);
    static native int receiveFlow(long socket, int state);
    static native int recv(long socket, int router, int flags, Object[] out, long[] token);
    static native int completionRecv(long socket, int flags, long[] longs, Object[] out);
    static native long pollerNew();
    static native int pollerDestroy(long[] pollerSlot);
    static native int pollerSize(long poller, int[] result);
    static native int pollerCtl(int op, long poller, long source, int fd, long user, int events);
    static native int pollerWait(long poller, int cap, long timeoutMs, long[] out, int[] result);
    static native int poll(long[] items, int count, long timeoutMs, int[] result);
    static native long timerNew();
    static native int timerDestroy(long[] timerSlot);
    static native int timerStart(long timer, long intervalNs, long repeat);
    static native int timerStop(long timer);
    static native int timerRecv(long timer, int flags, long[] count);
}
