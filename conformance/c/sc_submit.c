/*
 * sc_submit.c — seed 000 §17 "Submit and admission" and "Deadline":
 * SC-01 (one-way at admission, the error table), SC-02 (capacity wait,
 * single submit), SC-03 (waiter pool full), SC-06 (send-timeout
 * validation), each over every transport of the case.
 */
#include "sc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- SC-01 */

/* Both terminators refuse: zlink_call_wait on one call gives want, and
 * zlink_call_start on a twin returns want and never runs its callback
 * (cb_never is checked at the end of the case). */
typedef zlink_call_t *make_fn(void *arg, const char *tag);

static void refused_both_ways(make_fn *make, void *arg, int want, sc_done_t *cb_never)
{
    zlink_call_t *c = make(arg, "refused-w");
    SC_EQ(sc_wait(c, NULL), want);
    zlink_call_release(c);
    c = make(arg, "refused-s");
    SC_EQ(zlink_call_start(c, sc_on_done, cb_never), want);
    zlink_call_release(c);
}

typedef struct target {
    sc_client_t *a;
    const char *channel; /* channel call, or ... */
    const char *rid;     /* ... node call */
    bool request;
} target_t;

static zlink_call_t *make_target(void *arg, const char *tag)
{
    target_t *t = arg;
    if (t->rid != NULL)
        return sc_node_call(t->a->h, t->request, t->rid, tag);
    return sc_call(t->a, t->request, t->channel, tag, 0);
}

static void refused_each_kind(sc_client_t *a, const char *channel, const char *rid, int want,
                              sc_done_t *cb_never)
{
    for (int req = 0; req < 2; req++) {
        target_t t = {a, channel, rid, req == 1};
        refused_both_ways(make_target, &t, want, cb_never);
    }
}

typedef struct shutdown_job {
    zlink_host_t *h;
    int64_t deadline;
    int rc;
    pthread_t th;
} shutdown_job_t;

static void *shutdown_main(void *arg)
{
    shutdown_job_t *j = arg;
    j->rc = zlink_host_shutdown(j->h, j->deadline);
    return NULL;
}

