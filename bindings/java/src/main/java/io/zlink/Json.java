package io.zlink;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;

/** Typed payloads: JSON through Jackson (framework-contract §4). */
final class Json {
    private Json() {}

    static final String CONTENT_TYPE = "application/json";
    private static final ObjectMapper MAPPER = new ObjectMapper();

    static byte[] encode(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot encode " + value.getClass().getName()
                                               + " as JSON: " + e.getMessage(), e);
        }
    }

    /** Decodes bytes as type; an undecodable payload is a TypeMismatch. */
    static <T> T decode(byte[] bytes, Class<T> type) {
        try {
            return MAPPER.readValue(bytes == null ? new byte[0] : bytes, type);
        } catch (IOException e) {
            throw new ZLinkFrameworkException(Tables.ErrorKind.TYPE_MISMATCH,
                                              Tables.FW_TYPE_MISMATCH, 0,
                                              "cannot decode the payload as " + type.getName()
                                                  + ": " + e.getMessage());
        }
    }
}
