/*
 * test_fw_jobs.c — the application job queue (seed 001) through the public
 * API: configuration and its checks (JQ-01), the 80/60 pressure hysteresis
 * with its counters and the receive-flow state a peer sees (JQ-11), which
 * sockets get the state (JQ-13, the ClientServer part), and the capacity
 * snapshot and its reset.
 *
 * How the cases hold jobs: the server's send handler waits at a turnstile
 * that lets one turn through per token, so the test raises the queued
 * jobs one send at a time and lowers them one token at a time. The first
 * send enters the handler (its permit is released at the handler's first
 * instruction); each later one waits in the channel's gate as a queued job
 * holding a permit. A raw Core DEALER connected to the server's ROUTER
 * sends nothing: its monitor shows whether the ROUTER asked its peers to
 * pause (flow_paused_connections).
 *
 * The permit FIFO of receiving sockets (seed 001 §3) is driven by raw ZMP
 * peers (zltest_rawzmp.h): they ignore FLOWSTATE, so their records reach
 * a saturated host's Core queues, which the Core's own peers would hold
 * back at the sender.
 */
#include "fwtest.h"
#include "zltest_rawzmp.h"

#include <stdlib.h>

/* One turn through per token. */
typedef struct turnstile {
    pthread_mutex_t lk;
    pthread_cond_t cv;
    int tokens;
    int inside; /* turns waiting at the turnstile */
    int passed;
} turnstile_t;

static void ts_init(turnstile_t *t)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lk, NULL);
    pthread_cond_init(&t->cv, NULL);
}

static void ts_give(turnstile_t *t, int n)
{
    pthread_mutex_lock(&t->lk);
    t->tokens += n;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->lk);
}

static int ts_passed(turnstile_t *t)
{
    pthread_mutex_lock(&t->lk);
    int n = t->passed;
    pthread_mutex_unlock(&t->lk);
    return n;
}

static int ts_inside(turnstile_t *t)
{
    pthread_mutex_lock(&t->lk);
    int n = t->inside;
    pthread_mutex_unlock(&t->lk);
    return n;
}

static void on_send_ts(zlink_turn_t *turn, void *user)
{
    turnstile_t *t = user;
    pthread_mutex_lock(&t->lk);
    t->inside++;
    pthread_cond_broadcast(&t->cv);
    while (t->tokens == 0)
        pthread_cond_wait(&t->cv, &t->lk);
    t->tokens--;
    t->inside--;
    t->passed++;
    pthread_mutex_unlock(&t->lk);
    zlink_turn_end(turn, 0, NULL);
}

static zlink_host_capacity_t cap_of(zlink_host_t *h)
{
    zlink_host_capacity_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    FW_EQ(zlink_host_capacity(h, &c), ZLINK_FW_OK);
    return c;
}

static int64_t metric(zlink_host_t *h, const char *name, const char *labels)
{
    int64_t v = -1;
    FW_EQ(zlink_host_metric(h, name, labels, &v), ZLINK_FW_OK);
    return v;
}

#define JQ "zlink.host.application_job_queue."

/* ------------------------------------------------------------ JQ-01 */

static zlink_host_t *host_p2(const char *name)
{
    zlink_fw_result_t rc;
    zlink_host_t *h = zlink_host_new(name, &rc);
    ZT_CHECK(h != NULL);
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_EFFECTIVE_PROCESSORS, 2), ZLINK_FW_OK);
    return h;
}

static int64_t opt(zlink_host_t *h, int o)
{
    int64_t v = -1;
    FW_EQ(zlink_host_get_option(h, o, &v), ZLINK_FW_OK);
    return v;
}

/* JQ-01: defaults and profiles with P forced to 2; the manual limit wins;
 * every invalid value is refused with the old value kept, and a pause/
 * resume pair out of order stops the start (the host never serves). */
