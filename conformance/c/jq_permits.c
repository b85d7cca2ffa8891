/*
 * jq_permits.c — seed 001 §10 cases about permits and saturation
 * (framework-contract.md §7.2): JQ-02 (permit accounting), JQ-03 (no
 * receive without a permit), JQ-05 (saturated ingress waits, completions
 * flow), JQ-14 (a reply reaches a PAUSED ClientServer client), JQ-15 (no
 * holding while waiting) and JQ-20 (completions need no permit).
 *
 * Design notes
 * ------------
 * Phase 1 has no Spots, Actors or local multicast: the serial owner of
 * every case is a channel's handler, whose turns share one gate; a latch
 * (sc_gate_t) inside it stands in for the gated SpotWide owner. Hosts are
 * built here (not with sc_harness.c's server and client), because the
 * owner host is often also a caller. Every host is a node of mesh "m" with
 * its name as routing id; C is the flooding client.
 *
 * jq_owner_t is what a case's handler sees: its host (to read the capacity
 * at the handler's first instruction), an optional gate, and what it does
 * after the gate: end the turn, or start a request to another channel and
 * keep the turn open until the request's completion callback ends it (an
 * "await"). It records, per turn and in start order, the tag, the permits
 * in use at the first instruction and the awaited request's result.
 *
 * JQ-03's peer is a Core ROUTER of its own context that speaks the service
 * wire (doc/protocol.md §14) itself, so the case sees the flow state the
 * way a peer does (its monitor's FLOW_STATE detail); it runs over tcp only,
 * as an inproc endpoint is not reachable from another context.
 *
 * Threads and locks: handlers run on the owner host's threads, await
 * callbacks on the completion dispatcher; each jq_owner_t has one mutex
 * (a leaf) for its records; the gates have their own. The test thread
 * builds, sends and checks. Every wait ends on the event it waits for;
 * timeouts are failure bounds only.
 */
#include "sc.h"
#include "zltest_zlink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JQ_MAX 128

/* ------------------------------------------------------------ the owner */

typedef struct jq_owner {
    zlink_host_t *h;           /* the owner's host, set before start */
    atomic_bool gated;
    sc_gate_t gate;
    /* await: the turns whose tag starts with await_prefix ("" none) request
     * await_channel (packet "m") with await_timeout_ms and keep the turn */
    const char *await_prefix;
    const char *await_channel;
    int64_t await_timeout_ms;
    pthread_mutex_t lk;
    int started;                         /* turns started */
    int ended;                           /* turns ended */
    char tag[JQ_MAX][SC_TAG_MAX];        /* in start order */
    int64_t in_use_at_start[JQ_MAX];
    int64_t reserved_at_start[JQ_MAX];   /* the ingress's reservations then */
    int awaited;                         /* awaits that completed */
    int await_result[JQ_MAX];            /* by start index */
    int64_t await_elapsed_ms[JQ_MAX];
    char await_reply[JQ_MAX][SC_TAG_MAX];
} jq_owner_t;

static void jq_owner_init(jq_owner_t *o, bool gated)
{
    memset(o, 0, sizeof *o);
    atomic_init(&o->gated, gated);
    sc_gate_init(&o->gate);
    pthread_mutex_init(&o->lk, NULL);
    o->await_prefix = "";
}

static void jq_owner_destroy(jq_owner_t *o)
{
    sc_gate_destroy(&o->gate);
    pthread_mutex_destroy(&o->lk);
}

static int jq_started(jq_owner_t *o)
{
    pthread_mutex_lock(&o->lk);
    int n = o->started;
    pthread_mutex_unlock(&o->lk);
    return n;
}

static int jq_ended(jq_owner_t *o)
{
    pthread_mutex_lock(&o->lk);
    int n = o->ended;
    pthread_mutex_unlock(&o->lk);
    return n;
}

static int jq_awaited(jq_owner_t *o)
{
    pthread_mutex_lock(&o->lk);
    int n = o->awaited;
    pthread_mutex_unlock(&o->lk);
    return n;
}

static void jq_copy_tag(char *dst, const void *p, size_t n)
{
    size_t k = 0;
    while (k < n && k < SC_TAG_MAX - 1 && ((const char *)p)[k] != '\0')
        k++;
    if (k > 0)
        memcpy(dst, p, k);
    dst[k] = '\0';
}

/* One awaited request of a turn: owned by the await until its callback. */
typedef struct jq_await {
    jq_owner_t *o;
    zlink_turn_t *turn;
    int index;
    int64_t started_ms;
} jq_await_t;

/* Dispatcher: the awaited request ended; records it, ends the turn, frees
 * the await and releases the call. */
static void jq_on_awaited(zlink_call_t *call, const zlink_outcome_t *out, void *user)
{
    jq_await_t *w = user;
    jq_owner_t *o = w->o;
    int64_t now = zt_now_ms();
    pthread_mutex_lock(&o->lk);
    o->await_result[w->index] = out->result;
    o->await_elapsed_ms[w->index] = now - w->started_ms;
    jq_copy_tag(o->await_reply[w->index], out->payload, out->payload_size);
    pthread_mutex_unlock(&o->lk);
    SC_EQ(zlink_turn_end(w->turn, 0, NULL), ZLINK_FW_OK);
    pthread_mutex_lock(&o->lk);
    o->awaited++;
    o->ended++;
    pthread_mutex_unlock(&o->lk);
    zlink_call_release(call);
    free(w);
}

/* Handler (owner host thread) of one-way records: capacity first, then the
 * record, the gate, and the end of the turn or an await. */
