/*
 * sc_dispatch.c — seed 000 §17 "Completion confirmation": SC-16 (exactly
 * once under races), SC-17 (the callback runs on a new turn), SC-18 (the
 * dispatcher cap of 4,096), each over every transport of the case.
 *
 * Threads: SC-16's callbacks run on the dispatcher and its cancels on the
 * case's timer thread; the per-call records are atomics, the window a
 * mutex and condition variable.
 */
#include "sc.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- SC-16 */

typedef struct race race_t;

typedef struct race_call {
    race_t *race;
    zlink_call_t *call;
    int index;
    bool cancel;
    atomic_int calls;
    atomic_int result;
    atomic_bool reply_ok; /* an OK outcome carried this call's own tag */
} race_call_t;

struct race {
    pthread_mutex_t lk;
    pthread_cond_t cv;
    int inflight; /* started, callback not yet run */
    int window;
    atomic_int twice;
    atomic_int counts[5]; /* OK, DEADLINE, CANCELLED, SHUTTING_DOWN, other */
};

static void race_done(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    (void)call;
    race_call_t *rc = user;
    if (atomic_fetch_add(&rc->calls, 1) != 0) {
        atomic_fetch_add(&rc->race->twice, 1);
        return;
    }
    atomic_store(&rc->result, o->result);
    if (o->result == ZLINK_FW_OK) {
        char want[SC_TAG_MAX];
        snprintf(want, sizeof want, "r%d", rc->index);
        atomic_store(&rc->reply_ok, o->payload_size == strlen(want) &&
                                        memcmp(o->payload, want, o->payload_size) == 0);
    }
    race_t *r = rc->race;
    pthread_mutex_lock(&r->lk);
    r->inflight--;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->lk);
}

static void race_cancel(void *arg)
{
    race_call_t *rc = arg;
    SC_EQ(zlink_call_cancel(rc->call), ZLINK_FW_OK);
}

static void exactly_once_under_races(const char *tr, int total, int window, int cancel_pct)
{
    sc_timer_t timer;
    sc_timer_start(&timer);
    sc_server_t b = {.name = "B", .weight = 100, .timer = &timer, .delay_min = 45,
                     .delay_max = 55};
    atomic_store(&b.reply_mode, SC_REPLY_DELAY);
    sc_server_open(&b, SC_MESH, tr, "sc16");
    sc_client_t a = {0};
    sc_server_t *srv[] = {&b};
    sc_client_open(&a, SC_MESH, srv, 1);

    race_t r;
    memset(&r, 0, sizeof r);
    pthread_mutex_init(&r.lk, NULL);
    pthread_cond_init(&r.cv, NULL);
    r.window = window;
    race_call_t *calls = calloc((size_t)total, sizeof *calls);
    ZT_CHECK(calls != NULL);
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    for (int i = 0; i < total; i++) {
        race_call_t *rc = &calls[i];
        rc->race = &r;
        rc->index = i;
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rc->cancel = (int)(rng % 100) < cancel_pct;
        pthread_mutex_lock(&r.lk);
        while (r.inflight >= r.window)
            pthread_cond_wait(&r.cv, &r.lk);
        r.inflight++;
        pthread_mutex_unlock(&r.lk);
        char tag[SC_TAG_MAX];
        snprintf(tag, sizeof tag, "r%d", i);
        rc->call = sc_call(&a, true, NULL, tag, 0);
        SC_EQ(zlink_call_set_timeout(rc->call, ZLINK_MS(50)), ZLINK_FW_OK);
        int64_t at = zt_now_ms() + 45 + (int64_t)(rng % 11); /* cancel at about 50 ms */
        SC_EQ(zlink_call_start(rc->call, race_done, rc), ZLINK_FW_OK);
        if (rc->cancel)
            sc_timer_at(&timer, at, race_cancel, rc);
    }
    /* The last window is still racing: shut A down now. */
    SC_EQ(zlink_host_shutdown(a.h, ZLINK_MS(20)), ZLINK_FW_OK);
    /* Shutdown returned: every accepted callback has run. */
    pthread_mutex_lock(&r.lk);
    int left = r.inflight;
    pthread_mutex_unlock(&r.lk);
    ZT_EQ_INT(left, 0);
    ZT_EQ_INT(sc_status(a.h).requests_inflight, 0);
    ZT_EQ_INT(sc_metric(a.h, "zlink.mesh_node.requests.inflight", ""), 0);
    /* B stops before the timer does: no handler schedules a reply on a
     * finished timer. Then the remaining cancels and late replies run,
     * and the process's dispatcher is empty. */
    SC_EQ(zlink_host_shutdown(b.h, ZLINK_MS(1000)), ZLINK_FW_OK);
    sc_timer_finish(&timer);
    ZT_EVENTUALLY(sc_status(a.h).dispatcher_in_use == 0, 5000);
    ZT_EQ_INT(atomic_load(&r.twice), 0);
    for (int i = 0; i < total; i++) {
        race_call_t *rc = &calls[i];
        ZT_EQ_INT(atomic_load(&rc->calls), 1);
        int res = atomic_load(&rc->result);
        int k = res == ZLINK_FW_OK                    ? 0
                : res == ZLINK_FW_DEADLINE_EXCEEDED   ? 1
                : res == ZLINK_FW_CANCELLED           ? 2
                : res == ZLINK_FW_SHUTTING_DOWN       ? 3
                                                      : 4;
        if (k == 4)
            ZT_FAIL("call %d ended %s", i, zlink_result_name(res));
        if (k == 0 && !atomic_load(&rc->reply_ok))
            ZT_FAIL("call %d got another call's reply", i);
        if (k == 2 && !rc->cancel)
            ZT_FAIL("call %d was cancelled but nobody cancelled it", i);
        atomic_fetch_add(&r.counts[k], 1);
        zlink_call_release(rc->call);
    }
    fprintf(stderr, "SC-16 %s: %d ok, %d deadline, %d cancelled, %d shutting down\n", tr,
            atomic_load(&r.counts[0]), atomic_load(&r.counts[1]), atomic_load(&r.counts[2]),
            atomic_load(&r.counts[3]));
    free(calls);
    sc_client_close(&a);
    sc_server_close(&b);
    pthread_mutex_destroy(&r.lk);
    pthread_cond_destroy(&r.cv);
}

