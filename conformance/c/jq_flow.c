/*
 * jq_flow.c — seed 001 cases about how records flow past a saturated host
 * (framework-contract.md §7.2): JQ-06 (a ClientServer reply needs no permit,
 * and the single FIFO holds), JQ-07 (one connection's flood does not stop
 * another's requests), JQ-16 (lack of room is not an error), JQ-17 (the
 * FIFO of one owner never rejects), JQ-18 (a failure after a completed
 * call is only recorded). JQ-21 is SC-12 run in the 001 suite: the
 * registry maps it to sc12_cs_reply_held_in_fifo itself (sc_jobs.c).
 *
 * This phase has no Spots, Actors or publish: a channel's gated handler
 * (sc.h's gate) stands in for the serial owner, and each case's "later"
 * entry in cases.json names what a later phase adds.
 *
 * Threads: the test thread builds hosts and calls; a flood (jq_flood_t)
 * starts its one-way sends from a thread of its own, and their completion
 * callbacks run on the dispatcher. Handlers run on the hosts' threads.
 * Locks: each flood's mutex and the harness's gates, recorders and
 * collectors, leaves all; no lock is held across a framework call.
 */
#include "sc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define JQ_SAT_HWM (16 * 1024)

/* A handler that waits at the gate (user), then ends its turn. */
static void jq_on_gated(zlink_turn_t *turn, void *user)
{
    sc_gate_pass(user);
    zlink_turn_end(turn, 0, NULL);
}

/* ------------------------------------------------------------ the flood */

/* count one-way sends "f0", "f1" ... of packet "m" from host h to channel
 * "svc", started from a thread of its own with at most window in flight.
 * Each callback counts its result and releases its call. */
typedef struct jq_flood {
    zlink_host_t *h;
    int count, window;
    pthread_mutex_t lk;
    pthread_cond_t cv;
    int started, inflight, done, ok;
    int bad_result, bad_index; /* the first failure (bad_index -1: none) */
    pthread_t thread;
} jq_flood_t;

typedef struct jq_flood_call {
    jq_flood_t *f;
    int index;
} jq_flood_call_t;

/* Dispatcher thread (or the flood thread for a refused start): one call
 * ended; takes f->lk. Frees x and releases the call. */
static void jq_flood_finish(jq_flood_t *f, jq_flood_call_t *x, int result)
{
    pthread_mutex_lock(&f->lk);
    f->done++;
    f->inflight--;
    if (result == ZLINK_FW_OK)
        f->ok++;
    else if (f->bad_index < 0) {
        f->bad_index = x->index;
        f->bad_result = result;
    }
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->lk);
    free(x);
}

static void jq_flood_done(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    jq_flood_call_t *x = user;
    jq_flood_finish(x->f, x, o->result);
    zlink_call_release(call);
}

static void *jq_flood_main(void *arg)
{
    jq_flood_t *f = arg;
    for (int i = 0; i < f->count; i++) {
        pthread_mutex_lock(&f->lk);
        while (f->inflight >= f->window)
            pthread_cond_wait(&f->cv, &f->lk);
        f->inflight++;
        f->started++;
        pthread_mutex_unlock(&f->lk);
        char tag[SC_TAG_MAX];
        snprintf(tag, sizeof tag, "f%d", i);
        zlink_fw_result_t rc;
        zlink_call_t *c = zlink_call_send_to_channel(f->h, "svc", &rc);
        ZT_CHECK(c != NULL);
        SC_EQ(zlink_call_set_payload(c, "m", "", tag, strlen(tag)), ZLINK_FW_OK);
        jq_flood_call_t *x = malloc(sizeof *x);
        ZT_CHECK(x != NULL);
        x->f = f;
        x->index = i;
        rc = zlink_call_start(c, jq_flood_done, x);
        if (rc != ZLINK_FW_OK) {
            jq_flood_finish(f, x, rc); /* refused: no callback will run */
            zlink_call_release(c);
        }
    }
    return NULL;
}