static void jq_on_send(zlink_turn_t *turn, void *user)
{
    jq_owner_t *o = user;
    zlink_host_capacity_t c = sc_capacity(o->h); /* the first instruction */
    size_t n = 0;
    const void *p = zlink_turn_payload(turn, &n);
    pthread_mutex_lock(&o->lk);
    int i = o->started;
    ZT_CHECK(i < JQ_MAX);
    jq_copy_tag(o->tag[i], p, n);
    o->in_use_at_start[i] = (int64_t)c.permits_in_use;
    o->reserved_at_start[i] = (int64_t)c.reserved_supply_permits;
    o->await_result[i] = -1;
    o->started++;
    bool await = o->await_prefix[0] != '\0' &&
                 strncmp(o->tag[i], o->await_prefix, strlen(o->await_prefix)) == 0;
    pthread_mutex_unlock(&o->lk);
    if (atomic_load(&o->gated))
        sc_gate_pass(&o->gate);
    if (!await) {
        SC_EQ(zlink_turn_end(turn, 0, NULL), ZLINK_FW_OK);
        pthread_mutex_lock(&o->lk);
        o->ended++;
        pthread_mutex_unlock(&o->lk);
        return;
    }
    jq_await_t *w = calloc(1, sizeof *w);
    ZT_CHECK(w != NULL);
    w->o = o;
    w->turn = turn;
    w->index = i;
    zlink_fw_result_t rc;
    zlink_call_t *q = zlink_call_request_to_channel(o->h, o->await_channel, &rc);
    ZT_CHECK(q != NULL);
    char tag[SC_TAG_MAX];
    pthread_mutex_lock(&o->lk);
    memcpy(tag, o->tag[i], SC_TAG_MAX);
    pthread_mutex_unlock(&o->lk);
    SC_EQ(zlink_call_set_payload(q, "m", "", tag, strlen(tag)), ZLINK_FW_OK);
    SC_EQ(zlink_call_set_timeout(q, ZLINK_MS(o->await_timeout_ms)), ZLINK_FW_OK);
    w->started_ms = zt_now_ms();
    SC_EQ(zlink_call_start(q, jq_on_awaited, w), ZLINK_FW_OK);
    /* the turn stays open: the callback ends it */
}

/* Handler of requests: the gate (if gated), then the request's payload
 * back as the reply. */
static void jq_on_request(zlink_turn_t *turn, void *user)
{
    jq_owner_t *o = user;
    if (o != NULL && atomic_load(&o->gated))
        sc_gate_pass(&o->gate);
    size_t n = 0;
    const void *p = zlink_turn_payload(turn, &n);
    if (o != NULL) {
        pthread_mutex_lock(&o->lk);
        o->started++;
        o->ended++;
        pthread_mutex_unlock(&o->lk);
    }
    (void)zlink_turn_respond(turn, "m", "", p, n);
}

/* ------------------------------------------------------------- the hosts */

/* Adds channel server ch to h with owner o's handlers (one-way: jq_on_send,
 * request: jq_on_request). */
static void jq_serve(zlink_host_t *h, const char *ch, jq_owner_t *send_owner,
                     jq_owner_t *request_owner)
{
    SC_EQ(zlink_mesh_add_channel_server(h, "m", ch, 100), ZLINK_FW_OK);
    if (send_owner != NULL) {
        send_owner->h = h;
        SC_EQ(zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, ch, ZLINK_MESSAGE_SEND, "m",
                                     jq_on_send, send_owner),
              ZLINK_FW_OK);
    }
    SC_EQ(zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, ch, ZLINK_MESSAGE_REQUEST, "m",
                                 jq_on_request, request_owner),
          ZLINK_FW_OK);
}

static void jq_start(zlink_host_t *h, char *bound, size_t cap)
{
    SC_EQ(zlink_host_start(h), ZLINK_FW_OK);
    if (bound != NULL)
        SC_EQ(zlink_host_endpoint(h, "m", bound, cap), ZLINK_FW_OK);
}

/* A one-way from h to channel ch with payload tag: started with collector
 * d (NULL: waited for here, and it must complete OK). */
static zlink_call_t *jq_send(zlink_host_t *h, const char *ch, const char *tag, sc_done_t *d)
{
    zlink_fw_result_t rc;
    zlink_call_t *f = zlink_call_send_to_channel(h, ch, &rc);
    ZT_CHECK(f != NULL);
    SC_EQ(zlink_call_set_payload(f, "m", "", tag, strlen(tag)), ZLINK_FW_OK);
    if (d == NULL) {
        SC_EQ(sc_wait(f, NULL), ZLINK_FW_OK);
        zlink_call_release(f);
        return NULL;
    }
    SC_EQ(zlink_call_start(f, sc_on_done, d), ZLINK_FW_OK);
    return f;
}

/* A synchronous request from h to channel ch, packet packet, payload tag:
 * its result; the reply's tag into reply (may be NULL); *took_ms the time. */
static int jq_request(zlink_host_t *h, const char *ch, const char *packet, const char *tag,
                      char *reply, int64_t *took_ms)
{
    zlink_fw_result_t rc;
    zlink_call_t *q = zlink_call_request_to_channel(h, ch, &rc);
    ZT_CHECK(q != NULL);
    SC_EQ(zlink_call_set_payload(q, packet, "", tag, strlen(tag)), ZLINK_FW_OK);
    SC_EQ(zlink_call_set_timeout(q, ZLINK_MS(10000)), ZLINK_FW_OK);
    zlink_outcome_t o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    int64_t t0 = zt_now_ms();
    int r = zlink_call_wait(q, &o);
    *took_ms = zt_now_ms() - t0;
    if (reply != NULL)
        jq_copy_tag(reply, o.payload, o.payload_size);
    zlink_call_release(q);
    return r;
}

/* Fails unless owner o started exactly the turns "<prefix>0".."<prefix>n-1"
 * in that order (from start index from). */
static void jq_expect_order(jq_owner_t *o, int from, const char *prefix, int first, int n)
{
    pthread_mutex_lock(&o->lk);
    int started = o->started;
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++) {
        char want[SC_TAG_MAX];
        snprintf(want, sizeof want, "%s%d", prefix, first + i);
        if (from + i >= started || strcmp(o->tag[from + i], want) != 0)
            bad = i;
    }
    char seen[SC_TAG_MAX] = "";
    if (bad >= 0 && from + bad < started)
        memcpy(seen, o->tag[from + bad], SC_TAG_MAX);
    pthread_mutex_unlock(&o->lk);
    if (bad >= 0)
        ZT_FAIL("turn %d of %d started is \"%s\", expected %s%d (each once, in order)",
                from + bad, started, seen, prefix, first + bad);
}

