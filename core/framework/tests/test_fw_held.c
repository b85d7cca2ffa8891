/*
 * test_fw_held.c — the held completion start (zlink_call_start_held and
 * zlink_call_callback_done, ZLINK_1.3): a call's dispatcher slot stays
 * reserved after its completion function returned until the binding says
 * its own callback returned (seed 000 §17, framework-contract §7 SC-18).
 * Public API only.
 */
#include "fwtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static uint64_t in_use(zlink_host_t *h)
{
    zlink_host_status_t st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    FW_EQ(zlink_host_status(h, &st), ZLINK_FW_OK);
    return st.dispatcher_in_use;
}

/* A request handler that builds each request's reply call and ends its
 * turn at once (an open turn would hold its gate), keeping the replies
 * unstarted until holder_release: the requests stay pending at the
 * client. */
typedef struct holder {
    pthread_mutex_t lk;
    zlink_call_t **replies;
    int n, cap;
} holder_t;

static void on_hold(zlink_turn_t *turn, void *user)
{
    holder_t *h = user;
    zlink_fw_result_t rc;
    zlink_call_t *r = zlink_turn_reply(turn, &rc);
    pthread_mutex_lock(&h->lk);
    if (r != NULL && h->n < h->cap) {
        h->replies[h->n++] = r;
        r = NULL;
    }
    pthread_mutex_unlock(&h->lk);
    if (r != NULL)
        zlink_call_release(r); /* no room: never answered (the test fails on its count) */
    zlink_turn_end(turn, 0, NULL);
}

static int holder_count(holder_t *h)
{
    pthread_mutex_lock(&h->lk);
    int n = h->n;
    pthread_mutex_unlock(&h->lk);
    return n;
}

/* Answers every held request ("ok"). */
static void holder_release(holder_t *h)
{
    pthread_mutex_lock(&h->lk);
    for (int i = 0; i < h->n; i++) {
        zlink_call_set_payload(h->replies[i], "ok", "", "ok", 2);
        zlink_call_start(h->replies[i], NULL, NULL);
        zlink_call_release(h->replies[i]);
    }
    h->n = 0;
    pthread_mutex_unlock(&h->lk);
}

typedef struct env {
    zlink_host_t *server, *client;
    fw_recorder_t rec;
    holder_t hold;
} env_t;

/* A server "svc" whose requests "m" echo and whose requests "h" are held
 * (room for cap of them), and a connected client. */
static void env_open(env_t *e, int cap)
{
    memset(e, 0, sizeof *e);
    fw_recorder_init(&e->rec);
    pthread_mutex_init(&e->hold.lk, NULL);
    e->hold.cap = cap;
    e->hold.replies = calloc((size_t)(cap > 0 ? cap : 1), sizeof *e->hold.replies);
    ZT_CHECK(e->hold.replies != NULL);
    char ep[256], bound[256];
    fw_endpoint(ep, sizeof ep, "inproc", "held");
    zlink_fw_result_t rc;
    e->server = zlink_host_new("server", &rc);
    ZT_CHECK(e->server != NULL);
    FW_EQ(zlink_host_set_option(e->server, ZLINK_HOST_OPT_MAX_QUEUED_JOBS, 2 * ZLINK_DISPATCHER_CAPACITY),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_add_cs_server(e->server, "svc", ep), ZLINK_FW_OK);
    FW_EQ(zlink_host_add_handler(e->server, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_REQUEST, "m",
                                 fw_on_request, &e->rec),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_add_handler(e->server, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_REQUEST, "h",
                                 on_hold, &e->hold),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_start(e->server), ZLINK_FW_OK);
    FW_EQ(zlink_host_endpoint(e->server, "svc", bound, sizeof bound), ZLINK_FW_OK);
    e->client = fw_cs_client("client", bound);
    zlink_call_t *c = fw_call(e->client, 1, "warm-up");
    FW_EQ(fw_wait(c, NULL, 0), ZLINK_FW_OK);
    zlink_call_release(c);
    /* The slots are process-wide and the server's reply to the warm-up
     * may give its slot back just after the client woke: wait for none. */
    ZT_EVENTUALLY(in_use(e->client) == 0, 2000);
}

/* Answers the next held request from this thread: the server's reply
 * call has given back its slot when this returns. */
static void answer(env_t *e, int n)
{
    ZT_EVENTUALLY(holder_count(&e->hold) >= n, 5000);
    holder_release(&e->hold);
}