static void jq_flood_start(jq_flood_t *f, zlink_host_t *h, int count, int window)
{
    memset(f, 0, sizeof *f);
    f->h = h;
    f->count = count;
    f->window = window;
    f->bad_index = -1;
    pthread_mutex_init(&f->lk, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&f->cv, &ca);
    pthread_condattr_destroy(&ca);
    ZT_CHECK(pthread_create(&f->thread, NULL, jq_flood_main, f) == 0);
}

/* Waits up to ms (scaled) until at least n sends ended; the count ended. */
static int jq_flood_wait_done(jq_flood_t *f, int n, int ms)
{
    int64_t until = zt_now_ms() + (int64_t)(ms * zt_timeout_mult());
    pthread_mutex_lock(&f->lk);
    while (f->done < n) {
        int64_t left = until - zt_now_ms();
        if (left <= 0)
            break;
        struct timespec ts = sc_abstime(CLOCK_MONOTONIC, left);
        pthread_cond_timedwait(&f->cv, &f->lk, &ts);
    }
    int done = f->done;
    pthread_mutex_unlock(&f->lk);
    return done;
}

/* Waits for every send to end (ms scaled is the failure bound), joins the
 * thread and fails the case unless all of them completed OK. */
static void jq_flood_finish_all(jq_flood_t *f, int ms)
{
    int done = jq_flood_wait_done(f, f->count, ms);
    if (done < f->count)
        ZT_FAIL("flood: %d of %d sends ended within %d ms (%d started)", done, f->count, ms,
                f->started);
    pthread_join(f->thread, NULL);
    pthread_mutex_lock(&f->lk);
    int ok = f->ok, bad = f->bad_index, bad_rc = f->bad_result;
    pthread_mutex_unlock(&f->lk);
    if (ok != f->count)
        ZT_FAIL("flood: %d of %d sends failed; the first, f%d, with %s (%d)", f->count - ok,
                f->count, bad, zlink_result_name(bad_rc), bad_rc);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->lk);
}

/* -------------------------------------------------------------- JQ-06 */

/* JQ-06, part 1: C is a RouteMesh server of channel "flood" (M = 1, gated
 * handler) flooded by F, and a ClientServer client of S. Its request to S
 * completes while C stays saturated, and the reply takes no permit: C's
 * capacity reads the same before and after. Part 2: S (M = 1) is
 * saturated by its gated handler; C sends d1..d5, then a request q. S's
 * evidence is d1..d5, then q: q never runs before an earlier record. In
 * this Core q waits at C's admission while S is PAUSED (decisions.md,
 * "SC-12 in this Core"), so it is sent after the d's and answered once S
 * runs again. */
