package io.zlink;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A Core socket. Sends and receives move whole records of byte[] parts;
 * every method returns or throws what the C call gave: the *Result
 * methods return the family's result value (Tables.SUBMIT_*, RECV_*), the
 * others throw ZLinkException for a non-zero result.
 */
public final class Socket implements AutoCloseable {
    public static final int PAIR = 0x1001, PUB = 0x1002, SUB = 0x1003, DEALER = 0x1004,
                            ROUTER = 0x1005, XPUB = 0x1006, XSUB = 0x1007, STREAM = 0x1008;
    public static final int SNDBUF = 0x3005, RCVBUF = 0x3006;
    public static final int LINGER = 0x300A, SNDHWM = 0x300F, RCVHWM = 0x3010,
                            RCVTIMEO = 0x3012, SNDTIMEO = 0x3013, LAST_ENDPOINT = 0x3014,
                            ROUTER_MANDATORY = 0x3101, CONNECT_ROUTING_ID = 0x3104,
                            ROUTER_REQUEST_TIMEOUT_MS = 0x3105,
                            DEALER_REQUEST_TIMEOUT_MS = 0x3202, TYPE = 0x3009, EVENTS = 0x3008;
    public static final int DONTWAIT = 1;

    final long handle;

    Socket(long handle) {
        this.handle = handle;
    }

    /** A view of a raw socket handle value, unchecked: C decides what it is (a poll item, an event's socket). */
    public static Socket ofHandle(long raw) {
        ZLink.load();
        return new Socket(raw);
    }

    /** The raw handle value (what Poller events carry in socket). */
    public long handle() { return handle; }

    private static void check(int r, String what) {
        if (r != 0)
            throw new ZLinkException(what, r, Native.lastErrno());
    }

    /** An int option (4 bytes). */
    public Socket option(int option, int value) {
        check(Native.setsockopt(handle, option, ByteBuffer.allocate(4).order(ByteOrder.nativeOrder())
                                                   .putInt(value).array()), "setsockopt");
        return this;
    }

    /** An 8-byte option (HWMs, AFFINITY, MAXMSGSIZE). */
    public Socket option(int option, long value) {
        check(Native.setsockopt(handle, option, ByteBuffer.allocate(8).order(ByteOrder.nativeOrder())
                                                   .putLong(value).array()), "setsockopt");
        return this;
    }

    public Socket option(int option, byte[] value) {
        check(Native.setsockopt(handle, option, value), "setsockopt");
        return this;
    }

    public int intOption(int option) {
        Object[] out = new Object[1];
        check(Native.getsockopt(handle, option, 4, out), "getsockopt");
        return ByteBuffer.wrap((byte[]) out[0]).order(ByteOrder.nativeOrder()).getInt();
    }

    public long longOption(int option) {
        Object[] out = new Object[1];
        check(Native.getsockopt(handle, option, 8, out), "getsockopt");
        return ByteBuffer.wrap((byte[]) out[0]).order(ByteOrder.nativeOrder()).getLong();
    }

    /** A string option (read back NUL-terminated). */
    public String stringOption(int option) {
        Object[] out = new Object[1];
        check(Native.getsockopt(handle, option, 512, out), "getsockopt");
        byte[] b = (byte[]) out[0];
        int n = 0;
        while (n < b.length && b[n] != 0)
            n++;
        return new String(b, 0, n, StandardCharsets.UTF_8);
    }

    public Socket routingId(byte[] id) {
        check(Native.setRoutingId(handle, id), "set_routing_id");
        return this;
    }

    public Socket bind(String endpoint) {
        check(Native.endpoint(0, handle, endpoint), "bind " + endpoint);
        return this;
    }

    public Socket connect(String endpoint) {
        check(Native.endpoint(1, handle, endpoint), "connect " + endpoint);
        return this;
    }

    public Socket unbind(String endpoint) {
        check(Native.endpoint(2, handle, endpoint), "unbind " + endpoint);
        return this;
    }

    public Socket disconnect(String endpoint) {
        check(Native.endpoint(3, handle, endpoint), "disconnect " + endpoint);
        return this;
    }

    /** The bound endpoint (LAST_ENDPOINT). */
    public String lastEndpoint() {
        return stringOption(LAST_ENDPOINT);
    }

    /** zlink_send (PAIR, DEALER): the submit result; the wait token goes to tokenOut[0]. */
    public int sendResult(int flags, long[] tokenOut, byte[]... parts) {
        return Native.send(handle, null, parts, flags, tokenOut);
    }

    /** zlink_send_rid (ROUTER, STREAM): the submit result. */
    public int sendToResult(byte[] rid, int flags, long[] tokenOut, byte[]... parts) {
        return Native.send(handle, rid, parts, flags, tokenOut);
    }

    public void send(byte[]... parts) {
        check(sendResult(0, null, parts), "send");
    }

    public void sendTo(byte[] rid, byte[]... parts) {
        check(sendToResult(rid, 0, null, parts), "send_rid");
    }

