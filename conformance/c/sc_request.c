/*
 * sc_request.c — seed 000 §17 "Request completion" and "the ban on
 * resending": SC-09 (first outcome wins), SC-11 (no resubmit to another
 * owner), SC-19 (no resend after acceptance), SC-20 (outcomes by type),
 * each over every transport of the case.
 *
 * "Never happens" is shown by order, not by waiting: a record that was
 * not sent on a connection would be ahead of a later one on that same
 * connection, so once the later one arrived, the first is known absent.
 */
#include "sc.h"

#include <string.h>

/* A started request from a to "svc" with tag; timeout_ms 0: the default. */
static zlink_call_t *request_start(sc_client_t *a, const char *tag, int timeout_ms,
                                   sc_done_t *d)
{
    sc_done_init(d);
    zlink_call_t *c = sc_call(a, true, NULL, tag, 0);
    if (timeout_ms > 0)
        SC_EQ(zlink_call_set_timeout(c, ZLINK_MS(timeout_ms)), ZLINK_FW_OK);
    SC_EQ(zlink_call_start(c, sc_on_done, d), ZLINK_FW_OK);
    return c;
}

/* A request that B answers at once; its reply travels behind every earlier
 * reply of B to A on the same connection. */
static void answered_request(sc_client_t *a, const char *tag)
{
    zlink_outcome_t o;
    zlink_call_t *c = sc_call(a, true, NULL, tag, 0);
    SC_EQ(sc_wait(c, &o), ZLINK_FW_OK);
    ZT_EQ_MEM(o.payload, tag, strlen(tag));
    zlink_call_release(c);
}

static void inflight_back_to_zero(sc_client_t *a)
{
    ZT_EVENTUALLY(sc_metric(a->h, "zlink.mesh_node.requests.inflight", "") == 0, 2000);
    ZT_EQ_INT(sc_status(a->h).requests_inflight, 0);
}

/* -------------------------------------------------------------- SC-09 */

