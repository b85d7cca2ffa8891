/*
 * sc_jobs.c — seed 000 §17 cases that meet the job queue of seed 001:
 * SC-13 (a RouteMesh reply reaches a host while that host is PAUSED).
 *
 * The hosts are built here rather than with sc_harness.c's server and
 * client, because SC-13's host A is both: the target of a flood (a server
 * of channel "svc" whose handler is gated) and the caller of another
 * channel ("back", served by B). C floods A.
 *
 * Threads: the test thread builds and calls; A's handler runs on A's host
 * threads and waits at the gate. Locks: the gate's own.
 */
#include "sc.h"

#include <stdio.h>
#include <string.h>

/* -------------------------------------------------------------- SC-13 */

static void sc13_on_flood(zlink_turn_t *turn, void *user)
{
    sc_gate_pass(user);
    zlink_turn_end(turn, 0, NULL);
}

static void sc13_on_back(zlink_turn_t *turn, void *user)
{
    (void)user;
    size_t n = 0;
    const void *p = zlink_turn_payload(turn, &n);
    if (zlink_turn_respond(turn, "m", "", p, n) != ZLINK_FW_OK)
        zlink_turn_end(turn, 1, "respond failed");
}

static void mesh_reply_while_paused(const char *tr)
{
    sc_gate_t gate;
    sc_gate_init(&gate);
    char bound_b[256], bound_a[256];

    /* B serves "back" and answers at once. */
    zlink_host_t *b = sc_mesh_host("B", tr, true, 0);
    SC_EQ(zlink_mesh_add_channel_server(b, "m", "back", 100), ZLINK_FW_OK);
    SC_EQ(zlink_host_add_handler(b, ZLINK_OWNER_CHANNEL, "back", ZLINK_MESSAGE_REQUEST, "m",
                                 sc13_on_back, NULL),
          ZLINK_FW_OK);
    SC_EQ(zlink_host_start(b), ZLINK_FW_OK);
    SC_EQ(zlink_host_endpoint(b, "m", bound_b, sizeof bound_b), ZLINK_FW_OK);

    /* A: M = 2 (pause at 2), a gated server of "svc", a client of "back". */
    zlink_host_t *a = sc_mesh_host("A", tr, true, 2);
    SC_EQ(zlink_mesh_add_channel_server(a, "m", "svc", 100), ZLINK_FW_OK);
    SC_EQ(zlink_host_add_handler(a, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_SEND, "m",
                                 sc13_on_flood, &gate),
          ZLINK_FW_OK);
    SC_EQ(zlink_mesh_add_channel_client(a, "m", "back"), ZLINK_FW_OK);
    SC_EQ(zlink_mesh_connect(a, "m", bound_b, "B", 1), ZLINK_FW_OK);
    SC_EQ(zlink_host_start(a), ZLINK_FW_OK);
    SC_EQ(zlink_host_endpoint(a, "m", bound_a, sizeof bound_a), ZLINK_FW_OK);

    /* C floods A's "svc" (its sends may wait for room: 30 s allowed). */
    zlink_host_t *c = sc_mesh_host("C", tr, false, 0);
    SC_EQ(zlink_mesh_add_channel_client(c, "m", "svc"), ZLINK_FW_OK);
    SC_EQ(zlink_mesh_set_option(c, "m", ZLINK_NODE_OPT_SEND_TIMEOUT, ZLINK_MS(30000)),
          ZLINK_FW_OK);
    SC_EQ(zlink_mesh_connect(c, "m", bound_a, "A", 1), ZLINK_FW_OK);
    SC_EQ(zlink_host_start(c), ZLINK_FW_OK);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(c, "m", NULL) == 1, 5000);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(a, "m", NULL) >= 1, 5000);

    /* f0 runs and waits at the gate; f1 and f2 queue as jobs holding both
     * permits: A is PAUSED with in_use = 2. */
    for (int i = 0; i < 3; i++) {
        char tag[8];
        snprintf(tag, sizeof tag, "f%d", i);
        zlink_fw_result_t rc;
        zlink_call_t *f = zlink_call_send_to_channel(c, "svc", &rc);
        ZT_CHECK(f != NULL);
        SC_EQ(zlink_call_set_payload(f, "m", "", tag, strlen(tag)), ZLINK_FW_OK);
        SC_EQ(sc_wait(f, NULL), ZLINK_FW_OK);
        zlink_call_release(f);
        if (i == 0)
            ZT_EVENTUALLY(sc_gate_waiting(&gate) == 1, 5000);
    }
    /* Both permits held as queued jobs (a permit reserved for a receive
     * counts for the pressure state once the receive brought a record). */
    ZT_EVENTUALLY(sc_capacity(a).queued_jobs == 2, 5000);
    zlink_host_capacity_t cap = sc_capacity(a);
    ZT_EQ_INT(cap.pressure_state, ZLINK_PRESSURE_PAUSED);
    ZT_EQ_INT(cap.queued_jobs, 2);

    /* An application thread on A requests "back" from B: the reply comes
     * over the Completion lane and needs no permit. */
    zlink_fw_result_t rc;
    zlink_call_t *q = zlink_call_request_to_channel(a, "back", &rc);
    ZT_CHECK(q != NULL);
    SC_EQ(zlink_call_set_payload(q, "m", "", "q", 1), ZLINK_FW_OK);
    zlink_outcome_t o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    int64_t t0 = zt_now_ms();
    SC_EQ(zlink_call_wait(q, &o), ZLINK_FW_OK);
    int64_t took = zt_now_ms() - t0;
    ZT_CHECK(o.payload_size == 1 && memcmp(o.payload, "q", 1) == 0);
    zlink_call_release(q);
    if (took >= ZT_MS(100))
        ZT_FAIL("the request took %lld ms while A was paused (< %d ms expected)", (long long)took,
                ZT_MS(100));
    cap = sc_capacity(a);
    ZT_EQ_INT(cap.pressure_state, ZLINK_PRESSURE_PAUSED); /* still paused throughout */
    ZT_EQ_INT(cap.permits_in_use, 2);
    ZT_EQ_INT(cap.transitions_running, 0);

    sc_gate_open(&gate);
    ZT_EVENTUALLY(sc_capacity(a).permits_in_use == 0, 5000);
    ZT_EQ_INT(sc_capacity(a).pressure_state, ZLINK_PRESSURE_RUNNING);
    SC_EQ(zlink_host_shutdown(c, ZLINK_MS(2000)), ZLINK_FW_OK);
    SC_EQ(zlink_host_shutdown(a, ZLINK_MS(2000)), ZLINK_FW_OK);
    SC_EQ(zlink_host_shutdown(b, ZLINK_MS(2000)), ZLINK_FW_OK);
    SC_EQ(zlink_host_destroy(c), ZLINK_FW_OK);
    SC_EQ(zlink_host_destroy(a), ZLINK_FW_OK);
    SC_EQ(zlink_host_destroy(b), ZLINK_FW_OK);
    sc_gate_destroy(&gate);
}