void sc16_exactly_once_under_races(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    int total = (int)conf_int(params, "requests");
    int window = (int)conf_int(params, "window");
    int pct = (int)conf_int(params, "cancel_percent");
    ZT_CHECK(total > 0 && window > 0 && window < ZLINK_DISPATCHER_CAPACITY / 2);
    for (size_t i = 0; i < n; i++)
        exactly_once_under_races(trs[i], total, window, pct);
}

/* -------------------------------------------------------------- SC-17 */

/* Raised only while zlink_call_start is on the caller's stack. */
static atomic_int in_submit;

typedef struct turn_check {
    sc_done_t done;
    atomic_int flag_seen; /* in_submit was raised when the callback ran */
    pthread_t submitter;
} turn_check_t;

/* The flag is lowered by the submitter right after zlink_call_start
 * returns, so a callback on another thread may legitimately see it still
 * raised for those few instructions. A callback that runs INSIDE the
 * submit (the submit waits for it, or it is on the submit's stack) sees it
 * raised for good: the callback waits for it to drop, and counts a
 * failure when it does not within 2 s. */
static void on_turn_check(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    turn_check_t *t = user;
    int64_t end = zt_now_ms() + ZT_MS(2000);
    while (atomic_load(&in_submit)) {
        if (pthread_equal(pthread_self(), t->submitter) || zt_now_ms() > end) {
            atomic_fetch_add(&t->flag_seen, 1);
            break;
        }
        sched_yield();
    }
    sc_on_done(call, o, &t->done);
}

typedef struct nested {
    sc_client_t *a;
    sc_done_t inner;
    zlink_call_t *inner_call;
    atomic_int wait_rc;
    atomic_int start_rc;
    atomic_int outer_ran;
} nested_t;

