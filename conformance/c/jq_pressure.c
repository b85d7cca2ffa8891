/*
 * jq_pressure.c — seed 001 §10 "Configuration of the two capacity
 * authorities" and "Pressure state and sockets" (framework-contract.md
 * §7.2): JQ-01 (independent profiles and startup errors), JQ-11 (the 80/60
 * hysteresis, at the host and at the socket), JQ-12 (the latest absolute
 * state wins: a new peer, 1,000 toggles, closes mid-toggle) and JQ-13
 * (which sockets get a flow state).
 *
 * Design notes
 * ------------
 * The host H under test is a framework host; everything else that looks at
 * its sockets is outside it and public: an "observer" is a plain Core
 * DEALER of the case's own context connected to one of H's ROUTERs, whose
 * monitor status tells whether that ROUTER asks its peers to pause
 * (flow_paused_connections); a raw wire peer (zltest_rawzmp.h) reads the
 * FLOWSTATE frames H sends and can send records while paused.
 *
 * How jobs are held: H's handler waits at a turnstile that lets one turn
 * through per token, so a case raises H's queued jobs one one-way at a
 * time and lowers them one token at a time. The first record enters the
 * handler (its permit goes back at the handler's first instruction); each
 * later one waits in the channel's gate as a queued job with a permit.
 *
 * Threads and locks: the case thread builds, sends and checks; handlers
 * run on H's host threads; JQ-12's senders are threads of the case. The
 * turnstile has its own mutex, a leaf. Every wait ends on the event it
 * waits for; its timeout is only the failure bound.
 *
 * Transport: tcp only, because the observers live in a Core context of
 * their own (inproc joins sockets of one context).
 */
#include "sc.h"
#include "zltest_rawzmp.h"

#include <stdio.h>
#include <string.h>

/* ----------------------------------------------------------- helpers */

/* One turn through per token. */
typedef struct jq_turnstile {
    pthread_mutex_t lk;
    pthread_cond_t cv;
    int tokens;
    int inside; /* turns waiting at it */
    int passed;
} jq_turnstile_t;

static void ts_init(jq_turnstile_t *t)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lk, NULL);
    pthread_cond_init(&t->cv, NULL);
}

static void ts_destroy(jq_turnstile_t *t)
{
    pthread_mutex_destroy(&t->lk);
    pthread_cond_destroy(&t->cv);
}

static void ts_give(jq_turnstile_t *t, int n)
{
    pthread_mutex_lock(&t->lk);
    t->tokens += n;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->lk);
}

static int ts_get(jq_turnstile_t *t, const int *field)
{
    pthread_mutex_lock(&t->lk);
    int n = *field;
    pthread_mutex_unlock(&t->lk);
    return n;
}

/* The handler of H's channels: waits for a token, then ends its turn. */
static void on_turnstile(zlink_turn_t *turn, void *user)
{
    jq_turnstile_t *t = user;
    pthread_mutex_lock(&t->lk);
    t->inside++;
    while (t->tokens == 0)
        pthread_cond_wait(&t->cv, &t->lk);
    t->tokens--;
    t->inside--;
    t->passed++;
    pthread_mutex_unlock(&t->lk);
    zlink_turn_end(turn, 0, NULL);
}

static int64_t opt_of(zlink_host_t *h, int o)
{
    int64_t v = -2;
    SC_EQ(zlink_host_get_option(h, o, &v), ZLINK_FW_OK);
    return v;
}

#define JQ "zlink.host.application_job_queue."
#define CORE "zlink.host.core_hwm."

/* A Core DEALER of the case's context connected to ep, and its monitor. */
typedef struct jq_observer {
    void *sock, *mon;
} jq_observer_t;

static void obs_open(jq_observer_t *o, void *ctx, const char *ep)
{
    o->sock = zlink_socket(ctx, ZLINK_DEALER);
    ZT_CHECK(o->sock != NULL);
    ZT_EQ_INT(zlink_connect(o->sock, ep), ZLINK_CONNECT_OK);
    zlink_monitor_config_t cfg = {0, 0, 0};
    o->mon = zlink_socket_monitor_open(o->sock, &cfg);
    ZT_CHECK(o->mon != NULL);
}

static zlink_monitor_status_t obs_status(jq_observer_t *o)
{
    zlink_monitor_status_t st;
    memset(&st, 0, sizeof st);
    ZT_EQ_INT(zlink_monitor_status(o->mon, &st), ZLINK_CONFIG_OK);
    ZT_CHECK(st.detail_flags & ZLINK_MONITOR_STATUS_DETAIL_FLOW_STATE);
    return st;
}

static bool obs_ready(jq_observer_t *o)
{
    return (obs_status(o).state_flags & ZLINK_MONITOR_STATE_READY) != 0;
}

/* How many of its peers pause the observer now (0 or 1: it has one). */
static uint64_t obs_paused(jq_observer_t *o)
{
    return obs_status(o).flow_paused_connections;
}

static void obs_close(jq_observer_t *o)
{
    ZT_EQ_INT(zlink_monitor_close(&o->mon), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_close(o->sock), ZLINK_CLOSE_OK);
    o->sock = NULL;
}

/* A host of mesh "m" (routing id name) listening on tcp, serving channel
 * "svc" through the turnstile t (t NULL: no channel), with max_jobs (0:
 * the default). Not started. */
