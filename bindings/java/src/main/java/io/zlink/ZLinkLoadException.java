package io.zlink;

/** The native libraries could not be loaded or lack what the binding needs. */
public final class ZLinkLoadException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ZLinkLoadException(String message) {
        super(message);
    }

    ZLinkLoadException(String message, Throwable cause) {
        super(message, cause);
    }
}