static void on_outer(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    (void)call;
    (void)o;
    nested_t *n = user;
    zlink_call_t *c = sc_call(n->a, true, NULL, "inner", 0);
    /* The synchronous terminator would wait for this very lane: refused. */
    atomic_store(&n->wait_rc, sc_wait(c, NULL));
    /* The async one completes later, on its own turn. */
    n->inner_call = c;
    atomic_store(&n->start_rc, zlink_call_start(c, sc_on_done, &n->inner));
    atomic_fetch_add(&n->outer_ran, 1);
}

/* A callback that misuses the API (C has no exceptions: this is what a
 * failing callback can do) does not stop the next callback. */
static void on_misbehaving(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    sc_done_t *d = user;
    SC_EQ(zlink_call_start(call, NULL, NULL), ZLINK_FW_INVALID_OPERATION);
    SC_EQ(zlink_call_wait(call, NULL), ZLINK_FW_INVALID_ARGUMENT);
    SC_EQ(zlink_host_shutdown(NULL, 0), ZLINK_FW_INVALID_HANDLE);
    sc_on_done(call, o, d);
}

static void callback_on_new_turn(const char *tr)
{
    sc_server_t b = {.name = "B", .weight = 100};
    sc_server_open(&b, SC_MESH, tr, "sc17");
    sc_client_t a = {0};
    sc_server_t *srv[] = {&b};
    sc_client_open(&a, SC_MESH, srv, 1);

    /* The target replies at once; the callback never runs while the
     * submit is on the stack, nor on the submitting thread. Also for an
     * immediate refusal decided inside submit (the pool of a timed-out
     * request is not needed: a request timing out runs on the timer). */
    for (int i = 0; i < 200; i++) {
        turn_check_t t;
        sc_done_init(&t.done);
        atomic_init(&t.flag_seen, 0);
        t.submitter = pthread_self();
        zlink_call_t *c = sc_call(&a, true, NULL, "fast", 0);
        if (i % 4 == 3)
            SC_EQ(zlink_call_set_timeout(c, ZLINK_MS(1)), ZLINK_FW_OK);
        atomic_store(&in_submit, 1);
        int rc = zlink_call_start(c, on_turn_check, &t);
        atomic_store(&in_submit, 0);
        SC_EQ(rc, ZLINK_FW_OK);
        sc_done_expect(&t.done, 2000);
        ZT_EQ_INT(atomic_load(&t.flag_seen), 0);
        ZT_CHECK(!pthread_equal(t.done.thread, pthread_self()));
        ZT_EQ_INT(t.done.in_runtime, 1);
        int r = sc_done_result(&t.done);
        ZT_CHECK(r == ZLINK_FW_OK || (i % 4 == 3 && r == ZLINK_FW_DEADLINE_EXCEEDED));
        zlink_call_release(c);
        sc_done_destroy(&t.done);
    }

    /* A callback that sends a new request gets its callback: no
     * deadlock. */
    nested_t n;
    memset(&n, 0, sizeof n);
    n.a = &a;
    sc_done_init(&n.inner);
    zlink_call_t *outer = sc_call(&a, true, NULL, "outer", 0);
    SC_EQ(zlink_call_start(outer, on_outer, &n), ZLINK_FW_OK);
    sc_done_expect(&n.inner, 2000);
    ZT_EQ_INT(atomic_load(&n.outer_ran), 1);
    SC_EQ(atomic_load(&n.wait_rc), ZLINK_FW_INVALID_OPERATION);
    SC_EQ(atomic_load(&n.start_rc), ZLINK_FW_OK);
    SC_EQ(sc_done_result(&n.inner), ZLINK_FW_OK);
    ZT_EQ_STR(n.inner.reply, "inner");

    /* A misbehaving callback does not stop the one after it. */
    sc_done_t d1, d2;
    sc_done_init(&d1);
    sc_done_init(&d2);
    zlink_call_t *c1 = sc_call(&a, true, NULL, "bad", 0);
    zlink_call_t *c2 = sc_call(&a, true, NULL, "next", 0);
    SC_EQ(zlink_call_start(c1, on_misbehaving, &d1), ZLINK_FW_OK);
    SC_EQ(zlink_call_start(c2, sc_on_done, &d2), ZLINK_FW_OK);
    sc_done_expect(&d1, 2000);
    sc_done_expect(&d2, 2000);
    ZT_EQ_STR(d2.reply, "next");

    sc_client_close(&a);
    sc_server_close(&b);
    ZT_EQ_INT(sc_done_calls(&n.inner), 1);
    ZT_EQ_INT(sc_done_calls(&d1), 1);
    ZT_EQ_INT(sc_done_calls(&d2), 1);
    zlink_call_release(outer);
    zlink_call_release(n.inner_call);
    zlink_call_release(c1);
    zlink_call_release(c2);
    sc_done_destroy(&n.inner);
    sc_done_destroy(&d1);
    sc_done_destroy(&d2);
}