/* The flooding client C of channel ch on h's endpoint bound (rid peer). */
static zlink_host_t *jq_flooder(const char *tr, const char *ch, const char *bound,
                                const char *peer)
{
    zlink_host_t *c = sc_mesh_host("C", tr, false, 0);
    SC_EQ(zlink_mesh_add_channel_client(c, "m", ch), ZLINK_FW_OK);
    SC_EQ(zlink_mesh_set_option(c, "m", ZLINK_NODE_OPT_SEND_TIMEOUT, ZLINK_MS(30000)),
          ZLINK_FW_OK);
    SC_EQ(zlink_mesh_connect(c, "m", bound, peer, strlen(peer)), ZLINK_FW_OK);
    return c;
}

/* The trio of JQ-02 and JQ-20, started and peered: B serves "back"
 * (requests: owner ob); A, with M = max_jobs, serves "svc" (one-ways:
 * owner oa) and is a client of "back" with B as its peer; C floods A's
 * "svc". Returns once C sees A ready and A sees both. */
static void jq_trio_open(const char *tr, int64_t max_jobs, jq_owner_t *oa, jq_owner_t *ob,
                         zlink_host_t **a_out, zlink_host_t **b_out, zlink_host_t **c_out)
{
    char bound_a[256], bound_b[256];
    zlink_host_t *b = sc_mesh_host("B", tr, true, 0);
    jq_serve(b, "back", NULL, ob);
    jq_start(b, bound_b, sizeof bound_b);
    zlink_host_t *a = sc_mesh_host("A", tr, true, max_jobs);
    jq_serve(a, "svc", oa, NULL);
    SC_EQ(zlink_mesh_add_channel_client(a, "m", "back"), ZLINK_FW_OK);
    SC_EQ(zlink_mesh_connect(a, "m", bound_b, "B", 1), ZLINK_FW_OK);
    jq_start(a, bound_a, sizeof bound_a);
    zlink_host_t *c = jq_flooder(tr, "svc", bound_a, "A");
    jq_start(c, NULL, 0);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(c, "m", NULL) == 1, 5000);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(a, "m", NULL) == 2, 5000);
    *a_out = a;
    *b_out = b;
    *c_out = c;
}

/* h is saturated: no free permit (in use = M), PAUSED, and a record that
 * has no permit waits: at h's ingress (a capacity waiter) or at the
 * sender c (a one-way waiting for room). */
static bool jq_saturated(zlink_host_t *h, zlink_host_t *c)
{
    zlink_host_capacity_t cap = sc_capacity(h);
    return cap.permits_in_use == cap.effective_max &&
           cap.pressure_state == ZLINK_PRESSURE_PAUSED &&
           (cap.capacity_waiters >= 1 || sc_status(c).oneway_waiting >= 1);
}

/* -------------------------------------------------------------- JQ-02 */

/* Fails unless turn i of o started with `queued` jobs counted in its
 * permits in use. The ingress may hold one reservation for a receive in
 * progress at that instant (a receive that finds nothing gives it straight
 * back): it is told apart as reserved, and there is at most one. */
static void jq_expect_start(jq_owner_t *o, int i, int64_t queued)
{
    pthread_mutex_lock(&o->lk);
    int64_t in_use = o->in_use_at_start[i], reserved = o->reserved_at_start[i];
    pthread_mutex_unlock(&o->lk);
    if (in_use - reserved != queued || reserved > 1)
        ZT_FAIL("turn %d started with %lld permits in use (%lld reserved), expected %lld "
                "jobs (and at most one reservation)",
                i, (long long)in_use, (long long)reserved, (long long)queued);
}

/* M = 4; j1 runs at the owner's gate; j2..j4 queue. At j1's first
 * instruction in use is 0; with j2..j4 queued, queued = in use = 3; j1's
 * await (a request to B's "back", held at B's gate) leaves it at 3; each
 * start lowers it by 1 (j2: 2, j3: 1, j4: 0). */
static void permit_accounting(const char *tr)
{
    jq_owner_t oa, ob;
    jq_owner_init(&oa, true);
    jq_owner_init(&ob, true);
    oa.await_prefix = "j1";
    oa.await_channel = "back";
    oa.await_timeout_ms = 10000;

    zlink_host_t *a, *b, *c;
    jq_trio_open(tr, 4, &oa, &ob, &a, &b, &c);

    jq_send(c, "svc", "j1", NULL);
    ZT_EVENTUALLY(sc_gate_waiting(&oa.gate) == 1, 5000);
    jq_expect_start(&oa, 0, 0); /* read at j1's first instruction */
    /* j1's permit went back before its first instruction: with j1 running
     * nothing is in use (once any reservation of the ingress is back). */
    ZT_EVENTUALLY(sc_capacity(a).permits_in_use == 0, 5000);
    for (int i = 2; i <= 4; i++) {
        char tag[8];
        snprintf(tag, sizeof tag, "j%d", i);
        jq_send(c, "svc", tag, NULL);
    }
    ZT_EVENTUALLY(sc_capacity(a).queued_jobs == 3 && sc_capacity(a).permits_in_use == 3, 5000);
    zlink_host_capacity_t cap = sc_capacity(a);
    ZT_EQ_INT(cap.queued_jobs, 3);
    ZT_EQ_INT(cap.pressure_state, ZLINK_PRESSURE_RUNNING); /* pause count is 4 */

    /* j1 passes the gate and awaits B (held at B's gate); the gate closes
     * again behind it. */
    sc_gate_open(&oa.gate);
    ZT_EVENTUALLY(sc_gate_waiting(&ob.gate) == 1, 5000);
    sc_gate_close(&oa.gate);
    /* the await took no permit */
    ZT_EVENTUALLY(sc_capacity(a).permits_in_use == 3, 5000);
    ZT_EQ_INT(sc_capacity(a).queued_jobs, 3);
    ZT_EQ_INT(sc_status(a).turns_running, 1);
    ZT_EQ_INT(jq_started(&oa), 1);

    /* The reply ends j1's turn; j2 starts and lowers in use to 2. */
    sc_gate_open(&ob.gate);
    ZT_EVENTUALLY(jq_awaited(&oa) == 1 && sc_gate_waiting(&oa.gate) == 1, 5000);
    SC_EQ(oa.await_result[0], ZLINK_FW_OK);
    ZT_EQ_STR(oa.await_reply[0], "j1");
    ZT_EQ_INT(jq_started(&oa), 2);
    jq_expect_start(&oa, 1, 2);
    ZT_EVENTUALLY(sc_capacity(a).permits_in_use == 2, 5000);
    ZT_EQ_INT(sc_capacity(a).queued_jobs, 2);

    sc_gate_open(&oa.gate);
    ZT_EVENTUALLY(jq_ended(&oa) == 4, 5000);
    jq_expect_order(&oa, 0, "j", 1, 4);
    jq_expect_start(&oa, 2, 1);
    jq_expect_start(&oa, 3, 0);
    ZT_EVENTUALLY(sc_capacity(a).permits_in_use == 0, 5000);

    sc_host_end(c);
    sc_host_end(a);
    sc_host_end(b);
    jq_owner_destroy(&oa);
    jq_owner_destroy(&ob);
}