static void first_outcome_wins(const char *tr)
{
    sc_timer_t timer;
    sc_timer_start(&timer);
    sc_server_t b = {.name = "B", .weight = 100, .timer = &timer};
    sc_server_open(&b, SC_MESH, tr, "sc09");
    sc_client_t a = {0};
    sc_server_t *srv[] = {&b};
    sc_client_open(&a, SC_MESH, srv, 1);

    /* (a) B replies at once: the value. */
    sc_done_t da;
    zlink_call_t *ca = request_start(&a, "a", 0, &da);
    sc_done_expect(&da, 2000);
    SC_EQ(sc_done_result(&da), ZLINK_FW_OK);
    ZT_EQ_STR(da.reply, "a");

    /* (b) B replies after 500 ms, the timeout is 200 ms. */
    b.delay_min = b.delay_max = 500;
    atomic_store(&b.reply_mode, SC_REPLY_DELAY);
    sc_done_t db;
    int64_t t0 = zt_now_ms(); /* before the start: the timeout runs from inside it */
    zlink_call_t *cb = request_start(&a, "b", 200, &db);
    sc_done_expect(&db, 2000);
    SC_EQ(sc_done_result(&db), ZLINK_FW_DEADLINE_EXCEEDED);
    SC_ON_TIME(db.at_ms - t0, 200);
    ZT_EVENTUALLY(atomic_load(&b.replies_sent) == 1, 3000); /* the late reply left B */
    ZT_EQ_INT(sc_rec_has(&b.rec, "b"), 1);                /* the handler ran */
    atomic_store(&b.reply_mode, SC_REPLY_NOW);
    answered_request(&a, "after-b"); /* behind the late reply */
    ZT_EQ_INT(sc_done_calls(&db), 1);
    inflight_back_to_zero(&a);

    /* (c) cancelled at 100 ms; the reply at 300 ms is ignored. */
    b.delay_min = b.delay_max = 300;
    atomic_store(&b.reply_mode, SC_REPLY_DELAY);
    sc_done_t dc;
    zlink_call_t *cc = request_start(&a, "c", 0, &dc);
    t0 = zt_now_ms();
    ZT_CHECK(!sc_done_wait_until(&dc, t0 + 100));
    SC_EQ(zlink_call_cancel(cc), ZLINK_FW_OK);
    SC_EQ(zlink_call_cancel(cc), ZLINK_FW_OK); /* idempotent */
    sc_done_expect(&dc, 2000);
    SC_EQ(sc_done_result(&dc), ZLINK_FW_CANCELLED);
    ZT_EVENTUALLY(atomic_load(&b.replies_sent) == 2, 3000);
    atomic_store(&b.reply_mode, SC_REPLY_NOW);
    answered_request(&a, "after-c");
    ZT_EQ_INT(sc_done_calls(&dc), 1);
    SC_EQ(zlink_call_cancel(cc), ZLINK_FW_OK); /* after the end: changes nothing */
    ZT_EQ_INT(sc_done_calls(&dc), 1);
    SC_EQ(sc_done_result(&dc), ZLINK_FW_CANCELLED);
    inflight_back_to_zero(&a);

    /* (e) B's handler fails: InternalFailure, once. */
    atomic_store(&b.reply_mode, SC_REPLY_FAIL);
    sc_done_t de;
    zlink_call_t *ce = request_start(&a, "e", 0, &de);
    sc_done_expect(&de, 2000);
    SC_EQ(sc_done_result(&de), ZLINK_FW_INTERNAL_FAILURE);
    atomic_store(&b.reply_mode, SC_REPLY_NOW);
    answered_request(&a, "after-e");
    ZT_EQ_INT(sc_done_calls(&de), 1);

    /* (d) A shuts down while a request is pending: ShuttingDown. */
    atomic_store(&b.reply_mode, SC_REPLY_HOLD);
    sc_done_t dd;
    zlink_call_t *cd = request_start(&a, "d", 0, &dd);
    ZT_EVENTUALLY(sc_server_nheld(&b) == 1, 2000);
    SC_EQ(zlink_host_shutdown(a.h, ZLINK_MS(200)), ZLINK_FW_OK);
    ZT_EQ_INT(sc_done_calls(&dd), 1); /* decided before shutdown returned */
    SC_EQ(sc_done_result(&dd), ZLINK_FW_SHUTTING_DOWN);
    ZT_EQ_INT(sc_status(a.h).requests_inflight, 0);

    sc_client_close(&a);
    sc_server_close(&b);
    sc_timer_finish(&timer);
    zlink_call_t *calls[] = {ca, cb, cc, ce, cd};
    sc_done_t *dones[] = {&da, &db, &dc, &de, &dd};
    for (size_t i = 0; i < 5; i++) {
        ZT_EQ_INT(sc_done_calls(dones[i]), 1);
        zlink_call_release(calls[i]);
        sc_done_destroy(dones[i]);
    }
}

void sc09_first_outcome_wins(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    for (size_t i = 0; i < n; i++)
        first_outcome_wins(trs[i]);
}

/* -------------------------------------------------------------- SC-11 */

/* Shows that server y never saw tag: a marker sent to y after the outcome
 * arrives, and y has no tag. Mesh: a node-direct send to y. ClientServer:
 * channel sends until one lands on y (the DEALER picks per call). */
static void never_seen_by(sc_client_t *a, sc_server_t *y, const char *tag)
{
    if (a->mode == SC_MESH) {
        zlink_call_t *mk = sc_node_call(a->h, false, y->name, "marker");
        SC_EQ(sc_wait(mk, NULL), ZLINK_FW_OK);
        zlink_call_release(mk);
        ZT_EVENTUALLY(sc_rec_has(&y->rec, "marker") >= 1, 2000);
    } else {
        for (int i = 0; sc_rec_has(&y->rec, "marker") == 0; i++) {
            ZT_CHECK(i < 200);
            zlink_call_t *mk = sc_call(a, true, NULL, "marker", 0);
            int rc = sc_wait(mk, NULL);
            zlink_call_release(mk);
            /* a held reply: the marker's own request times out */
            ZT_CHECK(rc == ZLINK_FW_OK || rc == ZLINK_FW_DEADLINE_EXCEEDED);
        }
    }
    ZT_EQ_INT(sc_rec_has(&y->rec, tag), 0);
}

