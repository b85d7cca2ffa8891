package io.zlink;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * A request to a channel or a node: the stage completes with the reply,
 * or with the outcome's exception (ZLinkFrameworkException of its kind,
 * CancellationException for CANCELLED).
 */
public final class RequestCall extends CallBase {
    RequestCall(long handle) {
        super(handle);
    }

    /** The payload: packet name, content type ("" = application/json) and bytes (copied). */
    public RequestCall payload(String packet, String contentType, byte[] data) {
        setPayload(packet, contentType, data);
        return this;
    }

    public RequestCall payload(String packet, byte[] data) {
        return payload(packet, "", data);
    }

    /** A typed payload, encoded as JSON with Jackson. */
    public RequestCall payload(String packet, Object value) {
        return payload(packet, Json.CONTENT_TYPE, Json.encode(value));
    }

    public RequestCall metadata(String key, String value) {
        setMetadata(key, value);
        return this;
    }

    /** The whole-call timeout (zlink_call_set_timeout; rounded up to whole ms by C). */
    public RequestCall timeout(Duration timeout) {
        ZLink.check(Native.callSetTimeout(handle, timeout.toNanos()), "timeout");
        return this;
    }

    /** Asks C to cancel this call (before a terminator: the terminator then gives CANCELLED). */
    public RequestCall cancel() {
        cancelNative();
        return this;
    }

    /** General async: the reply's bytes. */
    public CompletionStage<byte[]> submit() {
        return startAsync(reply -> reply == null ? new byte[0] : reply.bytes(), false);
    }

    /** General async: the reply decoded from JSON as type. */
    public <T> CompletionStage<T> submit(Class<T> type) {
        return startAsync(reply -> Json.decode(reply == null ? null : reply.bytes(), type), false);
    }

    /** General async: the whole reply (packet, content type, bytes). */
    public CompletionStage<Reply> submitReply() {
        return startAsync(reply -> reply == null ? new Reply("", "", null) : reply, false, true);
    }

    /** Synchronous: blocks this application thread; InvalidOperation in a runtime context. */
    public byte[] submit_sync() {
        Reply r = waitSync();
        return r == null ? new byte[0] : r.payload();
    }

    public <T> T submit_sync(Class<T> type) {
        Reply r = waitSync();
        return Json.decode(r == null ? null : r.payload(), type);
    }

    /** yield: InvalidOperation in this version (no Spot turns exist). */
    public <T> CompletionStage<T> yield(Class<T> type) {
        return startAsync(reply -> Json.decode(reply == null ? null : reply.bytes(), type), true);
    }
}
