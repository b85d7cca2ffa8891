package io.zlink;

/**
 * A framework function refused its arguments or its handle
 * (ZLINK_FW_INVALID_ARGUMENT or ZLINK_FW_INVALID_HANDLE: the two results
 * that are not error kinds).
 */
public final class ZLinkArgumentException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final int result;

    ZLinkArgumentException(int result, String what) {
        super(what + ": " + Tables.resultName(result));
        this.result = result;
    }

    /** The C result. */
    public int result() { return result; }
}