static void config_profiles_and_checks(void)
{
    zlink_host_t *h = host_p2("jq01");
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_JOB_QUEUE_PROFILE), ZLINK_JOB_QUEUE_BALANCED);
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_EFFECTIVE_PROCESSORS), 2);
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS), 256);
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_PAUSE_PERCENT), 80);
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_RESUME_PERCENT), 60);
    static const struct {
        int profile;
        int64_t max;
    } prof[] = {{ZLINK_JOB_QUEUE_COMPACT, 64},
                {ZLINK_JOB_QUEUE_LOW_LATENCY, 128},
                {ZLINK_JOB_QUEUE_BALANCED, 256},
                {ZLINK_JOB_QUEUE_THROUGHPUT, 512}};
    for (size_t i = 0; i < sizeof prof / sizeof prof[0]; i++) {
        FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_JOB_QUEUE_PROFILE, prof[i].profile),
              ZLINK_FW_OK);
        ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS), prof[i].max);
        zlink_host_capacity_t c = cap_of(h);
        ZT_EQ_INT(c.profile, prof[i].profile);
        ZT_EQ_INT(c.effective_max, (uint64_t)prof[i].max);
        ZT_EQ_INT(c.manual_max, 0);
    }
    /* Manual 17: pause ceil(17 x 0.8) = 14, resume floor(17 x 0.6) = 10. */
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS, 17), ZLINK_FW_OK);
    zlink_host_capacity_t c = cap_of(h);
    ZT_EQ_INT(c.effective_max, 17);
    ZT_EQ_INT(c.manual_max, 17);
    ZT_EQ_INT(c.pause_count, 14);
    ZT_EQ_INT(c.resume_count, 10);
    ZT_EQ_INT(c.effective_processors, 2);
    /* A profile change leaves the manual limit in force. */
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_JOB_QUEUE_PROFILE, ZLINK_JOB_QUEUE_COMPACT),
          ZLINK_FW_OK);
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS), 17);

    /* Refused at the setter, old value kept. */
    static const struct {
        int o;
        int64_t v;
    } bad[] = {{ZLINK_HOST_OPT_MAX_QUEUED_JOBS, 0},
               {ZLINK_HOST_OPT_MAX_QUEUED_JOBS, -1},
               {ZLINK_HOST_OPT_MAX_QUEUED_JOBS, (int64_t)1 << 31},
               {ZLINK_HOST_OPT_PAUSE_PERCENT, 0},
               {ZLINK_HOST_OPT_PAUSE_PERCENT, 101},
               {ZLINK_HOST_OPT_RESUME_PERCENT, -1},
               {ZLINK_HOST_OPT_RESUME_PERCENT, 100},
               {ZLINK_HOST_OPT_JOB_QUEUE_PROFILE, -1},
               {ZLINK_HOST_OPT_JOB_QUEUE_PROFILE, 4},
               {ZLINK_HOST_OPT_EFFECTIVE_PROCESSORS, -1},
               {ZLINK_HOST_OPT_EFFECTIVE_PROCESSORS, 65537}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t before = opt(h, bad[i].o);
        FW_EQ(zlink_host_set_option(h, bad[i].o, bad[i].v), ZLINK_FW_INVALID_ARGUMENT);
        ZT_EQ_INT(opt(h, bad[i].o), before);
    }
    FW_EQ(zlink_host_destroy(h), ZLINK_FW_OK);

    /* resume >= pause: each value fits alone, the pair stops the start. */
    static const int pairs[][2] = {{60, 60}, {50, 70}, {1, 99}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        h = host_p2("jq01-order");
        FW_EQ(zlink_host_add_cs_server(h, "svc", "tcp://127.0.0.1:0"), ZLINK_FW_OK);
        FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_PAUSE_PERCENT, pairs[i][0]), ZLINK_FW_OK);
        FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_RESUME_PERCENT, pairs[i][1]), ZLINK_FW_OK);
        FW_EQ(zlink_host_start(h), ZLINK_FW_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_host_state(h), ZLINK_HOST_FAILED);
        FW_EQ(zlink_host_destroy(h), ZLINK_FW_OK);
    }

    /* Once started, the job-queue options are fixed. */
    h = host_p2("jq01-started");
    FW_EQ(zlink_host_add_cs_server(h, "svc", "tcp://127.0.0.1:0"), ZLINK_FW_OK);
    FW_EQ(zlink_host_start(h), ZLINK_FW_OK);
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_PAUSE_PERCENT, 90), ZLINK_FW_INVALID_OPERATION);
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS, 5), ZLINK_FW_INVALID_OPERATION);
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS), 256);
    c = cap_of(h);
    ZT_EQ_INT(c.pause_count, 205); /* ceil(256 x 0.8) */
    ZT_EQ_INT(c.resume_count, 153); /* floor(256 x 0.6) */
    ZT_EQ_INT(metric(h, JQ "limit", ""), 256);
    FW_EQ(zlink_host_shutdown(h, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(h), ZLINK_FW_OK);
}

/* The detected P is positive and M follows it. */
static void config_detected_processors(void)
{
    zlink_fw_result_t rc;
    zlink_host_t *h = zlink_host_new("jq-p", &rc);
    ZT_CHECK(h != NULL);
    int64_t p = opt(h, ZLINK_HOST_OPT_EFFECTIVE_PROCESSORS);
    ZT_CHECK(p >= 1);
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS), 128 * p);
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_EFFECTIVE_PROCESSORS, 3), ZLINK_FW_OK);
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS), 384);
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_EFFECTIVE_PROCESSORS, 0), ZLINK_FW_OK);
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_EFFECTIVE_PROCESSORS), p);
    FW_EQ(zlink_host_destroy(h), ZLINK_FW_OK);
}

/* ------------------------------------------------------------ JQ-11 */

typedef struct jq_rig {
    turnstile_t ts;
    zlink_host_t *server, *client;
    char ep[256];
    void *ctx, *observer, *obs_mon;
    int sent;
} jq_rig_t;

static void rig_open(jq_rig_t *r, int64_t max_jobs)
{
    memset(r, 0, sizeof *r);
    ts_init(&r->ts);
    zlink_fw_result_t rc;
    r->server = zlink_host_new("jq-s", &rc);
    ZT_CHECK(r->server != NULL);
    FW_EQ(zlink_host_set_option(r->server, ZLINK_HOST_OPT_MAX_QUEUED_JOBS, max_jobs),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_add_cs_server(r->server, "svc", "tcp://127.0.0.1:0"), ZLINK_FW_OK);
    FW_EQ(zlink_host_add_handler(r->server, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_SEND, "m",
                                 on_send_ts, &r->ts),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_start(r->server), ZLINK_FW_OK);
    FW_EQ(zlink_host_endpoint(r->server, "svc", r->ep, sizeof r->ep), ZLINK_FW_OK);
    /* The client may send right after the server resumed, before the
     * RESUME reached it: its one-way then waits for room, bounded only by
     * a generous send timeout. */
    r->client = zlink_host_new("jq-c", &rc);
    ZT_CHECK(r->client != NULL);
    FW_EQ(zlink_host_add_cs_client(r->client, "svc", r->ep), ZLINK_FW_OK);
    FW_EQ(zlink_channel_set_option(r->client, "svc", ZLINK_NODE_OPT_SEND_TIMEOUT,
                                   ZLINK_MS(30000)),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_start(r->client), ZLINK_FW_OK);
    /* The observer: a Core DEALER of its own that only watches the flow
     * state the server's ROUTER announces. */
    r->ctx = zlink_ctx_new();
    ZT_CHECK(r->ctx != NULL);
    r->observer = zlink_socket(r->ctx, ZLINK_DEALER);
    ZT_CHECK(r->observer != NULL);
    ZT_EQ_INT(zlink_connect(r->observer, r->ep), ZLINK_CONNECT_OK);
    zlink_monitor_config_t cfg = {0, 0, 0};
    r->obs_mon = zlink_socket_monitor_open(r->observer, &cfg);
    ZT_CHECK(r->obs_mon != NULL);
}

