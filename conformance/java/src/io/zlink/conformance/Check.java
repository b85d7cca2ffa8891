package io.zlink.conformance;

import io.zlink.Tables;
import io.zlink.ZLinkFrameworkException;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.function.BooleanSupplier;

/**
 * The runner's checks: the first failed one ends the case with
 * "File.java:line: what" (the caller's position).
 */
final class Check {
    private Check() {}

    /** A failed check. */
    static final class Failure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Failure(String message) {
            super(message, null, false, false);
        }
    }

    /** The timeout multiplier of the build (ZT_TIMEOUT_MULT; 1 unset). */
    static double mult() {
        String m = System.getenv("ZT_TIMEOUT_MULT");
        try {
            return m == null || m.isEmpty() ? 1.0 : Double.parseDouble(m);
        } catch (NumberFormatException e) {
            return 1.0;
        }
    }

    /** ms scaled by the timeout multiplier (a failure bound). */
    static long ms(long ms) {
        return (long) (ms * mult());
    }

    static Failure fail(String what) {
        StackTraceElement at = null;
        for (StackTraceElement e : new Throwable().getStackTrace()) {
            if (!e.getClassName().equals(Check.class.getName())) {
                at = e;
                break;
            }
        }
        String where = at == null ? "?" : at.getFileName() + ":" + at.getLineNumber();
        // Printed now as well: cleanup on the way out (a context's term
        // waiting for a socket the failed case left open) may hang until
        // the runner's bound, and the detail must survive that.
        System.out.println("FAIL " + where + ": " + what);
        System.out.flush();
        return new Failure(where + ": " + what);
    }

    static void that(boolean cond, String what) {
        if (!cond)
            throw fail(what);
    }

    static void eq(long got, long want, String what) {
        if (got != want)
            throw fail(what + " = " + got + ", expected " + want);
    }

    static void eq(Object got, Object want, String what) {
        if (!Objects.equals(got, want))
            throw fail(what + " = " + got + ", expected " + want);
    }

    /** Waits (polling an observable state) up to ms scaled; fails after. */
    static void eventually(BooleanSupplier cond, long ms, String what) {
        long end = System.nanoTime() + ms(ms) * 1_000_000L;
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end)
                throw fail("not within " + ms + " ms: " + what);
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw fail("interrupted");
            }
        }
    }

    /** The framework result a throwable stands for: 0 for none. */
    static int resultOf(Throwable t) {
        if (t == null)
            return Tables.FW_OK;
        if (t instanceof java.util.concurrent.CompletionException && t.getCause() != null)
            t = t.getCause();
        if (t instanceof CancellationException)
            return Tables.FW_CANCELLED;
        if (t instanceof ZLinkFrameworkException)
            return ((ZLinkFrameworkException) t).result();
        if (t instanceof io.zlink.ZLinkArgumentException)
            return ((io.zlink.ZLinkArgumentException) t).result();
        throw fail("unexpected exception " + t);
    }

    /** Fails unless the result is want, naming both. */
    static void result(int got, int want, String what) {
        if (got != want)
            throw fail(what + " = " + Tables.resultName(got) + " (" + got + "), expected "
                       + Tables.resultName(want) + " (" + want + ")");
    }

    /** Runs r and returns the framework result it threw (0 when none). */
    static int resultOf(Runnable r) {
        try {
            r.run();
            return Tables.FW_OK;
        } catch (RuntimeException e) {
            return resultOf((Throwable) e);
        }
    }
}