static void cs_bypass_keeps_fifo(const char *tr)
{
    enum { FLOOD = 8, D = 5 };
    sc_server_t s = {.name = "S", .weight = 100, .max_jobs = 1};
    sc_server_open(&s, SC_CS, tr, "jq06");

    sc_gate_t cgate;
    sc_gate_init(&cgate);
    char c_bound[256];
    zlink_host_t *ch = sc_mesh_host("C", tr, true, 1);
    SC_EQ(zlink_mesh_add_channel_server(ch, "m", "flood", 100), ZLINK_FW_OK);
    SC_EQ(zlink_host_add_handler(ch, ZLINK_OWNER_CHANNEL, "flood", ZLINK_MESSAGE_SEND, "m",
                                 jq_on_gated, &cgate),
          ZLINK_FW_OK);
    SC_EQ(zlink_host_add_cs_client(ch, "svc", s.bound), ZLINK_FW_OK);
    SC_EQ(zlink_channel_set_option(ch, "svc", ZLINK_NODE_OPT_SEND_TIMEOUT, ZLINK_MS(60000)),
          ZLINK_FW_OK);
    SC_EQ(zlink_host_start(ch), ZLINK_FW_OK);
    SC_EQ(zlink_host_endpoint(ch, "m", c_bound, sizeof c_bound), ZLINK_FW_OK);
    sc_client_t c = {.h = ch, .mode = SC_CS}; /* for sc_call */

    zlink_host_t *fh = sc_mesh_host("F", tr, false, 0);
    SC_EQ(zlink_mesh_add_channel_client(fh, "m", "flood"), ZLINK_FW_OK);
    SC_EQ(zlink_mesh_set_option(fh, "m", ZLINK_NODE_OPT_SEND_TIMEOUT, ZLINK_MS(60000)),
          ZLINK_FW_OK);
    SC_EQ(zlink_mesh_connect(fh, "m", c_bound, "C", 1), ZLINK_FW_OK);
    SC_EQ(zlink_host_start(fh), ZLINK_FW_OK);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(fh, "m", NULL) == 1, 5000);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(ch, "m", NULL) == 1, 5000);

    /* C's connection to S is up. */
    zlink_call_t *w = sc_call(&c, true, NULL, "warm", 0);
    SC_EQ(zlink_call_set_timeout(w, ZLINK_MS(ZT_MS(5000))), ZLINK_FW_OK);
    SC_EQ(sc_wait(w, NULL), ZLINK_FW_OK);
    zlink_call_release(w);

    /* Part 1. F floods C: f0 runs and waits at C's gate, f1 holds C's one
     * permit as a queued job, the rest wait in C's Core queue or at F. */
    sc_done_t fd[FLOOD];
    zlink_call_t *fc[FLOOD];
    for (int i = 0; i < FLOOD; i++) {
        char tag[SC_TAG_MAX];
        snprintf(tag, sizeof tag, "f%d", i);
        sc_done_init(&fd[i]);
        zlink_fw_result_t rc;
        fc[i] = zlink_call_send_to_channel(fh, "flood", &rc);
        ZT_CHECK(fc[i] != NULL);
        SC_EQ(zlink_call_set_payload(fc[i], "m", "", tag, strlen(tag)), ZLINK_FW_OK);
        SC_EQ(zlink_call_start(fc[i], sc_on_done, &fd[i]), ZLINK_FW_OK);
        if (i == 0)
            ZT_EVENTUALLY(sc_gate_waiting(&cgate) == 1, 5000);
    }
    ZT_EVENTUALLY(sc_capacity(ch).queued_jobs == 1, 5000);
    zlink_host_capacity_t before = sc_capacity(ch);
    ZT_EQ_INT(before.pressure_state, ZLINK_PRESSURE_PAUSED);
    ZT_EQ_INT(before.permits_in_use, 1);
    ZT_EQ_INT(before.effective_max, 1);

    zlink_call_t *q1 = sc_call(&c, true, NULL, "q1", 0);
    SC_EQ(zlink_call_set_timeout(q1, ZLINK_MS(ZT_MS(2000))), ZLINK_FW_OK);
    zlink_outcome_t o;
    SC_EQ(sc_wait(q1, &o), ZLINK_FW_OK);
    ZT_CHECK(o.payload_size == 2 && memcmp(o.payload, "q1", 2) == 0);
    zlink_call_release(q1);

    zlink_host_capacity_t after = sc_capacity(ch);
    ZT_EQ_INT(after.pressure_state, ZLINK_PRESSURE_PAUSED);
    ZT_EQ_INT(after.permits_in_use, before.permits_in_use);
    ZT_EQ_INT(after.reserved_supply_permits, before.reserved_supply_permits);
    ZT_EQ_INT(after.queued_jobs, before.queued_jobs);
    ZT_EQ_INT(after.peak_permits_in_use, before.peak_permits_in_use);
    /* capacity_waits is not compared: a flood record that reaches C's
     * Core queue late starts C's wait for a permit at any moment. A reply
     * that needed a permit would find none and q1 would time out. */
    ZT_EQ_INT(after.transitions_paused, before.transitions_paused);
    ZT_EQ_INT(after.transitions_running, before.transitions_running);
    ZT_EQ_INT(sc_gate_waiting(&cgate), 1); /* f0 still holds C's gate */

    sc_gate_open(&cgate);
    for (int i = 0; i < FLOOD; i++) {
        sc_done_expect(&fd[i], 5000);
        SC_EQ(sc_done_result(&fd[i]), ZLINK_FW_OK);
    }
    ZT_EVENTUALLY(sc_capacity(ch).permits_in_use == 0, 5000);

    /* Part 2. S saturated: d1 waits at S's gate, d2 holds S's permit. */
    sc_done_t dd[D];
    zlink_call_t *dc[D];
    sc_send_gated(&c, &s, dd, dc, D);
    sc_done_t dq;
    sc_done_init(&dq);
    zlink_call_t *q = sc_call(&c, true, NULL, "q", 0);
    SC_EQ(zlink_call_set_timeout(q, ZLINK_MS(ZT_MS(10000))), ZLINK_FW_OK);
    int64_t t0 = zt_now_ms();
    SC_EQ(zlink_call_start(q, sc_on_done, &dq), ZLINK_FW_OK);
    /* The harness's "pending": q has not completed after 100 ms, and S ran
     * nothing past its gate (warm and q1 only). */
    ZT_CHECK(!sc_done_wait_until(&dq, t0 + 100));
    ZT_EQ_INT(sc_rec_count(&s.rec), 2);
    ZT_EQ_INT(sc_gate_waiting(&s.gate), 1);

    sc_gate_open(&s.gate);
    for (int i = 0; i < D; i++) {
        sc_done_expect(&dd[i], 5000);
        SC_EQ(sc_done_result(&dd[i]), ZLINK_FW_OK);
    }
    sc_done_expect(&dq, 10000);
    SC_EQ(sc_done_result(&dq), ZLINK_FW_OK);
    ZT_CHECK(strcmp(dq.reply, "q") == 0);

    /* S's evidence: warm, q1, d1..d5, q; each once. */
    pthread_mutex_lock(&s.rec.lk);
    size_t n = s.rec.count;
    char seen[3 + D][SC_TAG_MAX];
    memset(seen, 0, sizeof seen);
    for (size_t i = 0; i < n && i < 3 + D; i++)
        memcpy(seen[i], s.rec.seen[i], SC_TAG_MAX);
    pthread_mutex_unlock(&s.rec.lk);
    const char *want[3 + D] = {"warm", "q1", "d1", "d2", "d3", "d4", "d5", "q"};
    bool order = n == 3 + D;
    for (size_t i = 0; order && i < 3 + D; i++)
        order = strcmp(seen[i], want[i]) == 0;
    if (!order)
        ZT_FAIL("%s: S handled %zu records: %s %s %s %s %s %s %s %s (warm q1 d1..d5 q expected)",
                tr, n, seen[0], seen[1], seen[2], seen[3], seen[4], seen[5], seen[6], seen[7]);
    ZT_EQ_INT(sc_done_calls(&dq), 1);

    for (int i = 0; i < FLOOD; i++) {
        zlink_call_release(fc[i]);
        sc_done_destroy(&fd[i]);
    }
    for (int i = 0; i < D; i++) {
        zlink_call_release(dc[i]);
        sc_done_destroy(&dd[i]);
    }
    zlink_call_release(q);
    sc_done_destroy(&dq);
    sc_host_end(fh);
    sc_host_end(ch);
    sc_gate_destroy(&cgate);
    sc_server_close(&s);
}

