package io.zlink.conformance;

import static io.zlink.conformance.Sc.*;

import com.fasterxml.jackson.databind.JsonNode;
import io.zlink.Host;
import io.zlink.SendCall;
import io.zlink.Turn;
import io.zlink.ZLink;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * JQ-08, bounded receive rotation (conformance/c/jq_raw.c
 * rotation_round(), check_runs(), jq08_bounded_rotation()) over the Java
 * binding.
 *
 * <p>Pre-queuing: B runs HANDLER_THREADS 1 (two host threads). Two
 * blocker records, on channels "hold" and "hold2", put both threads into
 * two blocking C handlers of the test-only JNI helper
 * (conformance/java/native/jq08_jni.c, registered on B's C host through
 * Host.nativeHandle() before B starts), because a Java handler never holds
 * a C thread. Then no thread is left to receive, B's permits stay unused
 * (permits_in_use 0) and B stays RUNNING; over inproc a completed send is
 * in B's Core queue, so once every send completed every record waits there
 * when the gates open. The order observed is the one B's ingress hands
 * turns to the Java "svc" handler (the binding's pump runs them in the
 * order the trampoline queued them), and every check of the C case is
 * made on it.
 *
 * <p>Threads: the case's thread builds, sends and checks; the Java handler
 * runs on B's pump, the blockers on B's host threads. The log is guarded
 * by its own monitor.
 */