void jq02_permit_accounting(const conf_params_t *params)
{
    sc_each_transport(params, permit_accounting);
}

/* -------------------------------------------------------------- JQ-03 */

/* HELLO (1) of node rid "C" of mesh "m", no server channels, as a Core
 * request to A; returns the completion id. */
static bool jq_raw_hello(void *peer, zlink_completion_id_t *id)
{
    sc_wire_t w;
    sc_wire_init(&w);
    sc_wire_prefix(&w, 1, 0); /* flags: no metadata */
    sc_wire_l8(&w, "m");
    sc_wire_l8(&w, "C");
    sc_wire_l8(&w, "framework-service-v11");
    sc_wire_u64(&w, 1); /* lifecycle */
    sc_wire_u16(&w, 0); /* channel count */
    zlink_msg_t m;
    sc_wire_msg(&m, &w);
    zlink_routing_id_t to;
    zlt_rid_set(&to, "A");
    *id = 0;
    zlink_submit_result_t rc =
        zlink_request(peer, &to, &m, 1, ZLINK_DONTWAIT, (uint32_t)ZT_MS(5000), NULL, id);
    zlink_msg_close(&m);
    if (rc == ZLINK_SUBMIT_OK)
        return true;
    ZT_EQ_INT(rc, ZLINK_SUBMIT_NOT_CONNECTED);
    return false;
}

/* CHANNEL_SEND (18) to "svc", packet "m", payload tag, as DATA with
 * DONTWAIT; the submit result (a refusal's wait token in *wt). */
static zlink_submit_result_t jq_raw_send(void *peer, const char *tag, zlink_completion_id_t *wt)
{
    zlink_msg_t m[2];
    size_t n;
    sc_wire_record(m, &n, 0, 0, 0, "svc", tag, strlen(tag));
    zlink_routing_id_t to;
    zlt_rid_set(&to, "A");
    *wt = 0;
    zlink_submit_result_t rc = zlink_send_rid(peer, &to, m, n, ZLINK_DONTWAIT, NULL, wt);
    zlink_multipart_close(m, n);
    return rc;
}

static void jq_poke(void *s)
{
    zlink_pollitem_t it;
    memset(&it, 0, sizeof it);
    it.socket = s;
    it.events = ZLINK_POLLOUT;
    zlink_config_result_t err = ZLINK_CONFIG_OK;
    if (zlink_poll(&it, 1, 0, &err) < 0)
        ZT_FAIL("zlink_poll: result %d, errno %d", (int)err, zlink_errno());
}

/* The peers pausing peer now, as its monitor sees them. */
static uint64_t jq_paused_seen(void *peer, void *mon)
{
    jq_poke(peer);
    zlink_monitor_status_t st;
    memset(&st, 0, sizeof st);
    ZT_EQ_INT(zlink_monitor_status(mon, &st), ZLINK_CONFIG_OK);
    ZT_CHECK(st.detail_flags & ZLINK_MONITOR_STATUS_DETAIL_FLOW_STATE);
    return st.flow_paused_connections;
}