void jq06_cs_bypass_keeps_fifo(const conf_params_t *params)
{
    sc_each_transport(params, cs_bypass_keeps_fifo);
}

/* -------------------------------------------------------------- JQ-07 */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* JQ-07: B's handler is fast. A1 floods B with oneways one-way sends
 * (window in flight); meanwhile A2, a host of its own on another
 * connection, makes `requests` requests (timeout timeout_ms): each
 * succeeds, and their p99 stays below p99_ms (both scaled by
 * ZT_TIMEOUT_MULT). The requests are spread over the first half of the
 * flood: request k starts once (k + 1) / (2 x requests) of it ended. */
static void cross_connection_progress(const char *tr, int oneways, int window, int requests,
                                      int timeout_ms, int p99_ms)
{
    sc_server_t b = {.name = "B", .weight = 100};
    sc_server_open(&b, SC_MESH, tr, "jq07");
    sc_client_t a1 = {.send_timeout = ZLINK_MS(60000)};
    sc_server_t *srv[] = {&b};
    sc_client_open(&a1, SC_MESH, srv, 1);

    zlink_host_t *a2 = sc_mesh_host("A2", tr, false, 0);
    SC_EQ(zlink_mesh_add_channel_client(a2, "m", "svc"), ZLINK_FW_OK);
    SC_EQ(zlink_mesh_connect(a2, "m", b.bound, "B", 1), ZLINK_FW_OK);
    SC_EQ(zlink_host_start(a2), ZLINK_FW_OK);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(a2, "m", NULL) == 1, 5000);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(b.h, "m", NULL) == 2, 5000);
    sc_client_t a2c = {.h = a2, .mode = SC_MESH}; /* for sc_call */

    jq_flood_t f;
    int64_t flood_t0 = zt_now_ms();
    jq_flood_start(&f, a1.h, oneways, window);
    int64_t *lat = calloc((size_t)requests, sizeof *lat);
    ZT_CHECK(lat != NULL);
    int done_at_last = 0;
    for (int k = 0; k < requests; k++) {
        int mark = (int)((int64_t)oneways * (k + 1) / (2 * requests));
        if (jq_flood_wait_done(&f, mark, 30000) < mark)
            ZT_FAIL("%s: the flood did not reach %d of %d sends", tr, mark, oneways);
        char tag[SC_TAG_MAX];
        snprintf(tag, sizeof tag, "r%d", k);
        zlink_call_t *r = sc_call(&a2c, true, NULL, tag, 0);
        SC_EQ(zlink_call_set_timeout(r, ZLINK_MS(ZT_MS(timeout_ms))), ZLINK_FW_OK);
        zlink_outcome_t o;
        int64_t t0 = zt_now_ms();
        int res = sc_wait(r, &o);
        lat[k] = zt_now_ms() - t0;
        if (res != ZLINK_FW_OK)
            ZT_FAIL("%s: A2's request %d ended %s (%d) after %lld ms, B capacity: in use %llu, "
                    "state %d",
                    tr, k, zlink_result_name(res), res, (long long)lat[k],
                    (unsigned long long)sc_capacity(b.h).permits_in_use,
                    sc_capacity(b.h).pressure_state);
        ZT_CHECK(o.payload_size == strlen(tag) && memcmp(o.payload, tag, strlen(tag)) == 0);
        zlink_call_release(r);
        if (k == requests - 1)
            done_at_last = jq_flood_wait_done(&f, 0, 0);
    }
    /* The requests ran during the flood, or the case proved nothing. */
    if (done_at_last >= oneways)
        ZT_FAIL("%s: the flood of %d ended before A2's last request", tr, oneways);
    jq_flood_finish_all(&f, 120000);
    int64_t flood_ms = zt_now_ms() - flood_t0;
    ZT_EVENTUALLY(sc_rec_count(&b.rec) == (size_t)(oneways + requests), 30000);

    qsort(lat, (size_t)requests, sizeof *lat, cmp_i64);
    size_t p99_at = (size_t)((requests * 99 + 99) / 100) - 1; /* nearest rank */
    int64_t p99 = lat[p99_at];
    zlink_host_capacity_t bc = sc_capacity(b.h);
    fprintf(stderr,
            "JQ-07 %s: %d one-ways in %lld ms; A2 latency ms min %lld median %lld p99 %lld; "
            "B paused %llu times, peak permits %llu of %llu\n",
            tr, oneways, (long long)flood_ms, (long long)lat[0], (long long)lat[requests / 2],
            (long long)p99, (unsigned long long)bc.transitions_paused,
            (unsigned long long)bc.peak_permits_in_use, (unsigned long long)bc.effective_max);
    if (p99 >= ZT_MS(p99_ms))
        ZT_FAIL("%s: A2's request p99 %lld ms, bound %d ms (B paused %llu times)", tr,
                (long long)p99, ZT_MS(p99_ms), (unsigned long long)bc.transitions_paused);
    sc_expect_no_drops(b.h, "B");
    free(lat);

    sc_host_end(a2);
    sc_client_close(&a1);
    sc_server_close(&b);
}

