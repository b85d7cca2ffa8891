/*
 * overload.c — the overload benchmark of issue 9 (//bench:overload, seed
 * 001 §6 and §9): a slow ClientServer server under a one-way flood, its job
 * queue's pressure state, its memory, and how long a probe request takes
 * while it is saturated.
 *
 *   overload [--clients N] [--duration-ms D] [--idle-ms I] [--job-us J]
 *            [--max-jobs M] [--size S] [--window W] [--samples K]
 *            [--hwm BYTES]
 *
 * --hwm sets the Core SNDHWM and RCVHWM of every channel (host, floods and
 * probe; 0, the default, keeps the Core's 4,096,000 bytes). Records a paused
 * host still receives are the ones already inside those queues and the
 * kernel's buffers, so the HWM sets how long each pause lasts.
 *
 * Design notes
 * ------------
 * One program, four roles; the driver (no role argument) re-executes its
 * own binary (/proc/self/exe) for the others and talks to them through
 * their standard streams only, one line per message:
 *
 *   host   H: a Host with one CS server channel on tcp://127.0.0.1:0. Its
 *          SEND handler for packet "job" sleeps J us per job and counts it;
 *          its REQUEST handler for "probe" answers at once
 *          (zlink_turn_respond). MAX_QUEUED_JOBS is M. Prints
 *          "READY,port=<p>" (zlink_host_endpoint), then every 50 ms samples
 *          zlink_host_capacity and its own RSS. "GO" on stdin resets the
 *          host's metrics and starts the sample clock; "DRAIN <n>" makes it
 *          wait until n jobs have run (or no job ran for OV_STALL_NS), then
 *          print "HOST,..." with its figures, decimated "SAMPLE,..." lines
 *          and "DONE". Stdin's end of file shuts it down.
 *   flood  a Host with a CS client channel to H (send timeout 60 s). After
 *          "READY" and then "GO" on stdin it keeps W one-way sends of S
 *          bytes in flight for D ms (each completion, at admission, starts
 *          the next), waits for those still in flight, prints
 *          "SENT,ok=<n>,deadline=<n>,failed=<n>,first=<result>" and stays
 *          connected until stdin's end of file, so nothing it sent is cut
 *          off by its own shutdown before H has run it.
 *   probe  a Host with a CS client channel to H (its own connection). After
 *          a few unrecorded warm-up requests it prints "READY", measures
 *          one request at a time (zlink_call_wait) for I ms against the idle
 *          H and prints "IDLE,n=,p50_us=,p99_us="; after "GO" it measures for
 *          D ms and prints "FLOOD,n=,p50_us=,p99_us=".
 *   driver runs the whole sequence twice, with a flood of D ms and one of
 *          2 x D ms, each against a fresh H (so each run's VmHWM is its
 *          own), and prints RESULT,overload,<metric>,<value> lines for the
 *          longer run plus the shorter run's RSS high water. Exit status 1
 *          when a send failed, a job was dropped or a role failed; 2 for
 *          bad usage.
 *
 * dropped = (sends that completed OK) - (jobs H ran) + H's
 * zlink.mesh_node.messages.dropped for reasons no_handler, decode_error and
 * shutdown, summed over both runs.
 *
 * Processes (bench/procs.h): each child dies with the driver; the driver
 * kills and reaps every child on every exit path; every wait on a child is
 * bounded by a deadline, a failure bound, never a pacing delay.
 *
 * Threads and locks. Driver: one thread, no lock. Host role: the main
 * thread samples and reads stdin; handlers run on framework threads and
 * touch only the atomic job counter. Flood role: fl_state_t.lock guards its
 * counters, shared between the completion dispatcher and the main thread,
 * and is never held across a framework call. Probe role: main thread only.
 */
#include "procs.h"
#include "rr_common.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "zlink.h"

#define OV_CHANNEL "overload"
#define OV_JOB "job"
#define OV_PROBE "probe"
#define OV_CT "application/octet-stream"
#define OV_SAMPLE_NS (50ull * 1000 * 1000)
#define OV_STALL_NS (20ull * 1000 * 1000 * 1000)
#define OV_SEND_TIMEOUT ZLINK_MS(60000)
#define OV_MAX_CLIENTS 64
#define OV_LINE BP_LINE