static zlink_host_t *mesh_host(const char *name, int64_t max_jobs, jq_turnstile_t *t)
{
    zlink_host_t *h = sc_mesh_host(name, "tcp", true, max_jobs);
    if (t != NULL) {
        SC_EQ(zlink_mesh_add_channel_server(h, "m", "svc", 100), ZLINK_FW_OK);
        SC_EQ(zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_SEND, "m",
                                     on_turnstile, t),
              ZLINK_FW_OK);
    }
    return h;
}

/* A started mesh client of "svc" (routing id name) connected to the node
 * "H" at ep; returns once both ends see each other ready. Its one-ways may
 * wait for room while H pauses it: 30 s allowed. */
static zlink_host_t *mesh_client(const char *name, const char *ep, zlink_host_t *h)
{
    zlink_host_t *c = sc_mesh_host(name, "tcp", false, 0);
    SC_EQ(zlink_mesh_add_channel_client(c, "m", "svc"), ZLINK_FW_OK);
    SC_EQ(zlink_mesh_set_option(c, "m", ZLINK_NODE_OPT_SEND_TIMEOUT, ZLINK_MS(30000)),
          ZLINK_FW_OK);
    SC_EQ(zlink_mesh_connect(c, "m", ep, "H", 1), ZLINK_FW_OK);
    SC_EQ(zlink_host_start(c), ZLINK_FW_OK);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(c, "m", NULL) == 1, 5000);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(h, "m", NULL) >= 1, 5000);
    return c;
}

/* One one-way from c to "svc" (mesh) or to CS channel chan, finished with
 * zlink_call_wait: the result. */
static int oneway(zlink_host_t *c, const char *chan, const char *tag)
{
    zlink_fw_result_t rc;
    zlink_call_t *k = chan == NULL ? zlink_call_send_to_channel(c, "svc", &rc)
                                   : zlink_call_send_to_channel(c, chan, &rc);
    ZT_CHECK(k != NULL);
    SC_EQ(zlink_call_set_payload(k, "m", "", tag, strlen(tag)), ZLINK_FW_OK);
    int r = sc_wait(k, NULL);
    zlink_call_release(k);
    return r;
}

/* -------------------------------------------------------------- JQ-01 */

/* A host with P forced to 2 and one CS server channel (not started). */
static zlink_host_t *p2_host(const char *name)
{
    zlink_fw_result_t rc;
    zlink_host_t *h = zlink_host_new(name, &rc);
    ZT_CHECK(h != NULL);
    SC_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_EFFECTIVE_PROCESSORS, 2), ZLINK_FW_OK);
    SC_EQ(zlink_host_add_cs_server(h, "svc", "tcp://127.0.0.1:0"), ZLINK_FW_OK);
    return h;
}

/* Starts h and checks both authorities as the host and the Core report
 * them: M, the job-queue profile, and the Core profile in force. */
static void expect_started(zlink_host_t *h, int64_t m, int jq_profile, int core_profile)
{
    SC_EQ(zlink_host_start(h), ZLINK_FW_OK);
    zlink_host_capacity_t c = sc_capacity(h);
    ZT_EQ_INT(c.effective_max, (uint64_t)m);
    ZT_EQ_INT(c.profile, jq_profile);
    ZT_EQ_INT(sc_metric(h, JQ "limit", ""), m);
    ZT_EQ_INT(sc_metric(h, CORE "profile", ""), core_profile);
}

/* A host whose start must fail before anything binds. */
static void expect_start_refused(zlink_host_t *h, int want)
{
    SC_EQ(zlink_host_start(h), want);
    ZT_EQ_INT(zlink_host_state(h), ZLINK_HOST_FAILED);
    char ep[256];
    ZT_CHECK(zlink_host_endpoint(h, "svc", ep, sizeof ep) != ZLINK_FW_OK); /* never bound */
    SC_EQ(zlink_host_destroy(h), ZLINK_FW_OK);
}

/* JQ-01. The Core budget: this Core computes no auto-HWM budget from a
 * profile (doc/decisions.md), so "the Core budget follows Compact" is shown
 * by what the host hands the Core: the profile in force reads back Compact
 * from the Core context (zlink.host.core_hwm.profile), and an explicit
 * budget is the Core's effective budget, untouched by the job queue. */