void jq07_cross_connection_progress(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    int oneways = (int)conf_int(params, "oneways");
    int window = (int)conf_int(params, "window");
    int requests = (int)conf_int(params, "requests");
    int timeout_ms = (int)conf_int(params, "timeout_ms");
    int p99_ms = (int)conf_int(params, "p99_ms");
    ZT_CHECK(oneways > 0 && window > 0 && requests > 0 && timeout_ms > 0 && p99_ms > 0);
    for (size_t i = 0; i < n; i++)
        cross_connection_progress(trs[i], oneways, window, requests, timeout_ms, p99_ms);
}

/* -------------------------------------------------------------- JQ-16 */

/* JQ-16: against a saturated B (sc_saturate), the pending send and a batch
 * of one-ways (send timeout ST) and requests (timeout RT) started
 * together: each one-way ends OK (admitted) or DeadlineExceeded at ST,
 * each request DeadlineExceeded at RT; nothing else, in particular no
 * CapacityExceeded, Rejected or Unavailable for lack of room.
 *
 * The case runs with RT below ST and again with the two swapped: a
 * request's wait for room ends at its own timeout either way, never at
 * the send timeout (002 §8 gives that stage to the send family only). */
static void check_room_outcome(const char *tr, const char *what, int i, sc_done_t *d,
                               int64_t started, int64_t want_ms, bool oneway)
{
    sc_done_expect(d, 5000);
    int r = sc_done_result(d);
    if (r == ZLINK_FW_KIND_BASE + ZLINK_ERROR_CAPACITY_EXCEEDED ||
        r == ZLINK_FW_KIND_BASE + ZLINK_ERROR_REJECTED ||
        r == ZLINK_FW_KIND_BASE + ZLINK_ERROR_UNAVAILABLE)
        ZT_FAIL("%s: %s %d ended %s (%d) for lack of room", tr, what, i, zlink_result_name(r), r);
    if (oneway && r == ZLINK_FW_OK)
        return; /* admitted */
    if (r != ZLINK_FW_DEADLINE_EXCEEDED)
        ZT_FAIL("%s: %s %d ended %s (%d), expected %s", tr, what, i, zlink_result_name(r), r,
                oneway ? "OK or DEADLINE_EXCEEDED" : "DEADLINE_EXCEEDED");
    SC_ON_TIME(d->at_ms - started, want_ms);
    ZT_EQ_INT(sc_done_calls(d), 1);
}

