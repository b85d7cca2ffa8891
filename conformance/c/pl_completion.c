/*
 * pl_completion.c — seed 004 §9 "Completion polling": POLLCOMPLETION, the
 * records behind it (REQUEST and WRITABLE) and how a poller user drains
 * them; and the completion helpers the other PL files share (pl.h).
 *
 * Records are made without sleeping: a REQUEST record is a DEALER's request
 * answered by its ROUTER (on inproc the reply is in the DEALER's pipe when
 * zlink_reply returns, and a poller wait moves it into the completion
 * queue); a WRITABLE record is a refused DONTWAIT send on a full inproc
 * PAIR whose peer then receives.
 */
#include "pl.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

/* ----------------------------------------------------------------- helpers */

/* d sends the REQUEST text (NONE); its completion id. */
static zlink_completion_id_t request(void *d, const char *text, void *uctx)
{
    zlink_msg_t m;
    zlt_msg_set(&m, text, strlen(text));
    zlink_completion_id_t id = 0;
    ZT_EQ_INT(zlink_request(d, NULL, &m, 1, ZLINK_SEND_FLAGS_NONE, 0, uctx, &id), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    ZT_CHECK(id != 0);
    return id;
}

/* r receives (NONE) the REQUEST text; its token, and its source in *src. */
static zlink_reply_token_t take_request(void *r, const char *text, zlink_routing_id_t *src)
{
    const zlink_routing_id_t *rid = NULL;
    zlink_reply_token_t tok = 0;
    zlink_msg_t parts[ZLT_MAXP];
    size_t count = 0;
    ZT_EQ_INT(zlink_router_recv(r, &rid, &tok, parts, ZLT_MAXP, &count, ZLINK_RECV_FLAGS_NONE),
              ZLINK_RECV_OK);
    ZT_CHECK(tok != 0 && rid != NULL);
    ZT_EQ_INT(count, 1);
    ZT_EQ_INT(zlink_msg_size(&parts[0]), strlen(text));
    ZT_EQ_MEM(zlink_msg_data(&parts[0]), text, strlen(text));
    *src = *rid;
    zlink_multipart_close(parts, count);
    return tok;
}

static void reply(void *r, const zlink_routing_id_t *src, zlink_reply_token_t tok, const char *text)
{
    zlink_msg_t m;
    zlt_msg_set(&m, text, strlen(text));
    ZT_EQ_INT(zlink_reply(r, src, tok, &m, 1), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
}

zlink_completion_id_t pl_request_answered(void *d, void *r, const char *text, void *uctx)
{
    zlink_completion_id_t id = request(d, text, uctx);
    zlink_routing_id_t src;
    zlink_reply_token_t tok = take_request(r, text, &src);
    reply(r, &src, tok, text);
    return id;
}

zlink_submit_result_t pl_send_dontwait(void *s, const char *text, void *uctx,
                                       zlink_completion_id_t *token)
{
    zlink_msg_t m;
    zlt_msg_set(&m, text, strlen(text));
    zlink_submit_result_t r = zlink_send(s, &m, 1, ZLINK_SEND_FLAGS_DONTWAIT, uctx, token);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    return r;
}

zlink_completion_id_t pl_full_pair_refused(void *ctx, void **a, void **b, void *uctx)
{
    *a = zlt_sock(ctx, ZLINK_PAIR);
    *b = zlt_sock(ctx, ZLINK_PAIR);
    zlt_set_u64(*a, ZLINK_SNDHWM, 100);
    zlt_link(*a, *b, "inproc");
    ZT_EQ_INT(zlt_send_str(*a, "fills the queue", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
    zlink_completion_id_t token = 0;
    ZT_EQ_INT(pl_send_dontwait(*a, "refused", uctx, &token), ZLINK_SUBMIT_BACKPRESSURED);
    ZT_CHECK(token != 0);
    return token;
}

void pl__expect_record(const char *file, int line, void *s, zlink_completion_kind_t kind,
                       zlink_completion_id_t id, void *uctx, const char *reply)
{
    zlink_completion_t c;
    zlt_completion_init(&c);
    zlink_recv_result_t r = zlink_completion_recv(s, &c, ZLINK_RECV_FLAGS_DONTWAIT);
    if (r != ZLINK_RECV_OK)
        zt__fail(file, line, "completion_recv: result %d, errno %d; expected record %llu", (int)r,
                 zlink_errno(), (unsigned long long)id);
    if (c.kind != kind || c.completion_id != id || c.user_context != uctx)
        zt__fail(file, line,
                 "record of kind %d, id %llu, context %p; expected kind %d, id %llu, "
                 "context %p",
                 (int)c.kind, (unsigned long long)c.completion_id, c.user_context, (int)kind,
                 (unsigned long long)id, uctx);
    if (kind == ZLINK_COMPLETION_REQUEST) {
        size_t n = strlen(reply);
        if (c.request_result != ZLINK_REQUEST_OK || c.reply_part_count != 1 ||
            zlink_msg_size(&c.reply_parts[0]) != n ||
            memcmp(zlink_msg_data(&c.reply_parts[0]), reply, n) != 0)
            zt__fail(file, line, "REQUEST record %llu: result %d, %zu parts; expected OK \"%s\"",
                     (unsigned long long)id, (int)c.request_result, c.reply_part_count, reply);
    } else if (c.send_result != ZLINK_SEND_ADMITTED) {
        zt__fail(file, line, "WRITABLE record %llu: send_result %d, expected ADMITTED",
                 (unsigned long long)id, (int)c.send_result);
    }
    zlink_completion_close(&c);
}

void pl__expect_no_record(const char *file, int line, void *s)
{
    zlink_completion_t c;
    zlt_completion_init(&c);
    zlink_recv_result_t r = zlink_completion_recv(s, &c, ZLINK_RECV_FLAGS_DONTWAIT);
    int e = zlink_errno();
    if (r == ZLINK_RECV_OK) {
        zt__fail(file, line, "expected no record, got kind %d id %llu", (int)c.kind,
                 (unsigned long long)c.completion_id);
    }
    if (r != ZLINK_RECV_NO_DATA || e != EAGAIN)
        zt__fail(file, line, "expected NO_DATA/EAGAIN, got result %d errno %d", (int)r, e);
}

void pl__expect_event(const char *file, int line, void *p, void *s, long ms, short want)
{
    zlink_poller_event_t ev[8];
    int n = zlt__wait_ok(file, line, p, ev, 8, ms);
    if (n != 1 || ev[0].socket != s || ev[0].events != want)
        zt__fail(file, line,
                 "wait: %d event(s), first for %p with bits %d; expected one for %p "
                 "with bits %d",
                 n, n > 0 ? ev[0].socket : NULL, n > 0 ? ev[0].events : 0, s, want);
}

/* ------------------------------------------------------------------- cases */

/* A wait returns COMPLETION while a record is queued; wait, add, modify and
 * remove take nothing from the queue. */
void pl_completion_level_and_calls_consume_nothing(const conf_params_t *params)
{
    const int records = (int)conf_int(params, "records");
    ZT_CHECK(records >= 1 && records <= 64);
    void *ctx = zlt_ctx_new();
    void *d, *r;
    zlt_dr_pair(ctx, "inproc", &d, &r);
    void *p = zlt_poller_new();
    zlt_poller_add(p, d, NULL, ZLINK_POLLCOMPLETION);
    zlink_completion_id_t ids[64];
    static int uctx;
    for (int i = 0; i < records; i++)
        ids[i] = pl_request_answered(d, r, "q", &uctx);
    /* Waits, with and without a timeout, see the same records. */
    for (int i = 0; i < 3; i++)
        pl_expect_event(p, d, i == 0 ? ZLT_LONG_WAIT_MS : 0, ZLINK_POLLCOMPLETION);
    /* Registration calls. */
    ZT_EQ_INT(zlink_poller_modify(p, d, ZLINK_POLLIN | ZLINK_POLLCOMPLETION), ZLINK_CONFIG_OK);
    pl_expect_event(p, d, 0, ZLINK_POLLCOMPLETION);
    ZT_EQ_INT(zlink_poller_modify(p, d, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    zlink_poller_event_t ev[4];
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 0); /* not asked for: not reported */
    ZT_EQ_INT(zlink_poller_modify(p, d, ZLINK_POLLCOMPLETION), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_remove(p, d), ZLINK_CONFIG_OK);
    zlt_poller_add(p, d, NULL, ZLINK_POLLCOMPLETION);
    pl_expect_event(p, d, 0, ZLINK_POLLCOMPLETION);
    /* Every record is still there, once, in order. */
    for (int i = 0; i < records; i++)
        pl_expect_record(d, ZLINK_COMPLETION_REQUEST, ids[i], &uctx, "q");
    pl_expect_no_record(d);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 0);
    zlt_poller_destroy(p);
    zlt_finish(ctx, d, r);
}

/* Reading the last record (DONTWAIT) clears COMPLETION; while records
 * remain it stays set. */
void pl_completion_last_read_clears(const conf_params_t *params)
{
    const int records = (int)conf_int(params, "records");
    ZT_CHECK(records >= 2 && records <= 64);
    void *ctx = zlt_ctx_new();
    void *d, *r;
    zlt_dr_pair(ctx, "inproc", &d, &r);
    void *p = zlt_poller_new();
    int ud;
    zlt_poller_add(p, d, &ud, ZLINK_POLLIN | ZLINK_POLLCOMPLETION);
    zlink_completion_id_t ids[64];
    static int uctx;
    for (int i = 0; i < records; i++)
        ids[i] = pl_request_answered(d, r, "q", &uctx);
    pl_expect_event(p, d, ZLT_LONG_WAIT_MS, ZLINK_POLLCOMPLETION);
    zlink_poller_event_t ev[4];
    for (int i = 0; i < records; i++) {
        pl_expect_record(d, ZLINK_COMPLETION_REQUEST, ids[i], &uctx, "q");
        if (i + 1 < records)
            pl_expect_event(p, d, 0, ZLINK_POLLCOMPLETION);
        else
            ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 0);
    }
    pl_expect_no_record(d);
    /* And it comes back with the next record. */
    zlink_completion_id_t id = pl_request_answered(d, r, "again", &uctx);
    pl_expect_event(p, d, ZLT_LONG_WAIT_MS, ZLINK_POLLCOMPLETION);
    pl_expect_record(d, ZLINK_COMPLETION_REQUEST, id, &uctx, "again");
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 0);
    zlt_poller_destroy(p);
    zlt_finish(ctx, d, r);
}

/* ---------------------------------------------- WRITABLE and wait tokens */

/* Drains a PAIR on another thread until it receives "END". */
struct drainer {
    void *s;
    unsigned got;
};

static void *drainer_main(void *arg)
{
    struct drainer *dr = arg;
    char buf[64];
    for (;;) {
        zlink_recv_result_t r = zlt_recv_str(dr->s, buf, sizeof buf, 0);
        ZT_EQ_INT(r, ZLINK_RECV_OK);
        if (strcmp(buf, "END") == 0)
            return NULL;
        dr->got++;
    }
}

/* Refusal racing a credit edge: a thread drains b while a sends DONTWAIT
 * until refused; every refusal's token must come back as a WRITABLE that a
 * poller wait reports. */
static void credit_race(int rounds)
{
    void *ctx = zlt_ctx_new();
    void *a = zlt_sock(ctx, ZLINK_PAIR), *b = zlt_sock(ctx, ZLINK_PAIR);
    zlt_set_u64(a, ZLINK_SNDHWM, 100);
    zlt_set_int(b, ZLINK_RCVTIMEO, -1);
    zlt_link(a, b, "inproc");
    void *p = zlt_poller_new();
    zlt_poller_add(p, a, NULL, ZLINK_POLLCOMPLETION);
    struct drainer dr = {b, 0};
    pthread_t th;
    ZT_EQ_INT(pthread_create(&th, NULL, drainer_main, &dr), 0);
    unsigned sent = 0;
    for (int i = 0; i < rounds; i++) {
        zlink_completion_id_t token = 0;
        for (unsigned tries = 0;; tries++) {
            zlink_submit_result_t rc = pl_send_dontwait(a, "r", &dr, &token);
            if (rc == ZLINK_SUBMIT_BACKPRESSURED)
                break;
            ZT_EQ_INT(rc, ZLINK_SUBMIT_OK);
            sent++;
            if (tries > 1000000)
                ZT_FAIL("round %d: never refused", i);
        }
        ZT_CHECK(token != 0);
        pl_expect_event(p, a, ZLT_LONG_WAIT_MS, ZLINK_POLLCOMPLETION);
        pl_expect_record(a, ZLINK_COMPLETION_WRITABLE, token, &dr, NULL);
        pl_expect_no_record(a);
    }
    zlt_set_int(a, ZLINK_SNDTIMEO, ZT_MS(10000));
    zlt_send_ok(a, "END");
    ZT_EQ_INT(pthread_join(th, NULL), 0);
    ZT_EQ_INT(dr.got, sent);
    printf("# credit race: %d refusals, %u records\n", rounds, sent);
    zlt_poller_destroy(p);
    zlt_finish(ctx, a, b);
}

struct connecter {
    void *s;
    const char *ep;
    _Atomic int connecting;
};

static void *connecter_main(void *arg)
{
    struct connecter *c = arg;
    atomic_store(&c->connecting, 1);
    zlt_connect(c->s, c->ep);
    return NULL;
}

/* Refusal racing an attach edge: a PAIR with no peer sends DONTWAIT while
 * another thread connects its peer. Admitted, or refused with a token
 * whose WRITABLE a poller wait then reports. */
static void attach_race(int rounds)
{
    int refused = 0;
    for (int i = 0; i < rounds; i++) {
        void *ctx = zlt_ctx_new();
        void *a = zlt_sock(ctx, ZLINK_PAIR), *b = zlt_sock(ctx, ZLINK_PAIR);
        char ep[256];
        zlt_bind(a, "inproc", ep, sizeof ep);
        void *p = zlt_poller_new();
        zlt_poller_add(p, a, NULL, ZLINK_POLLCOMPLETION);
        struct connecter c = {b, ep, 0};
        pthread_t th;
        ZT_EQ_INT(pthread_create(&th, NULL, connecter_main, &c), 0);
        /* The send lands before, during or after the attach: a varying
         * spin once the other thread is about to connect. */
        while (!atomic_load(&c.connecting))
            sched_yield();
        for (volatile int spin = (i * 7919) % 1500; spin > 0; spin--) {
        }
        zlink_completion_id_t token = 0;
        zlink_submit_result_t rc = pl_send_dontwait(a, "r", &c, &token);
        ZT_EQ_INT(pthread_join(th, NULL), 0);
        if (rc == ZLINK_SUBMIT_BACKPRESSURED) {
            refused++;
            ZT_CHECK(token != 0);
            pl_expect_event(p, a, ZLT_LONG_WAIT_MS, ZLINK_POLLCOMPLETION);
            pl_expect_record(a, ZLINK_COMPLETION_WRITABLE, token, &c, NULL);
        } else {
            ZT_EQ_INT(rc, ZLINK_SUBMIT_OK);
            ZT_EQ_U64(token, 0);
            zlt_expect_str(b, "r");
        }
        pl_expect_no_record(a);
        zlt_poller_destroy(p);
        zlt_finish(ctx, a, b);
    }
    printf("# attach race: %d rounds, %d refused before the attach\n", rounds, refused);
}

/* A refused DONTWAIT submit's token comes back as one WRITABLE record when
 * the target gets credit; POLLOUT and POLLCOMPLETION both hold until it is
 * read (even when the pipe is full again); an edge racing the refusal is
 * not lost. */
void pl_writable_record_holds_out_and_completion(const conf_params_t *params)
{
    const int credit_rounds = (int)conf_int(params, "credit_race_rounds");
    const int attach_rounds = (int)conf_int(params, "attach_race_rounds");
    void *ctx = zlt_ctx_new();
    void *a, *b;
    static int uctx;
    zlink_completion_id_t token = pl_full_pair_refused(ctx, &a, &b, &uctx);
    void *p = zlt_poller_new();
    zlt_poller_add(p, a, NULL, ZLINK_POLLOUT | ZLINK_POLLCOMPLETION);
    zlink_poller_event_t ev[4];
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 0); /* full, no record */
    /* The credit edge wakes a waiting poller with both bits. */
    zlt_waiter_t w;
    zlt_waiter_start(&w, p, ZLT_LONG_WAIT_MS);
    zlt_expect_str(b, "fills the queue");
    zlt_waiter_join(&w);
    zlt_waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLOUT | ZLINK_POLLCOMPLETION);
    /* The pipe fills again: the unread record still holds OUT. */
    ZT_EQ_INT(zlt_send_str(a, "fills the queue", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
    for (int i = 0; i < 2; i++)
        pl_expect_event(p, a, 0, ZLINK_POLLOUT | ZLINK_POLLCOMPLETION);
    /* Exactly one record, the token's; reading it clears both. */
    pl_expect_record(a, ZLINK_COMPLETION_WRITABLE, token, &uctx, NULL);
    pl_expect_no_record(a);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 0);
    /* Room again: OUT alone. */
    zlt_expect_str(b, "fills the queue");
    pl_expect_event(p, a, ZLT_LONG_WAIT_MS, ZLINK_POLLOUT);
    zlt_expect_no_data(b); /* the refused record was not kept */
    zlt_poller_destroy(p);
    zlt_finish(ctx, a, b);

    credit_race(credit_rounds);
    attach_race(attach_rounds);
}

/* More sockets with records than the event array holds: each wait reports
 * up to its capacity, the rest come in later waits; draining every ready
 * socket to NO_DATA gets every record once. */
void pl_completions_beyond_event_capacity(const conf_params_t *params)
{
    enum { MAXS = 8, MAXR = 16 };
    const int nsock = (int)conf_int(params, "sockets");
    const int nrec = (int)conf_int(params, "records_per_socket");
    const int cap = (int)conf_int(params, "event_capacity");
    ZT_CHECK(nsock >= 2 && nsock <= MAXS && nrec >= 2 && nrec <= MAXR);
    ZT_CHECK(cap >= 1 && cap < nsock);
    void *ctx = zlt_ctx_new();
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    char ep[256];
    zlt_bind(r, "inproc", ep, sizeof ep);
    void *p = zlt_poller_new();
    void *d[MAXS];
    zlink_completion_id_t ids[MAXS][MAXR];
    int next[MAXS] = {0};
    for (int i = 0; i < nsock; i++) {
        char rid[16];
        snprintf(rid, sizeof rid, "D%d", i);
        d[i] = zlt_dealer_to(ctx, r, ep, rid);
        zlt_poller_add(p, d[i], &next[i], ZLINK_POLLCOMPLETION);
    }
    for (int k = 0; k < nrec; k++)
        for (int i = 0; i < nsock; i++)
            ids[i][k] = pl_request_answered(d[i], r, "q", &next[i]);

    zlink_poller_event_t ev[MAXS];
    int total = 0, waits = 0;
    while (total < nsock * nrec) {
        int n = zlt_wait_ok(p, ev, cap, waits == 0 ? ZLT_LONG_WAIT_MS : 0);
        waits++;
        if (n < 1 || n > cap)
            ZT_FAIL("wait %d returned %d events with %d records left (capacity %d)", waits, n,
                    nsock * nrec - total, cap);
        for (int e = 0; e < n; e++) {
            ZT_EQ_INT(ev[e].events, ZLINK_POLLCOMPLETION);
            int i = (int)((int *)ev[e].user_data - next);
            ZT_CHECK(i >= 0 && i < nsock && ev[e].socket == d[i]);
            /* Drain that socket until NO_DATA: its records, in order. */
            while (next[i] < nrec) {
                pl_expect_record(d[i], ZLINK_COMPLETION_REQUEST, ids[i][next[i]], &next[i], "q");
                next[i]++;
                total++;
            }
            pl_expect_no_record(d[i]);
        }
    }
    /* Each wait reported at most cap sockets, so it took several. */
    ZT_CHECK(waits >= (nsock + cap - 1) / cap);
    ZT_EQ_INT(zlt_wait_ok(p, ev, cap, 0), 0);
    zlt_poller_destroy(p);
    for (int i = 0; i < nsock; i++)
        zlt_close(d[i]);
    zlt_finish(ctx, r);
}

/* A multipart DATA record at the head of a DEALER's connection holds back
 * the REPLY behind it: POLLIN is ready, POLLCOMPLETION is not, until the
 * DATA is received. */
void pl_reply_behind_data_waits(const conf_params_t *params)
{
    const char *trs[PL_MAX_TRANSPORTS];
    size_t ntr = conf_strings(params, "transports", trs, PL_MAX_TRANSPORTS);
    for (size_t k = 0; k < ntr; k++) {
        const char *tr = trs[k];
        printf("# transport %s\n", tr);
        void *ctx = zlt_round_begin(tr);
        void *d, *r;
        zlt_dr_pair(ctx, tr, &d, &r);
        void *p = zlt_poller_new();
        zlt_poller_add(p, d, NULL, ZLINK_POLLIN | ZLINK_POLLCOMPLETION);
        static int uctx;
        zlink_completion_id_t id = request(d, "q", &uctx);
        zlink_routing_id_t src;
        zlink_reply_token_t tok = take_request(r, "q", &src);
        /* DATA of two parts, then the REPLY, on the same connection. */
        zlink_msg_t data[2];
        zlt_msg_set(&data[0], "d1", 2);
        zlt_msg_set(&data[1], "d2", 2);
        ZT_EQ_INT(zlink_send_rid(r, &src, data, 2, ZLINK_SEND_FLAGS_NONE, NULL, NULL),
                  ZLINK_SUBMIT_OK);
        zlink_multipart_close(data, 2);
        reply(r, &src, tok, "reply");
        /* IN without COMPLETION, as often as we look. */
        pl_expect_event(p, d, ZLT_LONG_WAIT_MS, ZLINK_POLLIN);
        pl_expect_event(p, d, 0, ZLINK_POLLIN);
        pl_expect_no_record(d);
        zlt_expect_strs(d, "d1", "d2");
        /* The DATA is gone: the REPLY moves into the completion queue. */
        pl_expect_event(p, d, ZLT_LONG_WAIT_MS, ZLINK_POLLCOMPLETION);
        pl_expect_record(d, ZLINK_COMPLETION_REQUEST, id, &uctx, "reply");
        zlink_poller_event_t ev[2];
        ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 0);
        zlt_poller_destroy(p);
        zlt_round_end();
    }
}
