package io.zlink.conformance;

/**
 * The PL cases' test-only native help (conformance/java/native/pl_native.c):
 * file descriptors, a signal without SA_RESTART, allocation failure on
 * demand. It calls no libzlink function; the cases reach libzlink through
 * the binding only. The library is the one ZLINK_JAVA_PL_NATIVE names
 * (set by //conformance/java:runner).
 */
final class PlNative {
    private PlNative() {}

    static final String ENV = "ZLINK_JAVA_PL_NATIVE";
    private static boolean loaded;

    static synchronized void load() {
        if (loaded)
            return;
        String lib = System.getenv(ENV);
        Check.that(lib != null && new java.io.File(lib).isFile(),
                   "the PL test library (" + ENV + "=" + lib + "; start the runner as //conformance/java:runner)");
        System.load(lib);
        loaded = true;
    }

    static native int pipe(int[] out);
    static native int tcpPair(int[] out);
    static native int writeByte(int fd, boolean oob);
    static native int readByte(int fd);
    static native int close(int fd);
    static native int installNoRestart();
    static native long delivered();
    static native int gettid();
    static native int signalThread(int tid);
    static native boolean preloaded();
    static native int allocFailBegin();
    static native int allocFailEnd();

    /** A pipe: {read end, write end}. */
    static int[] pipe() {
        load();
        int[] fds = new int[2];
        Check.eq(pipe(fds), 0, "pipe()");
        return fds;
    }

    /** A connected loopback TCP pair: {client, server}. */
    static int[] tcpPair() {
        load();
        int[] fds = new int[2];
        Check.eq(tcpPair(fds), 0, "a loopback TCP pair");
        return fds;
    }

    static void write(int fd) {
        Check.eq(writeByte(fd, false), 1, "write one byte to fd " + fd);
    }

    static void read(int fd) {
        Check.eq(readByte(fd), '!', "read the byte from fd " + fd);
    }

    static void closeAll(int... fds) {
        for (int fd : fds)
            Check.eq(close(fd), 0, "close fd " + fd);
    }
}
