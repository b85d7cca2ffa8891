package io.zlink;

import io.zlink.Tables.ErrorKind;

/**
 * A handler's turn: the record and the gate (zlink_turn_*). Usable from
 * any thread until the turn ends; the binding ends it when the handler
 * returns (or its stage completes), unless respond() ended it already.
 */
public final class Turn {
    /** The message kinds of zlink_message_kind_t. */
    public enum Kind { SEND, REQUEST }

    private final long handle;
    private boolean ended; // guarded by this

    Turn(long handle) {
        this.handle = handle;
    }

    public Kind kind() {
        return Native.turnKind(handle) == 2 ? Kind.REQUEST : Kind.SEND;
    }

    public String packet() { return Native.turnPacket(handle); }

    public String contentType() { return Native.turnContentType(handle); }

    /** A copy of the record's payload. */
    public byte[] payload() {
        byte[] b = Native.turnPayload(handle);
        return b == null ? new byte[0] : b;
    }

    /** The payload decoded from JSON as type (TypeMismatch when it does not decode). */
    public <T> T payload(Class<T> type) { return Json.decode(payload(), type); }

    /** A metadata value, or null when the key is absent. */
    public String metadata(String key) { return Native.turnMetadata(handle, key); }

    /** The sender's routing id (empty for ClientServer). */
    public byte[] source() {
        byte[] b = Native.turnSource(handle);
        return b == null ? new byte[0] : b;
    }

    /** The record's sequence number in its owner's queue. */
    public long sequence() { return Native.turnSequence(handle); }

    /** A reply call (finish it with submit() here, or later from any thread). */
    public SendCall reply() {
        return new SendCall(replyHandle(-1, null));
    }

    /** An error reply of kind with message. */
    public SendCall replyError(ErrorKind kind, String message) {
        return new SendCall(replyHandle(kind.value(), message));
    }

    private long replyHandle(int kind, String message) {
        int[] res = new int[1];
        long h = Native.turnReply(handle, kind, message == null ? "" : message, res);
        if (h == 0)
            throw ZLink.failure(res[0], 0, null, "reply");
        return h;
    }

    /** Answers the request with these bytes and ends the turn (zlink_turn_respond). */
    public void respond(String packet, String contentType, byte[] data) {
        int r = Native.turnRespond(handle, packet, contentType == null ? "" : contentType,
                                   data == null ? new byte[0] : data);
        if (r == Tables.FW_OK || r == Tables.FW_UNAVAILABLE || r == Tables.FW_SHUTTING_DOWN) {
            synchronized (this) {
                ended = true;
            }
        }
        ZLink.check(r, "respond");
    }

    public void respond(String packet, byte[] data) {
        respond(packet, "", data);
    }

    /** Answers with value encoded as JSON (Jackson) and ends the turn. */
    public void respond(String packet, Object value) {
        respond(packet, Json.CONTENT_TYPE, Json.encode(value));
    }

    /** Ends the turn (called by the binding after the handler). */
    void end(boolean failed, String message) {
        synchronized (this) {
            if (ended)
                return;
            ended = true;
        }
        Native.turnEnd(handle, failed, message == null ? "" : message);
    }
}
