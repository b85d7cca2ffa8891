/*
 * test_fw_mesh.c — RouteMesh: hello / admit, node-direct and channel calls
 * with weighted select-one, weight updates, lost links (seed 000 §5, §12;
 * framework-contract.md §2.2).
 */
#include "fwtest.h"

typedef struct node {
    zlink_host_t *h;
    fw_recorder_t rec;
    fw_gate_t gate;
    char bound[256];
} node_t;

/* A mesh node "m" with rid name; server of "svc" at weight (< 0: client of
 * "svc" instead); listens on ep unless ep is NULL; connects to peer_ep /
 * peer_rid when given. Node-direct handlers record into rec. */
static void node_open(node_t *n, const char *name, const char *ep, int weight,
                      const char *peer_ep, const char *peer_rid)
{
    zlink_fw_result_t rc;
    fw_recorder_init(&n->rec);
    fw_gate_init(&n->gate);
    n->h = zlink_host_new(name, &rc);
    ZT_CHECK(n->h != NULL);
    FW_EQ(zlink_host_add_mesh_node(n->h, "m", name, strlen(name), ep), ZLINK_FW_OK);
    if (weight >= 0) {
        FW_EQ(zlink_mesh_add_channel_server(n->h, "m", "svc", weight), ZLINK_FW_OK);
        FW_EQ(zlink_host_add_handler(n->h, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_SEND, "m",
                                     fw_on_send, &n->rec),
              ZLINK_FW_OK);
        FW_EQ(zlink_host_add_handler(n->h, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_REQUEST,
                                     "m", fw_on_request, &n->rec),
              ZLINK_FW_OK);
    } else {
        FW_EQ(zlink_mesh_add_channel_client(n->h, "m", "svc"), ZLINK_FW_OK);
    }
    FW_EQ(zlink_host_add_handler(n->h, ZLINK_OWNER_NODE, "m", ZLINK_MESSAGE_SEND, "m",
                                 fw_on_send, &n->rec),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_add_handler(n->h, ZLINK_OWNER_NODE, "m", ZLINK_MESSAGE_REQUEST, "m",
                                 fw_on_request, &n->rec),
          ZLINK_FW_OK);
    if (peer_ep != NULL)
        FW_EQ(zlink_mesh_connect(n->h, "m", peer_ep, peer_rid, strlen(peer_rid)), ZLINK_FW_OK);
    FW_EQ(zlink_host_start(n->h), ZLINK_FW_OK);
    n->bound[0] = '\0';
    if (ep != NULL)
        FW_EQ(zlink_host_endpoint(n->h, "m", n->bound, sizeof n->bound), ZLINK_FW_OK);
}