static void no_resubmit(const char *tr, sc_mode_t mode)
{
    sc_server_t s1 = {.name = "S1", .weight = 100}, s2 = {.name = "S2", .weight = 100};
    sc_server_open(&s1, mode, tr, "sc11");
    sc_server_open(&s2, mode, tr, "sc11");
    sc_client_t a = {0};
    sc_server_t *srv[] = {&s1, &s2};
    sc_client_open(&a, mode, srv, 2);

    /* A request with a 300 ms timeout lands on one server, which never
     * replies: DeadlineExceeded, and the other never sees it. */
    atomic_store(&s1.reply_mode, SC_REPLY_HOLD);
    atomic_store(&s2.reply_mode, SC_REPLY_HOLD);
    sc_done_t dt;
    int64_t t0 = zt_now_ms(); /* before the start: the timeout runs from inside it */
    zlink_call_t *ct = request_start(&a, "t", 300, &dt);
    ZT_EVENTUALLY(sc_rec_has(&s1.rec, "t") + sc_rec_has(&s2.rec, "t") == 1, 2000);
    sc_server_t *x = sc_rec_has(&s1.rec, "t") ? &s1 : &s2, *y = x == &s1 ? &s2 : &s1;
    sc_done_expect(&dt, 2000);
    SC_EQ(sc_done_result(&dt), ZLINK_FW_DEADLINE_EXCEEDED);
    SC_ON_TIME(dt.at_ms - t0, 300);
    atomic_store(&x->reply_mode, SC_REPLY_NOW);
    atomic_store(&y->reply_mode, SC_REPLY_NOW);
    never_seen_by(&a, y, "t");
    ZT_EQ_INT(sc_rec_has(&x->rec, "t"), 1);
    ZT_EQ_INT(sc_done_calls(&dt), 1);

    /* Killed after it received the request: exactly one terminal
     * (Unavailable or DeadlineExceeded), never resubmitted. */
    atomic_store(&s1.reply_mode, SC_REPLY_HOLD);
    atomic_store(&s2.reply_mode, SC_REPLY_HOLD);
    sc_done_t dk;
    zlink_call_t *ck = request_start(&a, "k", ZT_MS(3000), &dk);
    ZT_EVENTUALLY(sc_rec_has(&s1.rec, "k") + sc_rec_has(&s2.rec, "k") == 1, 2000);
    x = sc_rec_has(&s1.rec, "k") ? &s1 : &s2;
    y = x == &s1 ? &s2 : &s1;
    atomic_store(&y->reply_mode, SC_REPLY_NOW);
    SC_EQ(zlink_host_shutdown(x->h, ZLINK_MS(500)), ZLINK_FW_OK);
    sc_done_expect(&dk, 3000 + 250 + 1000);
    int r = sc_done_result(&dk);
    if (r != ZLINK_FW_UNAVAILABLE && r != ZLINK_FW_DEADLINE_EXCEEDED)
        ZT_FAIL("the request to a killed server ended %s", zlink_result_name(r));
    never_seen_by(&a, y, "k");
    ZT_EQ_INT(sc_done_calls(&dk), 1);
    inflight_back_to_zero(&a);

    sc_client_close(&a);
    sc_server_close(&s1);
    sc_server_close(&s2);
    zlink_call_release(ct);
    zlink_call_release(ck);
    sc_done_destroy(&dt);
    sc_done_destroy(&dk);
}

void sc11_no_resubmit_to_another_owner(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    for (size_t i = 0; i < n; i++) {
        no_resubmit(trs[i], SC_MESH);
        no_resubmit(trs[i], SC_CS);
    }
}

/* -------------------------------------------------------------- SC-19 */

typedef struct shutdown_job {
    zlink_host_t *h;
    int rc;
    pthread_t th;
} shutdown_job_t;

static void *shutdown_main(void *arg)
{
    shutdown_job_t *j = arg;
    j->rc = zlink_host_shutdown(j->h, ZLINK_MS(300));
    return NULL;
}

/* One request to "svc": true when answered (S2 is selectable), false while
 * the weight update has not reached A (NotFound / Unavailable). */
static bool probe_answered(sc_client_t *a)
{
    zlink_call_t *p = sc_call(a, true, NULL, "probe", 0);
    int rc = sc_wait(p, NULL);
    zlink_call_release(p);
    if (rc != ZLINK_FW_OK && rc != ZLINK_FW_NOT_FOUND && rc != ZLINK_FW_UNAVAILABLE)
        ZT_FAIL("a probe ended %s", zlink_result_name(rc));
    return rc == ZLINK_FW_OK;
}