final class JqRotation {
    private JqRotation() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("JQ-08", JqRotation::boundedRotation);
    }

    // ------------------------------------------------ the native helper

    /** Where the runner's launcher put the helper (conformance/java/BUILD). */
    static final String HELPER_ENV = "ZLINK_JQ08_JNI";

    private static native String nInit(String libzlinkPath);

    private static native int nAddBlocker(long host, int gate, String channel, String packet);

    private static native int nState(int gate, int what);

    private static native void nOpen(int gate);

    private static native int nReset();

    private static boolean loaded;

    /** Loads the helper by absolute path and binds it to the binding's libzlink. */
    static synchronized void loadHelper() {
        if (loaded)
            return;
        String p = System.getenv(HELPER_ENV);
        Check.that(p != null && !p.isEmpty(), "$" + HELPER_ENV + " names the JQ-08 JNI helper (the runner's launcher sets it)");
        Path helper = Paths.get(p).toAbsolutePath();
        Check.that(Files.isRegularFile(helper), "the JQ-08 JNI helper exists at " + helper);
        System.load(helper.toString());
        String why = nInit(ZLink.loadedLibraryPath().toAbsolutePath().toString());
        if (why != null)
            throw Check.fail(why);
        loaded = true;
    }

    static int waiting(int gate) {
        return nState(gate, 0);
    }

    static int passed(int gate) {
        return nState(gate, 1);
    }

    // ---------------------------------------------------------- the log

    static final long BLOCKER = 0xFFFFFFFFL;

    /** What the "svc" handler saw, in arrival order: source index and sequence. */
    static final class Log {
        final String[] names;
        final int[] src;
        final long[] seq;
        int n;                                     // guarded by this
        final AtomicInteger bad = new AtomicInteger(); // unknown source, short payload, overflow

        Log(String[] names, int cap) {
            this.names = names;
            src = new int[cap];
            seq = new long[cap];
        }

        void record(Turn turn) {
            byte[] p = turn.payload();
            byte[] rid = turn.source();
            int s = -1;
            for (int i = 0; i < names.length; i++)
                if (Arrays.equals(rid, names[i].getBytes(StandardCharsets.UTF_8)))
                    s = i;
            long q = p.length >= 4 ? ((p[0] & 0xFFL) << 24 | (p[1] & 0xFFL) << 16 | (p[2] & 0xFFL) << 8 | (p[3] & 0xFFL)) : -1;
            synchronized (this) {
                if (s < 0 || q < 0 || n == src.length) {
                    bad.incrementAndGet();
                } else {
                    src[n] = s;
                    seq[n] = q;
                    n++;
                }
                notifyAll();
            }
        }

        synchronized int count() {
            return n;
        }

        /** Waits until n records were logged (ms scaled: the failure bound). */
        synchronized void await(int want, long ms) throws InterruptedException {
            long end = System.nanoTime() + Check.ms(ms) * 1_000_000L;
            while (n < want) {
                long left = (end - System.nanoTime()) / 1_000_000L;
                if (left <= 0)
                    throw Check.fail("the handler logged " + n + " of " + want + " records within "
                                     + Check.ms(ms) + " ms (bad " + bad.get() + ")");
                wait(left);
            }
            Check.eq(bad.get(), 0, "records with an unknown source or a short payload");
        }
    }

    /**
     * The runs of the log (maximal stretches from one source), as
     * check_runs() of jq_raw.c: each source's records in its sending
     * order; a run that started while another source still had records to
     * come is at most maxRun long; with all three sources still sending
     * (cyclic), the run after a stop comes from the next source, never
     * again from one of the last two. Returns the longest run checked.
     */
    static int checkRuns(Log l, int nsrc, int perSrc, int maxRun, boolean cyclic, String what) {
        int[] left = new int[nsrc];
        Arrays.fill(left, perSrc);
        long[] next = new long[nsrc];
        int longest = 0, nruns = 0;
        int prev0 = -1, prev1 = -1;
        for (int i = 0; i < l.n;) {
            int s = l.src[i];
            int others = 0, alive = 0;
            for (int k = 0; k < nsrc; k++) {
                if (left[k] > 0)
                    alive++;
                if (k != s && left[k] > 0)
                    others++;
            }
            int j = i;
            while (j < l.n && l.src[j] == s) {
                if (l.seq[j] != next[s])
                    throw Check.fail(what + ": record " + j + " of source " + s + " has seq " + l.seq[j]
                                     + ", expected " + next[s]);
                next[s]++;
                j++;
            }
            int len = j - i;
            if (others > 0) {
                longest = Math.max(longest, len);
                if (len > maxRun)
                    throw Check.fail(what + ": source " + s + " got " + len + " consecutive records (records " + i
                                     + ".." + (j - 1) + ") while another still had data; at most " + maxRun
                                     + " expected");
            }
            if (cyclic && alive == nsrc && nsrc == 3 && prev1 >= 0 && (s == prev0 || s == prev1)) {
                StringBuilder runs = new StringBuilder();
                for (int x = 0, r = 0; x < l.n && r < 12; r++) {
                    int y = x;
                    while (y < l.n && l.src[y] == l.src[x])
                        y++;
                    runs.append(" ").append(l.src[x]).append("x").append(y - x);
                    x = y;
                }
                throw Check.fail(what + ": run " + nruns + " (records " + i + ".." + (j - 1) + ") is from source " + s
                                 + " again, not the next socket after the last stop (first runs:" + runs + ")");
            }
            prev1 = prev0;
            prev0 = s;
            left[s] -= Math.min(len, left[s]);
            nruns++;
            i = j;
        }
        for (int k = 0; k < nsrc; k++)
            Check.eq(next[k], perSrc, what + ": records of source " + k);
        return longest;
    }

    // -------------------------------------------------------- the round

    static Host host(String name, int threads, long maxJobs) {
        Host h = new Host(name);
        if (threads > 0)
            h.option(Host.Option.HANDLER_THREADS, threads);
        if (maxJobs > 0)
            h.option(Host.Option.MAX_QUEUED_JOBS, maxJobs);
        return h;
    }

    /** A one-way to channel of h: seq (4 bytes BE) padded to size; waits for admission. */
    static void sendSeq(Host h, String channel, long seq, int size) {
        byte[] p = new byte[Math.max(4, size)];
        p[0] = (byte) (seq >>> 24);
        p[1] = (byte) (seq >>> 16);
        p[2] = (byte) (seq >>> 8);
        p[3] = (byte) seq;
        try (SendCall c = h.sendToChannel(channel)) {
            c.payload("m", "", p).submit_sync();
        }
    }

    /**
     * B: two host threads, a limit that never binds, the Java "svc"
     * handler and the two C blockers. layout 1: one mesh node "m" with
     * the three clients as its peers (one ROUTER); layout 3: "m1".."m3",
     * one per client (three ROUTERs, one channel). Each client pre-queues
     * perSrc records of size bytes; then the gates open.
     */
    static int round(String tr, int layout, int perSrc, int size, int maxRun, String what) throws Exception {
        String[] names = {"A1", "A2", "A3"};
        String[] meshes = layout == 1 ? new String[] {"m", "m", "m"} : new String[] {"m1", "m2", "m3"};
        long hwm = (long) perSrc * (size + 256) * 2 + (1 << 20);
        Log log = new Log(names, 3 * perSrc);
        Check.eq(nReset(), 0, "the helper's gates reset (no thread waits at one)");

        Host b = host("B", 1, 1_000_000);
        Host[] a = new Host[3];
        try {
            for (int i = 0; i < layout; i++) {
                b.addMeshNode(meshes[i], "B", endpoint(tr, "jq08", meshes[i]));
                b.meshAddChannelServer(meshes[i], "svc", 100);
                b.meshOption(meshes[i], Host.NodeOption.RCVHWM, hwm * 3);
            }
            b.meshAddChannelServer(meshes[0], "hold", 100);
            b.meshAddChannelServer(meshes[0], "hold2", 100);
            b.addHandler(Host.OwnerKind.CHANNEL, "svc", Turn.Kind.SEND, "m", turn -> {
                log.record(turn);
                return null;
            });
            Check.eq(nAddBlocker(b.nativeHandle(), 0, "hold", "m"), 0, "the C blocker of \"hold\" registered");
            Check.eq(nAddBlocker(b.nativeHandle(), 1, "hold2", "m"), 0, "the C blocker of \"hold2\" registered");
            b.start();
            String[] bound = new String[layout];
            for (int i = 0; i < layout; i++)
                bound[i] = b.endpoint(meshes[i]);

            for (int i = 0; i < 3; i++) {
                a[i] = host(names[i], 0, 0);
                a[i].addMeshNode(meshes[i], names[i], null);
                a[i].meshAddChannelClient(meshes[i], "svc");
                if (i == 0) {
                    a[i].meshAddChannelClient(meshes[i], "hold");
                    a[i].meshAddChannelClient(meshes[i], "hold2");
                }
                a[i].meshOption(meshes[i], Host.NodeOption.SNDHWM, hwm);
                a[i].meshOption(meshes[i], Host.NodeOption.SEND_TIMEOUT, Duration.ofMillis(60000).toNanos());
                a[i].meshConnect(meshes[i], bound[layout == 1 ? 0 : i], "B");
                a[i].start();
                Host ai = a[i];
                String mi = meshes[i];
                Check.eventually(() -> ai.meshReadyPeers(mi) == 1, 5000, names[i] + " sees B ready");
            }
            for (int i = 0; i < layout; i++) {
                String mi = meshes[i];
                int want = layout == 1 ? 3 : 1;
                Check.eventually(() -> b.meshReadyPeers(mi) == want, 5000, "B's " + mi + " sees its peers ready");
            }

            // The blockers hold both of B's threads: B receives nothing more.
            sendSeq(a[0], "hold", BLOCKER, 4);
            Check.eventually(() -> waiting(0) == 1, 5000, "one host thread of B waits in the \"hold\" blocker");
            sendSeq(a[0], "hold2", BLOCKER, 4);
            Check.eventually(() -> waiting(1) == 1, 5000, "the other host thread of B waits in the \"hold2\" blocker");
            // Pre-queue: the clients take turns, so that no client's
            // records are older than another's by more than one record.
            for (int k = 0; k < perSrc; k++)
                for (int i = 0; i < 3; i++)
                    sendSeq(a[i], "svc", k, size);
            Check.eq(log.count(), 0, what + ": records handled before the gates opened");
            Check.eq(b.capacity().permitsInUse, 0, what + ": B's permits in use with every record queued");
            Check.eq(b.capacity().pressureState, 0, what + ": B's pressure state (RUNNING) with every record queued");

            nOpen(1);
            nOpen(0);
            log.await(3 * perSrc, 30000);
            int longest, first = 0;
            synchronized (log) {
                longest = checkRuns(log, 3, perSrc, maxRun, layout == 3, what);
                while (first < log.n && log.src[first] == log.src[0])
                    first++;
            }
            if (layout == 1 && longest > 1)
                throw Check.fail(what + ": peers of one ROUTER were not interleaved record by record (a run of "
                                 + longest + ")");
            System.out.println("# " + what + " " + tr + ": longest run " + longest + " (first " + first + ")");
            Check.eq(passed(0) + passed(1), 2, "blocker turns ended");
            Check.eventually(() -> b.capacity().permitsInUse == 0, 5000, what + ": B's permits back");
            Check.eq(log.count(), 3 * perSrc, what + ": records handled (each once)");
            Check.eq(log.bad.get(), 0, what + ": records with an unknown source or a short payload");
            return longest;
        } finally {
            nOpen(0); // a failed round must not leave B's threads held
            nOpen(1);
            for (Host h : a)
                if (h != null)
                    h.close();
            b.close();
        }
    }

    static void boundedRotation(JsonNode params) throws Exception {
        int perSrc = JqFlow.param(params, "records");
        int small = JqFlow.param(params, "small_size");
        int large = JqFlow.param(params, "large_size");
        int largeRecords = JqFlow.param(params, "large_records");
        Check.that(perSrc > 0 && small >= 4 && large >= 4 && largeRecords > 0, "parameters in range");
        loadHelper();
        // The byte bound: a socket's batch ends once 1 MiB of payload
        // came, so a run is at most ceil(1 MiB / size) records.
        int byteRun = ((1 << 20) + large - 1) / large;
        for (String tr : transports(params)) {
            round(tr, 1, perSrc, small, 1, "one ROUTER");
            int smallRun = round(tr, 3, perSrc, small, 64, "three sockets");
            int largeRun = round(tr, 3, largeRecords, large, byteRun, "three sockets, large");
            if (largeRun >= smallRun)
                throw Check.fail("runs of " + large + "-byte records (" + largeRun + ") are not shorter than of "
                                 + small + "-byte ones (" + smallRun + ")");
        }
    }
}