static void one_way_and_errors(const char *tr)
{
    sc_server_t b = {.name = "B", .weight = 100, .zero_channel = true};
    sc_server_open(&b, SC_MESH, tr, "sc01");
    sc_client_t a = {.extra_channels = true};
    sc_server_t *srv[] = {&b};
    sc_client_open(&a, SC_MESH, srv, 1);
    sc_done_t never;
    sc_done_init(&never);

    /* A one-way completes at admission, before the gated handler runs. */
    atomic_store(&b.gated, true);
    sc_done_t d1;
    sc_done_init(&d1);
    zlink_call_t *m1 = sc_call(&a, false, NULL, "m1", 0);
    SC_EQ(zlink_call_start(m1, sc_on_done, &d1), ZLINK_FW_OK);
    sc_done_expect(&d1, 2000);
    SC_EQ(sc_done_result(&d1), ZLINK_FW_OK);
    ZT_EQ_INT(sc_rec_count(&b.rec), 0); /* the gate is still closed */
    ZT_EVENTUALLY(sc_gate_waiting(&b.gate) == 1, 2000);
    ZT_EQ_INT(sc_rec_count(&b.rec), 0);
    sc_gate_open(&b.gate);
    ZT_EVENTUALLY(sc_rec_has(&b.rec, "m1") == 1, 2000);

    /* The error table: each call completes once with its kind. */
    refused_each_kind(&a, "nope", NULL, ZLINK_FW_NOT_FOUND, &never); /* unknown channel */
    refused_each_kind(&a, "none", NULL, ZLINK_FW_NOT_FOUND, &never); /* no server at all */
    refused_each_kind(&a, "zero", NULL, ZLINK_FW_NOT_FOUND, &never); /* weight 0 only */
    refused_each_kind(&a, NULL, "Z", ZLINK_FW_NOT_FOUND, &never);    /* no such node */

    /* A second terminator changes nothing. */
    sc_done_t d2;
    sc_done_init(&d2);
    zlink_call_t *m2 = sc_call(&a, false, NULL, "m2", 0);
    SC_EQ(zlink_call_start(m2, sc_on_done, &d2), ZLINK_FW_OK);
    SC_EQ(zlink_call_start(m2, sc_on_done, &d2), ZLINK_FW_INVALID_OPERATION);
    zlink_outcome_t o;
    SC_EQ(sc_wait(m2, &o), ZLINK_FW_INVALID_OPERATION);
    SC_EQ(zlink_call_yield(m2, sc_on_done, &d2), ZLINK_FW_INVALID_OPERATION);
    sc_done_expect(&d2, 2000);
    zlink_call_t *w = sc_call(&a, true, NULL, "w1", 0);
    SC_EQ(sc_wait(w, NULL), ZLINK_FW_OK);
    SC_EQ(zlink_call_start(w, sc_on_done, &never), ZLINK_FW_INVALID_OPERATION);
    SC_EQ(sc_wait(w, NULL), ZLINK_FW_INVALID_OPERATION);
    zlink_call_release(w);

    /* The synchronous terminator inside a handler: InvalidOperation at
     * once (and so is a shutdown from there). */
    zlink_fw_result_t rc;
    zlink_call_t *sy = zlink_call_send_to_channel(a.h, "svc", &rc);
    ZT_CHECK(sy != NULL);
    SC_EQ(zlink_call_set_payload(sy, "sync", "", "s", 1), ZLINK_FW_OK);
    SC_EQ(sc_wait(sy, NULL), ZLINK_FW_OK);
    zlink_call_release(sy);
    ZT_EVENTUALLY(atomic_load(&b.sync_ran) == 1, 2000);
    SC_EQ(atomic_load(&b.sync_wait_rc), ZLINK_FW_INVALID_OPERATION);
    SC_EQ(atomic_load(&b.sync_shutdown_rc), ZLINK_FW_INVALID_OPERATION);
    ZT_EQ_INT(zlink_host_state(b.h), ZLINK_HOST_SERVING);

    /* Nothing refused reached B: a marker behind them on the same
     * connection arrives, and B holds exactly m1, m2, w1 and it. */
    zlink_call_t *mk = sc_call(&a, false, NULL, "marker", 0);
    SC_EQ(sc_wait(mk, NULL), ZLINK_FW_OK);
    zlink_call_release(mk);
    ZT_EVENTUALLY(sc_rec_has(&b.rec, "marker") == 1, 2000);
    ZT_EQ_INT(sc_rec_count(&b.rec), 4);
    ZT_EQ_INT(sc_rec_has(&b.rec, "m1"), 1);
    ZT_EQ_INT(sc_rec_has(&b.rec, "m2"), 1);
    ZT_EQ_INT(sc_done_calls(&d1), 1);
    ZT_EQ_INT(sc_done_calls(&d2), 1);
    SC_EQ(sc_done_result(&d2), ZLINK_FW_OK);
    zlink_call_release(m1);
    zlink_call_release(m2);

    /* Any call after A's shutdown began: ShuttingDown. A request B holds
     * keeps A draining while the calls are made. */
    atomic_store(&b.reply_mode, SC_REPLY_HOLD);
    sc_done_t dh;
    sc_done_init(&dh);
    zlink_call_t *h1 = sc_call(&a, true, NULL, "h1", 0);
    SC_EQ(zlink_call_start(h1, sc_on_done, &dh), ZLINK_FW_OK);
    ZT_EVENTUALLY(sc_server_nheld(&b) == 1, 2000);
    shutdown_job_t job = {a.h, ZLINK_MS(ZT_MS(2000)), -1, 0};
    ZT_EQ_INT(pthread_create(&job.th, NULL, shutdown_main, &job), 0);
    ZT_EVENTUALLY(zlink_host_state(a.h) != ZLINK_HOST_SERVING, 2000);
    refused_each_kind(&a, "svc", NULL, ZLINK_FW_SHUTTING_DOWN, &never);
    refused_each_kind(&a, NULL, "B", ZLINK_FW_SHUTTING_DOWN, &never);
    ZT_EQ_INT(sc_done_calls(&dh), 0); /* still draining when the calls were refused */
    ZT_EQ_INT(pthread_join(job.th, NULL), 0);
    SC_EQ(job.rc, ZLINK_FW_OK);
    ZT_EQ_INT(sc_done_calls(&dh), 1);
    SC_EQ(sc_done_result(&dh), ZLINK_FW_SHUTTING_DOWN);
    refused_each_kind(&a, "svc", NULL, ZLINK_FW_SHUTTING_DOWN, &never); /* and once stopped */
    zlink_call_release(h1);
    sc_client_close(&a);

    /* SendToNode to B after B's link is cut: Unavailable. A second
     * caller (A's own host is stopped now) checks B's count first. */
    sc_client_t a2 = {0};
    sc_client_open(&a2, SC_MESH, srv, 1);
    zlink_call_t *mk2 = sc_call(&a2, false, NULL, "marker2", 0);
    SC_EQ(sc_wait(mk2, NULL), ZLINK_FW_OK);
    zlink_call_release(mk2);
    ZT_EVENTUALLY(sc_rec_has(&b.rec, "marker2") == 1, 2000);
    ZT_EQ_INT(sc_rec_count(&b.rec), 6); /* + h1, marker2: no refused call arrived */
    SC_EQ(zlink_host_shutdown(b.h, ZLINK_MS(1000)), ZLINK_FW_OK);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(a2.h, "m", NULL) == 0, 5000);
    refused_each_kind(&a2, NULL, "B", ZLINK_FW_UNAVAILABLE, &never);
    refused_each_kind(&a2, "svc", NULL, ZLINK_FW_UNAVAILABLE, &never);
    sc_client_close(&a2);
    sc_server_close(&b);
    ZT_EQ_INT(sc_done_calls(&never), 0);
    sc_done_destroy(&never);
    sc_done_destroy(&d1);
    sc_done_destroy(&d2);
    sc_done_destroy(&dh);
}