void sc13_mesh_reply_while_paused(const conf_params_t *params)
{
    sc_each_transport(params, mesh_reply_while_paused);
}

/* -------------------------------------------------------------- SC-12 */

/* SC-12: client C (DEALER) -> S, whose M = 1 and gated handler make it
 * PAUSE its peers. C sends d1..d20, then a request q with a 300 ms timeout:
 * q ends DeadlineExceeded on time, once. After open(), S handles d1..d20 in
 * order; C never sees a second completion and in-flight returns to 0.
 *
 * Where q waits: this Core holds a paused peer's records at the sender
 * (admission), not in the receiver's queue, so q normally waits in C's
 * per-target FIFO behind d3..d20 and its timeout ends it there, unsent.
 * Records the Core admitted before the PAUSE reached C do travel; then q,
 * if it was among them, is handled after d20, and its late reply completes
 * nothing. Both keep the FIFO: nothing runs before an earlier record. */
static void cs_reply_held_in_fifo(const char *tr)
{
    enum { D = 20 };
    sc_server_t s = {.name = "S", .weight = 100, .max_jobs = 1};
    sc_server_open(&s, SC_CS, tr, "sc12");
    sc_client_t c = {.send_timeout = ZLINK_MS(60000)};
    sc_server_t *srv[] = {&s};
    sc_client_open(&c, SC_CS, srv, 1);
    zlink_call_t *w = sc_call(&c, true, NULL, "warm", 0);
    SC_EQ(sc_wait(w, NULL), ZLINK_FW_OK); /* the connection is up */
    zlink_call_release(w);

    sc_done_t dd[D];
    zlink_call_t *dc[D];
    sc_send_gated(&c, &s, dd, dc, D);
    sc_done_t dq;
    sc_done_init(&dq);
    int64_t t0 = zt_now_ms();
    zlink_call_t *q = sc_call(&c, true, NULL, "q", 0);
    SC_EQ(zlink_call_set_timeout(q, ZLINK_MS(300)), ZLINK_FW_OK);
    SC_EQ(zlink_call_start(q, sc_on_done, &dq), ZLINK_FW_OK);
    sc_done_expect(&dq, 2000);
    SC_EQ(sc_done_result(&dq), ZLINK_FW_DEADLINE_EXCEEDED);
    SC_ON_TIME(dq.at_ms - t0, 300);
    ZT_EQ_INT(sc_capacity(s.h).pressure_state, ZLINK_PRESSURE_PAUSED);

    sc_gate_open(&s.gate);
    for (int i = 0; i < D; i++) {
        sc_done_expect(&dd[i], 5000);
        SC_EQ(sc_done_result(&dd[i]), ZLINK_FW_OK);
    }
    zlink_call_t *after = sc_call(&c, true, NULL, "after", 0);
    SC_EQ(sc_wait(after, NULL), ZLINK_FW_OK); /* behind everything sent before */
    zlink_call_release(after);

    /* S's evidence: warm, d1..d20, q at most once and only after d20,
     * then after. */
    pthread_mutex_lock(&s.rec.lk);
    size_t n = s.rec.count;
    bool order = n >= 2 + D && strcmp(s.rec.seen[0], "warm") == 0 &&
                 strcmp(s.rec.seen[n - 1], "after") == 0;
    for (int i = 0; order && i < D; i++) {
        char tag[SC_TAG_MAX];
        snprintf(tag, sizeof tag, "d%d", i + 1);
        order = strcmp(s.rec.seen[1 + i], tag) == 0;
    }
    bool q_ok = n == 2 + D || (n == 3 + D && strcmp(s.rec.seen[1 + D], "q") == 0);
    pthread_mutex_unlock(&s.rec.lk);
    if (!order || !q_ok)
        ZT_FAIL("S handled %zu records out of FIFO order (warm, d1..d20, [q], after expected)", n);
    ZT_EQ_INT(sc_done_calls(&dq), 1);
    ZT_EVENTUALLY(sc_metric(c.h, "zlink.mesh_node.requests.inflight", "") == 0, 2000);

    for (int i = 0; i < D; i++) {
        zlink_call_release(dc[i]);
        sc_done_destroy(&dd[i]);
    }
    zlink_call_release(q);
    sc_done_destroy(&dq);
    sc_client_close(&c);
    sc_server_close(&s);
}

void sc12_cs_reply_held_in_fifo(const conf_params_t *params)
{
    sc_each_transport(params, cs_reply_held_in_fifo);
}
