/*
 * x_terminators.c — framework-contract.md §7.3 "Extras" for the C ABI:
 * X-1 (the terminator surface, seed 000 §2 and §16, framework-contract.md
 * §2.3) and X-2 (isolation of returned completions, seed 000 §2), each
 * over every transport of the case, with the default harness (sc.h) in
 * mesh mode: A calls channel "svc" of B, B's handlers echo a request's
 * payload as the reply (packet "echo").
 *
 * The C terminators: zlink_call_start (general async and one-way submit),
 * zlink_call_wait (synchronous, application threads only) and
 * zlink_call_yield (only in a Spot turn, which this version has none of).
 * Completions are observed through x_seen_t, a completion collector that
 * also keeps what the outcome pointed to (its payload address, packet and
 * content type), so a case can compare the storage of two outcomes.
 *
 * Threads: the test thread builds and calls; completion functions run on
 * the dispatcher lane, handlers on B's workers; X-1's marked thread is
 * the case's own. Every wait ends on its event; timeouts only bound a
 * failure.
 */
#include "sc.h"

#include <string.h>

/* -------------------------------------------------------- the collector */

typedef struct x_seen {
    sc_done_t done;         /* result, reply text, calls, thread ... */
    const void *payload;    /* the outcome's payload pointer (first run) */
    size_t payload_size;
    char packet[SC_TAG_MAX];
    char content_type[SC_TAG_MAX];
} x_seen_t;

static void x_seen_init(x_seen_t *s)
{
    memset(s, 0, sizeof *s);
    sc_done_init(&s->done);
}

static void x_on_done(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    x_seen_t *s = user;
    pthread_mutex_lock(&s->done.lk);
    if (s->done.calls == 0) {
        s->payload = o->payload;
        s->payload_size = o->payload_size;
        snprintf(s->packet, sizeof s->packet, "%s", o->packet);
        snprintf(s->content_type, sizeof s->content_type, "%s", o->content_type);
    }
    pthread_mutex_unlock(&s->done.lk);
    sc_on_done(call, o, &s->done);
}

/* Waits for s's completion and checks it: result want, and the payload
 * text reply (NULL: no payload at all, as a one-way's or a cancelled
 * call's outcome). */
static void x_expect(x_seen_t *s, int want, const char *reply)
{
    sc_done_expect(&s->done, 5000);
    SC_EQ(sc_done_result(&s->done), want);
    pthread_mutex_lock(&s->done.lk);
    const void *p = s->payload;
    size_t n = s->payload_size;
    pthread_mutex_unlock(&s->done.lk);
    if (reply == NULL) {
        if (p != NULL || n != 0)
            ZT_FAIL("the outcome has a payload of %zu bytes, expected none", n);
        ZT_EQ_STR(s->packet, "");
    } else {
        ZT_CHECK(p != NULL);
        ZT_EQ_INT(n, strlen(reply));
        ZT_CHECK(memcmp(p, reply, n) == 0);
        ZT_EQ_STR(s->packet, "echo");
    }
}

/* The outcome o of a finished zlink_call_wait: result want, payload reply
 * (NULL: none). */
static void x_outcome_is(const zlink_outcome_t *o, int want, const char *reply)
{
    SC_EQ(o->result, want);
    if (reply == NULL) {
        if (o->payload != NULL || o->payload_size != 0)
            ZT_FAIL("the outcome has a payload of %zu bytes, expected none", o->payload_size);
        return;
    }
    ZT_CHECK(o->payload != NULL);
    ZT_EQ_INT(o->payload_size, strlen(reply));
    ZT_CHECK(memcmp(o->payload, reply, o->payload_size) == 0);
    ZT_EQ_STR(o->packet, "echo");
}

/* A one-way marker from a, waited for, then seen by b: every record a
 * sent to b before it has been handled or was never sent. */
static void x_marker(sc_client_t *a, sc_server_t *b, const char *tag)
{
    zlink_call_t *mk = sc_call(a, false, NULL, tag, 0);
    SC_EQ(sc_wait(mk, NULL), ZLINK_FW_OK);
    zlink_call_release(mk);
    ZT_EVENTUALLY(sc_rec_has(&b->rec, tag) == 1, 5000);
}