static void rig_close(jq_rig_t *r)
{
    ts_give(&r->ts, 1 << 20);
    FW_EQ(zlink_host_shutdown(r->client, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(r->client), ZLINK_FW_OK);
    FW_EQ(zlink_host_shutdown(r->server, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(r->server), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_monitor_close(&r->obs_mon), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_close(r->observer), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_ctx_term(r->ctx), ZLINK_CONFIG_OK);
}

static uint64_t observer_paused(jq_rig_t *r)
{
    zlink_monitor_status_t st;
    memset(&st, 0, sizeof st);
    ZT_EQ_INT(zlink_monitor_status(r->obs_mon, &st), ZLINK_CONFIG_OK);
    ZT_CHECK(st.detail_flags & ZLINK_MONITOR_STATUS_DETAIL_FLOW_STATE);
    return st.flow_paused_connections;
}

/* One more one-way; waits until the server holds it (as the running turn
 * or as a queued job). */
static void rig_send(jq_rig_t *r)
{
    char text[16];
    snprintf(text, sizeof text, "j%d", r->sent);
    zlink_call_t *c = fw_call(r->client, 0, text);
    FW_EQ(fw_wait(c, NULL, 0), ZLINK_FW_OK);
    zlink_call_release(c);
    r->sent++;
}

/* Permits in use once the server holds everything sent and the turnstile
 * has let `passed` turns through: all but the running turn are queued. */
static void rig_expect_in_use(jq_rig_t *r, int in_use)
{
    ZT_EVENTUALLY(ts_inside(&r->ts) == 1 && cap_of(r->server).permits_in_use == (uint64_t)in_use &&
                      cap_of(r->server).queued_jobs == (uint64_t)in_use,
                  3000);
}

static void rig_expect_state(jq_rig_t *r, int state)
{
    zlink_host_capacity_t c = cap_of(r->server);
    if (c.pressure_state != state)
        ZT_FAIL("permits in use %llu: pressure state %d, expected %d",
                (unsigned long long)c.permits_in_use, c.pressure_state, state);
    ZT_EQ_INT(metric(r->server, JQ "pressure_state", "state=paused"),
              state == ZLINK_PRESSURE_PAUSED);
    ZT_EQ_INT(metric(r->server, JQ "pressure_state", "state=running"),
              state == ZLINK_PRESSURE_RUNNING);
    /* The peer sees the state (the ROUTER applies it outside the host's
     * locks, so it may follow a moment later). */
    ZT_EVENTUALLY(observer_paused(r) == (state == ZLINK_PRESSURE_PAUSED), 3000);
}

/* Raises queued jobs 1..pause_count, lowers them to resume_count, raises
 * once more: the state at every step and the edge counters. */
static void hysteresis_for(int64_t m, int pause, int resume)
{
    jq_rig_t r;
    rig_open(&r, m);
    zlink_host_capacity_t c = cap_of(r.server);
    ZT_EQ_INT(c.pause_count, pause);
    ZT_EQ_INT(c.resume_count, resume);
    rig_send(&r); /* enters the handler: no permit held */
    rig_expect_in_use(&r, 0);
    rig_expect_state(&r, ZLINK_PRESSURE_RUNNING);
    /* Its permit was in use from its receive to its handler's start: with
     * a pause count of 1 that was one pause and one resume already. */
    c = cap_of(r.server);
    uint64_t tp = c.transitions_paused, tr = c.transitions_running;
    ZT_EQ_INT(tp, pause == 1 ? 1 : 0);
    ZT_EQ_INT(tr, tp);
    /* Up to the pause count: past it the client is asked to stop, so no
     * further record of it arrives (more would need local jobs: Spots). */
    for (int q = 1; q <= pause; q++) {
        rig_send(&r);
        rig_expect_in_use(&r, q);
        rig_expect_state(&r, q >= pause ? ZLINK_PRESSURE_PAUSED : ZLINK_PRESSURE_RUNNING);
    }
    ZT_EQ_INT(cap_of(r.server).transitions_paused, tp + 1);
    ZT_EQ_INT(metric(r.server, JQ "pressure_transitions", "state=paused"), (int64_t)tp + 1);
    ZT_EQ_INT(cap_of(r.server).peak_permits_in_use, (uint64_t)pause);
    for (int q = pause - 1; q >= resume; q--) {
        int passed = ts_passed(&r.ts);
        ts_give(&r.ts, 1);
        ZT_EVENTUALLY(ts_passed(&r.ts) == passed + 1, 3000);
        rig_expect_in_use(&r, q);
        rig_expect_state(&r, q <= resume ? ZLINK_PRESSURE_RUNNING : ZLINK_PRESSURE_PAUSED);
    }
    ZT_EQ_INT(cap_of(r.server).transitions_running, tr + 1);
    ZT_EQ_INT(metric(r.server, JQ "pressure_transitions", "state=running"), (int64_t)tr + 1);
    ZT_CHECK(cap_of(r.server).cumulative_pause_ns > 0);
    ZT_EQ_INT(cap_of(r.server).current_pause_ns, 0);
    /* Back up by one, still under the pause count (unless it is 1). */
    rig_send(&r);
    rig_expect_in_use(&r, resume + 1);
    rig_expect_state(&r, resume + 1 >= pause ? ZLINK_PRESSURE_PAUSED : ZLINK_PRESSURE_RUNNING);
    ZT_EQ_INT(cap_of(r.server).transitions_paused, tp + (resume + 1 >= pause ? 2 : 1));
    rig_close(&r);
}

/* JQ-11 with M = 10 (8/6), 1 (1/0) and 17 (14/10). */
static void pressure_hysteresis(void)
{
    hysteresis_for(10, 8, 6);
    hysteresis_for(1, 1, 0);
    hysteresis_for(17, 14, 10);
}

/* The reset keeps config, state and the current pause, rebases the peak
 * and zeroes the epoch counters; then every held job still runs, once
 * (nothing dropped), and the host runs again. (A capacity waiter needs a
 * record that arrives after the pause: JQ-03, with a raw peer.) */
static void reset_keeps_state(void)
{
    jq_rig_t r;
    rig_open(&r, 2);
    rig_send(&r);
    rig_expect_in_use(&r, 0);
    rig_send(&r);
    rig_send(&r);
    rig_expect_in_use(&r, 2);
    rig_expect_state(&r, ZLINK_PRESSURE_PAUSED);
    zlink_host_capacity_t c = cap_of(r.server);
    ZT_EQ_INT(c.transitions_paused, 1);
    ZT_EQ_INT(c.capacity_waiters, 0);

    FW_EQ(zlink_host_reset_metrics(r.server), ZLINK_FW_OK);
    c = cap_of(r.server);
    ZT_EQ_INT(c.pressure_state, ZLINK_PRESSURE_PAUSED);
    ZT_CHECK(c.current_pause_ns > 0);
    ZT_EQ_INT(c.cumulative_pause_ns, c.current_pause_ns); /* only the current one */
    ZT_EQ_INT(c.transitions_paused, 0);
    ZT_EQ_INT(c.capacity_waits, 0);
    ZT_EQ_INT(c.peak_permits_in_use, 2);
    ZT_EQ_INT(c.effective_max, 2);
    ZT_EQ_INT(c.pause_count, 2);
    ZT_EQ_INT(c.resume_count, 1);

    ts_give(&r.ts, 1 << 20);
    ZT_EVENTUALLY(ts_passed(&r.ts) == r.sent, 3000);
    ZT_EVENTUALLY(cap_of(r.server).permits_in_use == 0, 3000);
    rig_expect_state(&r, ZLINK_PRESSURE_RUNNING);
    c = cap_of(r.server);
    ZT_EQ_INT(c.transitions_running, 1);
    ZT_EQ_INT(c.peak_permits_in_use, 2);
    ZT_EQ_INT(metric(r.server, "zlink.mesh_node.messages.dropped", "reason=no_handler"), 0);
    rig_close(&r);
}

/* JQ-13 (the ClientServer part): a saturated host pauses its server
 * ROUTER, never the DEALER of its own client channel: the server it calls
 * is not asked to stop, and the reply to its request still arrives. */
static void client_dealer_gets_no_flow_state(void)
{
    fw_recorder_t rec;
    fw_recorder_init(&rec);
    zlink_fw_result_t rc;
    zlink_host_t *s2 = zlink_host_new("jq13-s2", &rc);
    ZT_CHECK(s2 != NULL);
    FW_EQ(zlink_host_add_cs_server(s2, "out", "tcp://127.0.0.1:0"), ZLINK_FW_OK);
    FW_EQ(zlink_host_add_handler(s2, ZLINK_OWNER_CHANNEL, "out", ZLINK_MESSAGE_SEND, "m",
                                 fw_on_send, &rec),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_add_handler(s2, ZLINK_OWNER_CHANNEL, "out", ZLINK_MESSAGE_REQUEST, "m",
                                 fw_on_request, &rec),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_start(s2), ZLINK_FW_OK);
    char s2ep[256];
    FW_EQ(zlink_host_endpoint(s2, "out", s2ep, sizeof s2ep), ZLINK_FW_OK);
    /* H: server of "svc" (saturated below) and client of "out" -> s2. */
    turnstile_t ts;
    ts_init(&ts);
    zlink_host_t *h = zlink_host_new("jq13-h", &rc);
    ZT_CHECK(h != NULL);
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS, 1), ZLINK_FW_OK);
    FW_EQ(zlink_host_add_cs_server(h, "svc", "tcp://127.0.0.1:0"), ZLINK_FW_OK);
    FW_EQ(zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_SEND, "m",
                                 on_send_ts, &ts),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_add_cs_client(h, "out", s2ep), ZLINK_FW_OK);
    FW_EQ(zlink_host_start(h), ZLINK_FW_OK);
    char hep[256];
    FW_EQ(zlink_host_endpoint(h, "svc", hep, sizeof hep), ZLINK_FW_OK);
    zlink_host_t *c = fw_cs_client("jq13-c", hep);
    for (int i = 0; i < 2; i++) {
        zlink_call_t *k = fw_call(c, 0, "flood");
        FW_EQ(fw_wait(k, NULL, 0), ZLINK_FW_OK);
        zlink_call_release(k);
    }
    /* Settled: the first one-way runs (inside the turnstile) and the second
     * is the queued job holding the one permit, so H stays PAUSED. (The
     * first one alone pauses H for a moment before its turn opens.) */
    ZT_EVENTUALLY(ts_inside(&ts) == 1 && cap_of(h).queued_jobs == 1 &&
                      cap_of(h).pressure_state == ZLINK_PRESSURE_PAUSED,
                  3000);
    /* H's request to s2 through its DEALER completes while H is PAUSED. */
    zlink_call_t *q = zlink_call_request_to_channel(h, "out", &rc);
    ZT_CHECK(q != NULL);
    FW_EQ(zlink_call_set_payload(q, "m", "", "q", 1), ZLINK_FW_OK);
    char reply[32];
    FW_EQ(fw_wait(q, reply, sizeof reply), ZLINK_FW_OK);
    ZT_EQ_STR(reply, "q");
    zlink_call_release(q);
    ZT_EQ_INT(cap_of(h).pressure_state, ZLINK_PRESSURE_PAUSED);
    ZT_EQ_INT(cap_of(h).flow_state_config_failures, 0);
    /* s2 was never asked to stop: a second call goes out at once too. */
    q = zlink_call_send_to_channel(h, "out", &rc);
    ZT_CHECK(q != NULL);
    FW_EQ(zlink_call_set_payload(q, "m", "", "s", 1), ZLINK_FW_OK);
    FW_EQ(fw_wait(q, NULL, 0), ZLINK_FW_OK);
    zlink_call_release(q);
    ZT_EVENTUALLY(fw_recorder_has(&rec, "s") == 1, 3000);
    ts_give(&ts, 1 << 20);
    FW_EQ(zlink_host_shutdown(c, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(c), ZLINK_FW_OK);
    FW_EQ(zlink_host_shutdown(h, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(h), ZLINK_FW_OK);
    FW_EQ(zlink_host_shutdown(s2, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(s2), ZLINK_FW_OK);
}

/* ------------------------------------------------- Core HWM settings */

#define CORE "zlink.host.core_hwm."

static zlink_host_t *cs_host(const char *name)
{
    zlink_host_t *h = host_p2(name);
    FW_EQ(zlink_host_add_cs_server(h, "svc", "tcp://127.0.0.1:0"), ZLINK_FW_OK);
    return h;
}

/* The three Core HWM options (seed 001 §2): defaults unset, range checks
 * with the old value kept, fixed once started, passed to the Core context
 * untouched (the core_hwm projection reads them back from the Core), and
 * never moving the job queue's values nor moved by them. The shared Core
 * context refuses a second host that asks for other values. */
static void core_hwm_options(void)
{
    zlink_host_t *h = cs_host("hwm");
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_CORE_HWM_PROFILE), -1);
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_CORE_BUDGET_BYTES), 0);
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_CORE_MEMORY_LIMIT_BYTES), 0);
    ZT_EQ_INT(metric(h, CORE "profile", ""), ZLINK_PROFILE_BALANCED); /* the Core's default */
    static const struct {
        int o;
        int64_t v;
    } bad[] = {{ZLINK_HOST_OPT_CORE_HWM_PROFILE, -2},
               {ZLINK_HOST_OPT_CORE_HWM_PROFILE, ZLINK_PROFILE_THROUGHPUT + 1},
               {ZLINK_HOST_OPT_CORE_BUDGET_BYTES, -1},
               {ZLINK_HOST_OPT_CORE_MEMORY_LIMIT_BYTES, -1}};
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_CORE_HWM_PROFILE, ZLINK_PROFILE_COMPACT),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_CORE_BUDGET_BYTES, 1 << 20), ZLINK_FW_OK);
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_CORE_MEMORY_LIMIT_BYTES, 8 << 20), ZLINK_FW_OK);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t before = opt(h, bad[i].o);
        FW_EQ(zlink_host_set_option(h, bad[i].o, bad[i].v), ZLINK_FW_INVALID_ARGUMENT);
        ZT_EQ_INT(opt(h, bad[i].o), before);
    }
    /* Independent of the job queue both ways. */
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_JOB_QUEUE_PROFILE), ZLINK_JOB_QUEUE_BALANCED);
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS), 256);
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_JOB_QUEUE_PROFILE, ZLINK_JOB_QUEUE_THROUGHPUT),
          ZLINK_FW_OK);
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_CORE_HWM_PROFILE), ZLINK_PROFILE_COMPACT);
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS), 512);
    FW_EQ(zlink_host_start(h), ZLINK_FW_OK);
    ZT_EQ_INT(metric(h, CORE "profile", ""), ZLINK_PROFILE_COMPACT);
    ZT_EQ_INT(metric(h, CORE "effective_budget", ""), 1 << 20);
    ZT_EQ_INT(cap_of(h).effective_max, 512);
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_CORE_HWM_PROFILE, ZLINK_PROFILE_BALANCED),
          ZLINK_FW_INVALID_OPERATION);
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_CORE_BUDGET_BYTES, 1), ZLINK_FW_INVALID_OPERATION);
    ZT_EQ_INT(opt(h, ZLINK_HOST_OPT_CORE_HWM_PROFILE), ZLINK_PROFILE_COMPACT);

    /* A second host while h holds the shared context: another value fails
     * its start before anything binds; unset or equal values start. */
    zlink_host_t *g = cs_host("hwm-other");
    FW_EQ(zlink_host_set_option(g, ZLINK_HOST_OPT_CORE_HWM_PROFILE, ZLINK_PROFILE_THROUGHPUT),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_start(g), ZLINK_FW_INVALID_OPERATION);
    ZT_EQ_INT(zlink_host_state(g), ZLINK_HOST_FAILED);
    char ep[256];
    ZT_CHECK(zlink_host_endpoint(g, "svc", ep, sizeof ep) != ZLINK_FW_OK); /* never bound */
    FW_EQ(zlink_host_destroy(g), ZLINK_FW_OK);
    g = cs_host("hwm-budget");
    FW_EQ(zlink_host_set_option(g, ZLINK_HOST_OPT_CORE_BUDGET_BYTES, 2 << 20), ZLINK_FW_OK);
    FW_EQ(zlink_host_start(g), ZLINK_FW_INVALID_OPERATION);
    FW_EQ(zlink_host_destroy(g), ZLINK_FW_OK);
    g = cs_host("hwm-same");
    FW_EQ(zlink_host_set_option(g, ZLINK_HOST_OPT_CORE_HWM_PROFILE, ZLINK_PROFILE_COMPACT),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_start(g), ZLINK_FW_OK);
    FW_EQ(zlink_host_shutdown(g, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(g), ZLINK_FW_OK);
    g = cs_host("hwm-unset");
    FW_EQ(zlink_host_start(g), ZLINK_FW_OK);
    ZT_EQ_INT(metric(g, CORE "profile", ""), ZLINK_PROFILE_COMPACT); /* in force */
    ZT_EQ_INT(opt(g, ZLINK_HOST_OPT_CORE_HWM_PROFILE), -1);
    FW_EQ(zlink_host_shutdown(g, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(g), ZLINK_FW_OK);
    FW_EQ(zlink_host_shutdown(h, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(h), ZLINK_FW_OK);

    /* The context went with its last host: a new one takes new values. */
    h = cs_host("hwm-next");
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_CORE_HWM_PROFILE, ZLINK_PROFILE_THROUGHPUT),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_start(h), ZLINK_FW_OK);
    ZT_EQ_INT(metric(h, CORE "profile", ""), ZLINK_PROFILE_THROUGHPUT);
    ZT_EQ_INT(metric(h, CORE "effective_budget", ""), 0);
    ZT_EQ_INT(cap_of(h).effective_max, 256); /* the job queue kept Balanced */
    FW_EQ(zlink_host_shutdown(h, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(h), ZLINK_FW_OK);

    /* More bytes than the machine has: a startup error. */
    h = cs_host("hwm-huge");
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_CORE_MEMORY_LIMIT_BYTES, INT64_MAX),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_start(h), ZLINK_FW_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_host_state(h), ZLINK_HOST_FAILED);
    FW_EQ(zlink_host_destroy(h), ZLINK_FW_OK);
    h = cs_host("hwm-huge-budget");
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_CORE_BUDGET_BYTES, INT64_MAX), ZLINK_FW_OK);
    FW_EQ(zlink_host_start(h), ZLINK_FW_INVALID_ARGUMENT);
    FW_EQ(zlink_host_destroy(h), ZLINK_FW_OK);
}

