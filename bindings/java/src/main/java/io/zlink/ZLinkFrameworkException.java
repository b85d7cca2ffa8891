package io.zlink;

import io.zlink.Tables.ErrorKind;

/**
 * A framework call failed with one of the 13 error kinds. The kind comes
 * from the C result through the generated table (Tables.ErrorKind), never
 * from the message. remoteCode() is a remote error's wire terminalResult
 * (0 when the failure was local).
 */
public class ZLinkFrameworkException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final ErrorKind kind;
    private final int result;
    private final int remoteCode;

    ZLinkFrameworkException(ErrorKind kind, int result, int remoteCode, String message) {
        super(message == null || message.isEmpty() ? kind.displayName() : message);
        this.kind = kind;
        this.result = result;
        this.remoteCode = remoteCode;
    }

    /** The error kind. */
    public ErrorKind kind() { return kind; }

    /** The C framework result (800 + kind). */
    public int result() { return result; }

    /** A remote error's wire code, else 0. */
    public int remoteCode() { return remoteCode; }
}
