/*
 * test_dealer.c — core-contract §8 "DEALER [G3]" through the public API
 * (zlink.h) only. doc/contract-tests/dealer_router_pubsub_stream.md maps
 * every item to a function here or says why it is elsewhere or later.
 *
 * Each case runs over inproc and tcp where the transport matters. Peers
 * are ROUTERs (or DEALERs) that announce a weight with ZLINK_ROUTER_WEIGHT
 * / ZLINK_DEALER_WEIGHT. Conventions:
 *  - tcp binds "tcp://127.0.0.1:0" and connects to ZLINK_LAST_ENDPOINT.
 *  - No sleeps. A DEALER's NONE send waits for its first peer. To know
 *    that every peer of a DEALER is attached *without* sending DEALER
 *    records (which would move the weighted round-robin state), each peer
 *    ROUTER sends one record to the DEALER's routing id: MANDATORY routing
 *    reports NOT_CONNECTED until the handshake is done, so the ROUTER
 *    retries that one non-blocking submit until it is admitted (bounded),
 *    then the DEALER receives it with a blocking receive. A record that
 *    arrives on a connection was sent after the handshake, so the DEALER
 *    has attached that peer and learned its weight by then.
 *  - A weight change travels as a WEIGHT control in order with the
 *    sender's records; a record the changer sends afterwards and the
 *    DEALER receives proves the DEALER has applied the change.
 *  - Expected sequences come from a reference model of the smooth
 *    weighted round-robin of core-contract §5 (ties: smallest routing id
 *    bytes, then attach order), kept deliberately separate from the code
 *    under test.
 */
#include "zltest_zlink.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

/* Every router in rs[] reaches dealer d (routing id d_rid) and d receives
 * one record from each: afterwards d has attached all of them and knows
 * their weights, and no DEALER record has been sent. */
static void routers_ready(void *d, const char *d_rid, void *const *rs, int n)
{
    for (int i = 0; i < n; i++)
        zlt_router_send_when_routable(rs[i], d_rid, "ready");
    for (int i = 0; i < n; i++)
        zlt_expect_str(d, "ready");
}

/* A ROUTER peer for weight tests: routing id rid, weight w, bound. */
static void *weighted_router(void *ctx, const char *tr, const char *rid, int w, char *ep,
                             size_t cap)
{
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_rid(r, rid);
    zlt_set_int(r, ZLINK_ROUTER_WEIGHT, w);
    zlt_bind(r, tr, ep, cap);
    return r;
}

/* ROUTERs named rids[i] with weights ws[i] (and RCVHWM hwms[i] when hwms
 * is not NULL), bound on tr, and a DEALER "D" that connects to them in
 * that order (inproc takes the HWM at connect). Returns the DEALER once every router has
 * reached it (routers_ready); the routers are in rs[0..n). */
static void *dealer_to_routers(void *ctx, const char *tr, const char *const *rids,
                               const int *ws, const uint64_t *hwms, int n, void **rs)
{
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(d, "D");
    for (int i = 0; i < n; i++) {
        char ep[256];
        rs[i] = weighted_router(ctx, tr, rids[i], ws[i], ep, sizeof ep);
        if (hwms != NULL)
            zlt_set_u64(rs[i], ZLINK_RCVHWM, hwms[i]);
        zlt_connect(d, ep);
    }
    routers_ready(d, "D", rs, n);
    return d;
}

static const char *const R1_R2[] = {"r1", "r2"};

/* Receives records "<i>" on router r until it has got `want` of them; each
 * index is recorded in who[i] = tag. Indices must increase (FIFO). */
static void collect(void *r, int want, char tag, char *who, int nwho)
{
    int last = -1;
    for (int k = 0; k < want; k++) {
        char buf[64];
        ZT_EQ_INT(zlt_router_recv_str(r, NULL, buf, sizeof buf, 0), ZLINK_RECV_OK);
        int i = atoi(buf);
        ZT_CHECK(i > last && i < nwho);
        ZT_CHECK(who[i] == 0);
        who[i] = tag;
        last = i;
    }
}

static void send_indexed(void *d, int from, int to)
{
    for (int i = from; i < to; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%d", i);
        ZT_EQ_INT(zlt_send_str(d, buf, 0), ZLINK_SUBMIT_OK);
    }
}

/* ------------------------------------------------ smooth weighted model */

typedef struct model_peer {
    const char *rid;
    int weight;
    int64_t acc;
    int attach;
} model_peer_t;

static int model_rid_cmp(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    int c = memcmp(a, b, na < nb ? na : nb);
    if (c != 0)
        return c;
    return (int)na - (int)nb;
}

/* One selection over p[0..n): the index chosen, or -1 when no peer has a
 * positive weight. */
static int model_pick(model_peer_t *p, int n)
{
    int64_t total = 0;
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (p[i].weight <= 0)
            continue;
        p[i].acc += p[i].weight;
        total += p[i].weight;
    }
    for (int i = 0; i < n; i++) {
        if (p[i].weight <= 0)
            continue;
        if (best < 0 || p[i].acc > p[best].acc ||
            (p[i].acc == p[best].acc &&
             (model_rid_cmp(p[i].rid, p[best].rid) < 0 ||
              (model_rid_cmp(p[i].rid, p[best].rid) == 0 && p[i].attach < p[best].attach))))
            best = i;
    }
    if (best >= 0)
        p[best].acc -= total;
    return best;
}

/* Runs the weighted scenario on transport tr: routers named rids[] with
 * weights ws[], attached in the order given, the dealer sends n indexed
 * records; writes the router letter ('a' + router index) chosen for each
 * record into out[0..n) and checks every record arrived. */
static void run_weighted(const char *tr, const char *const *rids, const int *ws, int nr, int n,
                         char *out)
{
    void *ctx = zlt_ctx_new();
    void *rs[8];
    int expect_count[8] = {0};
    ZT_CHECK(nr <= 8);
    void *d = dealer_to_routers(ctx, tr, rids, ws, NULL, nr, rs);

    model_peer_t mp[8];
    for (int i = 0; i < nr; i++) {
        mp[i] = (model_peer_t){rids[i], ws[i], 0, i};
    }
    char *model = calloc((size_t)n + 1, 1);
    ZT_CHECK(model != NULL);
    for (int k = 0; k < n; k++) {
        int pick = model_pick(mp, nr);
        ZT_CHECK(pick >= 0);
        model[k] = (char)('a' + pick);
        expect_count[pick]++;
    }

    send_indexed(d, 0, n);
    memset(out, 0, (size_t)n + 1);
    for (int i = 0; i < nr; i++)
        collect(rs[i], expect_count[i], (char)('a' + i), out, n);
    for (int k = 0; k < n; k++)
        ZT_CHECK(out[k] != 0); /* every record went to some router */
    out[n] = '\0';
    if (strcmp(out, model) != 0)
        ZT_FAIL("[%s] sequence %s, model %s", tr, out, model);
    free(model);

    for (int i = 0; i < nr; i++)
        zlt_close(rs[i]);
    zlt_finish(ctx, d);
}