void jq01_independent_profiles(const conf_params_t *params)
{
    (void)params;
    /* Defaults: both Balanced; M = 128 x 2. */
    zlink_host_t *h = p2_host("jq01-default");
    ZT_EQ_INT(opt_of(h, ZLINK_HOST_OPT_JOB_QUEUE_PROFILE), ZLINK_JOB_QUEUE_BALANCED);
    ZT_EQ_INT(opt_of(h, ZLINK_HOST_OPT_CORE_HWM_PROFILE), -1); /* unset: the Core's default */
    ZT_EQ_INT(opt_of(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS), 256);
    expect_started(h, 256, ZLINK_JOB_QUEUE_BALANCED, ZLINK_PROFILE_BALANCED);
    ZT_EQ_INT(sc_metric(h, CORE "effective_budget", ""), 0);
    sc_host_end(h);

    /* Core Compact + job queue Throughput: 512, and the Core runs Compact. */
    h = p2_host("jq01-both");
    SC_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_CORE_HWM_PROFILE, ZLINK_PROFILE_COMPACT),
          ZLINK_FW_OK);
    ZT_EQ_INT(opt_of(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS), 256); /* the Core's moved nothing */
    SC_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_JOB_QUEUE_PROFILE, ZLINK_JOB_QUEUE_THROUGHPUT),
          ZLINK_FW_OK);
    ZT_EQ_INT(opt_of(h, ZLINK_HOST_OPT_CORE_HWM_PROFILE), ZLINK_PROFILE_COMPACT);
    SC_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_CORE_BUDGET_BYTES, 4 << 20), ZLINK_FW_OK);
    ZT_EQ_INT(opt_of(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS), 512);
    expect_started(h, 512, ZLINK_JOB_QUEUE_THROUGHPUT, ZLINK_PROFILE_COMPACT);
    ZT_EQ_INT(opt_of(h, ZLINK_HOST_OPT_CORE_HWM_PROFILE), ZLINK_PROFILE_COMPACT);
    ZT_EQ_INT(sc_metric(h, CORE "effective_budget", ""), 4 << 20);
    sc_host_end(h);

    /* One at a time: each leaves the other at its default. */
    h = p2_host("jq01-core-only");
    SC_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_CORE_HWM_PROFILE, ZLINK_PROFILE_COMPACT),
          ZLINK_FW_OK);
    expect_started(h, 256, ZLINK_JOB_QUEUE_BALANCED, ZLINK_PROFILE_COMPACT);
    sc_host_end(h);
    h = p2_host("jq01-jq-only");
    SC_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_JOB_QUEUE_PROFILE, ZLINK_JOB_QUEUE_THROUGHPUT),
          ZLINK_FW_OK);
    expect_started(h, 512, ZLINK_JOB_QUEUE_THROUGHPUT, ZLINK_PROFILE_BALANCED);
    ZT_EQ_INT(opt_of(h, ZLINK_HOST_OPT_CORE_HWM_PROFILE), -1);
    sc_host_end(h);

    /* Manual 17: 17, pause 14, resume 10. */
    h = p2_host("jq01-manual");
    SC_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS, 17), ZLINK_FW_OK);
    SC_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_JOB_QUEUE_PROFILE, ZLINK_JOB_QUEUE_COMPACT),
          ZLINK_FW_OK); /* the manual value wins over a profile */
    expect_started(h, 17, ZLINK_JOB_QUEUE_COMPACT, ZLINK_PROFILE_BALANCED);
    zlink_host_capacity_t c = sc_capacity(h);
    ZT_EQ_INT(c.manual_max, 17);
    ZT_EQ_INT(c.pause_count, 14);
    ZT_EQ_INT(c.resume_count, 10);
    sc_host_end(h);

    /* Startup errors before bind: refused by the setter (old value kept;
     * the host then starts with its defaults), or by start (FAILED). */
    static const struct {
        int o;
        int64_t v;
    } bad[] = {{ZLINK_HOST_OPT_MAX_QUEUED_JOBS, 0},
               {ZLINK_HOST_OPT_MAX_QUEUED_JOBS, -1},
               {ZLINK_HOST_OPT_MAX_QUEUED_JOBS, (int64_t)1 << 31},
               {ZLINK_HOST_OPT_PAUSE_PERCENT, 0},
               {ZLINK_HOST_OPT_PAUSE_PERCENT, 101},
               {ZLINK_HOST_OPT_RESUME_PERCENT, 100},
               {ZLINK_HOST_OPT_CORE_HWM_PROFILE, ZLINK_PROFILE_THROUGHPUT + 1},
               {ZLINK_HOST_OPT_CORE_BUDGET_BYTES, -1},
               {ZLINK_HOST_OPT_CORE_MEMORY_LIMIT_BYTES, -1}};
    h = p2_host("jq01-bad");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t before = opt_of(h, bad[i].o);
        SC_EQ(zlink_host_set_option(h, bad[i].o, bad[i].v), ZLINK_FW_INVALID_ARGUMENT);
        ZT_EQ_INT(opt_of(h, bad[i].o), before);
    }
    expect_started(h, 256, ZLINK_JOB_QUEUE_BALANCED, ZLINK_PROFILE_BALANCED);
    c = sc_capacity(h);
    ZT_EQ_INT(c.pause_percent, 80);
    ZT_EQ_INT(c.resume_percent, 60);
    sc_host_end(h);
    /* resume >= pause: each fits alone, the pair stops the start. */
    static const int pairs[][2] = {{60, 60}, {50, 70}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        h = p2_host("jq01-order");
        SC_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_PAUSE_PERCENT, pairs[i][0]), ZLINK_FW_OK);
        SC_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_RESUME_PERCENT, pairs[i][1]), ZLINK_FW_OK);
        expect_start_refused(h, ZLINK_FW_INVALID_ARGUMENT);
    }
    /* A Core memory limit above what the machine has. */
    h = p2_host("jq01-memory");
    SC_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_CORE_MEMORY_LIMIT_BYTES, INT64_MAX),
          ZLINK_FW_OK);
    expect_start_refused(h, ZLINK_FW_INVALID_ARGUMENT);
}

/* -------------------------------------------------------------- JQ-11 */

/* H's state at permits in use q: the host's view, its metric series, and
 * the mesh ROUTER's flow state as the observer (a peer) sees it. */