static void node_close(node_t *n)
{
    fw_gate_open(&n->gate);
    if (zlink_host_state(n->h) == ZLINK_HOST_SERVING)
        FW_EQ(zlink_host_shutdown(n->h, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(n->h), ZLINK_FW_OK);
}

static int ready(node_t *n)
{
    return zlink_mesh_ready_peers(n->h, "m", NULL);
}

static zlink_call_t *node_call(node_t *from, int request, const char *to, const char *text)
{
    zlink_fw_result_t rc;
    zlink_call_t *c = request ? zlink_call_request_to_node(from->h, "m", to, strlen(to), &rc)
                              : zlink_call_send_to_node(from->h, "m", to, strlen(to), &rc);
    ZT_CHECK(c != NULL);
    FW_EQ(zlink_call_set_payload(c, "m", "", text, strlen(text)), ZLINK_FW_OK);
    return c;
}

/* hello / admit makes both ends ready; channel and node calls work both
 * ways over the one connection. */
static void hello_admit_and_calls(const char *tr)
{
    char ep[256];
    node_t a, b;
    fw_endpoint(ep, sizeof ep, tr, "mesh-b");
    node_open(&b, "B", ep, 100, NULL, NULL);
    node_open(&a, "A", NULL, -1, b.bound, "B");
    ZT_EVENTUALLY(ready(&a) == 1 && ready(&b) == 1, 3000);
    char reply[64];
    zlink_call_t *c = fw_call(a.h, 1, "to-svc");
    FW_EQ(fw_wait(c, reply, sizeof reply), ZLINK_FW_OK);
    ZT_EQ_STR(reply, "to-svc");
    zlink_call_release(c);
    c = node_call(&a, 0, "B", "node-send");
    FW_EQ(fw_wait(c, NULL, 0), ZLINK_FW_OK);
    zlink_call_release(c);
    ZT_EVENTUALLY(fw_recorder_has(&b.rec, "node-send") == 1, 2000);
    /* B answers back over the connection A opened */
    c = node_call(&b, 1, "A", "back");
    FW_EQ(fw_wait(c, reply, sizeof reply), ZLINK_FW_OK);
    ZT_EQ_STR(reply, "back");
    zlink_call_release(c);
    ZT_EQ_INT(fw_recorder_has(&a.rec, "back"), 1);
    node_close(&a);
    node_close(&b);
}

/* SC-01: no eligible server (weight 0) -> NotFound; a node whose link is
 * cut -> Unavailable; an unknown node -> NotFound. */
static void selection_errors(void)
{
    node_t a, b;
    node_open(&b, "B", "inproc://fw-mesh-sel", 0, NULL, NULL);
    node_open(&a, "A", NULL, -1, b.bound, "B");
    ZT_EVENTUALLY(ready(&a) == 1 && ready(&b) == 1, 3000);
    zlink_call_t *c = fw_call(a.h, 0, "x");
    FW_EQ(fw_wait(c, NULL, 0), ZLINK_FW_NOT_FOUND);
    zlink_call_release(c);
    c = node_call(&a, 0, "Z", "x");
    FW_EQ(fw_wait(c, NULL, 0), ZLINK_FW_NOT_FOUND);
    zlink_call_release(c);
    /* weight 100 now: announced by UPDATE, then selectable */
    FW_EQ(zlink_mesh_set_weight(b.h, "m", "svc", 100), ZLINK_FW_OK);
    ZT_EVENTUALLY(({
                      zlink_call_t *t = fw_call(a.h, 1, "w");
                      int r = fw_wait(t, NULL, 0);
                      zlink_call_release(t);
                      r == ZLINK_FW_OK;
                  }),
                  3000);
    FW_EQ(zlink_host_shutdown(b.h, ZLINK_MS(1000)), ZLINK_FW_OK);
    ZT_EVENTUALLY(ready(&a) == 0, 3000);
    c = node_call(&a, 0, "B", "x");
    FW_EQ(fw_wait(c, NULL, 0), ZLINK_FW_UNAVAILABLE);
    zlink_call_release(c);
    /* The channel: B is a member that is not ready (a lost link counts
     * before whatever B announced last, draining included). */
    c = fw_call(a.h, 0, "x");
    FW_EQ(fw_wait(c, NULL, 0), ZLINK_FW_UNAVAILABLE);
    zlink_call_release(c);
    node_close(&a);
    node_close(&b);
}

/* Weighted select-one: 3:1 weights split requests about 3:1. */
static void weighted_select(void)
{
    node_t a, b, c;
    node_open(&b, "B", "inproc://fw-mesh-w-b", 300, NULL, NULL);
    node_open(&c, "C", "inproc://fw-mesh-w-c", 100, NULL, NULL);
    zlink_fw_result_t rc;
    fw_recorder_init(&a.rec);
    a.h = zlink_host_new("A", &rc);
    FW_EQ(zlink_host_add_mesh_node(a.h, "m", "A", 1, NULL), ZLINK_FW_OK);
    FW_EQ(zlink_mesh_add_channel_client(a.h, "m", "svc"), ZLINK_FW_OK);
    FW_EQ(zlink_mesh_connect(a.h, "m", b.bound, "B", 1), ZLINK_FW_OK);
    FW_EQ(zlink_mesh_connect(a.h, "m", c.bound, "C", 1), ZLINK_FW_OK);
    FW_EQ(zlink_host_start(a.h), ZLINK_FW_OK);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(a.h, "m", NULL) == 2, 3000);
    for (int i = 0; i < 400; i++) {
        zlink_call_t *x = fw_call(a.h, 1, "r");
        FW_EQ(fw_wait(x, NULL, 0), ZLINK_FW_OK);
        zlink_call_release(x);
    }
    int nb = fw_recorder_count(&b.rec), nc = fw_recorder_count(&c.rec);
    ZT_EQ_INT(nb + nc, 400);
    ZT_CHECK(nb > 240 && nb < 360); /* 300 expected; binomial sd ~ 8.7 */
    FW_EQ(zlink_host_shutdown(a.h, ZLINK_MS(1000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(a.h), ZLINK_FW_OK);
    node_close(&b);
    node_close(&c);
}

/* A node of another mesh is rejected and never becomes ready. */
static void other_mesh_rejected(void)
{
    zlink_fw_result_t rc;
    node_t b;
    node_open(&b, "B", "inproc://fw-mesh-rej", 100, NULL, NULL);
    zlink_host_t *x = zlink_host_new("X", &rc);
    FW_EQ(zlink_host_add_mesh_node(x, "other", "X", 1, NULL), ZLINK_FW_OK);
    FW_EQ(zlink_mesh_connect(x, "other", b.bound, "B", 1), ZLINK_FW_OK);
    FW_EQ(zlink_host_start(x), ZLINK_FW_OK);
    /* B answers the hello (a REJECT): once a second, good node is ready the
     * first hello has long been handled. */
    node_t a;
    node_open(&a, "A", NULL, -1, b.bound, "B");
    ZT_EVENTUALLY(ready(&a) == 1, 3000);
    ZT_EQ_INT(zlink_mesh_ready_peers(x, "other", NULL), 0);
    ZT_EQ_INT(ready(&b), 1);
    FW_EQ(zlink_host_shutdown(x, ZLINK_MS(1000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(x), ZLINK_FW_OK);
    node_close(&a);
    node_close(&b);
}

/* A draining member is no longer picked: when B begins to shut down it
 * announces no server channel, and A's channel calls go to C. */
typedef struct shut_arg {
    zlink_host_t *h;
    int rc;
} shut_arg_t;

static void *shut_main(void *arg)
{
    shut_arg_t *a = arg;
    a->rc = zlink_host_shutdown(a->h, ZLINK_MS(10000));
    return NULL;
}

static void draining_member_not_picked(void)
{
    node_t a, b, c;
    node_open(&b, "B", "inproc://fw-mesh-drain-b", 100, NULL, NULL);
    node_open(&c, "C", "inproc://fw-mesh-drain-c", 0, NULL, NULL); /* not eligible yet */
    zlink_fw_result_t rc;
    fw_recorder_init(&a.rec);
    a.h = zlink_host_new("A", &rc);
    FW_EQ(zlink_host_add_mesh_node(a.h, "m", "A", 1, NULL), ZLINK_FW_OK);
    FW_EQ(zlink_mesh_add_channel_client(a.h, "m", "svc"), ZLINK_FW_OK);
    FW_EQ(zlink_mesh_connect(a.h, "m", b.bound, "B", 1), ZLINK_FW_OK);
    FW_EQ(zlink_mesh_connect(a.h, "m", c.bound, "C", 1), ZLINK_FW_OK);
    FW_EQ(zlink_host_start(a.h), ZLINK_FW_OK);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(a.h, "m", NULL) == 2, 3000);
    /* hold B in DRAINING: a node-direct one-way blocks in B's handler */
    b.rec.gate = &b.gate;
    zlink_call_t *x = node_call(&a, 0, "B", "hold");
    FW_EQ(fw_wait(x, NULL, 0), ZLINK_FW_OK);
    zlink_call_release(x);
    ZT_EVENTUALLY(fw_gate_waiting(&b.gate) == 1, 2000);
    shut_arg_t sa = {b.h, -1};
    pthread_t th;
    ZT_CHECK(pthread_create(&th, NULL, shut_main, &sa) == 0);
    ZT_EVENTUALLY(zlink_host_state(b.h) == ZLINK_HOST_DRAINING, 2000);
    /* B was the only eligible member: once its UPDATE arrived, a channel
     * call finds none (NotFound, counted as draining); before that it
     * reached B, which answered ShuttingDown. */
    ZT_EVENTUALLY(({
                      zlink_call_t *t = fw_call(a.h, 1, "d");
                      int r = fw_wait(t, NULL, 0);
                      zlink_call_release(t);
                      r == ZLINK_FW_NOT_FOUND;
                  }),
                  3000);
    int64_t drained = 0;
    FW_EQ(zlink_host_metric(a.h, "zlink.mesh_node.channel.selection_failures",
                            "reason=draining", &drained),
          ZLINK_FW_OK);
    ZT_CHECK(drained >= 1);
    /* C becomes eligible (its UPDATE): from then on every pick is C */
    FW_EQ(zlink_mesh_set_weight(c.h, "m", "svc", 100), ZLINK_FW_OK);
    ZT_EVENTUALLY(({
                      zlink_call_t *t = fw_call(a.h, 1, "d");
                      int r = fw_wait(t, NULL, 0);
                      zlink_call_release(t);
                      r == ZLINK_FW_OK;
                  }),
                  3000);
    int b_seen = fw_recorder_count(&b.rec);
    for (int i = 0; i < 50; i++) {
        zlink_call_t *t = fw_call(a.h, 1, "after");
        FW_EQ(fw_wait(t, NULL, 0), ZLINK_FW_OK);
        zlink_call_release(t);
    }
    ZT_EQ_INT(fw_recorder_has(&c.rec, "after"), 50);
    ZT_EQ_INT(fw_recorder_count(&b.rec), b_seen);
    fw_gate_open(&b.gate);
    pthread_join(th, NULL);
    FW_EQ(sa.rc, ZLINK_FW_OK);
    FW_EQ(zlink_host_shutdown(a.h, ZLINK_MS(1000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(a.h), ZLINK_FW_OK);
    node_close(&b);
    node_close(&c);
}

int main(int argc, char **argv)
{
    static const zt_case_t cases[] = {
        ZT_CASE_TP(hello_admit_and_calls),
        ZT_CASE(selection_errors),
        ZT_CASE(weighted_select),
        ZT_CASE(other_mesh_rejected),
        ZT_CASE(draining_member_not_picked),
    };
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