/* The zlink.host.core_hwm.* projection of a host's sockets: the HWM marks
 * it gave them, the bytes its Core queues hold (a paused ROUTER's peer
 * records wait in the Core once the host stops receiving), and zeros
 * before start and after shutdown. */
static void core_hwm_metrics(void)
{
    jq_rig_t r;
    memset(&r, 0, sizeof r);
    ts_init(&r.ts);
    zlink_fw_result_t rc;
    r.server = zlink_host_new("hwm-s", &rc);
    ZT_CHECK(r.server != NULL);
    FW_EQ(zlink_host_set_option(r.server, ZLINK_HOST_OPT_MAX_QUEUED_JOBS, 1), ZLINK_FW_OK);
    FW_EQ(zlink_host_add_cs_server(r.server, "svc", "tcp://127.0.0.1:0"), ZLINK_FW_OK);
    FW_EQ(zlink_channel_set_option(r.server, "svc", ZLINK_NODE_OPT_SNDHWM, 16384), ZLINK_FW_OK);
    FW_EQ(zlink_channel_set_option(r.server, "svc", ZLINK_NODE_OPT_RCVHWM, 32768), ZLINK_FW_OK);
    FW_EQ(zlink_host_add_handler(r.server, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_SEND, "m",
                                 on_send_ts, &r.ts),
          ZLINK_FW_OK);
    int64_t v = -1;
    FW_EQ(zlink_host_metric(r.server, CORE "accounted", "state=receive", &v), ZLINK_FW_OK);
    ZT_EQ_INT(v, 0);
    FW_EQ(zlink_host_metric(r.server, CORE "applied", "", &v), ZLINK_FW_OK);
    ZT_EQ_INT(v, 0); /* no socket yet */
    FW_EQ(zlink_host_start(r.server), ZLINK_FW_OK);
    ZT_EQ_INT(metric(r.server, CORE "applied", ""), 16384 + 32768);
    ZT_EQ_INT(metric(r.server, CORE "applied", "state=send"), 16384);
    ZT_EQ_INT(metric(r.server, CORE "applied", "state=receive"), 32768);
    ZT_EQ_INT(metric(r.server, CORE "accounted", "state=receive"), 0);
    ZT_EQ_INT(metric(r.server, CORE "blocked_ratio", ""), 0);
    ZT_EQ_INT(metric(r.server, CORE "completion_accounted", "state=send"), 0);
    ZT_EQ_INT(metric(r.server, CORE "effective_budget", ""), 0);
    FW_EQ(zlink_host_endpoint(r.server, "svc", r.ep, sizeof r.ep), ZLINK_FW_OK);
    /* A raw wire peer ignores the pause and sends a record the host, with
     * its one permit held by a queued job, leaves in its Core queue. */
    r.client = fw_cs_client("hwm-c", r.ep);
    for (int i = 0; i < 2; i++) {
        zlink_call_t *k = fw_call(r.client, 0, "hold");
        FW_EQ(fw_wait(k, NULL, 0), ZLINK_FW_OK);
        zlink_call_release(k);
    }
    /* Settled: the first one-way runs (inside the turnstile) and the
     * second is the queued job holding the one permit. (queued_jobs == 1
     * alone is also true for a moment while the first is still queued.) */
    ZT_EVENTUALLY(ts_inside(&r.ts) == 1 && cap_of(r.server).queued_jobs == 1, 3000);
    raw_t raw;
    raw_connect(&raw, r.ep);
    wire_t w;
    w_init(&w);
    w_hello(&w, ZLINK_DEALER, "raw");
    w_ready_dr(&w, ZLINK_DEALER, "raw", 1, 0);
    w_data(&w, false, "not a framework record");
    raw_send(&raw, &w);
    w_free(&w);
    ZT_EVENTUALLY(metric(r.server, CORE "accounted", "state=receive") > 0, 3000);
    ZT_EQ_INT(cap_of(r.server).queued_jobs, 1);
    ts_give(&r.ts, 1 << 20);
    /* The raw record is malformed for the framework: dropped after receive. */
    ZT_EVENTUALLY(metric(r.server, CORE "accounted", "state=receive") == 0, 3000);
    FW_EQ(zlink_host_shutdown(r.client, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(r.client), ZLINK_FW_OK);
    FW_EQ(zlink_host_shutdown(r.server, ZLINK_MS(2000)), ZLINK_FW_OK);
    ZT_EQ_INT(metric(r.server, CORE "applied", ""), 0); /* sockets closed */
    FW_EQ(zlink_host_metric(r.server, CORE "accounted", "", &v), ZLINK_FW_NOT_FOUND);
    FW_EQ(zlink_host_metric(r.server, CORE "nothing", "", &v), ZLINK_FW_NOT_FOUND);
    FW_EQ(zlink_host_destroy(r.server), ZLINK_FW_OK);
    raw_close(&raw);
}

/* ------------------------------------------------ the source FIFO */

/* What the handlers of the FIFO case saw: one letter per record, 'a' for
 * channel c1 and 'b' for c2 (the payload's first byte). */
typedef struct src_log {
    pthread_mutex_t lk;
    char seen[64];
    int n;
    fw_gate_t gate; /* the first record ('x') waits here */
} src_log_t;

static void on_src(zlink_turn_t *turn, void *user)
{
    src_log_t *l = user;
    size_t n = 0;
    const char *p = zlink_turn_payload(turn, &n);
    if (n == 1 && p[0] == 'x') {
        fw_gate_pass(&l->gate);
    } else {
        pthread_mutex_lock(&l->lk);
        if (n >= 1 && l->n < (int)sizeof l->seen - 1)
            l->seen[l->n++] = p[0];
        pthread_mutex_unlock(&l->lk);
    }
    zlink_turn_end(turn, 0, NULL);
}

static int src_log_count(src_log_t *l)
{
    pthread_mutex_lock(&l->lk);
    int n = l->n;
    pthread_mutex_unlock(&l->lk);
    return n;
}

static int gate_waiting(fw_gate_t *g)
{
    pthread_mutex_lock(&g->lk);
    int n = g->waiting;
    pthread_mutex_unlock(&g->lk);
    return n;
}

/* A raw ZMP DEALER named rid connected to ep, past its handshake. */
static void src_peer(raw_t *r, const char *ep, const char *rid)
{
    raw_connect(r, ep);
    wire_t w;
    w_init(&w);
    w_hello(&w, ZLINK_DEALER, rid);
    w_ready_dr(&w, ZLINK_DEALER, rid, 1, 0);
    raw_send(r, &w);
    w_free(&w);
    raw_wait_frames(r, 2); /* the ROUTER's HELLO and READY */
}

/* n CHANNEL_SEND records to channel, each with the one-byte payload text
 * (doc/protocol.md §14), in one write. */
static void src_send(raw_t *r, const char *channel, char text, int n)
{
    wire_t w;
    w_init(&w);
    for (int i = 0; i < n; i++) {
        uint8_t f0[64] = {0x5A, 0x4D, 0x01, 18, 0x00};
        size_t k = 21; /* prefix + op_high + op_low (zero: allowed) */
        f0[k++] = (uint8_t)strlen(channel);
        memcpy(f0 + k, channel, strlen(channel));
        k += strlen(channel);
        uint8_t env[9] = {0x01, 0, 0, 0, 1, 1, 'm', 0, (uint8_t)text};
        w_frame0(&w, ZR_F_MORE, f0, k);
        w_frame0(&w, 0x00, env, sizeof env);
    }
    raw_send(r, &w);
    w_free(&w);
}

/* Seed 001 §3: every receiving socket with a record and no permit waits in
 * the FIFO, and freed permits go to the oldest waiter. M = 1; c1's first
 * record holds its handler, the next one is a queued job holding the only
 * permit, and c1 (20 more records) waits in the FIFO. Then c2 gets 5
 * records: it must join the FIFO too (capacity_waiters 2), behind c1, and
 * once the gate opens the two take turns: a1, a2, b, a, b ... A socket
 * that a waiter's records kept out of the poll would never be counted and
 * would get its turn only after c1 ran dry. */
static void sources_wait_in_one_fifo(void)
{
    src_log_t log;
    memset(&log, 0, sizeof log);
    pthread_mutex_init(&log.lk, NULL);
    fw_gate_init(&log.gate);
    zlink_fw_result_t rc;
    zlink_host_t *h = zlink_host_new("jq-fifo", &rc);
    ZT_CHECK(h != NULL);
    FW_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS, 1), ZLINK_FW_OK);
    const char *chans[2] = {"c1", "c2"};
    char ep[2][256];
    for (int i = 0; i < 2; i++) {
        FW_EQ(zlink_host_add_cs_server(h, chans[i], "tcp://127.0.0.1:0"), ZLINK_FW_OK);
        FW_EQ(zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, chans[i], ZLINK_MESSAGE_SEND, "m",
                                     on_src, &log),
              ZLINK_FW_OK);
    }
    FW_EQ(zlink_host_start(h), ZLINK_FW_OK);
    for (int i = 0; i < 2; i++)
        FW_EQ(zlink_host_endpoint(h, chans[i], ep[i], sizeof ep[i]), ZLINK_FW_OK);
    raw_t r1, r2;
    src_peer(&r1, ep[0], "r1");
    src_peer(&r2, ep[1], "r2");

    src_send(&r1, "c1", 'x', 1);
    ZT_EVENTUALLY(gate_waiting(&log.gate) == 1, 3000);
    src_send(&r1, "c1", 'a', 21);
    ZT_EVENTUALLY(cap_of(h).queued_jobs == 1 && cap_of(h).capacity_waiters == 1, 3000);
    src_send(&r2, "c2", 'b', 5);
    ZT_EVENTUALLY(cap_of(h).capacity_waiters == 2, 3000);
    ZT_EQ_INT(cap_of(h).permits_in_use, 1);

    fw_gate_open(&log.gate);
    ZT_EVENTUALLY(src_log_count(&log) == 26, 5000);
    pthread_mutex_lock(&log.lk);
    log.seen[log.n] = '\0';
    char got[64];
    snprintf(got, sizeof got, "%s", log.seen);
    pthread_mutex_unlock(&log.lk);
    /* a1 was the queued job; then c1 (the older waiter), c2, c1, ...:
     * "aababababab" and the rest of c1. The handlers of c1 and c2 run on
     * different gates, so one may log just before the other that started
     * first: the k-th 'b' (from 0) is at most one place late. */
    int k = 0;
    for (int i = 0; got[i] != '\0'; i++) {
        if (got[i] != 'b')
            continue;
        if (i > 3 + 2 * k)
            ZT_FAIL("c2's record %d ran at place %d (\"%s\"): c2 waited behind c1's whole "
                    "backlog instead of taking turns",
                    k, i, got);
        k++;
    }
    ZT_EQ_INT(k, 5);
    ZT_EVENTUALLY(cap_of(h).permits_in_use == 0 && cap_of(h).capacity_waiters == 0, 3000);
    FW_EQ(zlink_host_shutdown(h, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(h), ZLINK_FW_OK);
    raw_close(&r1);
    raw_close(&r2);
    pthread_mutex_destroy(&log.lk);
}