static void no_resend_after_acceptance(const char *tr)
{
    sc_server_t s1 = {.name = "S1", .weight = 100, .max_jobs = 3};
    sc_server_t s2 = {.name = "S2", .weight = 0};
    sc_server_open(&s1, SC_MESH, tr, "sc19");
    sc_server_open(&s2, SC_MESH, tr, "sc19");
    sc_client_t a = {0};
    sc_server_t *srv[] = {&s1, &s2};
    sc_client_open(&a, SC_MESH, srv, 2);

    /* S1 saturated: one turn open at the gate, and behind it, as queued
     * jobs holding all three permits, f1, the one-way marker and the
     * request: accepted, never run. (A saturated host also asks its peers
     * to stop (seed 001 §6), so what it accepted waits at its gate rather
     * than in its Core queue.) */
    atomic_store(&s1.gated, true);
    zlink_call_t *f = sc_call(&a, false, NULL, "f0", 0);
    SC_EQ(sc_wait(f, NULL), ZLINK_FW_OK);
    zlink_call_release(f);
    ZT_EVENTUALLY(sc_gate_waiting(&s1.gate) == 1, 2000);
    f = sc_call(&a, false, NULL, "f1", 0);
    SC_EQ(sc_wait(f, NULL), ZLINK_FW_OK);
    zlink_call_release(f);
    ZT_EVENTUALLY(sc_status(s1.h).turns_queued == 1, 2000);

    /* The one-way is accepted (completes); the request is pending. */
    sc_done_t dm;
    sc_done_init(&dm);
    zlink_call_t *mk = sc_call(&a, false, NULL, "mk", 0);
    SC_EQ(zlink_call_start(mk, sc_on_done, &dm), ZLINK_FW_OK);
    sc_done_expect(&dm, 2000);
    SC_EQ(sc_done_result(&dm), ZLINK_FW_OK);
    sc_done_t dq;
    zlink_call_t *rq = request_start(&a, "rq", ZT_MS(3000), &dq);
    ZT_EVENTUALLY(sc_status(s1.h).turns_queued == 3, 2000);
    ZT_EQ_INT(sc_status(s1.h).permits_in_use, 3);
    ZT_CHECK(!sc_done_wait(&dq, 100)); /* pending */

    /* Kill S1: its 300 ms drain deadline passes with the gate still
     * closed, so the queued jobs never run (the request is answered
     * ShuttingDown); then the gate opens so the shutdown can end. */
    shutdown_job_t job = {s1.h, -1, 0};
    ZT_EQ_INT(pthread_create(&job.th, NULL, shutdown_main, &job), 0);
    ZT_EVENTUALLY(zlink_host_state(s1.h) != ZLINK_HOST_SERVING, 2000);
    sc_done_expect(&dq, 3000 + 250 + 1000);
    sc_gate_open(&s1.gate);
    ZT_EQ_INT(pthread_join(job.th, NULL), 0);
    SC_EQ(job.rc, ZLINK_FW_OK);
    ZT_EQ_INT(sc_rec_has(&s1.rec, "rq") + sc_rec_has(&s1.rec, "mk"), 0);
    int r = sc_done_result(&dq);
    if (r != ZLINK_FW_UNAVAILABLE && r != ZLINK_FW_DEADLINE_EXCEEDED &&
        r != ZLINK_FW_SHUTTING_DOWN)
        ZT_FAIL("the request queued at a killed server ended %s", zlink_result_name(r));

    /* S2 becomes eligible: calls reach it, the marker and the request
     * never do. */
    ZT_EVENTUALLY(zlink_mesh_ready_peers(a.h, "m", NULL) == 1, 5000);
    SC_EQ(zlink_mesh_set_weight(s2.h, "m", "svc", 100), ZLINK_FW_OK);
    ZT_EVENTUALLY(probe_answered(&a), 3000);
    zlink_call_t *after = sc_call(&a, false, NULL, "after", 0);
    SC_EQ(sc_wait(after, NULL), ZLINK_FW_OK);
    zlink_call_release(after);
    ZT_EVENTUALLY(sc_rec_has(&s2.rec, "after") == 1, 2000);
    ZT_EQ_INT(sc_rec_has(&s2.rec, "mk"), 0);
    ZT_EQ_INT(sc_rec_has(&s2.rec, "rq"), 0);
    ZT_EQ_INT(sc_rec_has(&s2.rec, "f0") + sc_rec_has(&s2.rec, "f1"), 0);
    ZT_EQ_INT(sc_done_calls(&dm), 1);
    ZT_EQ_INT(sc_done_calls(&dq), 1);
    inflight_back_to_zero(&a);

    sc_client_close(&a);
    sc_server_close(&s1);
    sc_server_close(&s2);
    zlink_call_release(mk);
    zlink_call_release(rq);
    sc_done_destroy(&dm);
    sc_done_destroy(&dq);
}