/* Waits for the WRITABLE record of wait token wt on peer: ADMITTED. */
static void jq_raw_writable(void *peer, zlink_completion_id_t wt)
{
    zlink_completion_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    ZT_EQ_INT(zlink_completion_recv(peer, &c, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(c.kind, ZLINK_COMPLETION_WRITABLE);
    ZT_CHECK(c.completion_id == wt);
    ZT_EQ_INT(c.send_result, ZLINK_SEND_ADMITTED);
    zlink_completion_close(&c);
}

/* M = 2, gated owner; the raw peer sends r1, then r2..r5 back to back.
 * r1 runs at the gate, r2 and r3 hold both permits: in use 2, queued 2,
 * PAUSED, and the peer sees the pause. r4 and r5 were not received: those
 * the peer's Core admitted before the pause reached it wait in A's Core
 * (A's ingress is a capacity waiter: it sees them and has no permit);
 * those sent after it the peer's Core refused (BACKPRESSURED with a wait
 * token: nothing of them left the peer). open() -> r1..r5 each once, in
 * order. (The core_hwm.accounted projection is not in this tree yet: A's
 * capacity waiter and the peer's refusal are the evidence instead.) */
static void no_receive_without_permit(void)
{
    jq_owner_t oa;
    jq_owner_init(&oa, true);
    char bound[256];
    zlink_host_t *a = sc_mesh_host("A", "tcp", true, 2);
    jq_serve(a, "svc", &oa, NULL);
    jq_start(a, bound, sizeof bound);

    void *ctx = zlink_ctx_new();
    ZT_CHECK(ctx != NULL);
    void *peer = zlt_socket_linger0(ctx, ZLINK_ROUTER);
    zlt_set_int(peer, ZLINK_RCVTIMEO, ZT_MS(5000));
    zlt_set_rid(peer, "C");
    ZT_EQ_INT(zlink_setsockopt(peer, ZLINK_CONNECT_ROUTING_ID, "A", 1), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_connect(peer, bound), ZLINK_CONNECT_OK);
    zlink_monitor_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    void *mon = zlink_socket_monitor_open(peer, &cfg);
    ZT_CHECK(mon != NULL);

    /* hello / admit */
    zlink_completion_id_t hid = 0;
    ZT_EVENTUALLY(jq_raw_hello(peer, &hid), 5000);
    zlink_completion_t hc;
    memset(&hc, 0, sizeof hc);
    hc.struct_size = sizeof hc;
    ZT_EQ_INT(zlink_completion_recv(peer, &hc, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(hc.kind, ZLINK_COMPLETION_REQUEST);
    ZT_CHECK(hc.completion_id == hid);
    ZT_EQ_INT(hc.request_result, ZLINK_REQUEST_OK);
    ZT_CHECK(hc.reply_part_count >= 1 && zlink_msg_size(&hc.reply_parts[0]) > 3);
    ZT_EQ_INT(((const uint8_t *)zlink_msg_data(&hc.reply_parts[0]))[3], 2); /* ADMIT */
    zlink_completion_close(&hc);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(a, "m", NULL) == 1, 5000);

    zlink_completion_id_t wt = 0;
    SC_EQ(jq_raw_send(peer, "r1", &wt), ZLINK_SUBMIT_OK);
    ZT_EVENTUALLY(sc_gate_waiting(&oa.gate) == 1, 5000);
    int sent = 1; /* r1..r<sent> left the peer */
    for (int i = 2; i <= 5; i++) {
        char tag[8];
        snprintf(tag, sizeof tag, "r%d", i);
        zlink_submit_result_t rc = jq_raw_send(peer, tag, &wt);
        if (rc != ZLINK_SUBMIT_OK) {
            ZT_EQ_INT(rc, ZLINK_SUBMIT_BACKPRESSURED);
            ZT_CHECK(wt != 0);
            break;
        }
        sent = i;
    }
    /* A pauses only once r2 and r3 were received: both left the peer. */
    ZT_CHECK(sent >= 3);
    ZT_EVENTUALLY(sc_capacity(a).queued_jobs == 2, 5000);
    ZT_EVENTUALLY(jq_paused_seen(peer, mon) == 1, 5000);
    if (sent >= 4)
        ZT_EVENTUALLY(sc_capacity(a).capacity_waiters >= 1, 5000);
    zlink_host_capacity_t cap = sc_capacity(a);
    ZT_EQ_INT(cap.permits_in_use, 2);
    ZT_EQ_INT(cap.queued_jobs, 2);
    ZT_EQ_INT(cap.pressure_state, ZLINK_PRESSURE_PAUSED);
    if (sent >= 4)
        ZT_CHECK(cap.capacity_waiters >= 1); /* r4 waits in A's Core */
    ZT_EQ_INT(jq_started(&oa), 1);            /* only r1 ran */
    ZT_EQ_INT(sc_status(a).turns_queued, 2);  /* r2, r3 */

    sc_gate_open(&oa.gate);
    while (sent < 5) {
        if (wt != 0) {
            jq_raw_writable(peer, wt);
            wt = 0;
        }
        char tag[8];
        snprintf(tag, sizeof tag, "r%d", sent + 1);
        zlink_submit_result_t rc = jq_raw_send(peer, tag, &wt);
        if (rc == ZLINK_SUBMIT_OK) {
            sent++;
            wt = 0;
        } else {
            ZT_EQ_INT(rc, ZLINK_SUBMIT_BACKPRESSURED);
            ZT_CHECK(wt != 0);
        }
    }
    ZT_EVENTUALLY(jq_ended(&oa) == 5, 5000);
    jq_expect_order(&oa, 0, "r", 1, 5);
    ZT_EVENTUALLY(sc_capacity(a).permits_in_use == 0, 5000);
    ZT_EQ_INT(sc_capacity(a).pressure_state, ZLINK_PRESSURE_RUNNING);
    ZT_EQ_INT(sc_dropped(a), 0);
    ZT_EQ_INT(jq_started(&oa), 5);

    ZT_EQ_INT(zlink_monitor_close(&mon), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_close(peer), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
    sc_host_end(a);
    jq_owner_destroy(&oa);
}

void jq03_no_receive_without_permit(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(trs[i], "tcp") != 0)
            ZT_FAIL("JQ-03's raw peer lives in its own context: tcp only, not %s", trs[i]);
        no_receive_without_permit();
    }
}

/* -------------------------------------------------------------- JQ-05 */

#define JQ05_FLOOD 40

/* Timer thread: opens the gate. */
static void jq_open_gate(void *arg)
{
    sc_gate_open(arg);
}

/* A (M = 2, gated) is flooded by C until saturated. Part 1: A's requests
 * to B complete (a reply; NotFound for a packet B has no handler for)
 * promptly while A stays PAUSED; A's shutdown with a 500 ms drain deadline
 * returns within it plus the tolerance (the gate opens at the deadline,
 * standing in for a handler that returns then), with no ingress waiting.
 * Part 2 (fresh hosts): open() delivers every flooded record, once, in
 * order, none dropped. */
static void saturated_ingress(const char *tr)
{
    enum { D = 500 };
    char bound_a[256], bound_b[256];
    jq_owner_t oa;
    jq_owner_init(&oa, true);
    zlink_host_t *b = sc_mesh_host("B", tr, true, 0);
    jq_serve(b, "back", NULL, NULL);
    jq_start(b, bound_b, sizeof bound_b);
    zlink_host_t *a = sc_mesh_host("A", tr, true, 2);
    jq_serve(a, "svc", &oa, NULL);
    SC_EQ(zlink_mesh_add_channel_client(a, "m", "back"), ZLINK_FW_OK);
    SC_EQ(zlink_mesh_connect(a, "m", bound_b, "B", 1), ZLINK_FW_OK);
    jq_start(a, bound_a, sizeof bound_a);
    zlink_host_t *c = jq_flooder(tr, "svc", bound_a, "A");
    jq_start(c, NULL, 0);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(c, "m", NULL) == 1, 5000);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(a, "m", NULL) == 2, 5000);

    jq_send(c, "svc", "f0", NULL);
    ZT_EVENTUALLY(sc_gate_waiting(&oa.gate) == 1, 5000);
    static sc_done_t dd[JQ05_FLOOD];
    zlink_call_t *fc[JQ05_FLOOD];
    for (int i = 1; i < JQ05_FLOOD; i++) {
        char tag[8];
        snprintf(tag, sizeof tag, "f%d", i);
        sc_done_init(&dd[i]);
        fc[i] = jq_send(c, "svc", tag, &dd[i]);
    }
    ZT_EVENTUALLY(jq_saturated(a, c), 5000);

    char reply[SC_TAG_MAX];
    int64_t took;
    SC_EQ(jq_request(a, "back", "m", "q", reply, &took), ZLINK_FW_OK);
    ZT_EQ_STR(reply, "q");
    if (took >= ZT_MS(200))
        ZT_FAIL("the request to B took %lld ms while A was saturated", (long long)took);
    SC_EQ(jq_request(a, "back", "nope", "u", NULL, &took), ZLINK_FW_NOT_FOUND);
    if (took >= ZT_MS(200))
        ZT_FAIL("the unknown packet's NotFound took %lld ms", (long long)took);
    ZT_EQ_INT(sc_capacity(a).pressure_state, ZLINK_PRESSURE_PAUSED);
    ZT_EQ_INT(sc_capacity(a).transitions_running, 0);

    sc_timer_t timer;
    sc_timer_start(&timer);
    int64_t t0 = zt_now_ms();
    sc_timer_at(&timer, t0 + D, jq_open_gate, &oa.gate);
    SC_EQ(zlink_host_shutdown(a, ZLINK_MS(D)), ZLINK_FW_OK);
    int64_t elapsed = zt_now_ms() - t0;
    SC_ON_TIME(elapsed, D);
    sc_timer_finish(&timer);
    ZT_EQ_INT(zlink_host_state(a), ZLINK_HOST_STOPPED);
    zlink_host_capacity_t cap = sc_capacity(a);
    ZT_EQ_INT(cap.capacity_waiters, 0);
    ZT_EQ_INT(cap.permits_in_use, 0);
    sc_host_end(c); /* ends what still waited for room toward A */
    for (int i = 1; i < JQ05_FLOOD; i++) {
        sc_done_expect(&dd[i], 5000);
        zlink_call_release(fc[i]);
        sc_done_destroy(&dd[i]);
    }
    sc_host_end(a);
    sc_host_end(b);
    jq_owner_destroy(&oa);

    /* Part 2: no shutdown; open() delivers everything. */
    jq_owner_init(&oa, true);
    a = sc_mesh_host("A", tr, true, 2);
    jq_serve(a, "svc", &oa, NULL);
    jq_start(a, bound_a, sizeof bound_a);
    c = jq_flooder(tr, "svc", bound_a, "A");
    jq_start(c, NULL, 0);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(c, "m", NULL) == 1, 5000);
    jq_send(c, "svc", "f0", NULL);
    ZT_EVENTUALLY(sc_gate_waiting(&oa.gate) == 1, 5000);
    for (int i = 1; i < JQ05_FLOOD; i++) {
        char tag[8];
        snprintf(tag, sizeof tag, "f%d", i);
        sc_done_init(&dd[i]);
        fc[i] = jq_send(c, "svc", tag, &dd[i]);
    }
    ZT_EVENTUALLY(jq_saturated(a, c), 5000);
    sc_gate_open(&oa.gate);
    for (int i = 1; i < JQ05_FLOOD; i++) {
        sc_done_expect(&dd[i], 10000);
        SC_EQ(sc_done_result(&dd[i]), ZLINK_FW_OK);
    }
    ZT_EVENTUALLY(jq_ended(&oa) == JQ05_FLOOD, 10000);
    jq_expect_order(&oa, 0, "f", 0, JQ05_FLOOD);
    ZT_EQ_INT(sc_dropped(a), 0);
    ZT_EVENTUALLY(sc_capacity(a).permits_in_use == 0, 5000);
    ZT_EQ_INT(sc_capacity(a).pressure_state, ZLINK_PRESSURE_RUNNING);
    for (int i = 1; i < JQ05_FLOOD; i++) {
        zlink_call_release(fc[i]);
        sc_done_destroy(&dd[i]);
    }
    sc_host_end(c);
    sc_host_end(a);
    jq_owner_destroy(&oa);
}