static void room_is_not_an_error(const char *tr, sc_mode_t mode, int batch, int send_ms,
                                 int request_ms)
{
    sc_server_t b = {.name = "B", .weight = 100, .max_jobs = 1, .hwm = JQ_SAT_HWM};
    sc_client_t a = {.hwm = JQ_SAT_HWM, .send_timeout = ZLINK_MS(send_ms)};
    sc_server_open(&b, mode, tr, mode == SC_MESH ? "jq16m" : "jq16c");
    sc_server_t *srv[] = {&b};
    sc_client_open(&a, mode, srv, 1);
    sc_sat_t sat;
    sc_saturate(&a, &b, &sat);

    sc_done_t *dd = calloc((size_t)(2 * batch), sizeof *dd);
    zlink_call_t **cc = calloc((size_t)(2 * batch), sizeof *cc);
    int64_t *t0 = calloc((size_t)(2 * batch), sizeof *t0);
    ZT_CHECK(dd != NULL && cc != NULL && t0 != NULL);
    for (int i = 0; i < 2 * batch; i++) {
        bool request = i % 2 == 1;
        char tag[SC_TAG_MAX];
        snprintf(tag, sizeof tag, "%s%d", request ? "q" : "w", i / 2);
        sc_done_init(&dd[i]);
        cc[i] = sc_call(&a, request, NULL, tag, 0);
        if (request)
            SC_EQ(zlink_call_set_timeout(cc[i], ZLINK_MS(request_ms)), ZLINK_FW_OK);
        t0[i] = zt_now_ms();
        SC_EQ(zlink_call_start(cc[i], sc_on_done, &dd[i]), ZLINK_FW_OK);
    }
    check_room_outcome(tr, "the pending one-way", 0, &sat.done, sat.started_ms, send_ms, true);
    int admitted = 0, timed_out = 0;
    for (int i = 0; i < 2 * batch; i++) {
        bool request = i % 2 == 1;
        check_room_outcome(tr, request ? "request" : "one-way", i / 2, &dd[i], t0[i],
                           request ? request_ms : send_ms, !request);
        if (!request && sc_done_result(&dd[i]) == ZLINK_FW_OK)
            admitted++;
        else if (!request)
            timed_out++;
    }
    fprintf(stderr, "JQ-16 %s %s: %d saturating sends accepted; batch one-ways: %d admitted, "
                    "%d DeadlineExceeded\n",
            tr, mode == SC_MESH ? "mesh" : "cs", sat.accepted, admitted, timed_out);

    for (int i = 0; i < 2 * batch; i++) {
        zlink_call_release(cc[i]);
        sc_done_destroy(&dd[i]);
    }
    free(dd);
    free(cc);
    free(t0);
    sc_sat_free(&sat);
    sc_client_close(&a);
    sc_server_close(&b);
}