void sc17_callback_on_new_turn(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    for (size_t i = 0; i < n; i++)
        callback_on_new_turn(trs[i]);
}

/* -------------------------------------------------------------- SC-18 */

typedef struct capped {
    atomic_int calls;
    atomic_int shutting_down;
    sc_gate_t *block;    /* the callback of block_index waits here */
    int block_index;
    atomic_int blocked;  /* that callback is inside user code */
} capped_t;

typedef struct capped_call {
    capped_t *cap;
    int index;
    atomic_int calls;
    atomic_int result;
} capped_call_t;

static void on_capped(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    (void)call;
    capped_call_t *cc = user;
    atomic_store(&cc->result, o->result);
    atomic_fetch_add(&cc->calls, 1);
    if (cc->cap->block != NULL && cc->index == cc->cap->block_index) {
        atomic_store(&cc->cap->blocked, 1);
        sc_gate_pass(cc->cap->block);
    }
    atomic_fetch_add(&cc->cap->calls, 1);
}

static void dispatcher_cap(const char *tr)
{
    const int cap = ZLINK_DISPATCHER_CAPACITY;
    /* B takes all cap requests as jobs: a B that paused A (seed 001) would
     * make them wait for room, and the case is about A's dispatcher. */
    sc_server_t b = {.name = "B", .weight = 100, .max_jobs = 2 * cap};
    atomic_store(&b.reply_mode, SC_REPLY_HOLD);
    sc_server_open(&b, SC_MESH, tr, "sc18");
    sc_client_t a = {0};
    sc_server_t *srv[] = {&b};
    sc_client_open(&a, SC_MESH, srv, 1);
    ZT_EQ_INT(sc_status(a.h).dispatcher_capacity, cap);
    ZT_EQ_INT(sc_status(a.h).dispatcher_in_use, 0);

    capped_t ct;
    memset(&ct, 0, sizeof ct);
    sc_gate_t block;
    sc_gate_init(&block);
    size_t ncalls = (size_t)cap + 4;
    capped_call_t *cc = calloc(ncalls, sizeof *cc);
    zlink_call_t **calls = calloc(ncalls, sizeof *calls);
    ZT_CHECK(cc != NULL && calls != NULL);
    char tag[SC_TAG_MAX];
    /* cap requests, all pending at B. */
    for (int i = 0; i < cap; i++) {
        cc[i].cap = &ct;
        cc[i].index = i;
        snprintf(tag, sizeof tag, "q%d", i);
        calls[i] = sc_call(&a, true, NULL, tag, 0);
        SC_EQ(zlink_call_set_timeout(calls[i], ZLINK_MS(60000)), ZLINK_FW_OK);
        SC_EQ(zlink_call_start(calls[i], on_capped, &cc[i]), ZLINK_FW_OK);
    }
    ZT_EVENTUALLY(sc_server_nheld(&b) == (size_t)cap, 20000);
    ZT_EQ_INT(sc_status(a.h).dispatcher_in_use, cap);
    ZT_EQ_INT(sc_status(a.h).requests_inflight, cap);
    ZT_EQ_INT(atomic_load(&ct.calls), 0);

    /* One more: CapacityExceeded at once, nothing sent. */
    zlink_call_t *over = sc_call(&a, true, NULL, "over1", 0);
    int64_t t0 = zt_now_ms();
    SC_EQ(zlink_call_start(over, on_capped, &cc[cap]), ZLINK_FW_CAPACITY_EXCEEDED);
    ZT_CHECK(zt_now_ms() - t0 <= ZT_MS(50));
    zlink_call_release(over);
    zlink_call_t *over_w = sc_call(&a, false, NULL, "over1", 0); /* one-ways count too */
    SC_EQ(sc_wait(over_w, NULL), ZLINK_FW_CAPACITY_EXCEEDED);
    zlink_call_release(over_w);

    /* Release one reply and let its callback return: a new request is
     * accepted. */
    zlink_call_t *reply = sc_server_take_held(&b, "q0");
    ZT_CHECK(reply != NULL);
    SC_EQ(zlink_call_start(reply, NULL, NULL), ZLINK_FW_OK);
    zlink_call_release(reply);
    ZT_EVENTUALLY(atomic_load(&ct.calls) == 1, 5000);
    SC_EQ(atomic_load(&cc[0].result), ZLINK_FW_OK);
    ZT_EVENTUALLY(sc_status(a.h).dispatcher_in_use == (uint64_t)cap - 1, 2000);
    cc[cap].cap = &ct;
    cc[cap].index = cap;
    calls[cap] = sc_call(&a, true, NULL, "again", 0);
    SC_EQ(zlink_call_set_timeout(calls[cap], ZLINK_MS(60000)), ZLINK_FW_OK);
    SC_EQ(zlink_call_start(calls[cap], on_capped, &cc[cap]), ZLINK_FW_OK);
    ZT_EQ_INT(sc_status(a.h).dispatcher_in_use, cap);

    /* cap - 1 pending and one callback blocked in user code: the next
     * request is refused. */
    ct.block = &block;
    ct.block_index = 1;
    reply = sc_server_take_held(&b, "q1");
    ZT_CHECK(reply != NULL);
    SC_EQ(zlink_call_start(reply, NULL, NULL), ZLINK_FW_OK);
    zlink_call_release(reply);
    ZT_EVENTUALLY(atomic_load(&ct.blocked) == 1, 5000);
    ZT_EQ_INT(sc_status(a.h).dispatcher_in_use, cap);
    over = sc_call(&a, true, NULL, "over2", 0);
    SC_EQ(zlink_call_start(over, on_capped, &cc[cap + 1]), ZLINK_FW_CAPACITY_EXCEEDED);
    zlink_call_release(over);
    sc_gate_open(&block);
    ZT_EVENTUALLY(atomic_load(&ct.calls) == 2, 5000);
    ZT_EVENTUALLY(sc_status(a.h).dispatcher_in_use == (uint64_t)cap - 1, 2000);

    /* B never saw the refused ones: "again" came after them on the same
     * connection and was seen. */
    ZT_EVENTUALLY(sc_rec_has(&b.rec, "again") == 1, 5000);
    ZT_EQ_INT(sc_rec_has(&b.rec, "over1"), 0);
    zlink_call_t *mk = sc_call(&a, false, NULL, "marker", 0);
    SC_EQ(sc_wait(mk, NULL), ZLINK_FW_OK);
    zlink_call_release(mk);
    ZT_EVENTUALLY(sc_rec_has(&b.rec, "marker") == 1, 2000);
    ZT_EQ_INT(sc_rec_has(&b.rec, "over2"), 0);

    /* The rest end with A's shutdown, each once. */
    SC_EQ(zlink_host_shutdown(a.h, ZLINK_MS(100)), ZLINK_FW_OK);
    ZT_EQ_INT(atomic_load(&ct.calls), cap + 1);
    for (int i = 0; i <= cap; i++) {
        ZT_EQ_INT(atomic_load(&cc[i].calls), 1);
        if (i >= 2)
            SC_EQ(atomic_load(&cc[i].result), ZLINK_FW_SHUTTING_DOWN);
        zlink_call_release(calls[i]);
    }
    ZT_EQ_INT(sc_status(a.h).dispatcher_in_use, 0);
    sc_client_close(&a);
    sc_server_close(&b);
    sc_gate_destroy(&block);
    free(cc);
    free(calls);
}

void sc18_dispatcher_cap(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    for (size_t i = 0; i < n; i++)
        dispatcher_cap(trs[i]);
}