void jq05_saturated_ingress_waits(const conf_params_t *params)
{
    sc_each_transport(params, saturated_ingress);
}

/* -------------------------------------------------------------- JQ-14 */

/* H (M = 1, gated "svc") is flooded by C into PAUSED; H is a ClientServer
 * client of "cs-out" served by S. H's request to S completes normally and
 * promptly while H stays PAUSED. */
static void reply_to_paused_client(const char *tr)
{
    char bound_h[256], bound_s[256], ep[256];
    sc_endpoint(ep, sizeof ep, tr, "jq14", "S");
    zlink_fw_result_t rc;
    zlink_host_t *s = zlink_host_new("S", &rc);
    ZT_CHECK(s != NULL);
    SC_EQ(zlink_host_add_cs_server(s, "cs-out", ep), ZLINK_FW_OK);
    SC_EQ(zlink_host_add_handler(s, ZLINK_OWNER_CHANNEL, "cs-out", ZLINK_MESSAGE_REQUEST, "m",
                                 jq_on_request, NULL),
          ZLINK_FW_OK);
    SC_EQ(zlink_host_start(s), ZLINK_FW_OK);
    SC_EQ(zlink_host_endpoint(s, "cs-out", bound_s, sizeof bound_s), ZLINK_FW_OK);

    jq_owner_t oh;
    jq_owner_init(&oh, true);
    zlink_host_t *h = sc_mesh_host("H", tr, true, 1);
    jq_serve(h, "svc", &oh, NULL);
    SC_EQ(zlink_host_add_cs_client(h, "cs-out", bound_s), ZLINK_FW_OK);
    jq_start(h, bound_h, sizeof bound_h);
    zlink_host_t *c = jq_flooder(tr, "svc", bound_h, "H");
    jq_start(c, NULL, 0);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(c, "m", NULL) == 1, 5000);

    char reply[SC_TAG_MAX];
    int64_t took;
    SC_EQ(jq_request(h, "cs-out", "m", "warm", reply, &took), ZLINK_FW_OK); /* connected */

    jq_send(c, "svc", "f0", NULL);
    ZT_EVENTUALLY(sc_gate_waiting(&oh.gate) == 1, 5000);
    sc_done_t dd[4];
    zlink_call_t *fc[4];
    for (int i = 1; i < 4; i++) {
        char tag[8];
        snprintf(tag, sizeof tag, "f%d", i);
        sc_done_init(&dd[i]);
        fc[i] = jq_send(c, "svc", tag, &dd[i]);
    }
    ZT_EVENTUALLY(jq_saturated(h, c), 5000);
    zlink_host_capacity_t before = sc_capacity(h);

    SC_EQ(jq_request(h, "cs-out", "m", "q", reply, &took), ZLINK_FW_OK);
    ZT_EQ_STR(reply, "q");
    if (took >= ZT_MS(200))
        ZT_FAIL("the request to S took %lld ms while H was PAUSED", (long long)took);
    zlink_host_capacity_t after = sc_capacity(h);
    ZT_EQ_INT(after.pressure_state, ZLINK_PRESSURE_PAUSED);
    ZT_EQ_INT(after.transitions_running, before.transitions_running); /* paused throughout */
    ZT_EQ_INT(after.permits_in_use, 1);

    sc_gate_open(&oh.gate);
    for (int i = 1; i < 4; i++) {
        sc_done_expect(&dd[i], 5000);
        SC_EQ(sc_done_result(&dd[i]), ZLINK_FW_OK);
        zlink_call_release(fc[i]);
        sc_done_destroy(&dd[i]);
    }
    ZT_EVENTUALLY(jq_ended(&oh) == 4, 5000);
    jq_expect_order(&oh, 0, "f", 0, 4);
    sc_host_end(c);
    sc_host_end(h);
    sc_host_end(s);
    jq_owner_destroy(&oh);
}