void jq16_room_is_not_an_error(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    int batch = (int)conf_int(params, "batch");
    int send_ms = (int)conf_int(params, "send_timeout_ms");
    int request_ms = (int)conf_int(params, "request_timeout_ms");
    ZT_CHECK(batch > 0 && send_ms > 0 && request_ms > 0 && request_ms != send_ms);
    for (size_t i = 0; i < n; i++) {
        room_is_not_an_error(trs[i], SC_MESH, batch, send_ms, request_ms);
        room_is_not_an_error(trs[i], SC_CS, batch, send_ms, request_ms);
        room_is_not_an_error(trs[i], SC_MESH, batch, request_ms, send_ms); /* swapped */
    }
}

/* -------------------------------------------------------------- JQ-17 */

/* JQ-17: `oneways` one-way sends (send timeout 60 s, window in flight) to
 * B's channel, whose handler waits at a closed gate. B has room for every
 * job (M = 2 x oneways, so even the pause count, 80 % of M, is above
 * them), so all of them complete OK while the gate is closed, held as B's
 * queued jobs: the owner's FIFO rejects nothing. After open() each runs
 * once, in send order, and no host dropped anything. (Without the room
 * the sends would wait at A until admitted, which is allowed too; this
 * case takes the path where the FIFO itself holds them all.) */
static void fifo_never_rejects(const char *tr, int oneways, int window)
{
    sc_server_t b = {.name = "B", .weight = 100, .max_jobs = 2 * oneways};
    sc_server_open(&b, SC_MESH, tr, "jq17");
    sc_client_t a = {.send_timeout = ZLINK_MS(60000)};
    sc_server_t *srv[] = {&b};
    sc_client_open(&a, SC_MESH, srv, 1);
    atomic_store(&b.gated, true);

    jq_flood_t f;
    int64_t t0 = zt_now_ms();
    jq_flood_start(&f, a.h, oneways, window);
    jq_flood_finish_all(&f, 60000); /* every send OK, with the gate closed */
    int64_t sent_ms = zt_now_ms() - t0;
    ZT_EVENTUALLY(sc_capacity(b.h).queued_jobs == (uint64_t)(oneways - 1), 30000);
    zlink_host_capacity_t bc = sc_capacity(b.h);
    ZT_EQ_INT(sc_gate_waiting(&b.gate), 1); /* f0, at the gate */
    ZT_EQ_INT(sc_rec_count(&b.rec), 0);
    ZT_EQ_INT(bc.pressure_state, ZLINK_PRESSURE_RUNNING);

    sc_gate_open(&b.gate);
    ZT_EVENTUALLY(sc_rec_count(&b.rec) == (size_t)oneways, 60000);
    ZT_EVENTUALLY(sc_capacity(b.h).permits_in_use == 0, 5000);
    int64_t all_ms = zt_now_ms() - t0;
    pthread_mutex_lock(&b.rec.lk);
    size_t n = b.rec.count;
    int first_bad = -1;
    for (int i = 0; first_bad < 0 && i < oneways && (size_t)i < n; i++) {
        char tag[SC_TAG_MAX];
        snprintf(tag, sizeof tag, "f%d", i);
        if (strcmp(b.rec.seen[i], tag) != 0)
            first_bad = i;
    }
    char bad_tag[SC_TAG_MAX] = "";
    if (first_bad >= 0)
        memcpy(bad_tag, b.rec.seen[first_bad], SC_TAG_MAX);
    pthread_mutex_unlock(&b.rec.lk);
    if (n != (size_t)oneways || first_bad >= 0)
        ZT_FAIL("%s: B handled %zu of %d; record %d is '%s', not f%d", tr, n, oneways, first_bad,
                bad_tag, first_bad);
    fprintf(stderr, "JQ-17 %s: %d one-ways completed in %lld ms, handled by %lld ms; peak %llu\n",
            tr, oneways, (long long)sent_ms, (long long)all_ms,
            (unsigned long long)bc.peak_permits_in_use);
    sc_expect_no_drops(b.h, "B");
    sc_expect_no_drops(a.h, "A");

    sc_client_close(&a);
    sc_server_close(&b);
}