/* Bad handles and arguments of the two capacity calls. */
static void capacity_arguments(void)
{
    zlink_host_capacity_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    FW_EQ(zlink_host_capacity(NULL, &c), ZLINK_FW_INVALID_HANDLE);
    FW_EQ(zlink_host_reset_metrics(NULL), ZLINK_FW_INVALID_HANDLE);
    zlink_fw_result_t rc;
    zlink_host_t *h = zlink_host_new("jq-args", &rc);
    ZT_CHECK(h != NULL);
    FW_EQ(zlink_host_capacity(h, NULL), ZLINK_FW_INVALID_ARGUMENT);
    c.struct_size = sizeof c - 1;
    FW_EQ(zlink_host_capacity(h, &c), ZLINK_FW_INVALID_ARGUMENT);
    /* A larger struct (a later header) gets zeros after this version's. */
    unsigned char big[sizeof c + 16];
    memset(big, 0xAB, sizeof big);
    ((zlink_host_capacity_t *)(void *)big)->struct_size = sizeof big;
    FW_EQ(zlink_host_capacity(h, (zlink_host_capacity_t *)(void *)big), ZLINK_FW_OK);
    for (size_t i = sizeof c; i < sizeof big; i++)
        ZT_EQ_INT(big[i], 0);
    FW_EQ(zlink_host_reset_metrics(h), ZLINK_FW_OK);
    int64_t v;
    FW_EQ(zlink_host_metric(h, JQ "jobs", "state=bogus", &v), ZLINK_FW_NOT_FOUND);
    FW_EQ(zlink_host_metric(h, JQ "nothing", "", &v), ZLINK_FW_NOT_FOUND);
    FW_EQ(zlink_host_destroy(h), ZLINK_FW_OK);
    FW_EQ(zlink_host_capacity(h, &c), ZLINK_FW_INVALID_HANDLE); /* destroyed */
}