const char *bp_name = "overload";

typedef struct ov_opts {
    int clients;
    long duration_ms;
    long idle_ms;
    long job_us;
    long max_jobs;
    long size;
    long window;
    long samples;   /* SAMPLE lines printed, at most */
    long hwm;       /* Core SNDHWM and RCVHWM of every channel; 0 = default */
    int port;       /* roles */
} ov_opts_t;

static const char *fw_name(int r)
{
    const char *n = zlink_result_name(r);
    return n ? n : "?";
}

/* A client host with channel OV_CHANNEL to 127.0.0.1:port, started; NULL
 * after an ERROR line. */
/* The Core HWMs of the channel on h: both directions hwm bytes, unless 0
 * (the Core's default). */
static zlink_fw_result_t set_hwm(zlink_host_t *h, long hwm)
{
    if (hwm == 0)
        return ZLINK_FW_OK;
    zlink_fw_result_t r = zlink_channel_set_option(h, OV_CHANNEL, ZLINK_NODE_OPT_SNDHWM, hwm);
    if (r == 0)
        r = zlink_channel_set_option(h, OV_CHANNEL, ZLINK_NODE_OPT_RCVHWM, hwm);
    return r;
}

static zlink_host_t *client_host(const char *name, int port, long hwm)
{
    zlink_fw_result_t r = 0;
    zlink_host_t *h = zlink_host_new(name, &r);
    if (!h) {
        rr_error("zlink_host_new: %s", fw_name(r));
        return NULL;
    }
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
    r = zlink_host_add_cs_client(h, OV_CHANNEL, ep);
    if (r == 0)
        r = zlink_channel_set_option(h, OV_CHANNEL, ZLINK_NODE_OPT_SEND_TIMEOUT, OV_SEND_TIMEOUT);
    if (r == 0)
        r = set_hwm(h, hwm);
    if (r == 0)
        r = zlink_host_start(h);
    if (r != 0) {
        rr_error("client host setup (%s): %s", ep, fw_name(r));
        zlink_host_destroy(h);
        return NULL;
    }
    return h;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of s, sorting it; 0 for no sample. */
static double quantile(rr_samples_t *s, double q)
{
    if (s->n == 0)
        return 0;
    qsort(s->us, s->n, sizeof *s->us, cmp_double);
    size_t i = (size_t)(q * (double)(s->n - 1) + 0.5);
    return s->us[i];
}

/* ---------------------------------------------------------------- host H */

static atomic_uint_fast64_t g_handled;
static long g_job_us;

/* SEND "job": runs on a handler thread in a turn of the channel's gate;
 * sleeps the job time (the slow work), counts the job, ends the turn. */
static void on_job(zlink_turn_t *turn, void *user)
{
    (void)user;
    struct timespec ts = {g_job_us / 1000000, (g_job_us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    atomic_fetch_add(&g_handled, 1);
    zlink_turn_end(turn, 0, NULL);
}

/* REQUEST "probe": answers with the request's payload at once. */
static void on_probe(zlink_turn_t *turn, void *user)
{
    (void)user;
    size_t size = 0;
    const void *data = zlink_turn_payload(turn, &size);
    zlink_fw_result_t r = zlink_turn_respond(turn, OV_PROBE, OV_CT, data, size);
    if (r == ZLINK_FW_INVALID_ARGUMENT || r == ZLINK_FW_INVALID_OPERATION)
        zlink_turn_end(turn, 1, "probe reply failed");
}

typedef struct ov_sample {
    uint32_t t_ms;
    uint32_t permits;
    int32_t state;
} ov_sample_t;

static int run_host(const ov_opts_t *o)
{
    g_job_us = o->job_us;
    zlink_fw_result_t r = 0;
    zlink_host_t *h = zlink_host_new("overload-host", &r);
    if (!h) {
        rr_error("zlink_host_new: %s", fw_name(r));
        return 1;
    }
    r = zlink_host_set_option(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS, o->max_jobs);
    if (r == 0)
        r = zlink_host_add_cs_server(h, OV_CHANNEL, "tcp://127.0.0.1:0");
    if (r == 0)
        r = set_hwm(h, o->hwm);
    if (r == 0)
        r = zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, OV_CHANNEL, ZLINK_MESSAGE_SEND, OV_JOB,
                                   on_job, NULL);
    if (r == 0)
        r = zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, OV_CHANNEL, ZLINK_MESSAGE_REQUEST,
                                   OV_PROBE, on_probe, NULL);
    if (r == 0)
        r = zlink_host_start(h);
    char ep[256];
    if (r == 0)
        r = zlink_host_endpoint(h, OV_CHANNEL, ep, sizeof ep);
    const char *colon = r == 0 ? strrchr(ep, ':') : NULL;
    if (r != 0 || !colon) {
        rr_error("host setup: %s", fw_name(r));
        zlink_host_destroy(h);
        return 1;
    }
    rr_ready(atoi(colon + 1));

    size_t ns = 0, ncap = 0;
    ov_sample_t *samples = NULL;
    uint64_t go_ns = 0, rss_max = 0, sampled_permits_max = 0;
    uint64_t next = rr_now_ns() + OV_SAMPLE_NS;
    int draining = 0, status = 1;
    uint64_t expect = 0, last_handled = 0, last_progress = 0;
    for (;;) {
        uint64_t now = rr_now_ns();
        if (now >= next) {
            next += OV_SAMPLE_NS;
            if (next <= now)
                next = now + OV_SAMPLE_NS;
            zlink_host_capacity_t c = {.struct_size = sizeof c};
            if (go_ns && zlink_host_capacity(h, &c) == 0) {
                if (c.permits_in_use > sampled_permits_max)
                    sampled_permits_max = c.permits_in_use;
                if (ns == ncap) {
                    size_t nc = ncap ? ncap * 2 : 256;
                    ov_sample_t *g = realloc(samples, nc * sizeof *g);
                    if (g) {
                        samples = g;
                        ncap = nc;
                    }
                }
                if (ns < ncap)
                    samples[ns++] = (ov_sample_t){(uint32_t)((now - go_ns) / 1000000),
                                                  (uint32_t)c.permits_in_use, c.pressure_state};
            }
            uint64_t rss = bp_proc_status("VmRSS");
            if (rss > rss_max)
                rss_max = rss;
        }
        if (draining) {
            uint64_t done = atomic_load(&g_handled);
            if (done != last_handled) {
                last_handled = done;
                last_progress = now;
            }
            if (done >= expect || now - last_progress > OV_STALL_NS)
                break;
        }
        uint64_t wait_ns = next > now ? next - now : 0;
        char line[OV_LINE];
        int got = bp_stdin_line(line, sizeof line, (int)(wait_ns / 1000000) + 1);
        if (got < 0) {
            rr_error("driver went away");
            goto out;
        }
        if (got == 0)
            continue;
        if (strcmp(line, "GO") == 0) {
            zlink_host_reset_metrics(h);
            go_ns = rr_now_ns();
        } else if (strncmp(line, "DRAIN ", 6) == 0) {
            expect = strtoull(line + 6, NULL, 10);
            draining = 1;
            last_handled = atomic_load(&g_handled);
            last_progress = rr_now_ns();
        }
    }

    zlink_host_capacity_t c = {.struct_size = sizeof c};
    r = zlink_host_capacity(h, &c);
    int64_t d_nh = 0, d_dec = 0, d_sd = 0;
    if (r == 0)
        r = zlink_host_metric(h, "zlink.mesh_node.messages.dropped", "reason=no_handler", &d_nh);
    if (r == 0)
        r = zlink_host_metric(h, "zlink.mesh_node.messages.dropped", "reason=decode_error", &d_dec);
    if (r == 0)
        r = zlink_host_metric(h, "zlink.mesh_node.messages.dropped", "reason=shutdown", &d_sd);
    if (r != 0) {
        rr_error("host figures: %s", fw_name(r));
        goto out;
    }
    if (c.peak_permits_in_use > sampled_permits_max)
        sampled_permits_max = c.peak_permits_in_use;
    printf("HOST,handled=%" PRIu64 ",dropped_metric=%" PRId64 ",rss_hwm=%" PRIu64
           ",rss_max=%" PRIu64 ",paused=%" PRIu64 ",resumed=%" PRIu64 ",permits_max=%" PRIu64
           ",effective_max=%" PRIu64 ",pause_count=%" PRIu64 ",resume_count=%" PRIu64
           ",paused_ms=%" PRId64 "\n",
           (uint64_t)atomic_load(&g_handled), d_nh + d_dec + d_sd, bp_proc_status("VmHWM"),
           rss_max, c.transitions_paused, c.transitions_running, sampled_permits_max,
           c.effective_max, c.pause_count, c.resume_count, c.cumulative_pause_ns / 1000000);
    size_t step = o->samples > 0 && ns > (size_t)o->samples ? (ns + (size_t)o->samples - 1) / (size_t)o->samples : 1;
    for (size_t i = 0; i < ns; i += step)
        printf("SAMPLE,%u,%u,%s\n", samples[i].t_ms, samples[i].permits,
               samples[i].state == ZLINK_PRESSURE_PAUSED ? "paused" : "running");
    printf("DONE\n");
    fflush(stdout);
    status = 0;
    char line[OV_LINE];
    while (bp_stdin_line(line, sizeof line, -1) >= 0) {
    }
out:
    free(samples);
    r = zlink_host_shutdown(h, ZLINK_MS(5000));
    if (r != 0 && status == 0) {
        rr_error("zlink_host_shutdown: %s", fw_name(r));
        status = 1;
    }
    zlink_host_destroy(h);
    return status;
}

/* ------------------------------------------------------------------ flood */

typedef struct fl_state {
    zlink_host_t *host;
    unsigned char *payload;
    size_t size;
    uint64_t end_ns;                /* fixed before the first send */
    pthread_mutex_t lock;
    pthread_cond_t idle;            /* inflight reached 0 */
    unsigned inflight;              /* lock */
    uint64_t ok, deadline, failed;  /* lock */
    int first_failure;              /* lock; 0 none */
} fl_state_t;

static void on_sent(zlink_call_t *call, const zlink_outcome_t *outcome, void *user);

/* Records one finished send (result r) and tells whether its slot goes on.
 * Takes fl->lock. */
static int fl_count(fl_state_t *fl, int r)
{
    int again;
    pthread_mutex_lock(&fl->lock);
    if (r == 0)
        fl->ok++;
    else if (r == ZLINK_FW_KIND_BASE + ZLINK_ERROR_DEADLINE_EXCEEDED)
        fl->deadline++;
    else {
        fl->failed++;
        if (!fl->first_failure)
            fl->first_failure = r;
    }
    again = fl->failed == 0 && rr_now_ns() < fl->end_ns;
    if (!again && --fl->inflight == 0)
        pthread_cond_broadcast(&fl->idle);
    pthread_mutex_unlock(&fl->lock);
    return again;
}

/* Starts sends until one is accepted (its completion goes on from there) or
 * the slot stops. Called by the main thread and by on_sent (a framework
 * thread), without fl->lock. */
static void fl_start(fl_state_t *fl)
{
    for (;;) {
        zlink_fw_result_t r = 0;
        zlink_call_t *call = zlink_call_send_to_channel(fl->host, OV_CHANNEL, &r);
        if (call) {
            r = zlink_call_set_payload(call, OV_JOB, OV_CT, fl->payload, fl->size);
            if (r == 0)
                r = zlink_call_start(call, on_sent, fl);
            if (r == 0)
                return;
            zlink_call_release(call);
        }
        if (!fl_count(fl, r))
            return;
    }
}

/* Completion of a one-way send (at admission): on the completion
 * dispatcher, in a new turn. */
static void on_sent(zlink_call_t *call, const zlink_outcome_t *outcome, void *user)
{
    fl_state_t *fl = user;
    int r = outcome->result;
    zlink_call_release(call);
    if (fl_count(fl, r))
        fl_start(fl);
}

static int run_flood(const ov_opts_t *o)
{
    fl_state_t fl;
    memset(&fl, 0, sizeof fl);
    pthread_mutex_init(&fl.lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&fl.idle, &attr);
    pthread_condattr_destroy(&attr);
    int status = 1;
    fl.size = (size_t)o->size;
    fl.payload = malloc(fl.size);
    if (!fl.payload) {
        rr_error("out of memory");
        goto out_mem;
    }
    memset(fl.payload, 'f', fl.size);
    fl.host = client_host("overload-flood", o->port, o->hwm);
    if (!fl.host)
        goto out_mem;
    printf("READY\n");
    fflush(stdout);
    char line[OV_LINE];
    int got;
    while ((got = bp_stdin_line(line, sizeof line, -1)) > 0 && strcmp(line, "GO") != 0) {
    }
    if (got < 0) {
        rr_error("driver went away before GO");
        goto out;
    }
    fl.end_ns = rr_now_ns() + (uint64_t)o->duration_ms * 1000000;
    pthread_mutex_lock(&fl.lock);
    fl.inflight = (unsigned)o->window;
    pthread_mutex_unlock(&fl.lock);
    for (long i = 0; i < o->window; i++)
        fl_start(&fl);
    uint64_t bound = fl.end_ns + (uint64_t)OV_SEND_TIMEOUT + OV_STALL_NS;
    struct timespec until = {(time_t)(bound / 1000000000ull), (long)(bound % 1000000000ull)};
    pthread_mutex_lock(&fl.lock);
    int timed_out = 0;
    while (fl.inflight > 0 && !timed_out)
        timed_out = pthread_cond_timedwait(&fl.idle, &fl.lock, &until) == ETIMEDOUT;
    unsigned left = fl.inflight;
    uint64_t ok = fl.ok, dl = fl.deadline, failed = fl.failed;
    int first = fl.first_failure;
    pthread_mutex_unlock(&fl.lock);
    if (left) {
        rr_error("%u sends still in flight past the bound", left);
        goto out;
    }
    printf("SENT,ok=%" PRIu64 ",deadline=%" PRIu64 ",failed=%" PRIu64 ",first=%s\n", ok, dl,
           failed, first ? fw_name(first) : "none");
    fflush(stdout);
    status = 0;
    while (bp_stdin_line(line, sizeof line, -1) >= 0) {
    }
out:
    if (zlink_host_shutdown(fl.host, ZLINK_MS(5000)) != 0)
        status = 1;
    zlink_host_destroy(fl.host);
out_mem:
    free(fl.payload);
    pthread_cond_destroy(&fl.idle);
    pthread_mutex_destroy(&fl.lock);
    return status;
}

/* ------------------------------------------------------------------ probe */

/* One probe request, waited for. 0 with *us its round trip, or the failing
 * result. Main thread only (zlink_call_wait blocks it). */
static int probe_once(zlink_host_t *h, double *us)
{
    static const char body[16] = "probe-0123456789";
    zlink_fw_result_t r = 0;
    zlink_call_t *call = zlink_call_request_to_channel(h, OV_CHANNEL, &r);
    if (!call)
        return r;
    uint64_t t0 = rr_now_ns();
    r = zlink_call_set_payload(call, OV_PROBE, OV_CT, body, sizeof body);
    if (r == 0)
        r = zlink_call_set_timeout(call, ZLINK_MS(60000));
    zlink_outcome_t out = {.struct_size = sizeof out};
    if (r == 0)
        r = zlink_call_wait(call, &out);
    if (r == 0)
        r = out.result;
    if (r == 0 && out.payload_size != sizeof body)
        r = ZLINK_FW_KIND_BASE + ZLINK_ERROR_PROTOCOL_ERROR;
    *us = (double)(rr_now_ns() - t0) / 1000.0;
    zlink_call_release(call);
    return r;
}

/* Probes for ms milliseconds; prints "<tag>,n=,p50_us=,p99_us=". 0, or -1
 * after an ERROR line. */
static int probe_phase(zlink_host_t *h, const char *tag, long ms)
{
    rr_samples_t s;
    if (rr_samples_init(&s, 1024) != 0) {
        rr_error("out of memory");
        return -1;
    }
    uint64_t end = rr_now_ns() + (uint64_t)ms * 1000000;
    int rc = 0;
    do {
        double us = 0;
        int r = probe_once(h, &us);
        if (r != 0) {
            rr_error("%s probe: %s", tag, fw_name(r));
            rc = -1;
            break;
        }
        rr_samples_add(&s, us);
    } while (rr_now_ns() < end);
    if (rc == 0 && s.out_of_memory) {
        rr_error("%s probe: a sample was lost", tag);
        rc = -1;
    }
    if (rc == 0) {
        printf("%s,n=%zu,p50_us=%.1f,p99_us=%.1f\n", tag, s.n, quantile(&s, 0.50),
               quantile(&s, 0.99));
        fflush(stdout);
    }
    rr_samples_free(&s);
    return rc;
}

static int run_probe(const ov_opts_t *o)
{
    zlink_host_t *h = client_host("overload-probe", o->port, o->hwm);
    if (!h)
        return 1;
    int status = 1;
    for (int i = 0; i < 20; i++) {
        double us;
        int r = probe_once(h, &us);
        if (r != 0) {
            rr_error("warm-up probe: %s", fw_name(r));
            goto out;
        }
    }
    printf("READY\n");
    fflush(stdout);
    if (probe_phase(h, "IDLE", o->idle_ms) != 0)
        goto out;
    char line[OV_LINE];
    int got;
    while ((got = bp_stdin_line(line, sizeof line, -1)) > 0 && strcmp(line, "GO") != 0) {
    }
    if (got < 0 || probe_phase(h, "FLOOD", o->duration_ms) != 0)
        goto out;
    status = 0;
    while (bp_stdin_line(line, sizeof line, -1) >= 0) {
    }
out:
    if (zlink_host_shutdown(h, ZLINK_MS(5000)) != 0)
        status = 1;
    zlink_host_destroy(h);
    return status;
}

/* ----------------------------------------------------------------- driver */

typedef struct ov_run {
    uint64_t sent_ok, sent_deadline, sent_failed, handled;
    int64_t dropped;
    uint64_t rss_hwm, paused, resumed, permits_max;
    double idle_p50, idle_p99, probe_p50, probe_p99;
} ov_run_t;

/* One run: a fresh H, the probe, the floods for flood_ms. 0 with *res
 * filled, or -1 (every child killed and reaped). */
static int one_run(const ov_opts_t *o, long flood_ms, int relay, ov_run_t *res)
{
    char a_job[32], a_max[32], a_port[32], a_flood[32], a_idle[32], a_size[32], a_win[32],
        a_samples[32], a_hwm[32];
    snprintf(a_job, sizeof a_job, "%ld", o->job_us);
    snprintf(a_hwm, sizeof a_hwm, "%ld", o->hwm);
    snprintf(a_max, sizeof a_max, "%ld", o->max_jobs);
    snprintf(a_flood, sizeof a_flood, "%ld", flood_ms);
    snprintf(a_idle, sizeof a_idle, "%ld", o->idle_ms);
    snprintf(a_size, sizeof a_size, "%ld", o->size);
    snprintf(a_win, sizeof a_win, "%ld", o->window);
    snprintf(a_samples, sizeof a_samples, "%ld", o->samples);
    char line[OV_LINE];
    uint64_t t = rr_now_ns();

    char *hargs[] = {"--job-us", a_job, "--max-jobs", a_max, "--samples", a_samples,
                     "--hwm",    a_hwm, NULL};
    bp_child_t *host = bp_spawn("host", hargs);
    if (!host || bp_expect_line(host, "host", "READY,port=", line, sizeof line, t + OV_STALL_NS, NULL))
        goto fail;
    snprintf(a_port, sizeof a_port, "%d", atoi(line + 11));

    char *pargs[] = {"--port", a_port, "--idle-ms", a_idle, "--duration-ms", a_flood,
                     "--hwm",  a_hwm,  NULL};
    bp_child_t *probe = bp_spawn("probe", pargs);
    if (!probe ||
        bp_expect_line(probe, "probe", "READY", line, sizeof line, rr_now_ns() + OV_STALL_NS, NULL) ||
        bp_expect_line(probe, "probe", "IDLE,", line, sizeof line,
                       rr_now_ns() + (uint64_t)o->idle_ms * 1000000 + OV_STALL_NS, NULL))
        goto fail;
    res->idle_p50 = bp_field(line, "p50_us");
    res->idle_p99 = bp_field(line, "p99_us");

    bp_child_t *floods[OV_MAX_CLIENTS];
    char *fargs[] = {"--port", a_port, "--duration-ms", a_flood, "--size", a_size,
                     "--window", a_win, "--hwm", a_hwm, NULL};
    for (int i = 0; i < o->clients; i++) {
        floods[i] = bp_spawn("flood", fargs);
        if (!floods[i])
            goto fail;
    }
    for (int i = 0; i < o->clients; i++)
        if (bp_expect_line(floods[i], "flood", "READY", line, sizeof line,
                           rr_now_ns() + OV_STALL_NS, NULL))
            goto fail;
    if (bp_say(host, "GO\n"))
        goto fail;
    for (int i = 0; i < o->clients; i++)
        if (bp_say(floods[i], "GO\n"))
            goto fail;
    if (bp_say(probe, "GO\n"))
        goto fail;

    uint64_t bound = rr_now_ns() + (uint64_t)flood_ms * 1000000 + (uint64_t)OV_SEND_TIMEOUT +
                     2 * OV_STALL_NS;
    for (int i = 0; i < o->clients; i++) {
        if (bp_expect_line(floods[i], "flood", "SENT,", line, sizeof line, bound, NULL))
            goto fail;
        res->sent_ok += (uint64_t)bp_field(line, "ok");
        res->sent_deadline += (uint64_t)bp_field(line, "deadline");
        uint64_t failed = (uint64_t)bp_field(line, "failed");
        res->sent_failed += failed;
        if (failed)
            fprintf(stderr, "overload: flood %d: %s\n", i, line);
    }
    if (bp_expect_line(probe, "probe", "FLOOD,", line, sizeof line, bound, NULL))
        goto fail;
    res->probe_p50 = bp_field(line, "p50_us");
    res->probe_p99 = bp_field(line, "p99_us");

    char drain[64];
    snprintf(drain, sizeof drain, "DRAIN %" PRIu64 "\n", res->sent_ok);
    if (bp_say(host, drain) ||
        bp_expect_line(host, "host", "HOST,", line, sizeof line, rr_now_ns() + 2 * OV_STALL_NS, NULL))
        goto fail;
    res->handled = (uint64_t)bp_field(line, "handled");
    res->dropped = (int64_t)res->sent_ok - (int64_t)res->handled +
                   (int64_t)bp_field(line, "dropped_metric");
    res->rss_hwm = (uint64_t)bp_field(line, "rss_hwm");
    res->paused = (uint64_t)bp_field(line, "paused");
    res->resumed = (uint64_t)bp_field(line, "resumed");
    res->permits_max = (uint64_t)bp_field(line, "permits_max");
    if (bp_expect_line(host, "host", "DONE", line, sizeof line, rr_now_ns() + OV_STALL_NS,
                       relay ? "SAMPLE," : NULL))
        goto fail;

    int rc = 0;
    for (int i = 0; i < o->clients; i++)
        rc |= bp_finish(floods[i], "flood", OV_STALL_NS);
    rc |= bp_finish(probe, "probe", OV_STALL_NS);
    rc |= bp_finish(host, "host", OV_STALL_NS);
    return rc;
fail:
    bp_reap_all();
    return -1;
}

static int parse_opts(int argc, char **argv, int first, ov_opts_t *o)
{
    *o = (ov_opts_t){.clients = 4, .duration_ms = 5000, .idle_ms = 2000, .job_us = 200,
                     .max_jobs = 64, .size = 4096, .window = 64, .samples = 20};
    for (int i = first; i < argc; i++) {
        const char *k = argv[i];
        long v;
        if (i + 1 >= argc)
            goto usage;
        const char *val = argv[++i];
        if (strcmp(k, "--clients") == 0 && bp_parse_long(val, 1, OV_MAX_CLIENTS, &v) == 0)
            o->clients = (int)v;
        else if (strcmp(k, "--duration-ms") == 0 && bp_parse_long(val, 1, 600000, &v) == 0)
            o->duration_ms = v;
        else if (strcmp(k, "--idle-ms") == 0 && bp_parse_long(val, 1, 600000, &v) == 0)
            o->idle_ms = v;
        else if (strcmp(k, "--job-us") == 0 && bp_parse_long(val, 0, 1000000, &v) == 0)
            o->job_us = v;
        else if (strcmp(k, "--max-jobs") == 0 && bp_parse_long(val, 1, 1L << 30, &v) == 0)
            o->max_jobs = v;
        else if (strcmp(k, "--size") == 0 && bp_parse_long(val, 1, 1L << 20, &v) == 0)
            o->size = v;
        else if (strcmp(k, "--window") == 0 && bp_parse_long(val, 1, ZLINK_ADMISSION_WAITERS, &v) == 0)
            o->window = v;
        else if (strcmp(k, "--samples") == 0 && bp_parse_long(val, 0, 100000, &v) == 0)
            o->samples = v;
        else if (strcmp(k, "--hwm") == 0 && bp_parse_long(val, 0, 1L << 30, &v) == 0)
            o->hwm = v;
        else if (strcmp(k, "--port") == 0 && bp_parse_long(val, 1, 65535, &v) == 0)
            o->port = (int)v;
        else
            goto usage;
    }
    return 0;
usage:
    fprintf(stderr, "usage: overload [--clients N] [--duration-ms D] [--idle-ms I] [--job-us J]"
                    " [--max-jobs M] [--size S] [--window W] [--samples K] [--hwm BYTES]\n");
    return -1;
}

static int run_driver(const ov_opts_t *o)
{
    signal(SIGPIPE, SIG_IGN);
    ov_run_t shortr, longr;
    memset(&shortr, 0, sizeof shortr);
    memset(&longr, 0, sizeof longr);
    if (one_run(o, o->duration_ms, 0, &shortr) != 0) {
        fprintf(stderr, "overload: the %ld ms run failed\n", o->duration_ms);
        return 1;
    }
    if (one_run(o, 2 * o->duration_ms, 1, &longr) != 0) {
        fprintf(stderr, "overload: the %ld ms run failed\n", 2 * o->duration_ms);
        return 1;
    }
    int64_t dropped = shortr.dropped + longr.dropped;
    uint64_t failed = shortr.sent_failed + longr.sent_failed;
#define RES(name, fmt, v) printf("RESULT,overload," name "," fmt "\n", v)
    RES("dropped", "%" PRId64, dropped);
    RES("send_failures", "%" PRIu64, failed);
    RES("send_deadline_exceeded", "%" PRIu64, shortr.sent_deadline + longr.sent_deadline);
    RES("rss_high_water_bytes", "%" PRIu64, longr.rss_hwm);
    RES("rss_high_water_bytes_short", "%" PRIu64, shortr.rss_hwm);
    RES("pause_transitions", "%" PRIu64, longr.paused);
    RES("resume_transitions", "%" PRIu64, longr.resumed);
    RES("permits_in_use_max", "%" PRIu64, longr.permits_max);
    RES("probe_p50_us", "%.1f", longr.probe_p50);
    RES("probe_p99_us", "%.1f", longr.probe_p99);
    RES("idle_p50_us", "%.1f", longr.idle_p50);
    RES("idle_p99_us", "%.1f", longr.idle_p99);
    RES("flood_sends", "%" PRIu64, longr.sent_ok);
    RES("handled", "%" PRIu64, longr.handled);
    RES("flood_sends_short", "%" PRIu64, shortr.sent_ok);
    RES("handled_short", "%" PRIu64, shortr.handled);
#undef RES
    fflush(stdout);
    if (dropped != 0 || failed != 0) {
        fprintf(stderr, "overload: %" PRId64 " dropped, %" PRIu64 " sends failed\n", dropped,
                failed);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    ov_opts_t o;
    const char *role = argc > 1 && argv[1][0] != '-' ? argv[1] : NULL;
    if (parse_opts(argc, argv, role ? 2 : 1, &o) != 0)
        return 2;
    if (!role)
        return run_driver(&o);
    if (strcmp(role, "host") == 0)
        return run_host(&o);
    if (strcmp(role, "flood") == 0)
        return run_flood(&o);
    if (strcmp(role, "probe") == 0)
        return run_probe(&o);
    fprintf(stderr, "overload: unknown role %s\n", role);
    return 2;
}