static void env_close(env_t *e)
{
    holder_release(&e->hold);
    FW_EQ(zlink_host_shutdown(e->client, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_shutdown(e->server, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(e->client), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(e->server), ZLINK_FW_OK);
    free(e->hold.replies);
}

static zlink_call_t *call_of(zlink_host_t *h, const char *packet, const char *text)
{
    zlink_fw_result_t rc;
    zlink_call_t *c = zlink_call_request_to_channel(h, "svc", &rc);
    ZT_CHECK(c != NULL);
    FW_EQ(zlink_call_set_payload(c, packet, "", text, strlen(text)), ZLINK_FW_OK);
    FW_EQ(zlink_call_set_timeout(c, ZLINK_MS(60000)), ZLINK_FW_OK);
    return c;
}

/* What a held completion saw. */
typedef struct seen {
    atomic_int calls;
    atomic_int result;
    atomic_int done_rc;     /* done_in_fn: what done answered inside fn */
    atomic_int done_in_fn;
    atomic_int fn_returned;
    zlink_call_t *call;
} seen_t;

static void on_held(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    seen_t *s = user;
    atomic_store(&s->result, o->result);
    if (atomic_load(&s->done_in_fn))
        atomic_store(&s->done_rc, zlink_call_callback_done(call));
    atomic_fetch_add(&s->calls, 1);
    atomic_store(&s->fn_returned, 1);
}

/* The slot stays in use after fn returned, until done; done once only;
 * done for a call not started held, or before fn ran, is refused; fn NULL
 * is an invalid argument. */
static void slot_held_until_done(void)
{
    env_t e;
    env_open(&e, 16);
    uint64_t idle = in_use(e.client);

    seen_t s;
    memset(&s, 0, sizeof s);
    zlink_call_t *c = call_of(e.client, "h", "x");
    FW_EQ(zlink_call_start_held(c, NULL, NULL), ZLINK_FW_INVALID_ARGUMENT);
    FW_EQ(zlink_call_callback_done(c), ZLINK_FW_INVALID_OPERATION); /* never started */
    FW_EQ(zlink_call_start_held(c, on_held, &s), ZLINK_FW_OK);
    answer(&e, 1);
    ZT_EVENTUALLY(atomic_load(&s.fn_returned) == 1, 5000);
    FW_EQ(atomic_load(&s.result), ZLINK_FW_OK);
    /* fn returned: the slot is still reserved; a later completion still
     * runs (the lane is not blocked by the hold). */
    ZT_EQ_INT(in_use(e.client), idle + 1);
    seen_t so;
    memset(&so, 0, sizeof so);
    zlink_call_t *other = call_of(e.client, "h", "y");
    FW_EQ(zlink_call_start(other, on_held, &so), ZLINK_FW_OK);
    answer(&e, 1);
    ZT_EVENTUALLY(atomic_load(&so.calls) == 1, 5000);
    ZT_EVENTUALLY(in_use(e.client) == idle + 1, 2000); /* the plain one's slot is back */
    zlink_call_release(other);
    ZT_EQ_INT(in_use(e.client), idle + 1);
    /* done from this thread (not the dispatcher's): the slot is back */
    FW_EQ(zlink_call_callback_done(c), ZLINK_FW_OK);
    ZT_EQ_INT(in_use(e.client), idle);
    FW_EQ(zlink_call_callback_done(c), ZLINK_FW_INVALID_OPERATION); /* twice */
    ZT_EQ_INT(in_use(e.client), idle);
    ZT_EQ_INT(atomic_load(&s.calls), 1);
    zlink_call_release(c);

    /* Before fn ran (the request is held at the server): refused. */
    seen_t s2;
    memset(&s2, 0, sizeof s2);
    c = call_of(e.client, "h", "held");
    FW_EQ(zlink_call_start_held(c, on_held, &s2), ZLINK_FW_OK);
    ZT_EVENTUALLY(holder_count(&e.hold) == 1, 5000);
    FW_EQ(zlink_call_callback_done(c), ZLINK_FW_INVALID_OPERATION);
    ZT_EQ_INT(in_use(e.client), idle + 1);
    holder_release(&e.hold);
    ZT_EVENTUALLY(atomic_load(&s2.fn_returned) == 1, 5000);
    ZT_EQ_INT(in_use(e.client), idle + 1);
    FW_EQ(zlink_call_callback_done(c), ZLINK_FW_OK);
    ZT_EQ_INT(in_use(e.client), idle);
    zlink_call_release(c);

    /* A plain start is not held: done is refused, the slot is back when fn
     * returns. */
    fw_done_t d;
    memset(&d, 0, sizeof d);
    c = call_of(e.client, "h", "plain");
    zlink_call_t *keep = c;
    FW_EQ(zlink_call_start(c, fw_on_done, &d), ZLINK_FW_OK); /* fw_on_done releases it */
    answer(&e, 1);
    ZT_EVENTUALLY(atomic_load(&d.calls) == 1, 5000);
    ZT_EVENTUALLY(in_use(e.client) == idle, 2000);
    FW_EQ(zlink_call_callback_done(keep), ZLINK_FW_INVALID_HANDLE); /* released */
    c = call_of(e.client, "m", "plain2");
    FW_EQ(fw_wait(c, NULL, 0), ZLINK_FW_OK); /* an echo: the server answers itself */
    FW_EQ(zlink_call_callback_done(c), ZLINK_FW_INVALID_OPERATION); /* not held */
    zlink_call_release(c);
    env_close(&e);
}

/* done called inside fn (before fn returned): OK, and the slot is given
 * back once fn returns. */
static void done_while_fn_runs(void)
{
    env_t e;
    env_open(&e, 1);
    uint64_t idle = in_use(e.client);
    for (int i = 0; i < 20; i++) {
        seen_t s;
        memset(&s, 0, sizeof s);
        atomic_store(&s.done_in_fn, 1);
        atomic_store(&s.done_rc, -1);
        zlink_call_t *c = call_of(e.client, "h", "in-fn");
        FW_EQ(zlink_call_start_held(c, on_held, &s), ZLINK_FW_OK);
        answer(&e, 1);
        ZT_EVENTUALLY(atomic_load(&s.fn_returned) == 1, 5000);
        FW_EQ(atomic_load(&s.done_rc), ZLINK_FW_OK);
        ZT_EVENTUALLY(in_use(e.client) == idle, 2000);
        FW_EQ(zlink_call_callback_done(c), ZLINK_FW_INVALID_OPERATION);
        zlink_call_release(c);
    }
    env_close(&e);
}

/* Releasing a held call ends its hold: before fn ran (given back when fn
 * returns) and after fn returned (given back at once). */
static void release_ends_hold(void)
{
    env_t e;
    env_open(&e, 4);
    uint64_t idle = in_use(e.client);
    seen_t s;
    memset(&s, 0, sizeof s);
    zlink_call_t *c = call_of(e.client, "h", "r1");
    FW_EQ(zlink_call_start_held(c, on_held, &s), ZLINK_FW_OK);
    answer(&e, 1);
    ZT_EVENTUALLY(atomic_load(&s.fn_returned) == 1, 5000);
    ZT_EQ_INT(in_use(e.client), idle + 1);
    FW_EQ(zlink_call_release(c), ZLINK_FW_OK);
    ZT_EQ_INT(in_use(e.client), idle);

    seen_t s2;
    memset(&s2, 0, sizeof s2);
    c = call_of(e.client, "h", "r2");
    FW_EQ(zlink_call_start_held(c, on_held, &s2), ZLINK_FW_OK);
    ZT_EVENTUALLY(holder_count(&e.hold) == 1, 5000);
    FW_EQ(zlink_call_release(c), ZLINK_FW_OK);
    ZT_EQ_INT(in_use(e.client), idle + 1); /* still pending */
    holder_release(&e.hold);
    ZT_EVENTUALLY(atomic_load(&s2.fn_returned) == 1, 5000);
    ZT_EVENTUALLY(in_use(e.client) == idle, 2000);
    ZT_EQ_INT(atomic_load(&s2.calls), 1);
    env_close(&e);
}

/* SC-18 with a held slot: cap - 1 requests pending and one completion
 * whose fn returned but whose callback is not done: the next request is
 * refused with CAPACITY_EXCEEDED; after done it is accepted. */
static void capacity_counts_held(void)
{
    const int cap = ZLINK_DISPATCHER_CAPACITY;
    env_t e;
    env_open(&e, cap);
    ZT_EQ_INT(in_use(e.client), 0);
    seen_t s;
    memset(&s, 0, sizeof s);
    zlink_call_t *first = call_of(e.client, "h", "first");
    FW_EQ(zlink_call_start_held(first, on_held, &s), ZLINK_FW_OK);
    answer(&e, 1);
    ZT_EVENTUALLY(atomic_load(&s.fn_returned) == 1, 5000);
    seen_t *ps = calloc((size_t)cap, sizeof *ps);
    zlink_call_t **calls = calloc((size_t)cap, sizeof *calls);
    ZT_CHECK(ps != NULL && calls != NULL);
    for (int i = 0; i < cap - 1; i++) {
        calls[i] = call_of(e.client, "h", "q");
        FW_EQ(zlink_call_start_held(calls[i], on_held, &ps[i]), ZLINK_FW_OK);
    }
    ZT_EQ_INT(in_use(e.client), cap);
    zlink_call_t *over = call_of(e.client, "h", "over");
    seen_t so;
    memset(&so, 0, sizeof so);
    FW_EQ(zlink_call_start_held(over, on_held, &so), ZLINK_FW_CAPACITY_EXCEEDED);
    zlink_call_release(over);
    over = call_of(e.client, "h", "over");
    FW_EQ(zlink_call_start(over, NULL, NULL), ZLINK_FW_CAPACITY_EXCEEDED);
    zlink_call_release(over);
    /* the held callback returns: one slot is free again */
    FW_EQ(zlink_call_callback_done(first), ZLINK_FW_OK);
    ZT_EQ_INT(in_use(e.client), cap - 1);
    zlink_call_t *again = call_of(e.client, "h", "again");
    FW_EQ(zlink_call_start(again, NULL, NULL), ZLINK_FW_OK);
    ZT_EQ_INT(in_use(e.client), cap);
    zlink_call_release(again);
    zlink_call_release(first);
    /* answer everything; each held completion runs once and holds its
     * slot until done */
    answer(&e, cap); /* (waits up to 5 s for them all) */
    for (int i = 0; i < cap - 1; i++)
        ZT_EVENTUALLY(atomic_load(&ps[i].fn_returned) == 1, 30000);
    ZT_EVENTUALLY(in_use(e.client) == (uint64_t)cap - 1, 5000);
    for (int i = 0; i < cap - 1; i++) {
        ZT_EQ_INT(atomic_load(&ps[i].calls), 1);
        FW_EQ(zlink_call_callback_done(calls[i]), ZLINK_FW_OK);
        zlink_call_release(calls[i]);
    }
    ZT_EQ_INT(in_use(e.client), 0);
    free(ps);
    free(calls);
    env_close(&e);
}

/* Shutdown waits for a held slot as for a running callback: it returns
 * only after done, which another thread gives. */
typedef struct later {
    zlink_call_t *call;
    atomic_int go;
    atomic_int done_rc;
    atomic_int done_given;
} later_t;

static void *give_done_later(void *arg)
{
    later_t *l = arg;
    while (!atomic_load(&l->go))
        sched_yield();
    usleep(200 * 1000); /* the shutdown has to be waiting by now; if it is
                         * not, the check below still holds */
    atomic_store(&l->done_given, 1);
    atomic_store(&l->done_rc, zlink_call_callback_done(l->call));
    return NULL;
}

static void shutdown_waits_for_held(void)
{
    env_t e;
    env_open(&e, 1);
    seen_t s;
    memset(&s, 0, sizeof s);
    later_t l;
    memset(&l, 0, sizeof l);
    l.call = call_of(e.client, "h", "sd");
    FW_EQ(zlink_call_start_held(l.call, on_held, &s), ZLINK_FW_OK);
    answer(&e, 1);
    ZT_EVENTUALLY(atomic_load(&s.fn_returned) == 1, 5000);
    pthread_t t;
    ZT_CHECK(pthread_create(&t, NULL, give_done_later, &l) == 0);
    atomic_store(&l.go, 1);
    FW_EQ(zlink_host_shutdown(e.client, ZLINK_MS(50)), ZLINK_FW_OK);
    /* it returned: the done had been given before */
    ZT_EQ_INT(atomic_load(&l.done_given), 1);
    pthread_join(t, NULL);
    FW_EQ(atomic_load(&l.done_rc), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_host_state(e.client), ZLINK_HOST_STOPPED);
    ZT_EQ_INT(atomic_load(&s.calls), 1);
    zlink_call_release(l.call);
    FW_EQ(zlink_host_shutdown(e.server, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(e.client), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(e.server), ZLINK_FW_OK);
    free(e.hold.replies);
}

/* Bad handles: a forged one and NULL. */
static void bad_handles(void)
{
    FW_EQ(zlink_call_callback_done(NULL), ZLINK_FW_INVALID_HANDLE);
    FW_EQ(zlink_call_start_held(NULL, on_held, NULL), ZLINK_FW_INVALID_HANDLE);
    FW_EQ(zlink_call_callback_done((zlink_call_t *)(uintptr_t)0x4000000000001234ull),
          ZLINK_FW_INVALID_HANDLE);
}

int main(int argc, char **argv)
{
    static const zt_case_t cases[] = {
        ZT_CASE(slot_held_until_done),
        ZT_CASE(done_while_fn_runs),
        ZT_CASE(release_ends_hold),
        ZT_CASE(capacity_counts_held),
        ZT_CASE(shutdown_waits_for_held),
        ZT_CASE(bad_handles),
    };
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