void jq17_fifo_never_rejects(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    int oneways = (int)conf_int(params, "oneways");
    int window = (int)conf_int(params, "window");
    ZT_CHECK(oneways > 0 && window > 0);
    for (size_t i = 0; i < n; i++)
        fifo_never_rejects(trs[i], oneways, window);
}

/* -------------------------------------------------------------- JQ-18 */

/* JQ-18, the part this phase has: a one-way to a packet B has no handler
 * for completes OK (its result is the caller's: admission), and B only
 * records it, zlink.mesh_node.messages.dropped{reason=no_handler} + 1.
 * A request "after" sent behind it shows B has handled the record; the
 * count is then exactly one more, and no other reason moved. */
static void no_handler_only_recorded(const char *tr, sc_mode_t mode)
{
    sc_server_t b = {.name = "B", .weight = 100};
    sc_server_open(&b, mode, tr, mode == SC_MESH ? "jq18m" : "jq18c");
    sc_client_t a = {0};
    sc_server_t *srv[] = {&b};
    sc_client_open(&a, mode, srv, 1);
    sc_expect_no_drops(b.h, "B");

    zlink_fw_result_t rc;
    zlink_call_t *c = zlink_call_send_to_channel(a.h, "svc", &rc);
    ZT_CHECK(c != NULL);
    SC_EQ(zlink_call_set_payload(c, "nohandler", "", "x", 1), ZLINK_FW_OK);
    zlink_outcome_t o;
    SC_EQ(sc_wait(c, &o), ZLINK_FW_OK);
    SC_EQ(o.result, ZLINK_FW_OK);
    zlink_call_release(c);
    ZT_EVENTUALLY(sc_metric(b.h, "zlink.mesh_node.messages.dropped", "reason=no_handler") == 1,
                  5000);

    zlink_call_t *after = sc_call(&a, true, NULL, "after", 0);
    SC_EQ(sc_wait(after, NULL), ZLINK_FW_OK);
    zlink_call_release(after);
    ZT_EQ_INT(sc_metric(b.h, "zlink.mesh_node.messages.dropped", "reason=no_handler"), 1);
    for (size_t i = 1; i < SC_NREASONS; i++)
        ZT_EQ_INT(sc_metric(b.h, "zlink.mesh_node.messages.dropped", sc_drop_reasons[i]), 0);
    ZT_EQ_INT(sc_rec_has(&b.rec, "x"), 0);
    ZT_EQ_INT(sc_rec_count(&b.rec), 1); /* "after" only */
    sc_expect_no_drops(a.h, "A");

    sc_client_close(&a);
    sc_server_close(&b);
}

void jq18_no_handler_only_recorded(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    for (size_t i = 0; i < n; i++) {
        no_handler_only_recorded(trs[i], SC_MESH);
        no_handler_only_recorded(trs[i], SC_CS);
    }
}