/* ------------------------------------------------------------------ cases */

/* DEALER 1: ZLINK_DEALER_WEIGHT outside 0..10000 is rejected, not clamped. */
static void dealer_01_weight_range(void)
{
    printf("# covers DEALER/1\n");
    void *ctx = zlt_ctx_new();
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    const int bad[] = {-1, ZLINK_WEIGHT_MAX + 1, INT_MAX, INT_MIN, 20000};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) /* each leaves it unchanged */
        zlt_set_int_fails(d, ZLINK_DEALER_WEIGHT, bad[i], ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    ZT_EQ_INT(zlt_get_int(d, ZLINK_DEALER_WEIGHT), ZLINK_WEIGHT_DFLT);
    /* Wrong size is rejected too. */
    int64_t wide = 5;
    ZT_EQ_INT(zlink_setsockopt(d, ZLINK_DEALER_WEIGHT, &wide, sizeof wide),
              ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    /* The bounds themselves are valid. */
    zlt_set_int_check(d, ZLINK_DEALER_WEIGHT, ZLINK_WEIGHT_MIN);
    zlt_set_int_check(d, ZLINK_DEALER_WEIGHT, ZLINK_WEIGHT_MAX);
    /* The ROUTER option name is not a DEALER option. */
    zlt_set_int_fails(d, ZLINK_ROUTER_WEIGHT, 50, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    ZT_EQ_INT(zlt_get_int(d, ZLINK_DEALER_WEIGHT), ZLINK_WEIGHT_MAX);
    zlt_finish(ctx, d);
}

/* DEALER 2: getsockopt writes the value's length back into *size and no
 * more bytes than that; a too small buffer is rejected with nothing written. */
static void dealer_02_get_writes_optvallen(void)
{
    printf("# covers DEALER/2\n");
    void *ctx = zlt_ctx_new();
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_int(d, ZLINK_DEALER_WEIGHT, 321);
    zlt_check_get_int_exact(d, ZLINK_DEALER_WEIGHT, 321);
    zlt_check_get_int_exact(d, ZLINK_DEALER_PROBE, 0);
    zlt_check_get_int_exact(d, ZLINK_DEALER_OPT_REQUEST_TIMEOUT_MS, ZLINK_REQUEST_TIMEOUT_DFLT);
    zlt_check_get_int_exact(d, ZLINK_TYPE, ZLINK_DEALER);
    /* Options of another socket type give EINVAL on a DEALER. */
    zlt_get_fails(d, ZLINK_ROUTER_MANDATORY, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_finish(ctx, d);
}

/* DEALER 3 (option part): PROBE reads 0 by default, 0/1 are accepted and
 * read back, anything else is EINVAL. */
static void dealer_03_probe_option(void)
{
    printf("# covers DEALER/3 (option values)\n");
    void *ctx = zlt_ctx_new();
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_check_bool_option(d, ZLINK_DEALER_PROBE, 0);
    zlt_finish(ctx, d);
}

/* DEALER 3: with PROBE 1 set before connect, the peer receives one empty
 * record (one part of size 0) as soon as the connection is up, before
 * anything the DEALER sends; with PROBE 0 the first record is the data. */
static void dealer_03_probe_empty_record(void)
{
    printf("# covers DEALER/3 (the empty record on connect)\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        for (int probe = 0; probe <= 1; probe++) {
            char ep[256];
            void *r = zlt_sock(ctx, ZLINK_ROUTER);
            zlt_bind(r, tr, ep, sizeof ep);
            void *d = zlt_sock(ctx, ZLINK_DEALER);
            zlt_set_rid(d, "D");
            zlt_set_int(d, ZLINK_DEALER_PROBE, probe);
            zlt_connect(d, ep);
            if (probe) /* nothing sent yet: a blocking receive gets the probe */
                zlt_router_expect(r, "D", "");
            ZT_EQ_INT(zlt_send_str(d, "data", 0), ZLINK_SUBMIT_OK);
            zlt_router_expect(r, "D", "data");
            zlt_router_expect_no_data(r); /* one probe, no more */
        }
    }
}

/* DEALER 5: CONFLATE 1 on a DEALER is NOT_SUPPORTED; 0 is accepted. */
static void dealer_05_conflate(void)
{
    printf("# covers DEALER/5\n");
    void *ctx = zlt_ctx_new();
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_int_fails(d, ZLINK_CONFLATE, 1, ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    ZT_EQ_INT(zlt_get_int(d, ZLINK_CONFLATE), 0);
    zlt_set_int_check(d, ZLINK_CONFLATE, 0);
    zlt_finish(ctx, d);
}

/* DEALER 6: weights set before connecting are followed exactly (300
 * records over weights 100/200/0 give 100/200/0, in the model's order);
 * weight 0 excludes the peer. Also a DEALER peer announcing
 * ZLINK_DEALER_WEIGHT (ROUTER 6: weight items hold for both options). */
static void dealer_06_preconnect_weights_exact(void)
{
    printf("# covers DEALER/6, ROUTER/6\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        /* The weight-0 peer has the smallest id: it would win every tie. */
        static const char *const rids[] = {"p2", "p3", "p1"};
        static const int ws[] = {100, 200, 0};
        char out[301];
        run_weighted(tr, rids, ws, 3, 300, out);
        int counts[3] = {0};
        for (int k = 0; k < 300; k++)
            counts[out[k] - 'a']++;
        ZT_EQ_INT(counts[0], 100);
        ZT_EQ_INT(counts[1], 200);
        ZT_EQ_INT(counts[2], 0);

        /* DEALER-DEALER: the peer's DEALER_WEIGHT is honoured the same way. */
        char ep1[256], ep2[256];
        void *p1 = zlt_sock(ctx, ZLINK_DEALER);
        void *p2 = zlt_sock(ctx, ZLINK_DEALER);
        zlt_set_rid(p1, "p1");
        zlt_set_rid(p2, "p2");
        zlt_set_int(p1, ZLINK_DEALER_WEIGHT, 0);
        zlt_set_int(p2, ZLINK_DEALER_WEIGHT, 7);
        zlt_bind(p1, tr, ep1, sizeof ep1);
        zlt_bind(p2, tr, ep2, sizeof ep2);
        void *d = zlt_sock(ctx, ZLINK_DEALER);
        zlt_connect(d, ep1);
        zlt_connect(d, ep2);
        /* p2 is the only candidate: NONE waits until it is attached. */
        for (int i = 0; i < 20; i++)
            ZT_EQ_INT(zlt_send_str(d, "to-p2", 0), ZLINK_SUBMIT_OK);
        for (int i = 0; i < 20; i++)
            zlt_expect_str(p2, "to-p2");
        /* p1 (weight 0) got nothing: a record from p1's side proves the
         * connection works, and d then sees p1's first record only. */
        ZT_EQ_INT(zlt_send_str(p1, "from-p1", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(d, "from-p1");
        zlt_expect_no_data(p1);
    }
}

/* DEALER 6 (0 excludes, inproc): a weight-0 peer gets nothing even when
 * every positive-weight peer is full: the send is BACKPRESSURED instead. */
static void dealer_06_weight0_excluded_when_others_full(void)
{
    printf("# covers DEALER/6 (weight 0 excludes, peers full), DEALER/16\n");
    void *ctx = zlt_ctx_new();
    void *rs[2];
    /* r1: one 1-byte record (65 charged) fits its RCVHWM of 100. */
    void *d = dealer_to_routers(ctx, "inproc", (const char *const[]){"r0", "r1"},
                                (const int[]){0, 100}, (const uint64_t[]){ZLINK_HWM_DFLT, 100},
                                2, rs);
    void *r0 = rs[0], *r1 = rs[1];
    ZT_EQ_INT(zlt_send_str(d, "a", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlt_send_str(d, "b", ZLINK_DONTWAIT), ZLINK_SUBMIT_BACKPRESSURED);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    zlt_set_int(d, ZLINK_SNDTIMEO, 30);
    ZT_EQ_INT(zlt_send_str(d, "c", 0), ZLINK_SUBMIT_BACKPRESSURED);
    zlt_router_expect_no_data(r0);
    zlt_router_expect(r1, NULL, "a");
    ZT_EQ_INT(zlt_send_str(d, "d", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK); /* room again */
    zlt_router_expect(r1, NULL, "d");
    zlt_finish(ctx, r0, r1, d);
}

/* DEALER 8: weight changes (either side) produce no records: only the
 * data sent afterwards is received. */
static void dealer_08_weight_change_no_records(void)
{
    printf("# covers DEALER/8\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *d, *r;
        zlt_dr_pair(ctx, tr, &d, &r);
        /* ROUTER side changes its weight several times. */
        const int ws[] = {50, 0, 10000, 1, 100};
        for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++)
            zlt_set_int(r, ZLINK_ROUTER_WEIGHT, ws[i]);
        zlt_expect_no_data(d);
        ZT_EQ_INT(zlt_send_rid_str(r, "D", "after-weights", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(d, "after-weights"); /* the first record is the data */
        zlt_expect_no_data(d);
        /* DEALER side changes its weight several times. */
        for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++)
            zlt_set_int(d, ZLINK_DEALER_WEIGHT, ws[i]);
        zlt_router_expect_no_data(r);
        ZT_EQ_INT(zlt_send_str(d, "after-dealer-weights", 0), ZLINK_SUBMIT_OK);
        zlt_router_expect(r, NULL, "after-dealer-weights");
        zlt_router_expect_no_data(r);
    }
}

/* DEALER 9: several weight changes between records: records stay whole
 * and the latest weight wins. */
static void dealer_09_latest_weight_wins(void)
{
    printf("# covers DEALER/9\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *rs[2];
        void *d = dealer_to_routers(ctx, tr, R1_R2, (const int[]){100, 100}, NULL, 2, rs);
        void *r1 = rs[0], *r2 = rs[1];
        /* r2 goes through 5000, 7, 10000 and ends at 0: only 0 counts. */
        zlt_set_int(r2, ZLINK_ROUTER_WEIGHT, 5000);
        zlt_set_int(r2, ZLINK_ROUTER_WEIGHT, 7);
        zlt_set_int(r2, ZLINK_ROUTER_WEIGHT, 10000);
        zlt_set_int(r2, ZLINK_ROUTER_WEIGHT, 0);
        ZT_EQ_INT(zlt_send_rid_str(r2, "D", "sync", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(d, "sync");
        /* Three-part records: all to r1, whole. */
        for (int i = 0; i < 10; i++) {
            zlink_msg_t m[3];
            zlt_msg_set(&m[0], "a", 1);
            zlt_msg_set(&m[1], "bb", 2);
            zlt_msg_set(&m[2], "ccc", 3);
            ZT_EQ_INT(zlink_send(d, m, 3, ZLINK_SEND_FLAGS_NONE, NULL, NULL), ZLINK_SUBMIT_OK);
        }
        for (int i = 0; i < 10; i++) {
            zlink_msg_t parts[4];
            size_t count = 0;
            const zlink_routing_id_t *rid = NULL;
            ZT_EQ_INT(zlink_router_recv(r1, &rid, NULL, parts, 4, &count, 0), ZLINK_RECV_OK);
            ZT_EQ_INT(count, 3);
            ZT_EQ_INT(zlink_msg_size(&parts[2]), 3);
            zlink_multipart_close(parts, count);
        }
        zlt_router_expect_no_data(r2);
        /* Now back up: 0 -> 300 -> 100 ends at 100: alternation again. */
        zlt_set_int(r2, ZLINK_ROUTER_WEIGHT, 300);
        zlt_set_int(r2, ZLINK_ROUTER_WEIGHT, 100);
        ZT_EQ_INT(zlt_send_rid_str(r2, "D", "sync2", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(d, "sync2");
        send_indexed(d, 0, 40);
        char who[40] = {0};
        collect(r1, 20, 'a', who, 40);
        collect(r2, 20, 'b', who, 40);
    }
}

/* DEALER 10: a record already placed on a peer is still delivered when the
 * peer then goes to weight 0; later records are not placed there. */
static void dealer_10_weight0_after_placement_delivers(void)
{
    printf("# covers DEALER/10\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *d, *r;
        zlt_dr_pair(ctx, tr, &d, &r);
        ZT_EQ_INT(zlt_send_str(d, "placed-1", 0), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(zlt_send_str(d, "placed-2", 0), ZLINK_SUBMIT_OK);
        zlt_set_int(r, ZLINK_ROUTER_WEIGHT, 0);
        ZT_EQ_INT(zlt_send_rid_str(r, "D", "sync", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(d, "sync"); /* d has applied weight 0 */
        zlt_router_expect(r, NULL, "placed-1");
        zlt_router_expect(r, NULL, "placed-2");
        ZT_EQ_INT(zlt_send_str(d, "excluded", ZLINK_DONTWAIT), ZLINK_SUBMIT_BACKPRESSURED);
        ZT_EQ_INT(zlink_errno(), EAGAIN);
        zlt_router_expect_no_data(r);
    }
}

/* DEALER 12: a MAXMSGSIZE below the 10-byte WEIGHT control does not block
 * the control: the DEALER still learns the weight. */
static void dealer_12_small_maxmsgsize_passes_weight(void)
{
    printf("# covers DEALER/12\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        char ep[256];
        void *r = weighted_router(ctx, tr, "r1", 100, ep, sizeof ep);
        void *d = zlt_sock(ctx, ZLINK_DEALER);
        int64_t max = 4;
        ZT_EQ_INT(zlink_setsockopt(d, ZLINK_MAXMSGSIZE, &max, sizeof max), ZLINK_CONFIG_OK);
        zlt_set_rid(d, "D");
        zlt_connect(d, ep);
        zlt_router_send_when_routable(r, "D", "rdy");
        zlt_expect_str(d, "rdy");
        zlt_set_int(r, ZLINK_ROUTER_WEIGHT, 0); /* a 10-byte WEIGHT control */
        ZT_EQ_INT(zlt_send_rid_str(r, "D", "s", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(d, "s"); /* the connection survived the control */
        ZT_EQ_INT(zlt_send_str(d, "x", ZLINK_DONTWAIT), ZLINK_SUBMIT_BACKPRESSURED);
        zlt_set_int(r, ZLINK_ROUTER_WEIGHT, 10000);
        ZT_EQ_INT(zlt_send_rid_str(r, "D", "t", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(d, "t");
        ZT_EQ_INT(zlt_send_str(d, "y", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
        zlt_router_expect(r, NULL, "y");
    }
}

/* DEALER 13: a new connection to a peer uses the peer's current weight,
 * not the one it had when first connected. The DEALER reconnects under a
 * new routing id so the router's probe reaches the new connection only. */
static void dealer_13_reconnect_uses_current_weight(void)
{
    printf("# covers DEALER/13 (reconnect part)\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        char ep[256];
        void *r = weighted_router(ctx, tr, "r1", 100, ep, sizeof ep);
        void *d = zlt_sock(ctx, ZLINK_DEALER);
        zlt_set_rid(d, "D");
        zlt_connect(d, ep);
        zlt_router_send_when_routable(r, "D", "rdy");
        zlt_expect_str(d, "rdy");
        zlt_set_int(r, ZLINK_ROUTER_WEIGHT, 0);
        ZT_EQ_INT(zlt_send_rid_str(r, "D", "sync", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(d, "sync"); /* old connection: weight 0 applied */
        ZT_EQ_INT(zlink_disconnect(d, ep), ZLINK_CONNECT_OK);
        zlt_set_rid(d, "D2");
        zlt_connect(d, ep);
        zlt_router_send_when_routable(r, "D2", "rdy2");
        zlt_expect_str(d, "rdy2"); /* new connection attached, weight known */
        /* Weight 0 is the router's current weight: nothing is eligible. */
        ZT_EQ_INT(zlt_send_str(d, "x", ZLINK_DONTWAIT), ZLINK_SUBMIT_BACKPRESSURED);
        ZT_EQ_INT(zlink_errno(), EAGAIN);
    }
}

/* DEALER 14: weights 100 ("1", routing id r1) and 300 ("2", r2) give the
 * sequence 2,1,2,2. The peers are attached in the order r2, r1, so the
 * tie at the second record is decided by routing id bytes, not attach
 * order (attach order would give 2,2,1,2). */
static void dealer_14_weights_100_300(void)
{
    printf("# covers DEALER/14\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        char ep1[256], ep2[256];
        void *r1 = weighted_router(ctx, tr, "r1", 100, ep1, sizeof ep1);
        void *r2 = weighted_router(ctx, tr, "r2", 300, ep2, sizeof ep2);
        void *d = zlt_sock(ctx, ZLINK_DEALER);
        zlt_set_rid(d, "D");
        zlt_connect(d, ep2);
        void *first[] = {r2};
        routers_ready(d, "D", first, 1); /* r2 attaches first */
        zlt_connect(d, ep1);
        void *second[] = {r1};
        routers_ready(d, "D", second, 1);
        send_indexed(d, 0, 8);
        char who[9] = {0};
        collect(r2, 6, '2', who, 8);
        collect(r1, 2, '1', who, 8);
        ZT_EQ_STR(who, "21222122");
    }
}

/* DEALER 15: equal weights alternate in routing id order, and the ratio
 * holds for three equal peers. */
static void dealer_15_equal_weights_alternate(void)
{
    printf("# covers DEALER/15\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        static const char *const rids2[] = {"zz", "aa"};
        static const int ws2[] = {100, 100};
        char out[101];
        run_weighted(tr, rids2, ws2, 2, 100, out);
        for (int k = 0; k < 100; k++)
            ZT_EQ_INT(out[k], k % 2 == 0 ? 'b' : 'a'); /* "aa" first, then "zz" */
        static const char *const rids3[] = {"c", "a", "b"};
        static const int ws3[] = {5, 5, 5};
        char out3[91];
        run_weighted(tr, rids3, ws3, 3, 90, out3);
        for (int k = 0; k < 90; k++)
            ZT_EQ_INT(out3[k], "bca"[k % 3]); /* a, b, c repeating */
    }
}

/* Weighted ratio: ROUTERs with weights 100 and 300 receive exactly 1000
 * and 3000 of 4000 records (the model's interleaving, in order). */
static void dealer_15_ratio_100_300_4000(void)
{
    printf("# covers DEALER/15 (ratio), DEALER/14\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        static const char *const rids[] = {"w100", "w300"};
        static const int ws[] = {100, 300};
        static char out[4001];
        run_weighted(tr, rids, ws, 2, 4000, out);
        int a = 0, b = 0;
        for (int k = 0; k < 4000; k++) {
            if (out[k] == 'a')
                a++;
            else
                b++;
        }
        ZT_EQ_INT(a, 1000);
        ZT_EQ_INT(b, 3000);
    }
}

/* DEALER 16: with every peer at weight 0, DONTWAIT is BACKPRESSURED/EAGAIN
 * at once and NONE waits SNDTIMEO (50 ms) and is then BACKPRESSURED. */
static void dealer_16_all_weights_zero(void)
{
    printf("# covers DEALER/16\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *rs[2];
        void *d = dealer_to_routers(ctx, tr, R1_R2, (const int[]){0, 0}, NULL, 2, rs);
        void *r1 = rs[0], *r2 = rs[1];

        zlink_completion_id_t id = 77;
        zlink_msg_t m;
        zlt_msg_set(&m, "x", 1);
        ZT_EQ_INT(zlink_send(d, &m, 1, ZLINK_SEND_FLAGS_DONTWAIT, NULL, &id),
                  ZLINK_SUBMIT_BACKPRESSURED);
        ZT_EQ_INT(zlink_errno(), EAGAIN);
        ZT_EQ_INT(zlink_msg_size(&m), 0); /* consumed */
        ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);

        zlt_set_int(d, ZLINK_SNDTIMEO, 50);
        int64_t t0 = zt_now_ms();
        ZT_EQ_INT(zlt_send_str(d, "y", 0), ZLINK_SUBMIT_BACKPRESSURED);
        int64_t waited = zt_now_ms() - t0;
        ZT_EQ_INT(zlink_errno(), EAGAIN);
        ZT_CHECK(waited >= 50);
        ZT_CHECK(waited < ZT_MS(1000));
        /* SNDTIMEO 0 is immediate. */
        zlt_set_int(d, ZLINK_SNDTIMEO, 0);
        ZT_EQ_INT(zlt_send_str(d, "z", 0), ZLINK_SUBMIT_BACKPRESSURED);

        zlt_router_expect_no_data(r1);
        zlt_router_expect_no_data(r2);
    }
}

/* No peer at all: DONTWAIT is BACKPRESSURED/EAGAIN; NONE waits SNDTIMEO. */
static void dealer_no_peer_backpressured(void)
{
    printf("# covers DEALER/16 (no peer), Common 29 for DEALER\n");
    void *ctx = zlt_ctx_new();
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    ZT_EQ_INT(zlt_send_str(d, "x", ZLINK_DONTWAIT), ZLINK_SUBMIT_BACKPRESSURED);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    zlt_set_int(d, ZLINK_SNDTIMEO, 50);
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlt_send_str(d, "y", 0), ZLINK_SUBMIT_BACKPRESSURED);
    ZT_CHECK(zt_now_ms() - t0 >= 50);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    zlt_finish(ctx, d);
}

/* DEALER 17: the selection is deterministic across processes given
 * distinct routing ids: a second process running the same scenario gets
 * the same sequence as this one (and as the model). */
static const char *const D17_RIDS[] = {"gamma", "alpha", "beta"};
static const int D17_WS[] = {100, 250, 100};
#define D17_N 36

static int dealer_17_child(const char *expect)
{
    char out[D17_N + 1];
    run_weighted("inproc", D17_RIDS, D17_WS, 3, D17_N, out);
    if (expect == NULL || strcmp(out, expect) != 0) {
        fprintf(stderr, "child sequence %s, parent %s\n", out, expect ? expect : "(null)");
        return 1;
    }
    char out_tcp[D17_N + 1];
    run_weighted("tcp", D17_RIDS, D17_WS, 3, D17_N, out_tcp);
    return strcmp(out_tcp, expect) == 0 ? 0 : 2;
}

static void dealer_17_deterministic_across_processes(void)
{
    printf("# covers DEALER/17\n");
    char out[D17_N + 1];
    run_weighted("inproc", D17_RIDS, D17_WS, 3, D17_N, out);
    pid_t pid = zt_spawn_self("dealer17", out);
    ZT_EQ_INT(zt_wait(pid), 0);
}

/* DEALER 18: a new connection of a peer starts with accumulator 0 and
 * keeps its routing-id position. r2 (300) wins record 0, leaving r1 at
 * +100 and r2 at -100; r2 is then frozen at weight 0, replaced by a new
 * connection from a ROUTER with the same routing id and weight 300. With
 * the new accumulator at 0 the next picks are 2,1,2,2; an inherited -100
 * would tie at the next record and give 1 first. */
static void dealer_18_reconnect_resets_accumulator(void)
{
    printf("# covers DEALER/18\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        char ep1[256], ep2[256], ep3[256];
        void *r1 = weighted_router(ctx, tr, "r1", 100, ep1, sizeof ep1);
        void *r2 = weighted_router(ctx, tr, "r2", 300, ep2, sizeof ep2);
        void *d = zlt_sock(ctx, ZLINK_DEALER);
        zlt_set_rid(d, "D");
        zlt_connect(d, ep1);
        zlt_connect(d, ep2);
        void *rs[] = {r1, r2};
        routers_ready(d, "D", rs, 2);
        ZT_EQ_INT(zlt_send_str(d, "0", 0), ZLINK_SUBMIT_OK);
        zlt_router_expect(r2, NULL, "0");
        /* Freeze the old connection: weight 0, applied (sync). */
        zlt_set_int(r2, ZLINK_ROUTER_WEIGHT, 0);
        ZT_EQ_INT(zlt_send_rid_str(r2, "D", "sync", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(d, "sync");
        ZT_EQ_INT(zlink_disconnect(d, ep2), ZLINK_CONNECT_OK);
        zlt_close(r2);
        /* The peer comes back: same routing id, weight 300. */
        void *r2b = weighted_router(ctx, tr, "r2", 300, ep3, sizeof ep3);
        zlt_connect(d, ep3);
        void *back[] = {r2b};
        routers_ready(d, "D", back, 1);
        send_indexed(d, 1, 9);
        char who[10] = {0};
        who[0] = '2';
        collect(r2b, 6, '2', who, 9);
        collect(r1, 2, '1', who, 9);
        ZT_EQ_STR(who, "221222122");
    }
}

/* DEALER 19: a peer without room is skipped for that record only: the
 * record goes to the next best peer at once (even with DONTWAIT) and the
 * full peer gets records again once it has room. */
static void dealer_19_full_peer_skipped_inproc(void)
{
    printf("# covers DEALER/19 (inproc, exact)\n");
    void *ctx = zlt_ctx_new();
    void *rs[2];
    /* r1: one 1-byte record (65 charged) fits its RCVHWM of 100. */
    void *d = dealer_to_routers(ctx, "inproc", R1_R2, (const int[]){100, 100},
                                (const uint64_t[]){100, ZLINK_HWM_DFLT}, 2, rs);
    void *r1 = rs[0], *r2 = rs[1];
    /* Equal weights: 0 -> r1 (tie, smaller id), 1 -> r2, 2 -> r1 is full:
     * r2, 3 -> r1 still full: r2. All admitted without waiting. */
    for (int i = 0; i < 4; i++) {
        char buf[16];
        snprintf(buf, sizeof buf, "%d", i);
        ZT_EQ_INT(zlt_send_str(d, buf, ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
    }
    zlt_router_expect(r2, NULL, "1");
    zlt_router_expect(r2, NULL, "2");
    zlt_router_expect(r2, NULL, "3");
    zlt_router_expect(r1, NULL, "0"); /* r1 has room again */
    ZT_EQ_INT(zlt_send_str(d, "4", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
    zlt_router_expect(r1, NULL, "4"); /* not excluded: it is the best candidate again */
    zlt_router_expect_no_data(r2);
    zlt_finish(ctx, r1, r2, d);
}

/* DEALER 19 (inproc, exact): a peer refused for lack of room leaves the
 * round for that record: its accumulator addition is undone, so it gets no
 * burst once it has room again. Equal weights, r1 (the smaller id, which
 * wins ties) holds exactly H records of 8 bytes (charge 72 each). The
 * first 2H records alternate r1, r2 and fill r1; the next K all go to r2
 * (r1 is tried first each time and refused); r1 drains; then the
 * alternation resumes exactly: r1, r2, r1, r2. A refused peer that kept
 * its addition would have K * 100 in hand and take a run of records. */
static void dealer_19_refused_peer_leaves_round(void)
{
    printf("# covers DEALER/19 (a refused peer leaves the round: no later burst)\n");
    enum { H = 3, K = 10, M = H, N = 2 * H + K + 2 * M }; /* M <= H: r1 has room */
    void *ctx = zlt_ctx_new();
    void *rs[2];
    void *d = dealer_to_routers(ctx, "inproc", R1_R2, (const int[]){100, 100},
                                (const uint64_t[]){H * 72, ZLINK_HWM_DFLT}, 2, rs);
    char who[N + 1] = {0}, want[N + 1] = {0};
    for (int i = 0; i < N; i++) {
        if (i == 2 * H + K) /* r1 drains before the last 2M */
            collect(rs[0], H, 'a', who, N);
        char buf[16];
        snprintf(buf, sizeof buf, "%08d", i); /* 8 bytes */
        ZT_EQ_INT(zlt_send_str(d, buf, ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
        want[i] = i >= 2 * H && i < 2 * H + K ? 'b' : "ab"[i % 2];
    }
    collect(rs[0], M, 'a', who, N);
    collect(rs[1], H + K + M, 'b', who, N);
    ZT_EQ_STR(who, want);
    zlt_router_expect_no_data(rs[0]);
    zlt_router_expect_no_data(rs[1]);
    zlt_finish(ctx, rs[0], rs[1], d);
}

/* Receives one indexed record (payload starts with "<i>") from router r
 * (flags; NONE waits RCVTIMEO); returns the index or -1 on NO_DATA. */
static int r_recv_index(void *r, size_t want_size, int flags)
{
    zlink_msg_t parts[2];
    size_t count = 0;
    const zlink_routing_id_t *rid = NULL;
    zlink_recv_result_t rc =
        zlink_router_recv(r, &rid, NULL, parts, 2, &count, (zlink_recv_flags_t)flags);
    if (rc == ZLINK_RECV_NO_DATA)
        return -1;
    ZT_EQ_INT(rc, ZLINK_RECV_OK);
    ZT_EQ_INT(count, 1);
    ZT_EQ_INT(zlink_msg_size(&parts[0]), want_size);
    int i = atoi((const char *)zlink_msg_data(&parts[0]));
    zlink_multipart_close(parts, count);
    return i;
}

/* DEALER 19 over tcp: r1 stops reading (RCVHWM of one record), r2 reads
 * without limit. The kernel buffers some MB for r1 (send buffer autotuning
 * goes up to 4 MB here), so the records are large: r1's equal share, 12.8
 * MB, is far more than it can absorb. Every NONE send succeeds, r1 ends up
 * with clearly fewer than its equal share (it was skipped while full),
 * every record arrives exactly once and in order per peer, and once r1 has
 * drained it is chosen again (at least one of the next two records). */
static void dealer_19_full_peer_skipped_tcp(void)
{
    printf("# covers DEALER/19 (tcp)\n");
    enum { N = 400, SZ = 65536 };
    void *ctx = zlt_ctx_new();
    char ep1[256], ep2[256];
    void *r1 = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_rid(r1, "r1");
    zlt_set_u64(r1, ZLINK_RCVHWM, 4096);
    zlt_bind(r1, "tcp", ep1, sizeof ep1);
    void *r2 = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_rid(r2, "r2");
    zlt_set_u64(r2, ZLINK_RCVHWM, 0);
    zlt_bind(r2, "tcp", ep2, sizeof ep2);
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(d, "D");
    zlt_set_u64(d, ZLINK_SNDHWM, 4 * SZ);
    zlt_connect(d, ep1);
    zlt_connect(d, ep2);
    void *rs[] = {r1, r2};
    routers_ready(d, "D", rs, 2);
    static unsigned char payload[SZ];
    for (int i = 0; i < N; i++) {
        zlink_msg_t m;
        memset(payload, 0, sizeof payload);
        snprintf((char *)payload, 32, "%d", i);
        zlt_msg_set(&m, payload, SZ);
        ZT_EQ_INT(zlink_send(d, &m, 1, ZLINK_SEND_FLAGS_NONE, NULL, NULL), ZLINK_SUBMIT_OK);
    }
    /* Drain both until all N are accounted for: take what is queued, and
     * when neither has anything, wait briefly (blocking receive with a
     * 20 ms timeout) on each. Indices increase per peer; none twice. */
    static char seen[N];
    memset(seen, 0, sizeof seen);
    zlt_set_int(r1, ZLINK_RCVTIMEO, 20);
    zlt_set_int(r2, ZLINK_RCVTIMEO, 20);
    int got[2] = {0, 0}, last[2] = {-1, -1};
    int64_t end = zt_now_ms() + ZT_MS(5000);
    while (got[0] + got[1] < N) {
        if (zt_now_ms() > end)
            ZT_FAIL("drain stalled: r1 %d (last %d), r2 %d (last %d)", got[0], last[0],
                    got[1], last[1]);
        bool progress = false;
        for (int k = 0; k < 2; k++) {
            int i;
            while ((i = r_recv_index(rs[k], SZ, ZLINK_DONTWAIT)) >= 0) {
                ZT_CHECK(i < N && !seen[i] && i > last[k]);
                seen[i] = 1;
                last[k] = i;
                got[k]++;
                progress = true;
            }
        }
        for (int k = 0; k < 2 && !progress; k++) {
            int i = r_recv_index(rs[k], SZ, 0);
            if (i < 0)
                continue;
            ZT_CHECK(i < N && !seen[i] && i > last[k]);
            seen[i] = 1;
            last[k] = i;
            got[k]++;
            progress = true;
        }
    }
    printf("# r1 got %d, r2 got %d of %d\n", got[0], got[1], N);
    ZT_CHECK(got[0] < N / 2 - N / 8); /* equal weights: r1 was skipped while full */
    /* r1 has room again and is a candidate again. */
    ZT_EQ_INT(zlt_send_str(d, "again-1", 0), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlt_send_str(d, "again-2", 0), ZLINK_SUBMIT_OK);
    zlt_set_int(r1, ZLINK_RCVTIMEO, ZT_MS(2000));
    char buf[64];
    ZT_EQ_INT(zlt_router_recv_str(r1, NULL, buf, sizeof buf, 0), ZLINK_RECV_OK);
    ZT_CHECK(strncmp(buf, "again-", 6) == 0);
    zlt_finish(ctx, r1, r2, d);
}

/* DEALER 23: receive with nothing queued: DONTWAIT is NO_DATA/EAGAIN at
 * once, and outputs are left unchanged. */
static void dealer_23_no_data(void)
{
    printf("# covers DEALER/23\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *d, *r;
        zlt_dr_pair(ctx, tr, &d, &r);
        zlink_msg_t parts[2];
        size_t count = 42;
        const zlink_routing_id_t *rid = (const zlink_routing_id_t *)(uintptr_t)0x1;
        int64_t t0 = zt_now_ms();
        ZT_EQ_INT(zlink_recv(d, &rid, parts, 2, &count, ZLINK_RECV_FLAGS_DONTWAIT),
                  ZLINK_RECV_NO_DATA);
        ZT_EQ_INT(zlink_errno(), EAGAIN);
        ZT_CHECK(zt_now_ms() - t0 < ZT_MS(500));
        ZT_EQ_INT(count, 42);
        ZT_CHECK(rid == (const zlink_routing_id_t *)(uintptr_t)0x1);
        /* Unknown flag bits are rejected. */
        ZT_EQ_INT(zlink_recv(d, NULL, parts, 2, &count, (zlink_recv_flags_t)4),
                  ZLINK_RECV_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        /* A record then makes it OK; the queue is empty again after. */
        ZT_EQ_INT(zlt_send_rid_str(r, "D", "one", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(d, "one");
        ZT_EQ_INT(zlink_recv(d, NULL, parts, 2, &count, ZLINK_RECV_FLAGS_DONTWAIT),
                  ZLINK_RECV_NO_DATA);
    }
}

/* DEALER 24: a record with more parts than cap is BUFFER_TOO_SMALL/ENOBUFS,
 * *count holds the needed count, nothing is consumed, and a retry with
 * room returns that same record once. */
static void dealer_24_buffer_too_small(void)
{
    printf("# covers DEALER/24\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *d, *r;
        zlt_dr_pair(ctx, tr, &d, &r);
        zlink_routing_id_t rid;
        zlt_rid_set(&rid, "D");
        zlink_msg_t m[3];
        zlt_msg_set(&m[0], "p0", 2);
        zlt_msg_set(&m[1], "p1", 2);
        zlt_msg_set(&m[2], "p2", 2);
        ZT_EQ_INT(zlink_send_rid(r, &rid, m, 3, 0, NULL, NULL), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(zlt_send_rid_str(r, "D", "next", 0), ZLINK_SUBMIT_OK);
        zlink_msg_t parts[3];
        size_t count = 0;
        ZT_EQ_INT(zlink_recv(d, NULL, parts, 2, &count, 0), ZLINK_RECV_BUFFER_TOO_SMALL);
        ZT_EQ_INT(zlink_errno(), ENOBUFS);
        ZT_EQ_INT(count, 3);
        count = 0;
        ZT_EQ_INT(zlink_recv(d, NULL, parts, 1, &count, ZLINK_DONTWAIT),
                  ZLINK_RECV_BUFFER_TOO_SMALL);
        ZT_EQ_INT(count, 3);
        ZT_EQ_INT(zlink_recv(d, NULL, parts, 3, &count, 0), ZLINK_RECV_OK);
        ZT_EQ_INT(count, 3);
        ZT_EQ_MEM(zlink_msg_data(&parts[0]), "p0", 2);
        ZT_EQ_MEM(zlink_msg_data(&parts[1]), "p1", 2);
        ZT_EQ_MEM(zlink_msg_data(&parts[2]), "p2", 2);
        zlink_multipart_close(parts, count);
        zlt_expect_str(d, "next"); /* the big record came once */
    }
}

/* DEALER 25: a multipart record is sent and received whole in one call,
 * parts in order, including empty parts and a large part. */
static void dealer_25_whole_multipart(void)
{
    printf("# covers DEALER/25\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *d, *r;
        zlt_dr_pair(ctx, tr, &d, &r);
        enum { BIG = 100000 };
        static unsigned char big[BIG];
        for (int i = 0; i < BIG; i++)
            big[i] = (unsigned char)(i * 7);
        for (int rep = 0; rep < 20; rep++) {
            zlink_msg_t m[5];
            zlt_msg_set(&m[0], "head", 4);
            zlt_msg_set(&m[1], "", 0);
            zlt_msg_set(&m[2], big, rep == 0 ? BIG : 1);
            zlt_msg_set(&m[3], &rep, sizeof rep);
            zlt_msg_set(&m[4], "tail", 4);
            ZT_EQ_INT(zlink_send(d, m, 5, 0, NULL, NULL), ZLINK_SUBMIT_OK);
            for (int i = 0; i < 5; i++)
                ZT_EQ_INT(zlink_msg_size(&m[i]), 0);
        }
        for (int rep = 0; rep < 20; rep++) {
            zlink_msg_t parts[8];
            size_t count = 0;
            const zlink_routing_id_t *rid = NULL;
            ZT_EQ_INT(zlink_router_recv(r, &rid, NULL, parts, 8, &count, 0), ZLINK_RECV_OK);
            ZT_EQ_INT(count, 5);
            ZT_CHECK(zlt_rid_is(rid, "D"));
            ZT_EQ_INT(zlink_msg_size(&parts[0]), 4);
            ZT_EQ_MEM(zlink_msg_data(&parts[0]), "head", 4);
            ZT_EQ_INT(zlink_msg_size(&parts[1]), 0);
            ZT_EQ_INT(zlink_msg_size(&parts[2]), rep == 0 ? BIG : 1);
            ZT_EQ_MEM(zlink_msg_data(&parts[2]), big, rep == 0 ? BIG : 1);
            int got;
            memcpy(&got, zlink_msg_data(&parts[3]), sizeof got);
            ZT_EQ_INT(got, rep);
            ZT_EQ_MEM(zlink_msg_data(&parts[4]), "tail", 4);
            zlink_multipart_close(parts, count);
        }
        /* And the other way, ROUTER to DEALER. */
        zlink_routing_id_t rid;
        zlt_rid_set(&rid, "D");
        zlink_msg_t m[3];
        zlt_msg_set(&m[0], "x", 1);
        zlt_msg_set(&m[1], "yy", 2);
        zlt_msg_set(&m[2], "zzz", 3);
        ZT_EQ_INT(zlink_send_rid(r, &rid, m, 3, 0, NULL, NULL), ZLINK_SUBMIT_OK);
        zlink_msg_t parts[3];
        size_t count = 0;
        ZT_EQ_INT(zlink_recv(d, NULL, parts, 3, &count, 0), ZLINK_RECV_OK);
        ZT_EQ_INT(count, 3);
        ZT_EQ_MEM(zlink_msg_data(&parts[2]), "zzz", 3);
        zlink_multipart_close(parts, count);
    }
}

/* DEALER 26: a DEALER receive reports no routing id (*rid_opt = NULL) and
 * rid_opt may itself be NULL. */
static void dealer_26_rid_null(void)
{
    printf("# covers DEALER/26 (DATA part)\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *d, *r;
        zlt_dr_pair(ctx, tr, &d, &r);
        ZT_EQ_INT(zlt_send_rid_str(r, "D", "a", 0), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(zlt_send_rid_str(r, "D", "b", 0), ZLINK_SUBMIT_OK);
        zlink_msg_t parts[2];
        size_t count = 0;
        const zlink_routing_id_t *rid = (const zlink_routing_id_t *)(uintptr_t)0x10;
        ZT_EQ_INT(zlink_recv(d, &rid, parts, 2, &count, 0), ZLINK_RECV_OK);
        ZT_CHECK(rid == NULL);
        ZT_EQ_INT(count, 1);
        zlink_multipart_close(parts, count);
        ZT_EQ_INT(zlink_recv(d, NULL, parts, 2, &count, 0), ZLINK_RECV_OK);
        ZT_EQ_INT(count, 1);
        ZT_EQ_MEM(zlink_msg_data(&parts[0]), "b", 1);
        zlink_multipart_close(parts, count);
    }
}

/* DEALER 27: RCVTIMEO: NONE waits about the timeout (snapshotted at
 * entry), then NO_DATA; 0 is immediate; a record arriving meanwhile ends
 * the wait early. */
static void *late_sender(void *arg)
{
    void **sr = arg;
    /* Released by the main thread just before its long receive; the record
     * then lands before or during that wait, which must end at once. */
    char buf[16];
    ZT_EQ_INT(zlt_recv_str(sr[2], buf, sizeof buf, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(zlt_send_rid_str(sr[1], "D", "late", 0), ZLINK_SUBMIT_OK);
    return NULL;
}

static void dealer_27_rcvtimeo(void)
{
    printf("# covers DEALER/27\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *d, *r;
        zlt_dr_pair(ctx, tr, &d, &r);
        zlink_msg_t parts[2];
        size_t count = 0;
        zlt_set_int(d, ZLINK_RCVTIMEO, 60);
        int64_t t0 = zt_now_ms();
        ZT_EQ_INT(zlink_recv(d, NULL, parts, 2, &count, 0), ZLINK_RECV_NO_DATA);
        int64_t waited = zt_now_ms() - t0;
        ZT_EQ_INT(zlink_errno(), EAGAIN);
        ZT_CHECK(waited >= 60);
        ZT_CHECK(waited < ZT_MS(1000));
        zlt_set_int(d, ZLINK_RCVTIMEO, 0);
        t0 = zt_now_ms();
        ZT_EQ_INT(zlink_recv(d, NULL, parts, 2, &count, 0), ZLINK_RECV_NO_DATA);
        ZT_CHECK(zt_now_ms() - t0 < ZT_MS(500));
        /* A long timeout ends as soon as a record arrives. A second pair
         * (inproc) lets the helper thread learn that the wait began. */
        zlt_set_int(d, ZLINK_RCVTIMEO, ZT_MS(5000));
        char ep[256];
        void *gate_b = zlt_sock(ctx, ZLINK_PAIR);
        void *gate_a = zlt_sock(ctx, ZLINK_PAIR);
        zlt_bind(gate_b, "inproc", ep, sizeof ep);
        zlt_connect(gate_a, ep);
        void *sr[3] = {d, r, gate_b};
        pthread_t th;
        ZT_EQ_INT(pthread_create(&th, NULL, late_sender, sr), 0);
        ZT_EQ_INT(zlt_send_str(gate_a, "go", 0), ZLINK_SUBMIT_OK);
        t0 = zt_now_ms();
        ZT_EQ_INT(zlink_recv(d, NULL, parts, 2, &count, 0), ZLINK_RECV_OK);
        ZT_CHECK(zt_now_ms() - t0 < ZT_MS(4000));
        ZT_EQ_INT(count, 1);
        ZT_EQ_MEM(zlink_msg_data(&parts[0]), "late", 4);
        zlink_multipart_close(parts, count);
        ZT_EQ_INT(pthread_join(th, NULL), 0);
        /* Bad values are rejected. */
        int v = -2;
        ZT_EQ_INT(zlink_setsockopt(d, ZLINK_RCVTIMEO, &v, sizeof v),
                  ZLINK_CONFIG_INVALID_ARGUMENT);
    }
}

/* Fair-queued input: two peers each queue 50 records before the DEALER
 * reads; the DEALER receives all 100, alternating between the peers. */
static void dealer_fair_queue_in(void)
{
    printf("# covers DEALER fair-queued receive (core-contract §5)\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *rs[2];
        void *d = dealer_to_routers(ctx, tr, R1_R2, (const int[]){100, 100}, NULL, 2, rs);
        void *r1 = rs[0], *r2 = rs[1];
        for (int i = 0; i < 50; i++) {
            char buf[32];
            snprintf(buf, sizeof buf, "a%d", i);
            ZT_EQ_INT(zlt_send_rid_str(r1, "D", buf, 0), ZLINK_SUBMIT_OK);
            snprintf(buf, sizeof buf, "b%d", i);
            ZT_EQ_INT(zlt_send_rid_str(r2, "D", buf, 0), ZLINK_SUBMIT_OK);
        }
        int na = 0, nb = 0, longest_run = 0, run = 0;
        char prev = 0;
        for (int k = 0; k < 100; k++) {
            char buf[32];
            ZT_EQ_INT(zlt_recv_str(d, buf, sizeof buf, 0), ZLINK_RECV_OK);
            if (buf[0] == 'a') {
                ZT_EQ_INT(atoi(buf + 1), na);
                na++;
            } else {
                ZT_EQ_INT(buf[0], 'b');
                ZT_EQ_INT(atoi(buf + 1), nb);
                nb++;
            }
            run = buf[0] == prev ? run + 1 : 1;
            prev = buf[0];
            if (run > longest_run)
                longest_run = run;
        }
        ZT_EQ_INT(na, 50);
        ZT_EQ_INT(nb, 50);
        if (!zlt_is_tcp(tr))
            ZT_CHECK(longest_run <= 1); /* both fully queued: strict alternation */
    }
}

static const zt_case_t cases[] = {
    ZT_CASE(dealer_01_weight_range),
    ZT_CASE(dealer_02_get_writes_optvallen),
    ZT_CASE(dealer_03_probe_option),
    ZT_CASE(dealer_03_probe_empty_record),
    ZT_CASE(dealer_05_conflate),
    ZT_CASE(dealer_06_preconnect_weights_exact),
    ZT_CASE(dealer_06_weight0_excluded_when_others_full),
    ZT_CASE(dealer_08_weight_change_no_records),
    ZT_CASE(dealer_09_latest_weight_wins),
    ZT_CASE(dealer_10_weight0_after_placement_delivers),
    ZT_CASE(dealer_12_small_maxmsgsize_passes_weight),
    ZT_CASE(dealer_13_reconnect_uses_current_weight),
    ZT_CASE(dealer_14_weights_100_300),
    ZT_CASE(dealer_15_equal_weights_alternate),
    ZT_CASE(dealer_15_ratio_100_300_4000),
    ZT_CASE(dealer_16_all_weights_zero),
    ZT_CASE(dealer_no_peer_backpressured),
    ZT_CASE(dealer_17_deterministic_across_processes),
    ZT_CASE(dealer_18_reconnect_resets_accumulator),
    ZT_CASE(dealer_19_full_peer_skipped_inproc),
    ZT_CASE(dealer_19_refused_peer_leaves_round),
    ZT_CASE(dealer_19_full_peer_skipped_tcp),
    ZT_CASE(dealer_23_no_data),
    ZT_CASE(dealer_24_buffer_too_small),
    ZT_CASE(dealer_25_whole_multipart),
    ZT_CASE(dealer_26_rid_null),
    ZT_CASE(dealer_27_rcvtimeo),
    ZT_CASE(dealer_fair_queue_in),
};

static const zt_role_t roles[] = {
    ZT_ROLE("dealer17", dealer_17_child),
};

int main(int argc, char **argv)
{
    return zt_main_roles(argc, argv, cases, ZT_NCASES(cases), roles, ZT_NCASES(roles));
}