    /** zlink_request (rid null on a DEALER): the submit result; the completion id to idOut[0]. */
    public int requestResult(byte[] rid, int flags, int timeoutMs, long[] idOut, byte[]... parts) {
        return Native.request(handle, rid, parts, flags, timeoutMs, idOut);
    }

    /** zlink_reply on a ROUTER to a received request. */
    public int replyResult(byte[] rid, long token, byte[]... parts) {
        return Native.reply(handle, rid, token, parts);
    }

    /**
     * zlink_reply_submit: error 0 answers, error > 0 answers with that
     * errno; DONTWAIT refused for room gives BACKPRESSURED and a wait
     * token in tokenOut[0].
     */
    public int replySubmitResult(byte[] rid, long token, int error, int flags, long[] tokenOut,
                                 byte[]... parts) {
        return Native.replySubmit(handle, rid, token, error, parts, flags, tokenOut);
    }

    /** zlink_socket_set_receive_flow_state (DEALER, ROUTER): PAUSED or RUNNING. */
    public int receiveFlowResult(boolean paused) {
        return Native.receiveFlow(handle, paused ? 1 : 0);
    }

    /** zlink_errno() of this thread's last failed call. */
    public static int lastErrno() {
        return Native.lastErrno();
    }

    /** A received record. */
    public static final class Record {
        public final int result;
        public final byte[][] parts;
        public final byte[] routingId;
        public final long token;

        Record(int result, byte[][] parts, byte[] routingId, long token) {
            this.result = result;
            this.parts = parts;
            this.routingId = routingId;
            this.token = token;
        }

        public boolean ok() { return result == Tables.RECV_OK; }

        @Override
        public String toString() {
            return Tables.resultName(result) + " " + (parts == null ? "-" : parts.length + " parts")
                + (routingId == null ? "" : " from " + Arrays.toString(routingId));
        }
    }

    /** zlink_recv (PAIR, DEALER, STREAM raw); result in the record. */
    public Record recv(int flags) {
        Object[] out = new Object[2];
        long[] tok = new long[1];
        int r = Native.recv(handle, 0, flags, out, tok);
        return new Record(r, (byte[][]) out[0], (byte[]) out[1], 0);
    }

    /** zlink_router_recv; token non-zero for a REQUEST. */
    public Record routerRecv(int flags) {
        Object[] out = new Object[2];
        long[] tok = new long[1];
        int r = Native.recv(handle, 1, flags, out, tok);
        return new Record(r, (byte[][]) out[0], (byte[]) out[1], tok[0]);
    }

    /** One completion queue record. */
    public static final class Completion {
        public final int result;
        public final int kind;
        public final long id;
        public final int sendResult;
        public final int sendTerminalErrno;
        public final int requestResult;
        public final byte[][] replyParts;
        public final byte[] peer;

        Completion(int result, long[] v, Object[] o) {
            this.result = result;
            kind = (int) v[0];
            id = v[1];
            sendResult = (int) v[2];
            sendTerminalErrno = (int) v[3];
            requestResult = (int) v[4];
            replyParts = (byte[][]) o[0];
            peer = (byte[]) o[1];
        }
    }

    /** zlink_completion_recv. */
    public Completion completion(int flags) {
        long[] v = new long[5];
        Object[] o = new Object[2];
        int r = Native.completionRecv(handle, flags, v, o);
        return new Completion(r, v, o);
    }

    /**
     * The socket's monitor, for its status (zlink_socket_monitor_open with
     * no event bits): one per socket; close it before the socket.
     */
    public Monitor monitor() {
        long m = Native.monitorOpen(handle);
        if (m == 0)
            throw new ZLinkException("monitor open", -1, Native.lastErrno());
        return new Monitor(m);
    }

    /** A socket's monitor (zlink_monitor_status, zlink_monitor_close). */
    public static final class Monitor implements AutoCloseable {
        public static final int STATE_READY = 1, STATE_BOUND_READY = 2, STATE_CLOSED = 8;
        public static final int DETAIL_SND_PENDING = 2, DETAIL_RCV_PENDING = 4, DETAIL_FLOW_STATE = 32;
        private long handle;

        Monitor(long handle) {
            this.handle = handle;
        }

        /**
         * The status snapshot: {state_flags, detail_flags, snd_pending_msgs,
         * snd_pending_bytes, rcv_pending_msgs, rcv_pending_bytes,
         * flow_paused_connections, flow_pause_applied_total,
         * flow_resume_applied_total, flow_state_stale_total,
         * flow_pause_duration_ms}; a field whose detail bit is absent is 0.
         */
        public synchronized long[] status() {
            long[] v = new long[11];
            check(Native.monitorStatus(handle, v), "monitor status");
            return v;
        }

        @Override
        public synchronized void close() {
            if (handle != 0) {
                check(Native.monitorClose(handle), "monitor close");
                handle = 0;
            }
        }
    }

    /** zlink_close; the close result. */
    public int closeResult() {
        return Native.socketClose(handle);
    }

    @Override
    public void close() {
        closeResult();
    }
}