void sc01_oneway_admission_and_errors(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    for (size_t i = 0; i < n; i++)
        one_way_and_errors(trs[i]);
}

/* -------------------------------------------------------------- SC-02 */

#define SAT_HWM (16 * 1024)

static void saturated_pair(const char *tr, const char *tag, sc_mode_t mode, sc_server_t *b,
                           sc_client_t *a)
{
    sc_server_open(b, mode, tr, tag);
    sc_server_t *srv[] = {b};
    sc_client_open(a, mode, srv, 1);
}

static void capacity_wait(const char *tr, bool open_early)
{
    sc_server_t b = {.name = "B", .weight = 100, .max_jobs = 1, .hwm = SAT_HWM};
    sc_client_t a = {.hwm = SAT_HWM, .send_timeout = ZLINK_MS(2000)};
    saturated_pair(tr, open_early ? "sc02a" : "sc02b", SC_MESH, &b, &a);
    sc_sat_t sat;
    sc_saturate(&a, &b, &sat);
    if (open_early) {
        /* (a) open() at 500 ms: m* is admitted then, once. */
        ZT_CHECK(!sc_done_wait_until(&sat.done, sat.started_ms + 500));
        sc_gate_open(&b.gate);
        sc_done_expect(&sat.done, 3000);
        SC_EQ(sc_done_result(&sat.done), ZLINK_FW_OK);
        ZT_CHECK(sat.done.at_ms - sat.started_ms < 2000); /* before its send timeout */
    } else {
        /* (b) never opened: DeadlineExceeded at the send timeout. */
        sc_done_expect(&sat.done, 2000 + 250 + 1000);
        SC_EQ(sc_done_result(&sat.done), ZLINK_FW_DEADLINE_EXCEEDED);
        SC_ON_TIME(sat.done.at_ms - sat.started_ms, 2000);
        sc_gate_open(&b.gate);
    }
    /* B handles the backlog; a marker behind it on the same connection
     * shows what reached B. */
    zlink_call_t *mk = sc_call(&a, false, NULL, "marker", 0);
    SC_EQ(sc_wait(mk, NULL), ZLINK_FW_OK);
    zlink_call_release(mk);
    ZT_EVENTUALLY(sc_rec_has(&b.rec, "marker") == 1, 5000);
    ZT_EQ_INT(sc_rec_has(&b.rec, sat.tag), open_early ? 1 : 0);
    ZT_EQ_INT(sc_rec_count(&b.rec), (size_t)sat.accepted + (open_early ? 2 : 1));
    ZT_EQ_INT(sc_done_calls(&sat.done), 1);
    sc_sat_free(&sat);
    sc_client_close(&a);
    sc_server_close(&b);
}