static void expect_state(zlink_host_t *h, jq_observer_t *obs, int q, int want)
{
    zlink_host_capacity_t c = sc_capacity(h);
    if (c.pressure_state != want)
        ZT_FAIL("queued %d: pressure state %d, expected %d", q, c.pressure_state, want);
    bool paused = want == ZLINK_PRESSURE_PAUSED;
    ZT_EQ_INT(sc_metric(h, JQ "pressure_state", "state=paused"), paused);
    ZT_EQ_INT(sc_metric(h, JQ "pressure_state", "state=running"), !paused);
    /* The ROUTER's state reaches the peer over the wire. */
    ZT_EVENTUALLY(obs_paused(obs) == (paused ? 1u : 0u), 5000);
}

/* Waits until H holds q queued jobs (and so q permits) with one turn at
 * the turnstile. */
static void expect_queued(zlink_host_t *h, jq_turnstile_t *t, int q)
{
    ZT_EVENTUALLY(ts_get(t, &t->inside) == 1 && sc_capacity(h).queued_jobs == (uint64_t)q &&
                      sc_capacity(h).permits_in_use == (uint64_t)q,
                  5000);
}

static void hysteresis(void *ctx, int64_t m, int pause, int resume)
{
    jq_turnstile_t t;
    ts_init(&t);
    zlink_host_t *h = mesh_host("H", m, &t);
    SC_EQ(zlink_host_start(h), ZLINK_FW_OK);
    char ep[256];
    SC_EQ(zlink_host_endpoint(h, "m", ep, sizeof ep), ZLINK_FW_OK);
    zlink_host_capacity_t c = sc_capacity(h);
    ZT_EQ_INT(c.pause_count, pause);
    ZT_EQ_INT(c.resume_count, resume);
    zlink_host_t *cl = mesh_client("C", ep, h);
    jq_observer_t obs;
    obs_open(&obs, ctx, ep);
    ZT_EVENTUALLY(obs_ready(&obs), 5000);

    SC_EQ(oneway(cl, NULL, "j0"), ZLINK_FW_OK); /* enters the handler */
    expect_queued(h, &t, 0);
    /* Its permit counted from its receive to its handler's first line, as
     * did each mesh control record's (HELLO ...) until it was handled: with
     * a pause count of 1 each was one pause and one resume, else none. */
    c = sc_capacity(h);
    uint64_t tp = c.transitions_paused, tr = c.transitions_running;
    if (pause == 1)
        ZT_CHECK(tp >= 1);
    else
        ZT_EQ_INT(tp, 0);
    ZT_EQ_INT(tr, tp);
    expect_state(h, &obs, 0, ZLINK_PRESSURE_RUNNING);
    /* Up: 1..pause-1 running, pause paused. Past the pause count C is held
     * back (the host asked it to stop), so queued jobs above it would need
     * local jobs (Spots): the case's "later" part. */
    for (int q = 1; q <= pause; q++) {
        char tag[16];
        snprintf(tag, sizeof tag, "j%d", q);
        SC_EQ(oneway(cl, NULL, tag), ZLINK_FW_OK);
        expect_queued(h, &t, q);
        expect_state(h, &obs, q, q >= pause ? ZLINK_PRESSURE_PAUSED : ZLINK_PRESSURE_RUNNING);
    }
    c = sc_capacity(h);
    ZT_EQ_INT(c.transitions_paused, tp + 1);
    ZT_EQ_INT(c.transitions_running, tr);
    ZT_EQ_INT(sc_metric(h, JQ "pressure_transitions", "state=paused"), (int64_t)(tp + 1));
    /* Down, one turn at a time: paused above resume, running at it. */
    for (int q = pause - 1; q >= resume; q--) {
        int passed = ts_get(&t, &t.passed);
        ts_give(&t, 1);
        ZT_EVENTUALLY(ts_get(&t, &t.passed) == passed + 1, 5000);
        expect_queued(h, &t, q);
        expect_state(h, &obs, q, q <= resume ? ZLINK_PRESSURE_RUNNING : ZLINK_PRESSURE_PAUSED);
    }
    c = sc_capacity(h);
    ZT_EQ_INT(c.transitions_paused, tp + 1);
    ZT_EQ_INT(c.transitions_running, tr + 1);
    ZT_EQ_INT(sc_metric(h, JQ "pressure_transitions", "state=running"), (int64_t)(tr + 1));
    /* Back up by one: still running unless that reaches the pause count. */
    SC_EQ(oneway(cl, NULL, "again"), ZLINK_FW_OK);
    expect_queued(h, &t, resume + 1);
    bool again = resume + 1 >= pause;
    expect_state(h, &obs, resume + 1, again ? ZLINK_PRESSURE_PAUSED : ZLINK_PRESSURE_RUNNING);
    ZT_EQ_INT(sc_capacity(h).transitions_paused, tp + 1 + (again ? 1 : 0));
    ZT_EQ_INT(sc_capacity(h).transitions_running, tr + 1);
    ZT_EQ_INT(sc_capacity(h).flow_state_config_failures, 0);

    ts_give(&t, 1 << 20);
    obs_close(&obs);
    sc_host_end(cl);
    sc_host_end(h);
    ts_destroy(&t);
}

void jq11_hysteresis(const conf_params_t *params)
{
    (void)params;
    void *ctx = zlink_ctx_new();
    ZT_CHECK(ctx != NULL);
    hysteresis(ctx, 10, 8, 6);
    hysteresis(ctx, 1, 1, 0);
    hysteresis(ctx, 17, 14, 10);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CONFIG_OK);
}

