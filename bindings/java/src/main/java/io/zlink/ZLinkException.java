package io.zlink;

/**
 * A Core call failed: result() is the family's result value (named by
 * Tables.resultName), errno() the thread's zlink_errno() right after it.
 */
public final class ZLinkException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int result;
    private final int errno;

    ZLinkException(String what, int result, int errno) {
        super(what + ": " + Tables.resultName(result) + " (" + Native.strerror(errno) + ")");
        this.result = result;
        this.errno = errno;
    }

    /** The C result value. */
    public int result() { return result; }

    /** zlink_errno() after the failure. */
    public int errno() { return errno; }

    /** The symbolic name of result(). */
    public String resultName() { return Tables.resultName(result); }
}