void sc02_capacity_wait_single_submit(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    for (size_t i = 0; i < n; i++) {
        capacity_wait(trs[i], true);
        capacity_wait(trs[i], false);
    }
}

/* -------------------------------------------------------------- SC-03 */

static void waiter_pool_full(const char *tr)
{
    sc_server_t b = {.name = "B", .weight = 100, .max_jobs = 1, .hwm = SAT_HWM};
    sc_client_t a = {.hwm = SAT_HWM, .send_timeout = ZLINK_MS(ZT_MS(10000))};
    saturated_pair(tr, "sc03", SC_MESH, &b, &a);
    int64_t w = 0;
    SC_EQ(zlink_host_get_option(a.h, ZLINK_HOST_OPT_ADMISSION_WAITERS, &w), ZLINK_FW_OK);
    ZT_CHECK(w > 0 && w < 100000);
    ZT_EQ_INT(sc_status(a.h).admission_waiters_max, (uint64_t)w);
    sc_sat_t sat;
    sc_saturate(&a, &b, &sat); /* m*: the first of the W parked sends */
    sc_done_t *d = calloc((size_t)w, sizeof *d);
    zlink_call_t **c = calloc((size_t)w, sizeof *c);
    ZT_CHECK(d != NULL && c != NULL);
    for (int64_t i = 1; i < w; i++) {
        char tag[SC_TAG_MAX];
        snprintf(tag, sizeof tag, "p%lld", (long long)i);
        sc_done_init(&d[i]);
        c[i] = sc_call(&a, false, NULL, tag, 4096);
        SC_EQ(zlink_call_start(c[i], sc_on_done, &d[i]), ZLINK_FW_OK);
    }
    ZT_EVENTUALLY(sc_status(a.h).oneway_waiting == (uint64_t)w, 2000);
    for (int64_t i = 1; i < w; i++)
        ZT_EQ_INT(sc_done_calls(&d[i]), 0);
    ZT_EQ_INT(sc_done_calls(&sat.done), 0);

    /* W + 1: DeadlineExceeded at once, nothing kept. */
    sc_done_t dx;
    sc_done_init(&dx);
    zlink_call_t *x = sc_call(&a, false, NULL, "overflow", 4096);
    int64_t t0 = zt_now_ms();
    SC_EQ(zlink_call_start(x, sc_on_done, &dx), ZLINK_FW_OK);
    sc_done_expect(&dx, 50);
    SC_EQ(sc_done_result(&dx), ZLINK_FW_DEADLINE_EXCEEDED);
    ZT_CHECK(dx.at_ms - t0 <= ZT_MS(50));
    ZT_EQ_INT(sc_status(a.h).oneway_waiting, (uint64_t)w);

    /* open(): every parked send is admitted once; the overflow never. */
    sc_gate_open(&b.gate);
    sc_done_expect(&sat.done, 10000);
    SC_EQ(sc_done_result(&sat.done), ZLINK_FW_OK);
    for (int64_t i = 1; i < w; i++) {
        sc_done_expect(&d[i], 10000);
        SC_EQ(sc_done_result(&d[i]), ZLINK_FW_OK);
    }
    zlink_call_t *mk = sc_call(&a, false, NULL, "marker", 0);
    SC_EQ(sc_wait(mk, NULL), ZLINK_FW_OK);
    zlink_call_release(mk);
    ZT_EVENTUALLY(sc_rec_has(&b.rec, "marker") == 1, 10000);
    ZT_EQ_INT(sc_rec_has(&b.rec, "overflow"), 0);
    ZT_EQ_INT(sc_rec_count(&b.rec), (size_t)sat.accepted + (size_t)w + 1);
    ZT_EQ_INT(sc_rec_has(&b.rec, sat.tag), 1);
    ZT_EQ_INT(sc_rec_has(&b.rec, "p1"), 1);
    ZT_EQ_INT(sc_done_calls(&dx), 1);
    for (int64_t i = 1; i < w; i++) {
        ZT_EQ_INT(sc_done_calls(&d[i]), 1);
        zlink_call_release(c[i]);
        sc_done_destroy(&d[i]);
    }
    free(c);
    free(d);
    zlink_call_release(x);
    sc_done_destroy(&dx);
    sc_sat_free(&sat);
    sc_client_close(&a);
    sc_server_close(&b);
}