/* -------------------------------------------------------------- JQ-12 */

/* The state byte of the FLOWSTATE frame f, or -1 when f is another frame. */
static int flowstate_of(const rframe_t *f)
{
    if (f->flags != ZR_F_CONTROL || f->size != 19 || memcmp(f->body, "FLOWSTATE", 9) != 0)
        return -1;
    return f->body[10];
}

/* Part 1: H (a CS server, M = 2) is PAUSED; a peer that connects now is
 * told PAUSED right after its handshake, before it sent anything, and a
 * record it sends anyway stays in the Core, unreceived, until H has room. */
static void new_peer_paused(void *ctx)
{
    jq_turnstile_t t;
    ts_init(&t);
    zlink_fw_result_t rc;
    zlink_host_t *h = zlink_host_new("H", &rc);
    ZT_CHECK(h != NULL);
    SC_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS, 2), ZLINK_FW_OK);
    SC_EQ(zlink_host_add_cs_server(h, "cs", "tcp://127.0.0.1:0"), ZLINK_FW_OK);
    SC_EQ(zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, "cs", ZLINK_MESSAGE_SEND, "m",
                                 on_turnstile, &t),
          ZLINK_FW_OK);
    SC_EQ(zlink_host_start(h), ZLINK_FW_OK);
    char ep[256];
    SC_EQ(zlink_host_endpoint(h, "cs", ep, sizeof ep), ZLINK_FW_OK);
    zlink_host_t *cl = zlink_host_new("C", &rc);
    ZT_CHECK(cl != NULL);
    SC_EQ(zlink_host_add_cs_client(cl, "cs", ep), ZLINK_FW_OK);
    SC_EQ(zlink_host_start(cl), ZLINK_FW_OK);
    for (int i = 0; i < 3; i++) {
        char tag[8];
        snprintf(tag, sizeof tag, "p%d", i);
        SC_EQ(oneway(cl, "cs", tag), ZLINK_FW_OK);
        if (i == 0)
            ZT_EVENTUALLY(ts_get(&t, &t.inside) == 1, 5000);
    }
    ZT_EVENTUALLY(sc_capacity(h).queued_jobs == 2, 5000);
    ZT_EQ_INT(sc_capacity(h).pressure_state, ZLINK_PRESSURE_PAUSED);
    int64_t dropped = sc_metric(h, "zlink.mesh_node.messages.dropped", "reason=decode_error");

    /* A Core peer connecting now sees remote pause and keeps its records. */
    jq_observer_t obs;
    obs_open(&obs, ctx, ep);
    ZT_EVENTUALLY(obs_paused(&obs) == 1, 5000);
    zlink_msg_t part;
    ZT_EQ_INT(zlink_msg_init_size(&part, 1), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&part), "k", 1);
    zlink_submit_result_t sr = zlink_send(obs.sock, &part, 1, ZLINK_DONTWAIT, NULL, NULL);
    ZT_CHECK(sr != ZLINK_SUBMIT_OK); /* held back at the sender: not sent */
    zlink_msg_close(&part);

    /* A raw wire peer: HELLO, READY, then FLOWSTATE PAUSED, before any
     * record of its own. */
    raw_t raw;
    raw_connect(&raw, ep);
    wire_t w;
    w_init(&w);
    w_hello(&w, ZLINK_DEALER, "raw");
    w_ready_dr(&w, ZLINK_DEALER, "raw", 1, 0);
    raw_send(&raw, &w);
    w_free(&w);
    rframe_t f = raw_next(&raw);
    ZT_CHECK(f.flags == ZR_F_CONTROL && f.body[0] == 0x01); /* HELLO */
    f = raw_next(&raw);
    ZT_CHECK(f.flags == ZR_F_CONTROL && f.body[0] == 0x04); /* READY */
    f = raw_next(&raw);
    ZT_EQ_INT(flowstate_of(&f), 1); /* PAUSED */
    /* It ignores the pause: its record waits in H's Core queue, not
     * received (no permit is free), and nothing is dropped. */
    w_init(&w);
    w_data(&w, false, "ignores the pause");
    raw_send(&raw, &w);
    w_free(&w);
    ZT_EVENTUALLY(sc_metric(h, CORE "accounted", "state=receive") > 0, 5000);
    zlink_host_capacity_t c = sc_capacity(h);
    ZT_EQ_INT(c.queued_jobs, 2);
    ZT_EQ_INT(c.permits_in_use, 2);
    ZT_EQ_INT(sc_metric(h, "zlink.mesh_node.messages.dropped", "reason=decode_error"), dropped);

    /* Room again: the held jobs run, the raw record (no framework record)
     * is received and dropped as malformed; H runs and tells both peers. */
    ts_give(&t, 1 << 20);
    ZT_EVENTUALLY(ts_get(&t, &t.passed) == 3, 5000);
    ZT_EVENTUALLY(sc_metric(h, "zlink.mesh_node.messages.dropped", "reason=decode_error") ==
                      dropped + 1,
                  5000);
    ZT_EVENTUALLY(sc_capacity(h).pressure_state == ZLINK_PRESSURE_RUNNING, 5000);
    ZT_EVENTUALLY(obs_paused(&obs) == 0, 5000);
    bool running = false;
    int64_t end = zt_now_ms() + ZT_MS(5000);
    while (!running && zt_now_ms() < end) {
        if (!raw_peek(&raw, &f) && !raw_fill(&raw, (int)(end - zt_now_ms())))
            break;
        while (raw_peek(&raw, &f)) {
            raw.at += f.total;
            running |= flowstate_of(&f) == 0;
        }
    }
    ZT_CHECK(running); /* the raw peer was told RUNNING too */
    ZT_EQ_INT(sc_capacity(h).flow_state_config_failures, 0);
    raw_close(&raw);
    obs_close(&obs);
    sc_host_end(cl);
    sc_host_end(h);
    ts_destroy(&t);
}