/* ------------------------------------------------ an owner's queue */

static zlink_owner_status_t owner_of(zlink_host_t *h)
{
    zlink_owner_status_t st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    FW_EQ(zlink_host_owner_status(h, ZLINK_OWNER_CHANNEL, "svc", &st), ZLINK_FW_OK);
    return st;
}

/* 002 §8: a record counts as queued for its owner (count and bytes) until
 * its turn opens, then as running until the turn ends; never both, never
 * neither. A record refused before the owner (no handler) leaves no trace
 * and takes no sequence number. */
static void owner_queue_accounting(void)
{
    jq_rig_t r;
    rig_open(&r, 10);
    zlink_owner_status_t st = owner_of(r.server);
    ZT_EQ_INT(st.accepted_seq, 0);
    ZT_EQ_INT(st.queued_records + st.running_records + st.handled, 0);
    /* j0 runs (waits at the turnstile), j1 and j2 queue. The three
     * payloads have one size, so their records have one size. */
    for (int i = 0; i < 3; i++)
        rig_send(&r);
    rig_expect_in_use(&r, 2);
    st = owner_of(r.server);
    ZT_EQ_INT(st.busy, 1);
    ZT_EQ_INT(st.accepted_seq, 3);
    ZT_EQ_INT(st.running_records, 1);
    ZT_EQ_INT(st.queued_records, 2);
    ZT_CHECK(st.running_bytes > 0);
    ZT_EQ_INT(st.queued_bytes, 2 * st.running_bytes);
    uint64_t one = st.running_bytes;
    /* A one-way for a packet nobody handles: accepted by the sender,
     * dropped by the server before the owner. */
    zlink_fw_result_t rc;
    zlink_call_t *c = zlink_call_send_to_channel(r.client, "svc", &rc);
    ZT_CHECK(c != NULL);
    FW_EQ(zlink_call_set_payload(c, "nobody", "", "j9", 2), ZLINK_FW_OK);
    FW_EQ(fw_wait(c, NULL, 0), ZLINK_FW_OK);
    zlink_call_release(c);
    ZT_EVENTUALLY(metric(r.server, "zlink.mesh_node.messages.dropped", "reason=no_handler") == 1,
                  3000);
    zlink_owner_status_t after = owner_of(r.server);
    ZT_EQ_INT(after.accepted_seq, 3);
    ZT_EQ_INT(after.queued_records, 2);
    ZT_EQ_INT(after.queued_bytes, 2 * one);
    ZT_EQ_INT(after.running_records, 1);
    /* j0 ends, j1 opens: one record moved from queued to running. */
    ts_give(&r.ts, 1);
    ZT_EVENTUALLY(ts_passed(&r.ts) == 1 && ts_inside(&r.ts) == 1 && owner_of(r.server).handled == 1,
                  3000);
    st = owner_of(r.server);
    ZT_EQ_INT(st.running_records, 1);
    ZT_EQ_INT(st.running_bytes, one);
    ZT_EQ_INT(st.queued_records, 1);
    ZT_EQ_INT(st.queued_bytes, one);
    /* The rest ends: nothing left anywhere. */
    ts_give(&r.ts, 2);
    ZT_EVENTUALLY(owner_of(r.server).handled == 3, 3000);
    st = owner_of(r.server);
    ZT_EQ_INT(st.busy, 0);
    ZT_EQ_INT(st.queued_records + st.queued_bytes + st.running_records + st.running_bytes, 0);
    ZT_EQ_INT(st.accepted_seq, 3);
    rig_close(&r);
}

