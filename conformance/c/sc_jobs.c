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
#include <unistd.h>

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

/* A started mesh host of mesh "m" with routing id name, listening on a
 * fresh endpoint of tr (bound gets the address), or connecting only
 * (listen false). */
static zlink_host_t *sc13_host(const char *name, const char *tr, bool listen, int64_t max_jobs)
{
    zlink_fw_result_t rc;
    zlink_host_t *h = zlink_host_new(name, &rc);
    ZT_CHECK(h != NULL);
    if (max_jobs > 0)
        SC_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS, max_jobs), ZLINK_FW_OK);
    char ep[256];
    if (strcmp(tr, "tcp") == 0)
        snprintf(ep, sizeof ep, "tcp://127.0.0.1:0");
    else
        snprintf(ep, sizeof ep, "inproc://sc13-%s-%d", name, (int)getpid());
    SC_EQ(zlink_host_add_mesh_node(h, "m", name, strlen(name), listen ? ep : NULL), ZLINK_FW_OK);
    return h;
}

static zlink_host_capacity_t sc13_capacity(zlink_host_t *h)
{
    zlink_host_capacity_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    SC_EQ(zlink_host_capacity(h, &c), ZLINK_FW_OK);
    return c;
}

static void mesh_reply_while_paused(const char *tr)
{
    sc_gate_t gate;
    sc_gate_init(&gate);
    char bound_b[256], bound_a[256];

    /* B serves "back" and answers at once. */
    zlink_host_t *b = sc13_host("B", tr, true, 0);
    SC_EQ(zlink_mesh_add_channel_server(b, "m", "back", 100), ZLINK_FW_OK);
    SC_EQ(zlink_host_add_handler(b, ZLINK_OWNER_CHANNEL, "back", ZLINK_MESSAGE_REQUEST, "m",
                                 sc13_on_back, NULL),
          ZLINK_FW_OK);
    SC_EQ(zlink_host_start(b), ZLINK_FW_OK);
    SC_EQ(zlink_host_endpoint(b, "m", bound_b, sizeof bound_b), ZLINK_FW_OK);

    /* A: M = 2 (pause at 2), a gated server of "svc", a client of "back". */
    zlink_host_t *a = sc13_host("A", tr, true, 2);
    SC_EQ(zlink_mesh_add_channel_server(a, "m", "svc", 100), ZLINK_FW_OK);
    SC_EQ(zlink_host_add_handler(a, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_SEND, "m",
                                 sc13_on_flood, &gate),
          ZLINK_FW_OK);
    SC_EQ(zlink_mesh_add_channel_client(a, "m", "back"), ZLINK_FW_OK);
    SC_EQ(zlink_mesh_connect(a, "m", bound_b, "B", 1), ZLINK_FW_OK);
    SC_EQ(zlink_host_start(a), ZLINK_FW_OK);
    SC_EQ(zlink_host_endpoint(a, "m", bound_a, sizeof bound_a), ZLINK_FW_OK);

    /* C floods A's "svc" (its sends may wait for room: 30 s allowed). */
    zlink_host_t *c = sc13_host("C", tr, false, 0);
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
    ZT_EVENTUALLY(sc13_capacity(a).permits_in_use == 2, 5000);
    zlink_host_capacity_t cap = sc13_capacity(a);
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
    cap = sc13_capacity(a);
    ZT_EQ_INT(cap.pressure_state, ZLINK_PRESSURE_PAUSED); /* still paused throughout */
    ZT_EQ_INT(cap.permits_in_use, 2);
    ZT_EQ_INT(cap.transitions_running, 0);

    sc_gate_open(&gate);
    ZT_EVENTUALLY(sc13_capacity(a).permits_in_use == 0, 5000);
    ZT_EQ_INT(sc13_capacity(a).pressure_state, ZLINK_PRESSURE_RUNNING);
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
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    for (size_t i = 0; i < n; i++)
        mesh_reply_while_paused(trs[i]);
}