/* A sender thread of part 2: n one-ways from c to chan (NULL: mesh "svc").
 * Every one must be accepted, unless stop_ok and the host under test shut
 * down meanwhile (its peers then see the connection go). */
typedef struct jq_sender {
    zlink_host_t *c;
    const char *chan;
    int n;
    atomic_bool stop; /* set once the case ended the senders' hosts */
    atomic_int sent;
    atomic_int failed;
    pthread_t th;
} jq_sender_t;

static void *sender_main(void *arg)
{
    jq_sender_t *s = arg;
    for (int i = 0; i < s->n && !atomic_load(&s->stop); i++) {
        zlink_fw_result_t rc;
        zlink_call_t *k = zlink_call_send_to_channel(s->c, s->chan != NULL ? s->chan : "svc", &rc);
        if (k == NULL) {
            atomic_fetch_add(&s->failed, 1);
            continue;
        }
        if (zlink_call_set_payload(k, "m", "", "t", 1) != ZLINK_FW_OK) {
            zlink_call_release(k);
            atomic_fetch_add(&s->failed, 1);
            continue;
        }
        zlink_outcome_t o;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        if (zlink_call_wait(k, &o) == ZLINK_FW_OK)
            atomic_fetch_add(&s->sent, 1);
        else
            atomic_fetch_add(&s->failed, 1);
        zlink_call_release(k);
    }
    return NULL;
}

/* Part 2: H (M = 1, a mesh node and a CS server, handlers that never
 * wait) toggles PAUSED/RUNNING once each way per record: 1,000 records from two
 * sender threads (one per socket) make 1,000 pauses and 1,000 resumes. What closes
 * mid-toggle (this phase has no way to close one socket of a running
 * host): peer sockets of H's ROUTERs (observers opened and closed while
 * the toggling goes on), then, in a second run, H itself (its shutdown
 * closes both its sockets while the senders still toggle it). */
