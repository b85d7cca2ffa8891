// Bench.java — the request/reply benchmark's program in Java (framework_java;
// bench/rr_common.h states the protocol it speaks, bench/rr_framework.c is
// the same program in C). Both sides use the Java binding's public API:
//   server   one Host, ClientServer server "bench" on tcp://127.0.0.1:0, a
//            request handler for "echo" that answers the payload
//   client   one Host, ClientServer client; N requests in flight, each
//            completion (on the binding's completion pump) records its
//            latency and, while the window is open, starts the slot's next
package io.zlink.bench;

import io.zlink.Host;
import io.zlink.RequestCall;
import io.zlink.ZLink;
import java.io.InputStream;
import java.util.Arrays;

public final class Bench {
    private static final String CHANNEL = "bench";
    private static final String PACKET = "echo";
    private static final String TYPE = "application/octet-stream";
    private static final long STALL_NS = 20_000_000_000L;

    private static void error(String what) {
        System.out.println("ERROR," + what);
        System.out.flush();
        System.exit(1);
    }

    private static void server() throws Exception {
        Host host = new Host("bench-server");
        host.addCsServer(CHANNEL, "tcp://127.0.0.1:0")
            .onRequest(CHANNEL, PACKET, turn -> {
                turn.respond(PACKET, TYPE, turn.payload());
                return null;
            })
            .start();
        String ep = host.endpoint(CHANNEL);
        System.out.println("READY,port=" + ep.substring(ep.lastIndexOf(':') + 1));
        System.out.flush();
        InputStream in = System.in;
        while (in.read() >= 0) { }
        host.shutdown();
        host.close();
    }

    /** The client's shared state; every field is guarded by the instance. */
    private static final class Client {
        final Host host;
        final byte[] payload;
        final long windowStart, windowEnd;
        final long[] startNs;
        double[] samples = new double[1 << 16];
        int nsamples;
        long calls;
        int inflight;
        String failure;

        Client(Host host, int size, int n, long warmupNs, long durationNs) {
            this.host = host;
            this.payload = new byte[size];
            Arrays.fill(payload, (byte) 'q');
            this.startNs = new long[n];
            this.windowStart = System.nanoTime() + warmupNs;
            this.windowEnd = windowStart + durationNs;
            this.inflight = n;
        }

        void start(int slot) {
            synchronized (this) {
                startNs[slot] = System.nanoTime();
            }
            // closed at once, as the C program releases its call: the
            // binding releases it after the completion was delivered
            try (RequestCall call = host.requestToChannel(CHANNEL)) {
                call.payload(PACKET, TYPE, payload).submit()
                    .whenComplete((reply, err) -> done(slot, reply, err));
            } catch (RuntimeException e) {
                done(slot, null, e);
            }
        }

        void done(int slot, byte[] reply, Throwable err) {
            long now = System.nanoTime();
            boolean again;
            synchronized (this) {
                boolean ok = err == null && reply != null && reply.length == payload.length;
                if (!ok && failure == null)
                    failure = "request outcome: " + (err != null ? err : "wrong reply size");
                if (ok && now >= windowStart && now < windowEnd) {
                    calls++;
                    if (nsamples == samples.length)
                        samples = Arrays.copyOf(samples, samples.length * 2);
                    samples[nsamples++] = (now - startNs[slot]) / 1000.0;
                }
                again = ok && failure == null && now < windowEnd;
                if (!again && --inflight == 0)
                    notifyAll();
            }
            if (again)
                start(slot);
        }
    }

    private static double percentile(double[] sorted, int n, double p) {
        int rank = (int) Math.ceil(p / 100.0 * n);
        return sorted[Math.max(1, Math.min(rank, n)) - 1];
    }

    private static void client(String[] args) throws Exception {
        int port = 0, n = 0, size = 0;
        long warmup = 0, duration = 0;
        for (int i = 1; i + 1 < args.length; i += 2) {
            long v = Long.parseLong(args[i + 1]);
            switch (args[i]) {
                case "--port" -> port = (int) v;
                case "--inflight" -> n = (int) v;
                case "--size" -> size = (int) v;
                case "--warmup-ms" -> warmup = v * 1_000_000L;
                case "--duration-ms" -> duration = v * 1_000_000L;
                default -> error("usage: unknown option " + args[i]);
            }
        }
        if (port <= 0 || n <= 0 || size <= 0 || duration <= 0)
            error("usage: client --port P --inflight N --size S --warmup-ms W --duration-ms D");
        Host host = new Host("bench-client");
        host.addCsClient(CHANNEL, "tcp://127.0.0.1:" + port).start();
        Client cl = new Client(host, size, n, warmup, duration);
        for (int i = 0; i < n; i++)
            cl.start(i);
        synchronized (cl) {
            long bound = cl.windowEnd + STALL_NS;
            while (cl.inflight > 0 && System.nanoTime() < bound)
                cl.wait(Math.max(1, (bound - System.nanoTime()) / 1_000_000));
            if (cl.inflight > 0)
                error(cl.inflight + " calls still in flight 20 s after the window");
            if (cl.failure != null)
                error(cl.failure);
            if (cl.nsamples == 0)
                error("no call completed inside the measuring window");
        }
        host.shutdown();
        host.close();
        double[] s = Arrays.copyOf(cl.samples, cl.nsamples);
        Arrays.sort(s);
        double seconds = duration / 1e9;
        int[] v = ZLink.version();
        System.out.printf("INFO,version=zlink-java-%d.%d.%d%n", v[0], v[1], v[2]);
        System.out.printf("SAMPLE,calls=%d,window_s=%.3f,throughput=%.1f,p50_us=%.2f,p99_us=%.2f%n",
                          cl.calls, seconds, cl.calls / seconds, percentile(s, s.length, 50),
                          percentile(s, s.length, 99));
        System.out.flush();
    }

    public static void main(String[] args) {
        try {
            if (args.length == 1 && args[0].equals("server"))
                server();
            else if (args.length >= 1 && args[0].equals("client"))
                client(args);
            else
                error("usage: framework_java server | client --port P --inflight N --size S "
                      + "--warmup-ms W --duration-ms D");
        } catch (Exception e) {
            error(e.toString());
        }
        System.exit(0);
    }
}