/* A one-way from a to B's "svc" with packet (not "m"). */
static zlink_call_t *x_packet_call(sc_client_t *a, const char *packet)
{
    zlink_fw_result_t rc;
    zlink_call_t *c = zlink_call_send_to_channel(a->h, "svc", &rc);
    ZT_CHECK(c != NULL);
    SC_EQ(zlink_call_set_payload(c, packet, "", packet, strlen(packet)), ZLINK_FW_OK);
    return c;
}

/* ---------------------------------------------------------------- */

/* Terminators inside a completion function (a runtime context that is no
 * Spot turn): zlink_call_wait refuses at once and leaves the call
 * unfinished, so a zlink_call_start of the same call then sends it;
 * zlink_call_yield refuses and sends nothing. */
typedef struct in_callback {
    sc_client_t *a;
    sc_done_t done;
    atomic_int wait_rc, start_rc, yield_rc, in_runtime;
    atomic_llong wait_ms;
} in_callback_t;

static void x_on_outer(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    in_callback_t *x = user;
    atomic_store(&x->in_runtime, zlink_in_runtime_context());
    zlink_call_t *inner = sc_call(x->a, false, NULL, "in-cb", 0);
    int64_t t0 = zt_now_ms();
    atomic_store(&x->wait_rc, sc_wait(inner, NULL));
    atomic_store(&x->wait_ms, zt_now_ms() - t0);
    atomic_store(&x->start_rc, zlink_call_start(inner, NULL, NULL));
    zlink_call_release(inner);
    zlink_call_t *y = sc_call(x->a, false, NULL, "yield-in-cb", 0);
    atomic_store(&x->yield_rc, zlink_call_yield(y, NULL, NULL));
    zlink_call_release(y);
    sc_on_done(call, o, &x->done);
}

/* A thread the case marks as a runtime context: zlink_call_wait refuses at
 * once while marked (nesting counts), and the same call completes with its
 * reply once the thread left the context. Results only: the case checks
 * them on its own thread. */
typedef struct marked {
    sc_client_t *a;
    int before, inside, nested, after;   /* zlink_in_runtime_context() */
    int enter_rc, enter2_rc, leave2_rc, leave_rc;
    int refused_rc, refused_nested_rc;
    int64_t refused_ms;
    int wait_rc;
    char reply[SC_TAG_MAX];
    size_t reply_size;
} marked_t;

static void *x_marked_main(void *arg)
{
    marked_t *m = arg;
    zlink_call_t *q = sc_call(m->a, true, NULL, "marked", 0);
    SC_EQ(zlink_call_set_timeout(q, ZLINK_MS(ZT_MS(5000))), ZLINK_FW_OK);
    m->before = zlink_in_runtime_context();
    m->enter_rc = zlink_runtime_context_enter();
    m->inside = zlink_in_runtime_context();
    int64_t t0 = zt_now_ms();
    m->refused_rc = sc_wait(q, NULL);
    m->refused_ms = zt_now_ms() - t0;
    m->enter2_rc = zlink_runtime_context_enter();
    m->leave2_rc = zlink_runtime_context_leave();
    m->nested = zlink_in_runtime_context(); /* one level still marked */
    m->refused_nested_rc = sc_wait(q, NULL);
    m->leave_rc = zlink_runtime_context_leave();
    m->after = zlink_in_runtime_context();
    zlink_outcome_t o;
    m->wait_rc = sc_wait(q, &o);
    if (m->wait_rc == ZLINK_FW_OK && o.payload != NULL) {
        m->reply_size = o.payload_size;
        snprintf(m->reply, sizeof m->reply, "%.*s", (int)o.payload_size, (const char *)o.payload);
    }
    zlink_call_release(q);
    return NULL;
}