static void toggles(void *ctx, bool shutdown_mid)
{
    enum { PER_SENDER = 500 };
    jq_turnstile_t t;
    ts_init(&t);
    ts_give(&t, 1 << 30); /* never waits */
    zlink_host_t *h = mesh_host("H", 1, &t);
    SC_EQ(zlink_host_add_cs_server(h, "cs", "tcp://127.0.0.1:0"), ZLINK_FW_OK);
    SC_EQ(zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, "cs", ZLINK_MESSAGE_SEND, "m",
                                 on_turnstile, &t),
          ZLINK_FW_OK);
    SC_EQ(zlink_host_start(h), ZLINK_FW_OK);
    char mep[256], cep[256];
    SC_EQ(zlink_host_endpoint(h, "m", mep, sizeof mep), ZLINK_FW_OK);
    SC_EQ(zlink_host_endpoint(h, "cs", cep, sizeof cep), ZLINK_FW_OK);
    zlink_host_t *mc = mesh_client("C1", mep, h);
    zlink_fw_result_t rc;
    zlink_host_t *cc = zlink_host_new("C2", &rc);
    ZT_CHECK(cc != NULL);
    SC_EQ(zlink_host_add_cs_client(cc, "cs", cep), ZLINK_FW_OK);
    SC_EQ(zlink_channel_set_option(cc, "cs", ZLINK_NODE_OPT_SEND_TIMEOUT, ZLINK_MS(30000)),
          ZLINK_FW_OK);
    SC_EQ(zlink_host_start(cc), ZLINK_FW_OK);
    SC_EQ(oneway(cc, "cs", "warm"), ZLINK_FW_OK);
    ZT_EVENTUALLY(ts_get(&t, &t.passed) == 1, 5000);
    zlink_host_capacity_t c0 = sc_capacity(h);

    jq_sender_t s[2] = {{.c = mc, .chan = NULL, .n = PER_SENDER},
                        {.c = cc, .chan = "cs", .n = PER_SENDER}};
    for (int i = 0; i < 2; i++)
        ZT_CHECK(pthread_create(&s[i].th, NULL, sender_main, &s[i]) == 0);
    /* Peer sockets close mid-toggle: observers come and go on both ROUTERs. */
    jq_observer_t keep[2];
    obs_open(&keep[0], ctx, mep);
    obs_open(&keep[1], ctx, cep);
    int churn = 0;
    int64_t churn_end = zt_now_ms() + ZT_MS(30000);
    while (ts_get(&t, &t.passed) < 1 + (shutdown_mid ? 200 : 2 * PER_SENDER)) {
        if (zt_now_ms() > churn_end)
            ZT_FAIL("H handled %d of the %d records within 30 s", ts_get(&t, &t.passed) - 1,
                    2 * PER_SENDER);
        jq_observer_t o;
        obs_open(&o, ctx, churn % 2 == 0 ? mep : cep);
        ZT_EVENTUALLY(obs_ready(&o), 5000);
        obs_close(&o);
        churn++;
    }
    if (shutdown_mid) {
        /* H closes while its senders still toggle it. */
        SC_EQ(zlink_host_shutdown(h, ZLINK_MS(2000)), ZLINK_FW_OK);
        ZT_EQ_INT(zlink_host_state(h), ZLINK_HOST_STOPPED);
        zlink_host_capacity_t c = sc_capacity(h);
        ZT_CHECK(c.transitions_paused >= 200 && c.transitions_paused - c.transitions_running <= 1);
        /* The registry took H's sockets out before closing them: no close
         * race could make an application fail. */
        ZT_EQ_INT(c.flow_state_config_failures, 0);
        /* The senders end: a one-way still waiting for room at H, which is
         * gone, ends with its host's shutdown. */
        for (int i = 0; i < 2; i++)
            atomic_store(&s[i].stop, true);
        SC_EQ(zlink_host_shutdown(mc, ZLINK_MS(2000)), ZLINK_FW_OK);
        SC_EQ(zlink_host_shutdown(cc, ZLINK_MS(2000)), ZLINK_FW_OK);
        for (int i = 0; i < 2; i++)
            pthread_join(s[i].th, NULL);
        ZT_CHECK(atomic_load(&s[0].sent) + atomic_load(&s[1].sent) >= 200);
    } else {
        for (int i = 0; i < 2; i++) {
            pthread_join(s[i].th, NULL);
            ZT_EQ_INT(atomic_load(&s[i].failed), 0);
            ZT_EQ_INT(atomic_load(&s[i].sent), PER_SENDER);
        }
        ZT_EVENTUALLY(ts_get(&t, &t.passed) == 1 + 2 * PER_SENDER, 10000);
        ZT_EVENTUALLY(sc_capacity(h).permits_in_use == 0, 5000);
        zlink_host_capacity_t c = sc_capacity(h);
        /* M = 1: every record paused and resumed H once. */
        ZT_EQ_INT(c.transitions_paused - c0.transitions_paused, 2 * PER_SENDER);
        ZT_EQ_INT(c.transitions_running - c0.transitions_running, 2 * PER_SENDER);
        ZT_EQ_INT(c.pressure_state, ZLINK_PRESSURE_RUNNING);
        /* Every live supported socket ends in the host's state, as each of
         * its peers sees it; a fresh peer too. */
        ZT_EVENTUALLY(obs_paused(&keep[0]) == 0 && obs_paused(&keep[1]) == 0, 5000);
        jq_observer_t late;
        obs_open(&late, ctx, mep);
        ZT_EVENTUALLY(obs_ready(&late), 5000);
        ZT_EQ_INT(obs_paused(&late), 0);
        obs_close(&late);
        /* Nothing of H closed: no failure at all. */
        ZT_EQ_INT(c.flow_state_config_failures, 0);
        ZT_CHECK(churn > 0);
        ZT_EQ_INT(sc_metric(h, "zlink.mesh_node.messages.dropped", "reason=no_handler"), 0);
    }
    obs_close(&keep[0]);
    obs_close(&keep[1]);
    if (!shutdown_mid) {
        sc_host_end(mc);
        sc_host_end(cc);
    } else {
        SC_EQ(zlink_host_destroy(mc), ZLINK_FW_OK);
        SC_EQ(zlink_host_destroy(cc), ZLINK_FW_OK);
    }
    if (!shutdown_mid)
        SC_EQ(zlink_host_shutdown(h, ZLINK_MS(2000)), ZLINK_FW_OK);
    SC_EQ(zlink_host_destroy(h), ZLINK_FW_OK);
    ts_destroy(&t);
}

void jq12_latest_state_wins(const conf_params_t *params)
{
    (void)params;
    void *ctx = zlink_ctx_new();
    ZT_CHECK(ctx != NULL);
    new_peer_paused(ctx);
    toggles(ctx, false);
    toggles(ctx, true);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CONFIG_OK);
}

/* -------------------------------------------------------------- JQ-13 */

/* JQ-13: H has a mesh ROUTER (node "m", serving "svc"), a CS server
 * ROUTER ("cs") and a CS client DEALER ("out") connected to S, a plain
 * Core ROUTER of the case. Saturated (M = 2, gated), H pauses both
 * ROUTERs, as their peers see, and never gives the DEALER a flow state:
 * S, the DEALER's peer, is never paused (no PAUSED ever applied to it).
 * PUB/SUB and STREAM are not in this phase: the case's "later" part. */
