package io.zlink;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.CancellationException;

/**
 * Loading the native libraries, and the library-wide facts.
 *
 * <p>Where the libraries come from, in order: the system properties
 * {@code zlink.library} (the path of libzlink.so.1) and {@code zlink.jni}
 * (the path of libzlink_jni.so); else the jar's resources
 * {@code /io/zlink/native/linux-x86_64/}, extracted to a temporary
 * directory; else the directories of {@code java.library.path}. The JNI
 * library then dlopen()s libzlink.so.1, resolves every export of the
 * generated table (Tables.EXPORTS), failing with the missing name, and
 * checks that zlink_version()'s major is Tables.MAJOR. Any failure throws
 * ZLinkLoadException, from the first use of any class of the binding.
 */
public final class ZLink {
    private ZLink() {}

    static final String RESOURCE_DIR = "/io/zlink/native/linux-x86_64/";
    private static final String LIB = "libzlink.so.1";
    private static final String JNI = "libzlink_jni.so";

    private static volatile Path loaded;

    /** Loads the libraries if that has not happened yet; idempotent. */
    public static synchronized void load() {
        if (loaded != null)
            return;
        Path lib = find("zlink.library", LIB);
        Path jni = find("zlink.jni", JNI);
        try {
            System.load(jni.toString());
        } catch (UnsatisfiedLinkError e) {
            throw new ZLinkLoadException("cannot load " + jni + ": " + e.getMessage(), e);
        }
        String err = Native.init(lib.toString(), Tables.EXPORTS, Tables.MAJOR);
        if (err != null)
            throw new ZLinkLoadException(err);
        loaded = lib;
        Pump.startCompletions();
    }

    /** The path of the libzlink.so.1 that was loaded. */
    public static Path loadedLibraryPath() {
        load();
        return loaded;
    }

    /** The loaded library's version: {major, minor, patch}. */
    public static int[] version() {
        load();
        return Native.version();
    }

    /** True on a thread marked as a runtime context (a pump, a framework thread). */
    public static boolean inRuntimeContext() {
        load();
        return Native.inRuntimeContext();
    }

    /**
     * Marks this thread as a runtime context (zlink_runtime_context_enter;
     * nested marks count): the synchronous terminators then fail at once
     * with InvalidOperation on it. For threads of the application's own
     * event loops that run handlers or completions; the binding's pumps
     * are marked already. Undone by leaveRuntimeContext() on the same thread.
     */
    public static void enterRuntimeContext() {
        load();
        check(Native.runtimeContextEnter(), "runtime context enter");
    }

    /** Removes one mark enterRuntimeContext() put on this thread (zlink_runtime_context_leave). */
    public static void leaveRuntimeContext() {
        load();
        check(Native.runtimeContextLeave(), "runtime context leave");
    }

    /**
     * Operations (started calls) whose native memory is still allocated:
     * each is freed on its completion path. For tests and leak checks.
     */
    public static long liveOperations() {
        load();
        return Native.liveOperations();
    }

    /**
     * The load check applied to other names: throws ZLinkLoadException
     * naming the first of names the loaded library does not export. The
     * load itself runs the same check on Tables.EXPORTS. (A test hook.)
     */
    static void checkExports(String... names) {
        load();
        String missing = Native.missingExport(names);
        if (missing != null)
            throw new ZLinkLoadException("libzlink lacks the export " + missing);
    }

    private static Path find(String property, String name) {
        String p = System.getProperty(property);
        if (p != null && !p.isEmpty()) {
            Path path = Paths.get(p).toAbsolutePath();
            if (!Files.isRegularFile(path))
                throw new ZLinkLoadException(property + " names " + path + ", which does not exist");
            return path;
        }
        Path extracted = extract(name);
        if (extracted != null)
            return extracted;
        String dirs = System.getProperty("java.library.path", "");
        for (String d : dirs.split(java.io.File.pathSeparator)) {
            if (d.isEmpty())
                continue;
            Path path = Paths.get(d, name);
            if (Files.isRegularFile(path))
                return path.toAbsolutePath();
        }
        throw new ZLinkLoadException("cannot find " + name + ": set -D" + property
                                     + ", put it in the jar or on java.library.path");
    }

    private static Path tempDir;

    private static Path extract(String name) {
        try (InputStream in = ZLink.class.getResourceAsStream(RESOURCE_DIR + name)) {
            if (in == null)
                return null;
            if (tempDir == null) {
                tempDir = Files.createTempDirectory("zlink-native");
                tempDir.toFile().deleteOnExit();
            }
            Path out = tempDir.resolve(name);
            Files.copy(in, out, StandardCopyOption.REPLACE_EXISTING);
            out.toFile().deleteOnExit();
            return out;
        } catch (IOException e) {
            throw new ZLinkLoadException("cannot extract " + name + ": " + e.getMessage(), e);
        }
    }

    /**
     * The Java exception of a failed framework result: CANCELLED is a
     * CancellationException, an error kind a ZLinkFrameworkException, and
     * INVALID_ARGUMENT / INVALID_HANDLE a ZLinkArgumentException.
     */
    static RuntimeException failure(int result, int remoteCode, String message, String what) {
        if (result == Tables.FW_CANCELLED) {
            CancellationException c = new CancellationException(
                message == null || message.isEmpty() ? what + ": cancelled" : message);
            return c;
        }
        Tables.ErrorKind kind = Tables.ErrorKind.ofResult(result);
        if (kind != null)
            return new ZLinkFrameworkException(kind, result, remoteCode,
                                               message == null || message.isEmpty()
                                                   ? what + ": " + kind.displayName() : message);
        return new ZLinkArgumentException(result, what);
    }

    /** Throws failure(result) unless result is OK. */
    static void check(int result, String what) {
        if (result != Tables.FW_OK)
            throw failure(result, 0, null, what);
    }
}
