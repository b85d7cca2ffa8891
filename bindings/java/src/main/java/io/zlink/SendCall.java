package io.zlink;

import java.util.concurrent.CompletionStage;

/**
 * A one-way call (a send to a channel or a node) or a reply call made from
 * a turn. Its completion is admission: the stage completes with null once
 * the Core accepted the record (seed 000 §4).
 */
public final class SendCall extends CallBase {
    SendCall(long handle) {
        super(handle);
    }

    /** The payload: packet name, content type ("" = application/json) and bytes (copied). */
    public SendCall payload(String packet, String contentType, byte[] data) {
        setPayload(packet, contentType, data);
        return this;
    }

    /** The payload as raw bytes with the default content type. */
    public SendCall payload(String packet, byte[] data) {
        return payload(packet, "", data);
    }

    /** A typed payload, encoded as JSON with Jackson. */
    public SendCall payload(String packet, Object value) {
        return payload(packet, Json.CONTENT_TYPE, Json.encode(value));
    }

    /** A metadata entry (not for replies: InvalidOperation). */
    public SendCall metadata(String key, String value) {
        setMetadata(key, value);
        return this;
    }

    /** Asks C to cancel this call (before a terminator: the terminator then gives CANCELLED). */
    public SendCall cancel() {
        cancelNative();
        return this;
    }

    /** One-way submit: completes at admission, on the completion pump. */
    public CompletionStage<Void> submit() {
        return startAsync(reply -> null, false);
    }

    /**
     * The synchronous terminator: blocks this application thread until
     * admission; InvalidOperation in a runtime context (a handler, a
     * completion, any pump thread).
     */
    public void submit_sync() {
        waitSync();
    }

    /** yield: InvalidOperation in this version (no Spot turns exist). */
    public CompletionStage<Void> yield() {
        return startAsync(reply -> null, true);
    }
}