void jq13_flow_state_sockets(const conf_params_t *params)
{
    (void)params;
    void *ctx = zlink_ctx_new();
    ZT_CHECK(ctx != NULL);
    void *srv = zlink_socket(ctx, ZLINK_ROUTER);
    ZT_CHECK(srv != NULL);
    ZT_EQ_INT(zlink_bind(srv, "tcp://127.0.0.1:0"), ZLINK_BIND_OK);
    char sep[256];
    size_t sl = sizeof sep;
    ZT_EQ_INT(zlink_getsockopt(srv, ZLINK_LAST_ENDPOINT, sep, &sl), ZLINK_CONFIG_OK);
    zlink_monitor_config_t cfg = {0, 0, 0};
    void *smon = zlink_socket_monitor_open(srv, &cfg);
    ZT_CHECK(smon != NULL);

    jq_turnstile_t t;
    ts_init(&t);
    zlink_host_t *h = mesh_host("H", 2, &t);
    SC_EQ(zlink_host_add_cs_server(h, "cs", "tcp://127.0.0.1:0"), ZLINK_FW_OK);
    SC_EQ(zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, "cs", ZLINK_MESSAGE_SEND, "m",
                                 on_turnstile, &t),
          ZLINK_FW_OK);
    SC_EQ(zlink_host_add_cs_client(h, "out", sep), ZLINK_FW_OK);
    SC_EQ(zlink_host_start(h), ZLINK_FW_OK);
    char mep[256], cep[256];
    SC_EQ(zlink_host_endpoint(h, "m", mep, sizeof mep), ZLINK_FW_OK);
    SC_EQ(zlink_host_endpoint(h, "cs", cep, sizeof cep), ZLINK_FW_OK);
    jq_observer_t om, oc;
    obs_open(&om, ctx, mep);
    obs_open(&oc, ctx, cep);
    ZT_EVENTUALLY(obs_ready(&om) && obs_ready(&oc), 5000);
    zlink_monitor_status_t st;
    ZT_EVENTUALLY((memset(&st, 0, sizeof st), zlink_monitor_status(smon, &st) == ZLINK_CONFIG_OK &&
                                                  (st.state_flags & ZLINK_MONITOR_STATE_READY)),
                  5000); /* H's DEALER is connected to S */

    /* Saturate H through its mesh node: one running, two queued. */
    zlink_host_t *cl = mesh_client("C", mep, h);
    for (int i = 0; i < 3; i++) {
        char tag[8];
        snprintf(tag, sizeof tag, "s%d", i);
        SC_EQ(oneway(cl, NULL, tag), ZLINK_FW_OK);
        if (i == 0)
            ZT_EVENTUALLY(ts_get(&t, &t.inside) == 1, 5000);
    }
    ZT_EVENTUALLY(sc_capacity(h).queued_jobs == 2, 5000);
    ZT_EQ_INT(sc_capacity(h).pressure_state, ZLINK_PRESSURE_PAUSED);
    /* Both ROUTERs PAUSED as their peers see it. */
    ZT_EVENTUALLY(obs_paused(&om) == 1 && obs_paused(&oc) == 1, 5000);
    /* The DEALER: its peer S is not paused and never was; H's DEALER can
     * still send to S while H is PAUSED. */
    memset(&st, 0, sizeof st);
    ZT_EQ_INT(zlink_monitor_status(smon, &st), ZLINK_CONFIG_OK);
    ZT_CHECK(st.detail_flags & ZLINK_MONITOR_STATUS_DETAIL_FLOW_STATE);
    ZT_EQ_INT(st.flow_paused_connections, 0);
    ZT_EQ_INT(st.flow_pause_applied_total, 0);
    zlink_fw_result_t rc;
    zlink_call_t *k = zlink_call_send_to_channel(h, "out", &rc);
    ZT_CHECK(k != NULL);
    SC_EQ(zlink_call_set_payload(k, "m", "", "out", 3), ZLINK_FW_OK);
    SC_EQ(sc_wait(k, NULL), ZLINK_FW_OK);
    zlink_call_release(k);
    zlink_msg_t parts[4];
    size_t n = 0;
    const zlink_routing_id_t *rid = NULL;
    int rcvtimeo = ZT_MS(5000);
    ZT_EQ_INT(zlink_setsockopt(srv, ZLINK_RCVTIMEO, &rcvtimeo, sizeof rcvtimeo), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_router_recv(srv, &rid, NULL, parts, 4, &n, 0), ZLINK_RECV_OK);
    ZT_CHECK(n >= 1);
    zlink_multipart_close(parts, n);
    ZT_EQ_INT(sc_capacity(h).pressure_state, ZLINK_PRESSURE_PAUSED); /* still, throughout */
    memset(&st, 0, sizeof st);
    ZT_EQ_INT(zlink_monitor_status(smon, &st), ZLINK_CONFIG_OK);
    ZT_EQ_INT(st.flow_pause_applied_total, 0);
    ZT_EQ_INT(sc_capacity(h).flow_state_config_failures, 0);

    /* Open: both ROUTERs RUNNING again; S still never paused. */
    ts_give(&t, 1 << 20);
    ZT_EVENTUALLY(sc_capacity(h).pressure_state == ZLINK_PRESSURE_RUNNING, 5000);
    ZT_EVENTUALLY(obs_paused(&om) == 0 && obs_paused(&oc) == 0, 5000);
    memset(&st, 0, sizeof st);
    ZT_EQ_INT(zlink_monitor_status(smon, &st), ZLINK_CONFIG_OK);
    ZT_EQ_INT(st.flow_pause_applied_total, 0);
    ZT_EQ_INT(st.flow_resume_applied_total, 0);

    obs_close(&om);
    obs_close(&oc);
    sc_host_end(cl);
    sc_host_end(h);
    ZT_EQ_INT(zlink_monitor_close(&smon), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_close(srv), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CONFIG_OK);
    ts_destroy(&t);
}