void jq14_reply_reaches_paused_client(const conf_params_t *params)
{
    sc_each_transport(params, reply_to_paused_client);
}

/* -------------------------------------------------------------- JQ-15 */

#define JQ15_FLOOD 3

/* A serves "svc-a", B "svc-b", each with M = 2; each one-way's handler
 * requests the other host's channel with a 1 s timeout and keeps its turn
 * (its gate) until the request ends. C floods both with JQ15_FLOOD
 * one-ways: both saturate (each pauses), and the requests meet gates held
 * by the other side's awaits. Every request ends, reply or
 * DeadlineExceeded, within 1 s + tol; the peers stay ready throughout;
 * afterwards both are RUNNING and every flooded record was handled. */
static void no_holding_while_waiting(const char *tr)
{
    char bound_a[256], bound_b[256];
    jq_owner_t oa, ob;
    jq_owner_init(&oa, false);
    jq_owner_init(&ob, false);
    oa.await_prefix = "f";
    oa.await_channel = "svc-b";
    oa.await_timeout_ms = 1000;
    ob.await_prefix = "f";
    ob.await_channel = "svc-a";
    ob.await_timeout_ms = 1000;

    zlink_host_t *b = sc_mesh_host("B", tr, true, 2);
    jq_serve(b, "svc-b", &ob, NULL);
    SC_EQ(zlink_mesh_add_channel_client(b, "m", "svc-a"), ZLINK_FW_OK);
    jq_start(b, bound_b, sizeof bound_b);
    zlink_host_t *a = sc_mesh_host("A", tr, true, 2);
    jq_serve(a, "svc-a", &oa, NULL);
    SC_EQ(zlink_mesh_add_channel_client(a, "m", "svc-b"), ZLINK_FW_OK);
    SC_EQ(zlink_mesh_connect(a, "m", bound_b, "B", 1), ZLINK_FW_OK);
    jq_start(a, bound_a, sizeof bound_a);
    zlink_host_t *c = sc_mesh_host("C", tr, false, 0);
    SC_EQ(zlink_mesh_add_channel_client(c, "m", "svc-a"), ZLINK_FW_OK);
    SC_EQ(zlink_mesh_add_channel_client(c, "m", "svc-b"), ZLINK_FW_OK);
    SC_EQ(zlink_mesh_set_option(c, "m", ZLINK_NODE_OPT_SEND_TIMEOUT, ZLINK_MS(30000)),
          ZLINK_FW_OK);
    SC_EQ(zlink_mesh_connect(c, "m", bound_a, "A", 1), ZLINK_FW_OK);
    SC_EQ(zlink_mesh_connect(c, "m", bound_b, "B", 1), ZLINK_FW_OK);
    jq_start(c, NULL, 0);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(c, "m", NULL) == 2, 5000);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(a, "m", NULL) == 2, 5000);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(b, "m", NULL) == 2, 5000);

    sc_done_t dd[2 * JQ15_FLOOD];
    zlink_call_t *fc[2 * JQ15_FLOOD];
    for (int i = 0; i < JQ15_FLOOD; i++) {
        char tag[8];
        snprintf(tag, sizeof tag, "f%d", i);
        sc_done_init(&dd[2 * i]);
        sc_done_init(&dd[2 * i + 1]);
        fc[2 * i] = jq_send(c, "svc-a", tag, &dd[2 * i]);
        fc[2 * i + 1] = jq_send(c, "svc-b", tag, &dd[2 * i + 1]);
    }
    /* Until every await ended: the peers never stop being ready. The
     * samples are the observation; the bound is 3 rounds of 1 s plus
     * slack. */
    int64_t until = zt_now_ms() + ZT_MS(3 * 1000 + 5000);
    while (jq_awaited(&oa) < JQ15_FLOOD || jq_awaited(&ob) < JQ15_FLOOD) {
        if (zt_now_ms() > until)
            ZT_FAIL("awaits ended: A %d, B %d of %d", jq_awaited(&oa), jq_awaited(&ob),
                    JQ15_FLOOD);
        ZT_EQ_INT(zlink_mesh_ready_peers(a, "m", NULL), 2);
        ZT_EQ_INT(zlink_mesh_ready_peers(b, "m", NULL), 2);
        ZT_EQ_INT(zlink_mesh_ready_peers(c, "m", NULL), 2);
        zt_sleep_ms(10);
    }
    jq_owner_t *owners[2] = {&oa, &ob};
    for (int k = 0; k < 2; k++) {
        jq_owner_t *o = owners[k];
        pthread_mutex_lock(&o->lk);
        for (int i = 0; i < o->started; i++) {
            if (o->tag[i][0] != 'f')
                continue;
            int r = o->await_result[i];
            int64_t e = o->await_elapsed_ms[i];
            pthread_mutex_unlock(&o->lk);
            if (r == ZLINK_FW_DEADLINE_EXCEEDED)
                SC_ON_TIME(e, 1000);
            else if (r != ZLINK_FW_OK)
                ZT_FAIL("%c's request %d ended %s", "AB"[k], i, zlink_result_name(r));
            else if (e > 1000 + ZT_MS(250))
                ZT_FAIL("%c's request %d replied after %lld ms", "AB"[k], i, (long long)e);
            pthread_mutex_lock(&o->lk);
        }
        pthread_mutex_unlock(&o->lk);
    }
    ZT_CHECK(sc_capacity(a).transitions_paused >= 1); /* both were saturated */
    ZT_CHECK(sc_capacity(b).transitions_paused >= 1);
    for (int i = 0; i < 2 * JQ15_FLOOD; i++) {
        sc_done_expect(&dd[i], 5000);
        SC_EQ(sc_done_result(&dd[i]), ZLINK_FW_OK);
        zlink_call_release(fc[i]);
        sc_done_destroy(&dd[i]);
    }
    /* Load over: both RUNNING with nothing held, every flood handled. */
    ZT_EVENTUALLY(sc_capacity(a).permits_in_use == 0 && sc_capacity(b).permits_in_use == 0 &&
                      sc_status(a).turns_running == 0 && sc_status(b).turns_running == 0,
                  5000);
    ZT_EQ_INT(sc_capacity(a).pressure_state, ZLINK_PRESSURE_RUNNING);
    ZT_EQ_INT(sc_capacity(b).pressure_state, ZLINK_PRESSURE_RUNNING);
    ZT_EQ_INT(jq_awaited(&oa), JQ15_FLOOD);
    ZT_EQ_INT(jq_awaited(&ob), JQ15_FLOOD);
    ZT_EQ_INT(sc_dropped(a), 0);
    ZT_EQ_INT(sc_dropped(b), 0);
    sc_host_end(c);
    sc_host_end(a);
    sc_host_end(b);
    jq_owner_destroy(&oa);
    jq_owner_destroy(&ob);
}