static void x1_round(const char *tr)
{
    sc_server_t b = {.name = "B", .weight = 100};
    sc_server_open(&b, SC_MESH, tr, "x1");
    sc_client_t a = {0};
    sc_server_t *srv[] = {&b};
    sc_client_open(&a, SC_MESH, srv, 1);
    zlink_outcome_t o;

    /* General async, one-way: completes at admission, with no payload,
     * while B's gated handler has not run it yet. */
    atomic_store(&b.gated, true);
    x_seen_t s_o1;
    x_seen_init(&s_o1);
    zlink_call_t *o1 = sc_call(&a, false, NULL, "o1", 0);
    SC_EQ(zlink_call_start(o1, x_on_done, &s_o1), ZLINK_FW_OK);
    x_expect(&s_o1, ZLINK_FW_OK, NULL);
    ZT_EQ_INT(sc_rec_count(&b.rec), 0);
    ZT_EVENTUALLY(sc_gate_waiting(&b.gate) == 1, 5000);
    ZT_EQ_INT(sc_rec_count(&b.rec), 0);
    atomic_store(&b.gated, false);
    sc_gate_open(&b.gate);
    ZT_EVENTUALLY(sc_rec_has(&b.rec, "o1") == 1, 5000);

    /* General async, request: completes with its reply. */
    x_seen_t s_r1;
    x_seen_init(&s_r1);
    zlink_call_t *r1 = sc_call(&a, true, NULL, "r1", 0);
    SC_EQ(zlink_call_start(r1, x_on_done, &s_r1), ZLINK_FW_OK);
    x_expect(&s_r1, ZLINK_FW_OK, "r1");

    /* Synchronous, on this application thread: a one-way's outcome has no
     * payload, a request's is its reply. */
    zlink_call_t *w1 = sc_call(&a, false, NULL, "w1", 0);
    SC_EQ(sc_wait(w1, &o), ZLINK_FW_OK);
    x_outcome_is(&o, ZLINK_FW_OK, NULL);
    zlink_call_t *w2 = sc_call(&a, true, NULL, "w2", 0);
    SC_EQ(sc_wait(w2, &o), ZLINK_FW_OK);
    x_outcome_is(&o, ZLINK_FW_OK, "w2");
    ZT_EVENTUALLY(sc_rec_has(&b.rec, "w1") == 1, 5000);

    /* A second terminator is INVALID_OPERATION and changes nothing: on a
     * request in flight (B holds its reply) ... */
    atomic_store(&b.reply_mode, SC_REPLY_HOLD);
    x_seen_t s_t1, s_again;
    x_seen_init(&s_t1);
    x_seen_init(&s_again);
    zlink_call_t *t1 = sc_call(&a, true, NULL, "t1", 0);
    SC_EQ(zlink_call_start(t1, x_on_done, &s_t1), ZLINK_FW_OK);
    ZT_EVENTUALLY(sc_server_nheld(&b) == 1, 5000);
    SC_EQ(zlink_call_start(t1, x_on_done, &s_again), ZLINK_FW_INVALID_OPERATION);
    SC_EQ(sc_wait(t1, &o), ZLINK_FW_INVALID_OPERATION);
    SC_EQ(zlink_call_yield(t1, x_on_done, &s_again), ZLINK_FW_INVALID_OPERATION);
    ZT_EQ_INT(sc_done_calls(&s_t1.done), 0); /* still waiting for its reply */
    ZT_EQ_INT(sc_status(a.h).requests_inflight, 1);
    zlink_call_t *reply = sc_server_take_held(&b, "t1");
    ZT_CHECK(reply != NULL);
    SC_EQ(zlink_call_start(reply, NULL, NULL), ZLINK_FW_OK);
    zlink_call_release(reply);
    atomic_store(&b.reply_mode, SC_REPLY_NOW);
    x_expect(&s_t1, ZLINK_FW_OK, "t1");
    /* ... on a completed one-way ... */
    x_seen_t s_t2;
    x_seen_init(&s_t2);
    zlink_call_t *t2 = sc_call(&a, false, NULL, "t2", 0);
    SC_EQ(zlink_call_start(t2, x_on_done, &s_t2), ZLINK_FW_OK);
    x_expect(&s_t2, ZLINK_FW_OK, NULL);
    SC_EQ(zlink_call_start(t2, x_on_done, &s_again), ZLINK_FW_INVALID_OPERATION);
    SC_EQ(sc_wait(t2, &o), ZLINK_FW_INVALID_OPERATION);
    SC_EQ(zlink_call_yield(t2, x_on_done, &s_again), ZLINK_FW_INVALID_OPERATION);
    /* ... and on a request the synchronous terminator finished: its
     * outcome stays what it was. */
    zlink_call_t *t3 = sc_call(&a, true, NULL, "t3", 0);
    zlink_outcome_t o3;
    SC_EQ(sc_wait(t3, &o3), ZLINK_FW_OK);
    x_outcome_is(&o3, ZLINK_FW_OK, "t3");
    SC_EQ(zlink_call_start(t3, x_on_done, &s_again), ZLINK_FW_INVALID_OPERATION);
    SC_EQ(sc_wait(t3, &o), ZLINK_FW_INVALID_OPERATION);
    SC_EQ(zlink_call_yield(t3, x_on_done, &s_again), ZLINK_FW_INVALID_OPERATION);
    x_outcome_is(&o3, ZLINK_FW_OK, "t3");

    /* The synchronous terminator in a runtime context fails at once with
     * INVALID_OPERATION: inside B's handler turn ("sync"; a shutdown from
     * there too) ... */
    zlink_call_t *sy = x_packet_call(&a, "sync");
    SC_EQ(sc_wait(sy, NULL), ZLINK_FW_OK);
    zlink_call_release(sy);
    ZT_EVENTUALLY(atomic_load(&b.sync_ran) == 1, 5000);
    SC_EQ(atomic_load(&b.sync_wait_rc), ZLINK_FW_INVALID_OPERATION); /* -2: not at once */
    SC_EQ(atomic_load(&b.sync_shutdown_rc), ZLINK_FW_INVALID_OPERATION);
    ZT_EQ_INT(zlink_host_state(b.h), ZLINK_HOST_SERVING);
    /* ... inside a completion function, where the refused call is still
     * unfinished and starts, and a yield sends nothing ... */
    in_callback_t cb;
    memset(&cb, 0, sizeof cb);
    cb.a = &a;
    sc_done_init(&cb.done);
    zlink_call_t *outer = sc_call(&a, true, NULL, "outer", 0);
    SC_EQ(zlink_call_start(outer, x_on_outer, &cb), ZLINK_FW_OK);
    sc_done_expect(&cb.done, 5000);
    ZT_EQ_INT(atomic_load(&cb.in_runtime), 1);
    SC_EQ(atomic_load(&cb.wait_rc), ZLINK_FW_INVALID_OPERATION);
    if (atomic_load(&cb.wait_ms) > ZT_MS(100))
        ZT_FAIL("the refused wait took %lld ms (at once expected)",
                (long long)atomic_load(&cb.wait_ms));
    SC_EQ(atomic_load(&cb.start_rc), ZLINK_FW_OK);
    SC_EQ(atomic_load(&cb.yield_rc), ZLINK_FW_INVALID_OPERATION);
    ZT_EVENTUALLY(sc_rec_has(&b.rec, "in-cb") == 1, 5000);
    /* ... and on a thread this case marked, until it leaves. */
    marked_t mk;
    memset(&mk, 0, sizeof mk);
    mk.a = &a;
    pthread_t th;
    ZT_EQ_INT(pthread_create(&th, NULL, x_marked_main, &mk), 0);
    ZT_EQ_INT(pthread_join(th, NULL), 0);
    ZT_EQ_INT(mk.before, 0);
    SC_EQ(mk.enter_rc, ZLINK_FW_OK);
    ZT_EQ_INT(mk.inside, 1);
    SC_EQ(mk.refused_rc, ZLINK_FW_INVALID_OPERATION);
    if (mk.refused_ms > ZT_MS(100))
        ZT_FAIL("the refused wait took %lld ms (at once expected)", (long long)mk.refused_ms);
    SC_EQ(mk.enter2_rc, ZLINK_FW_OK);
    SC_EQ(mk.leave2_rc, ZLINK_FW_OK);
    ZT_EQ_INT(mk.nested, 1);
    SC_EQ(mk.refused_nested_rc, ZLINK_FW_INVALID_OPERATION);
    SC_EQ(mk.leave_rc, ZLINK_FW_OK);
    ZT_EQ_INT(mk.after, 0);
    SC_EQ(mk.wait_rc, ZLINK_FW_OK);
    ZT_EQ_INT(mk.reply_size, 6);
    ZT_EQ_STR(mk.reply, "marked");
    ZT_EQ_INT(zlink_in_runtime_context(), 0); /* the mark was that thread's */

    /* Yield outside a Spot turn is INVALID_OPERATION before anything is
     * sent, and its function never runs: on this application thread (the
     * calls stay unfinished: started afterwards they are sent once) ... */
    x_seen_t s_y;
    x_seen_init(&s_y);
    zlink_call_t *y1 = sc_call(&a, false, NULL, "y1", 0);
    zlink_call_t *y2 = sc_call(&a, true, NULL, "y2", 0);
    SC_EQ(zlink_call_yield(y1, x_on_done, &s_y), ZLINK_FW_INVALID_OPERATION);
    SC_EQ(zlink_call_yield(y2, x_on_done, &s_y), ZLINK_FW_INVALID_OPERATION);
    /* ... and inside B's handler turn of a channel. */
    zlink_call_t *yh = x_packet_call(&a, "yield");
    SC_EQ(sc_wait(yh, NULL), ZLINK_FW_OK);
    zlink_call_release(yh);
    ZT_EVENTUALLY(atomic_load(&b.yield_ran) == 1, 5000);
    SC_EQ(atomic_load(&b.yield_rc), ZLINK_FW_INVALID_OPERATION);
    x_marker(&a, &b, "mk1");
    ZT_EQ_INT(sc_rec_has(&b.rec, "y1"), 0);
    ZT_EQ_INT(sc_rec_has(&b.rec, "y2"), 0);
    ZT_EQ_INT(sc_rec_has(&b.rec, "yield-in-cb"), 0);
    ZT_EQ_INT(sc_done_calls(&s_y.done), 0);
    ZT_EQ_INT(atomic_load(&b.yield_fn_ran), 0);
    SC_EQ(sc_wait(y1, &o), ZLINK_FW_OK);
    SC_EQ(sc_wait(y2, &o), ZLINK_FW_OK);
    x_outcome_is(&o, ZLINK_FW_OK, "y2");

    /* Every call completed once and reached B once; no refused terminator
     * sent anything (a marker behind them shows B has it all). */
    x_marker(&a, &b, "mk2");
    const char *once[] = {"o1", "r1", "w1", "w2", "t1", "t2", "t3", "in-cb", "y1", "y2", "marked"};
    for (size_t i = 0; i < sizeof once / sizeof once[0]; i++) {
        if (sc_rec_has(&b.rec, once[i]) != 1)
            ZT_FAIL("B handled %s %d times, expected once", once[i], sc_rec_has(&b.rec, once[i]));
    }
    ZT_EQ_INT(sc_done_calls(&s_o1.done), 1);
    ZT_EQ_INT(sc_done_calls(&s_r1.done), 1);
    ZT_EQ_INT(sc_done_calls(&s_t1.done), 1);
    ZT_EQ_INT(sc_done_calls(&s_t2.done), 1);
    ZT_EQ_INT(sc_done_calls(&s_again.done), 0);
    ZT_EQ_INT(sc_done_calls(&cb.done), 1);
    ZT_EQ_INT(sc_done_calls(&s_y.done), 0);
    ZT_EQ_INT(sc_status(a.h).requests_inflight, 0);

    zlink_call_t *calls[] = {o1, r1, w1, w2, t1, t2, t3, outer, y1, y2};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        zlink_call_release(calls[i]);
    sc_client_close(&a);
    sc_server_close(&b);
    x_seen_t *seen[] = {&s_o1, &s_r1, &s_t1, &s_again, &s_t2, &s_y};
    for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++)
        sc_done_destroy(&seen[i]->done);
    sc_done_destroy(&cb.done);
}