void sc03_waiter_pool_full(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    for (size_t i = 0; i < n; i++)
        waiter_pool_full(trs[i]);
}

/* -------------------------------------------------------------- SC-06 */

/* One send-timeout owner: set / get through its own functions. */
typedef struct owner {
    const char *what;
    zlink_host_t *h;
    int kind; /* 0 host root fallback, 1 mesh node, 2 channel */
    const char *name;
} owner_t;

static int owner_set(const owner_t *o, int64_t v)
{
    if (o->kind == 0)
        return zlink_host_set_option(o->h, ZLINK_HOST_OPT_DEFAULT_SEND_TIMEOUT, v);
    if (o->kind == 1)
        return zlink_mesh_set_option(o->h, o->name, ZLINK_NODE_OPT_SEND_TIMEOUT, v);
    return zlink_channel_set_option(o->h, o->name, ZLINK_NODE_OPT_SEND_TIMEOUT, v);
}

static int64_t owner_get(const owner_t *o)
{
    int64_t v = -1;
    if (o->kind == 0)
        SC_EQ(zlink_host_get_option(o->h, ZLINK_HOST_OPT_DEFAULT_SEND_TIMEOUT, &v), ZLINK_FW_OK);
    else if (o->kind == 1)
        SC_EQ(zlink_mesh_get_option(o->h, o->name, ZLINK_NODE_OPT_SEND_TIMEOUT, &v), ZLINK_FW_OK);
    else
        SC_EQ(zlink_channel_get_option(o->h, o->name, ZLINK_NODE_OPT_SEND_TIMEOUT, &v),
              ZLINK_FW_OK);
    return v;
}

/* Every rejected value is INVALID_ARGUMENT and keeps the old value; 0.4
 * ms is 1 ms; INT_MAX ms is the largest accepted. Leaves want set. */
static void owner_validation(const owner_t *o, int64_t want)
{
    const int64_t bad[] = {0, ZLINK_MS(-1), -1, ZLINK_DURATION_INFINITE,
                           ZLINK_MS((int64_t)INT_MAX + 1), INT64_MIN};
    int64_t before = owner_get(o);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = owner_set(o, bad[i]);
        if (rc != ZLINK_FW_INVALID_ARGUMENT)
            ZT_FAIL("%s: send timeout %lld ns gave %s, expected INVALID_ARGUMENT", o->what,
                    (long long)bad[i], zlink_result_name(rc));
        ZT_EQ_INT(owner_get(o), before);
    }
    SC_EQ(owner_set(o, 400 * 1000), ZLINK_FW_OK);
    ZT_EQ_INT(owner_get(o), ZLINK_MS(1));
    SC_EQ(owner_set(o, ZLINK_MS(1) + 1), ZLINK_FW_OK);
    ZT_EQ_INT(owner_get(o), ZLINK_MS(2)); /* rounded up */
    SC_EQ(owner_set(o, ZLINK_MS((int64_t)INT_MAX)), ZLINK_FW_OK);
    ZT_EQ_INT(owner_get(o), ZLINK_MS((int64_t)INT_MAX));
    SC_EQ(owner_set(o, want), ZLINK_FW_OK);
    ZT_EQ_INT(owner_get(o), want);
}

