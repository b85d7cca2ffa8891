package io.zlink.conformance;

import io.zlink.Host;
import io.zlink.HostCapacity;
import io.zlink.Tables;
import java.time.Duration;
import java.util.Map;

/** JQ-01 (independent profiles), ported from conformance/c/jq_pressure.c. */
final class JqProfiles {
    private JqProfiles() {}

    static void register(Map<String, Runner.Case> m) {
        m.put("JQ-01", p -> independentProfiles());
    }

    static final String JQ = "zlink.host.application_job_queue.";
    static final String CORE = "zlink.host.core_hwm.";
    static final int COMPACT = 0, BALANCED = 2, THROUGHPUT = 3; // both profile families

    private static Host p2Host(String name) {
        Host h = new Host(name);
        h.option(Host.Option.EFFECTIVE_PROCESSORS, 2);
        h.addCsServer("svc", "tcp://127.0.0.1:0");
        return h;
    }

    private static void expectStarted(Host h, long m, int jqProfile, int coreProfile) {
        h.start();
        HostCapacity c = h.capacity();
        Check.eq(c.effectiveMax, m, "effective_max");
        Check.eq(c.profile, jqProfile, "the job queue profile");
        Check.eq(h.metric(JQ + "limit", ""), m, "the limit metric");
        Check.eq(h.metric(CORE + "profile", ""), coreProfile, "the Core profile metric");
    }

    private static void expectStartRefused(Host h, int want) {
        Check.result(Check.resultOf(() -> h.start()), want, "start");
        Check.eq(h.state(), Host.State.FAILED, "the state");
        Check.that(Check.resultOf(() -> h.endpoint("svc")) != Tables.FW_OK, "never bound");
        h.close();
    }

    private static void end(Host h) {
        h.shutdown(Duration.ofMillis(2000));
        h.close();
    }

    private static void independentProfiles() {
        // Defaults: both Balanced; M = 128 x 2.
        Host h = p2Host("jq01-default");
        Check.eq(h.option(Host.Option.JOB_QUEUE_PROFILE), BALANCED, "JOB_QUEUE_PROFILE");
        Check.eq(h.option(Host.Option.CORE_HWM_PROFILE), -1, "CORE_HWM_PROFILE unset");
        Check.eq(h.option(Host.Option.MAX_QUEUED_JOBS), 256, "MAX_QUEUED_JOBS");
        expectStarted(h, 256, BALANCED, BALANCED);
        Check.eq(h.metric(CORE + "effective_budget", ""), 0, "effective_budget");
        end(h);

        // Core Compact + job queue Throughput: 512, and the Core runs Compact.
        h = p2Host("jq01-both");
        h.option(Host.Option.CORE_HWM_PROFILE, COMPACT);
        Check.eq(h.option(Host.Option.MAX_QUEUED_JOBS), 256, "the Core's moved nothing");
        h.option(Host.Option.JOB_QUEUE_PROFILE, THROUGHPUT);
        Check.eq(h.option(Host.Option.CORE_HWM_PROFILE), COMPACT, "CORE_HWM_PROFILE");
        h.option(Host.Option.CORE_BUDGET_BYTES, 4 << 20);
        Check.eq(h.option(Host.Option.MAX_QUEUED_JOBS), 512, "MAX_QUEUED_JOBS");
        expectStarted(h, 512, THROUGHPUT, COMPACT);
        Check.eq(h.option(Host.Option.CORE_HWM_PROFILE), COMPACT, "CORE_HWM_PROFILE");
        Check.eq(h.metric(CORE + "effective_budget", ""), 4 << 20, "effective_budget");
        end(h);

        // One at a time: each leaves the other at its default.
        h = p2Host("jq01-core-only");
        h.option(Host.Option.CORE_HWM_PROFILE, COMPACT);
        expectStarted(h, 256, BALANCED, COMPACT);
        end(h);
        h = p2Host("jq01-jq-only");
        h.option(Host.Option.JOB_QUEUE_PROFILE, THROUGHPUT);
        expectStarted(h, 512, THROUGHPUT, BALANCED);
        Check.eq(h.option(Host.Option.CORE_HWM_PROFILE), -1, "CORE_HWM_PROFILE unset");
        end(h);

        // Manual 17: 17, pause 14, resume 10.
        h = p2Host("jq01-manual");
        h.option(Host.Option.MAX_QUEUED_JOBS, 17);
        h.option(Host.Option.JOB_QUEUE_PROFILE, COMPACT); // the manual value wins over a profile
        expectStarted(h, 17, COMPACT, BALANCED);
        HostCapacity c = h.capacity();
        Check.eq(c.manualMax, 17, "manual_max");
        Check.eq(c.pauseCount, 14, "pause_count");
        Check.eq(c.resumeCount, 10, "resume_count");
        end(h);

        // Startup errors before bind: refused by the setter (old value kept).
        Object[][] bad = {{Host.Option.MAX_QUEUED_JOBS, 0L}, {Host.Option.MAX_QUEUED_JOBS, -1L},
                          {Host.Option.MAX_QUEUED_JOBS, 1L << 31}, {Host.Option.PAUSE_PERCENT, 0L},
                          {Host.Option.PAUSE_PERCENT, 101L}, {Host.Option.RESUME_PERCENT, 100L},
                          {Host.Option.CORE_HWM_PROFILE, (long) THROUGHPUT + 1},
                          {Host.Option.CORE_BUDGET_BYTES, -1L}, {Host.Option.CORE_MEMORY_LIMIT_BYTES, -1L}};
        Host hb = p2Host("jq01-bad");
        for (Object[] x : bad) {
            Host.Option o = (Host.Option) x[0];
            long v = (Long) x[1];
            long before = hb.option(o);
            Check.result(Check.resultOf(() -> hb.option(o, v)), Tables.FW_INVALID_ARGUMENT, o + " = " + v);
            Check.eq(hb.option(o), before, o + " kept");
        }
        expectStarted(hb, 256, BALANCED, BALANCED);
        c = hb.capacity();
        Check.eq(c.pausePercent, 80, "pause_percent");
        Check.eq(c.resumePercent, 60, "resume_percent");
        end(hb);
        // resume >= pause: each fits alone, the pair stops the start.
        int[][] pairs = {{60, 60}, {50, 70}};
        for (int[] pr : pairs) {
            Host ho = p2Host("jq01-order");
            ho.option(Host.Option.PAUSE_PERCENT, pr[0]);
            ho.option(Host.Option.RESUME_PERCENT, pr[1]);
            expectStartRefused(ho, Tables.FW_INVALID_ARGUMENT);
        }
        // A Core memory limit above what the machine has.
        Host hm = p2Host("jq01-memory");
        hm.option(Host.Option.CORE_MEMORY_LIMIT_BYTES, Long.MAX_VALUE);
        expectStartRefused(hm, Tables.FW_INVALID_ARGUMENT);
    }
}