void x1_terminator_surface(const conf_params_t *params)
{
    sc_each_transport(params, x1_round);
}

/* ---------------------------------------------------------------- */

/* Whether [p, p+n) and [q, q+m) share a byte. */
static bool x_overlap(const void *p, size_t n, const void *q, size_t m)
{
    const char *a = p, *b = q;
    return a < b + m && b < a + n;
}

/* The reply b holds for tag, sent now. */
static void x_answer_held(sc_server_t *b, const char *tag)
{
    zlink_call_t *reply = sc_server_take_held(b, tag);
    if (reply == NULL)
        ZT_FAIL("B holds no reply for %s", tag);
    SC_EQ(zlink_call_start(reply, NULL, NULL), ZLINK_FW_OK);
    zlink_call_release(reply);
}

static void x2_round(const char *tr)
{
    sc_server_t b = {.name = "B", .weight = 100};
    sc_server_open(&b, SC_MESH, tr, "x2");
    sc_client_t a = {0};
    sc_server_t *srv[] = {&b};
    sc_client_open(&a, SC_MESH, srv, 1);

    /* Two requests in flight; cancelling one ends it CANCELLED and leaves
     * the other pending, which then gets its own reply. The cancelled
     * one's late reply completes nothing. */
    atomic_store(&b.reply_mode, SC_REPLY_HOLD);
    x_seen_t s1, s2;
    x_seen_init(&s1);
    x_seen_init(&s2);
    zlink_call_t *q1 = sc_call(&a, true, NULL, "q1", 0);
    zlink_call_t *q2 = sc_call(&a, true, NULL, "q2", 0);
    SC_EQ(zlink_call_start(q1, x_on_done, &s1), ZLINK_FW_OK);
    SC_EQ(zlink_call_start(q2, x_on_done, &s2), ZLINK_FW_OK);
    ZT_EVENTUALLY(sc_server_nheld(&b) == 2, 5000);
    ZT_EQ_INT(sc_status(a.h).requests_inflight, 2);
    SC_EQ(zlink_call_cancel(q1), ZLINK_FW_OK);
    x_expect(&s1, ZLINK_FW_CANCELLED, NULL);
    ZT_EQ_INT(sc_done_calls(&s2.done), 0);
    ZT_EQ_INT(sc_status(a.h).requests_inflight, 1);
    x_answer_held(&b, "q2");
    x_expect(&s2, ZLINK_FW_OK, "q2");
    x_answer_held(&b, "q1"); /* late: q1 was cancelled */
    atomic_store(&b.reply_mode, SC_REPLY_NOW);
    /* A request behind the late reply on the same connection: once it is
     * answered, the late reply has reached A. */
    zlink_call_t *after = sc_call(&a, true, NULL, "after", 0);
    zlink_outcome_t oa;
    SC_EQ(sc_wait(after, &oa), ZLINK_FW_OK);
    x_outcome_is(&oa, ZLINK_FW_OK, "after");
    ZT_EQ_INT(sc_done_calls(&s1.done), 1);
    SC_EQ(sc_done_result(&s1.done), ZLINK_FW_CANCELLED);
    ZT_EQ_INT(sc_done_calls(&s2.done), 1);
    ZT_EQ_INT(sc_status(a.h).requests_inflight, 0);

    /* Two outcomes never share storage: each reply lives in its own call,
     * intact after the other completed, after the other was released and
     * after a third call completed in the storage the runtime got back. */
    x_seen_t p1, p2, p3;
    x_seen_init(&p1);
    x_seen_init(&p2);
    x_seen_init(&p3);
    zlink_call_t *c1 = sc_call(&a, true, NULL, "pa-1111", 0);
    zlink_call_t *c2 = sc_call(&a, true, NULL, "pb-2222", 0);
    SC_EQ(zlink_call_start(c1, x_on_done, &p1), ZLINK_FW_OK);
    x_expect(&p1, ZLINK_FW_OK, "pa-1111");
    SC_EQ(zlink_call_start(c2, x_on_done, &p2), ZLINK_FW_OK);
    x_expect(&p2, ZLINK_FW_OK, "pb-2222");
    ZT_CHECK(!x_overlap(p1.payload, p1.payload_size, p2.payload, p2.payload_size));
    ZT_CHECK(memcmp(p1.payload, "pa-1111", 7) == 0);
    zlink_call_release(c2);
    ZT_CHECK(memcmp(p1.payload, "pa-1111", 7) == 0);
    zlink_call_t *c3 = sc_call(&a, true, NULL, "pc-3333", 0);
    SC_EQ(zlink_call_start(c3, x_on_done, &p3), ZLINK_FW_OK);
    x_expect(&p3, ZLINK_FW_OK, "pc-3333");
    ZT_CHECK(!x_overlap(p1.payload, p1.payload_size, p3.payload, p3.payload_size));
    ZT_CHECK(memcmp(p1.payload, "pa-1111", 7) == 0);
    zlink_call_release(c1);
    ZT_CHECK(memcmp(p3.payload, "pc-3333", 7) == 0);
    zlink_call_release(c3);
    /* The same through the synchronous terminator, the first released
     * first this time. */
    zlink_call_t *v1 = sc_call(&a, true, NULL, "wa-1111", 0);
    zlink_call_t *v2 = sc_call(&a, true, NULL, "wb-2222", 0);
    zlink_outcome_t ov1, ov2;
    SC_EQ(sc_wait(v1, &ov1), ZLINK_FW_OK);
    SC_EQ(sc_wait(v2, &ov2), ZLINK_FW_OK);
    ZT_CHECK(!x_overlap(ov1.payload, ov1.payload_size, ov2.payload, ov2.payload_size));
    x_outcome_is(&ov1, ZLINK_FW_OK, "wa-1111");
    zlink_call_release(v1);
    x_outcome_is(&ov2, ZLINK_FW_OK, "wb-2222");
    zlink_call_release(v2);

    /* A completed call's outcome, read again after another call was
     * cancelled, after it was cancelled itself (already complete: nothing
     * to decide) and after a second terminator on it, is unchanged; and
     * cancelling the completed call changes no other call. */
    zlink_call_t *d5 = sc_call(&a, true, NULL, "done-5", 0);
    zlink_outcome_t o5;
    SC_EQ(sc_wait(d5, &o5), ZLINK_FW_OK);
    x_outcome_is(&o5, ZLINK_FW_OK, "done-5");
    atomic_store(&b.reply_mode, SC_REPLY_HOLD);
    x_seen_t s6, s7;
    x_seen_init(&s6);
    x_seen_init(&s7);
    zlink_call_t *c6 = sc_call(&a, true, NULL, "c6", 0);
    zlink_call_t *c7 = sc_call(&a, true, NULL, "c7", 0);
    SC_EQ(zlink_call_start(c6, x_on_done, &s6), ZLINK_FW_OK);
    SC_EQ(zlink_call_start(c7, x_on_done, &s7), ZLINK_FW_OK);
    ZT_EVENTUALLY(sc_server_nheld(&b) == 2, 5000);
    SC_EQ(zlink_call_cancel(c6), ZLINK_FW_OK);
    x_expect(&s6, ZLINK_FW_CANCELLED, NULL);
    x_outcome_is(&o5, ZLINK_FW_OK, "done-5");
    SC_EQ(zlink_call_cancel(d5), ZLINK_FW_OK);
    zlink_outcome_t o5_again;
    SC_EQ(sc_wait(d5, &o5_again), ZLINK_FW_INVALID_OPERATION);
    x_outcome_is(&o5, ZLINK_FW_OK, "done-5");
    ZT_EQ_INT(sc_done_calls(&s7.done), 0); /* c7 still waits for its reply */
    x_answer_held(&b, "c7");
    x_expect(&s7, ZLINK_FW_OK, "c7");
    x_answer_held(&b, "c6"); /* late */
    atomic_store(&b.reply_mode, SC_REPLY_NOW);
    zlink_call_t *after2 = sc_call(&a, true, NULL, "after2", 0);
    SC_EQ(sc_wait(after2, &oa), ZLINK_FW_OK);
    x_outcome_is(&oa, ZLINK_FW_OK, "after2");
    x_outcome_is(&o5, ZLINK_FW_OK, "done-5");
    ZT_EQ_INT(sc_done_calls(&s6.done), 1);
    SC_EQ(sc_done_result(&s6.done), ZLINK_FW_CANCELLED);
    ZT_EQ_INT(sc_done_calls(&s7.done), 1);
    ZT_EQ_INT(sc_status(a.h).requests_inflight, 0);

    zlink_call_t *calls[] = {q1, q2, after, d5, c6, c7, after2};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        zlink_call_release(calls[i]);
    sc_client_close(&a);
    sc_server_close(&b);
    x_seen_t *seen[] = {&s1, &s2, &p1, &p2, &p3, &s6, &s7};
    for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++)
        sc_done_destroy(&seen[i]->done);
}

void x2_completion_isolation(const conf_params_t *params)
{
    sc_each_transport(params, x2_round);
}