void sc19_no_resend_after_acceptance(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    for (size_t i = 0; i < n; i++)
        no_resend_after_acceptance(trs[i]);
}

/* -------------------------------------------------------------- SC-20 */

static void outcomes_by_type(const char *tr)
{
    sc_server_t b = {.name = "B", .weight = 100};
    sc_server_open(&b, SC_MESH, tr, "sc20");
    sc_client_t a = {0};
    sc_server_t *srv[] = {&b};
    sc_client_open(&a, SC_MESH, srv, 1);
    atomic_store(&b.reply_mode, SC_REPLY_HOLD);

    /* Timeout: the DeadlineExceeded kind, through both terminators. */
    zlink_outcome_t o;
    zlink_call_t *c = sc_call(&a, true, NULL, "t-wait", 0);
    SC_EQ(zlink_call_set_timeout(c, ZLINK_MS(100)), ZLINK_FW_OK);
    int r = sc_wait(c, &o);
    ZT_CHECK(ZLINK_FW_IS_KIND(r));
    ZT_EQ_INT(ZLINK_FW_KIND_OF(r), ZLINK_ERROR_DEADLINE_EXCEEDED);
    ZT_EQ_INT(o.remote_code, 0);
    zlink_call_release(c);
    sc_done_t dt;
    zlink_call_t *ct = request_start(&a, "t-start", 100, &dt);
    sc_done_expect(&dt, 2000);
    SC_EQ(sc_done_result(&dt), ZLINK_FW_KIND_BASE + ZLINK_ERROR_DEADLINE_EXCEEDED);

    /* Cancel: the cancelled result, which is no error kind. */
    sc_done_t dc;
    zlink_call_t *cc = request_start(&a, "c", 0, &dc);
    ZT_EVENTUALLY(sc_rec_has(&b.rec, "c") == 1, 2000);
    SC_EQ(zlink_call_cancel(cc), ZLINK_FW_OK);
    sc_done_expect(&dc, 2000);
    r = sc_done_result(&dc);
    SC_EQ(r, ZLINK_FW_CANCELLED);
    ZT_CHECK(!ZLINK_FW_IS_KIND(r));

    /* A handler error that says "cancelled timeout" is InternalFailure. */
    atomic_store(&b.reply_mode, SC_REPLY_FAIL);
    c = sc_call(&a, true, NULL, "boom", 0);
    r = sc_wait(c, &o);
    ZT_CHECK(ZLINK_FW_IS_KIND(r));
    ZT_EQ_INT(ZLINK_FW_KIND_OF(r), ZLINK_ERROR_INTERNAL_FAILURE);
    ZT_EQ_STR(o.message, "cancelled timeout");
    ZT_EQ_INT(o.remote_code, 105); /* the wire's internalError */
    ZT_EQ_STR(zlink_error_kind_name(ZLINK_FW_KIND_OF(r)), "InternalFailure");
    zlink_call_release(c);

    /* Shutdown: the ShuttingDown kind. */
    atomic_store(&b.reply_mode, SC_REPLY_HOLD);
    sc_done_t ds;
    zlink_call_t *cs = request_start(&a, "s", 0, &ds);
    ZT_EVENTUALLY(sc_rec_has(&b.rec, "s") == 1, 2000);
    SC_EQ(zlink_host_shutdown(a.h, ZLINK_MS(100)), ZLINK_FW_OK);
    ZT_EQ_INT(sc_done_calls(&ds), 1);
    r = sc_done_result(&ds);
    ZT_CHECK(ZLINK_FW_IS_KIND(r));
    ZT_EQ_INT(ZLINK_FW_KIND_OF(r), ZLINK_ERROR_SHUTTING_DOWN);

    ZT_EQ_INT(sc_done_calls(&dt), 1);
    ZT_EQ_INT(sc_done_calls(&dc), 1);
    sc_client_close(&a);
    sc_server_close(&b);
    zlink_call_release(ct);
    zlink_call_release(cc);
    zlink_call_release(cs);
    sc_done_destroy(&dt);
    sc_done_destroy(&dc);
    sc_done_destroy(&ds);
}

void sc20_outcomes_by_type(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    for (size_t i = 0; i < n; i++)
        outcomes_by_type(trs[i]);
}