static void setters_validate(void)
{
    zlink_fw_result_t rc;
    zlink_host_t *h = zlink_host_new("V", &rc);
    ZT_CHECK(h != NULL);
    SC_EQ(zlink_host_add_mesh_node(h, "m", "V", 1, "inproc://sc06-validate"), ZLINK_FW_OK);
    SC_EQ(zlink_host_add_cs_server(h, "cs-server", "inproc://sc06-server"), ZLINK_FW_OK);
    SC_EQ(zlink_host_add_cs_client(h, "cs-client", "inproc://sc06-server"), ZLINK_FW_OK);
    owner_t root = {"root fallback", h, 0, NULL};
    owner_t mesh = {"mesh node ROUTER", h, 1, "m"};
    owner_t cli = {"ClientServer client DEALER", h, 2, "cs-client"};
    owner_t srv = {"ClientServer server ROUTER", h, 2, "cs-server"};
    /* Unset: every family reads the root fallback, 1 s. */
    ZT_EQ_INT(owner_get(&root), ZLINK_DEFAULT_SEND_TIMEOUT);
    ZT_EQ_INT(owner_get(&mesh), ZLINK_DEFAULT_SEND_TIMEOUT);
    ZT_EQ_INT(owner_get(&cli), ZLINK_DEFAULT_SEND_TIMEOUT);
    ZT_EQ_INT(owner_get(&srv), ZLINK_DEFAULT_SEND_TIMEOUT);
    owner_validation(&root, ZLINK_MS(1500));
    ZT_EQ_INT(owner_get(&mesh), ZLINK_MS(1500)); /* still unset: follows the root */
    owner_validation(&mesh, ZLINK_MS(700));
    owner_validation(&cli, ZLINK_MS(800));
    owner_validation(&srv, ZLINK_MS(900));
    ZT_EQ_INT(owner_get(&root), ZLINK_MS(1500));
    /* A host configured so still starts and serves. */
    SC_EQ(zlink_host_start(h), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_host_state(h), ZLINK_HOST_SERVING);
    /* Runtime setters: rejected values keep the old one. */
    owner_validation(&root, ZLINK_MS(1500));
    owner_validation(&mesh, ZLINK_MS(700));
    owner_validation(&cli, ZLINK_MS(800));
    SC_EQ(zlink_host_shutdown(h, ZLINK_MS(1000)), ZLINK_FW_OK);
    SC_EQ(zlink_host_destroy(h), ZLINK_FW_OK);
}

/* A saturated target: m* ends DeadlineExceeded after want_ms. */
static void pending_send_times_out(const char *tr, sc_mode_t mode, int64_t sock_timeout,
                                   int64_t root_timeout, int64_t want_ms)
{
    sc_server_t b = {.name = "B", .weight = 100, .max_jobs = 1, .hwm = SAT_HWM};
    sc_client_t a = {.hwm = SAT_HWM, .send_timeout = sock_timeout,
                     .root_send_timeout = root_timeout};
    saturated_pair(tr, "sc06", mode, &b, &a);
    sc_sat_t sat;
    sc_saturate(&a, &b, &sat);
    sc_done_expect(&sat.done, (int)want_ms + 250 + 1000);
    SC_EQ(sc_done_result(&sat.done), ZLINK_FW_DEADLINE_EXCEEDED);
    SC_ON_TIME(sat.done.at_ms - sat.started_ms, want_ms);
    sc_sat_free(&sat);
    sc_client_close(&a);
    sc_server_close(&b);
}

void sc06_send_timeout_validation(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    setters_validate();
    for (size_t i = 0; i < n; i++) {
        /* Unset everywhere: about 1 s, for the ROUTER and the DEALER. */
        pending_send_times_out(trs[i], SC_MESH, 0, 0, 1000);
        pending_send_times_out(trs[i], SC_CS, 0, 0, 1000);
        /* The root fallback decides while the socket's is unset; a
         * socket's own value beats it. */
        pending_send_times_out(trs[i], SC_MESH, 0, ZLINK_MS(300), 300);
        pending_send_times_out(trs[i], SC_CS, ZLINK_MS(400), ZLINK_MS(3000), 400);
    }
}
