package io.zlink;

import java.util.Arrays;

/** A request's successful reply: packet name, content type and bytes. */
public final class Reply {
    private final String packet;
    private final String contentType;
    private final byte[] payload;

    Reply(String packet, String contentType, byte[] payload) {
        this.packet = packet;
        this.contentType = contentType;
        this.payload = payload == null ? new byte[0] : payload;
    }

    public String packet() { return packet; }

    public String contentType() { return contentType; }

    /** A copy of the reply's bytes. */
    public byte[] payload() { return Arrays.copyOf(payload, payload.length); }

    /** The bytes themselves, for a decoder of the binding that hands them on (no copy). */
    byte[] bytes() { return payload; }

    /** The reply decoded from JSON (Jackson). */
    public <T> T payload(Class<T> type) { return Json.decode(payload, type); }
}