/* Bad arguments of zlink_host_owner_status and zlink_turn_sequence. */
static void owner_status_arguments(void)
{
    zlink_owner_status_t st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    FW_EQ(zlink_host_owner_status(NULL, ZLINK_OWNER_CHANNEL, "svc", &st),
          ZLINK_FW_INVALID_HANDLE);
    ZT_EQ_INT(zlink_turn_sequence(NULL), 0);
    zlink_fw_result_t rc;
    zlink_host_t *h = zlink_host_new("jq-owner", &rc);
    ZT_CHECK(h != NULL);
    FW_EQ(zlink_host_owner_status(h, ZLINK_OWNER_CHANNEL, "svc", &st), ZLINK_FW_NOT_FOUND);
    FW_EQ(zlink_host_add_cs_server(h, "svc", "inproc://jq-owner"), ZLINK_FW_OK);
    FW_EQ(zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_SEND, "m",
                                 on_send_ts, NULL),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_owner_status(h, ZLINK_OWNER_CHANNEL, "svc", &st), ZLINK_FW_OK);
    FW_EQ(zlink_host_owner_status(h, ZLINK_OWNER_NODE, "svc", &st), ZLINK_FW_NOT_FOUND);
    FW_EQ(zlink_host_owner_status(h, (zlink_owner_kind_t)7, "svc", &st),
          ZLINK_FW_INVALID_ARGUMENT);
    FW_EQ(zlink_host_owner_status(h, ZLINK_OWNER_CHANNEL, NULL, &st), ZLINK_FW_INVALID_ARGUMENT);
    FW_EQ(zlink_host_owner_status(h, ZLINK_OWNER_CHANNEL, "svc", NULL), ZLINK_FW_INVALID_ARGUMENT);
    st.struct_size = sizeof st - 1;
    FW_EQ(zlink_host_owner_status(h, ZLINK_OWNER_CHANNEL, "svc", &st), ZLINK_FW_INVALID_ARGUMENT);
    FW_EQ(zlink_host_destroy(h), ZLINK_FW_OK);
}

static const zt_case_t cases[] = {
    ZT_CASE(config_profiles_and_checks),
    ZT_CASE(config_detected_processors),
    ZT_CASE(pressure_hysteresis),
    ZT_CASE(reset_keeps_state),
    ZT_CASE(client_dealer_gets_no_flow_state),
    ZT_CASE(capacity_arguments),
    ZT_CASE(owner_queue_accounting),
    ZT_CASE(owner_status_arguments),
    ZT_CASE(core_hwm_options),
    ZT_CASE(core_hwm_metrics),
    ZT_CASE(sources_wait_in_one_fifo),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