void jq15_no_holding_while_waiting(const conf_params_t *params)
{
    sc_each_transport(params, no_holding_while_waiting);
}

/* -------------------------------------------------------------- JQ-20 */

/* A has M = 1. Its handler of h0 is running and has a request out to B
 * (held at B's gate) when C's flood saturates A (the one permit in use,
 * PAUSED, more records waiting). B answers: the reply arrives (it needs no
 * permit), h0's turn ends, and then the flood runs. */
static void completion_needs_no_permit(const char *tr)
{
    jq_owner_t oa, ob;
    jq_owner_init(&oa, false);
    jq_owner_init(&ob, true);
    oa.await_prefix = "h";
    oa.await_channel = "back";
    oa.await_timeout_ms = 10000;

    zlink_host_t *a, *b, *c;
    jq_trio_open(tr, 1, &oa, &ob, &a, &b, &c);

    jq_send(c, "svc", "h0", NULL);
    ZT_EVENTUALLY(sc_gate_waiting(&ob.gate) == 1, 5000); /* h0 awaits B */
    enum { F = 6 };
    sc_done_t dd[F + 1];
    zlink_call_t *fc[F + 1];
    for (int i = 1; i <= F; i++) {
        char tag[8];
        snprintf(tag, sizeof tag, "f%d", i);
        sc_done_init(&dd[i]);
        fc[i] = jq_send(c, "svc", tag, &dd[i]);
    }
    ZT_EVENTUALLY(jq_saturated(a, c), 5000);
    ZT_EQ_INT(jq_awaited(&oa), 0);
    ZT_EQ_INT(jq_started(&oa), 1);

    int64_t t0 = zt_now_ms();
    sc_gate_open(&ob.gate);
    ZT_EVENTUALLY(jq_awaited(&oa) == 1, 5000);
    int64_t took = zt_now_ms() - t0;
    SC_EQ(oa.await_result[0], ZLINK_FW_OK);
    ZT_EQ_STR(oa.await_reply[0], "h0");
    if (took >= ZT_MS(1000))
        ZT_FAIL("the reply took %lld ms to reach saturated A", (long long)took);
    for (int i = 1; i <= F; i++) {
        sc_done_expect(&dd[i], 5000);
        SC_EQ(sc_done_result(&dd[i]), ZLINK_FW_OK);
        zlink_call_release(fc[i]);
        sc_done_destroy(&dd[i]);
    }
    ZT_EVENTUALLY(jq_ended(&oa) == F + 1, 5000);
    ZT_EQ_STR(oa.tag[0], "h0");
    jq_expect_order(&oa, 1, "f", 1, F);
    ZT_EVENTUALLY(sc_capacity(a).permits_in_use == 0, 5000);
    ZT_EQ_INT(sc_capacity(a).pressure_state, ZLINK_PRESSURE_RUNNING);
    sc_host_end(c);
    sc_host_end(a);
    sc_host_end(b);
    jq_owner_destroy(&oa);
    jq_owner_destroy(&ob);
}

void jq20_completions_need_no_permit(const conf_params_t *params)
{
    sc_each_transport(params, completion_needs_no_permit);
}
