/*
 * sc_harness.c — the default harness of the SC cases (sc.h): gates,
 * recorders, the timer thread, completion collectors, hosts A and B and
 * "Saturate B". Public API only.
 */
#include "sc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

size_t sc_transports(const conf_params_t *params, const char **out)
{
    return conf_strings(params, "transports", out, SC_MAX_TRANSPORTS);
}

void sc_each_transport(const conf_params_t *params, void (*round)(const char *tr))
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    for (size_t i = 0; i < n; i++)
        round(trs[i]);
}

struct timespec sc_abstime(clockid_t clock, int64_t ms)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

void sc__on_time(const char *file, int line, int64_t elapsed, int64_t want_ms)
{
    int64_t late = want_ms + ZT_MS(250);
    if (elapsed < want_ms || elapsed > late)
        zt__fail(file, line, "ended after %lld ms, expected %lld..%lld ms", (long long)elapsed,
                 (long long)want_ms, (long long)late);
}

/* ----------------------------------------------------------------- gate */

void sc_gate_init(sc_gate_t *g)
{
    pthread_mutex_init(&g->lk, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->open = false;
    g->waiting = 0;
}

void sc_gate_pass(sc_gate_t *g)
{
    pthread_mutex_lock(&g->lk);
    g->waiting++;
    pthread_cond_broadcast(&g->cv);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->lk);
    g->waiting--;
    pthread_mutex_unlock(&g->lk);
}

void sc_gate_open(sc_gate_t *g)
{
    pthread_mutex_lock(&g->lk);
    g->open = true;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->lk);
}

void sc_gate_close(sc_gate_t *g)
{
    pthread_mutex_lock(&g->lk);
    g->open = false;
    pthread_mutex_unlock(&g->lk);
}

int sc_gate_waiting(sc_gate_t *g)
{
    pthread_mutex_lock(&g->lk);
    int n = g->waiting;
    pthread_mutex_unlock(&g->lk);
    return n;
}

void sc_gate_destroy(sc_gate_t *g)
{
    pthread_mutex_destroy(&g->lk);
    pthread_cond_destroy(&g->cv);
}

/* ------------------------------------------------------------- recorder */

void sc_rec_init(sc_rec_t *r)
{
    pthread_mutex_init(&r->lk, NULL);
    r->count = 0;
    r->cap = 0;
    r->seen = NULL;
}

void sc_rec_free(sc_rec_t *r)
{
    free(r->seen);
    r->seen = NULL;
    pthread_mutex_destroy(&r->lk);
}

static void rec_add(sc_rec_t *r, const char *tag)
{
    pthread_mutex_lock(&r->lk);
    if (r->count == r->cap) {
        size_t cap = r->cap == 0 ? 256 : r->cap * 2;
        void *grown = realloc(r->seen, cap * sizeof *r->seen);
        ZT_CHECK(grown != NULL);
        r->seen = grown;
        r->cap = cap;
    }
    snprintf(r->seen[r->count++], SC_TAG_MAX, "%s", tag);
    pthread_mutex_unlock(&r->lk);
}

size_t sc_rec_count(sc_rec_t *r)
{
    pthread_mutex_lock(&r->lk);
    size_t n = r->count;
    pthread_mutex_unlock(&r->lk);
    return n;
}

int sc_rec_has(sc_rec_t *r, const char *tag)
{
    int n = 0;
    pthread_mutex_lock(&r->lk);
    for (size_t i = 0; i < r->count; i++)
        n += strcmp(r->seen[i], tag) == 0;
    pthread_mutex_unlock(&r->lk);
    return n;
}

/* ---------------------------------------------------------------- timer */

static bool entry_before(const sc_timer_entry_t *a, const sc_timer_entry_t *b)
{
    return a->due_ms < b->due_ms || (a->due_ms == b->due_ms && a->seq < b->seq);
}

static void heap_swap(sc_timer_t *t, size_t i, size_t j)
{
    sc_timer_entry_t x = t->heap[i];
    t->heap[i] = t->heap[j];
    t->heap[j] = x;
}

/* Timer thread: runs due entries in due order, the lock dropped while one
 * runs; after sc_timer_finish asked it to stop, it still runs every entry
 * (each at its time) and then ends. */
static void *timer_main(void *arg)
{
    sc_timer_t *t = arg;
    pthread_mutex_lock(&t->lk);
    for (;;) {
        if (t->len == 0) {
            if (t->stop)
                break;
            pthread_cond_wait(&t->cv, &t->lk);
            continue;
        }
        int64_t now = zt_now_ms();
        if (t->heap[0].due_ms > now) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            int64_t wait = t->heap[0].due_ms - now;
            ts.tv_sec += wait / 1000;
            ts.tv_nsec += (wait % 1000) * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&t->cv, &t->lk, &ts);
            continue;
        }
        sc_timer_entry_t e = t->heap[0];
        t->heap[0] = t->heap[--t->len];
        for (size_t i = 0;;) {
            size_t l = 2 * i + 1, r = l + 1, m = i;
            if (l < t->len && entry_before(&t->heap[l], &t->heap[m]))
                m = l;
            if (r < t->len && entry_before(&t->heap[r], &t->heap[m]))
                m = r;
            if (m == i)
                break;
            heap_swap(t, i, m);
            i = m;
        }
        pthread_mutex_unlock(&t->lk);
        e.fn(e.arg);
        pthread_mutex_lock(&t->lk);
    }
    pthread_mutex_unlock(&t->lk);
    return NULL;
}

void sc_timer_start(sc_timer_t *t)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lk, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cv, &ca);
    pthread_condattr_destroy(&ca);
    ZT_EQ_INT(pthread_create(&t->thread, NULL, timer_main, t), 0);
}

void sc_timer_at(sc_timer_t *t, int64_t due_ms, sc_timer_fn *fn, void *arg)
{
    pthread_mutex_lock(&t->lk);
    if (t->len == t->cap) {
        size_t cap = t->cap == 0 ? 64 : t->cap * 2;
        void *grown = realloc(t->heap, cap * sizeof *t->heap);
        ZT_CHECK(grown != NULL);
        t->heap = grown;
        t->cap = cap;
    }
    size_t i = t->len++;
    t->heap[i] = (sc_timer_entry_t){due_ms, t->seq++, fn, arg};
    while (i > 0 && entry_before(&t->heap[i], &t->heap[(i - 1) / 2])) {
        heap_swap(t, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->lk);
}

void sc_timer_finish(sc_timer_t *t)
{
    pthread_mutex_lock(&t->lk);
    t->stop = true;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->lk);
    ZT_EQ_INT(pthread_join(t->thread, NULL), 0);
    free(t->heap);
    pthread_mutex_destroy(&t->lk);
    pthread_cond_destroy(&t->cv);
}

/* ---------------------------------------------------- completion collector */

void sc_done_init(sc_done_t *d)
{
    memset(d, 0, sizeof *d);
    pthread_mutex_init(&d->lk, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->cv, &ca);
    pthread_condattr_destroy(&ca);
    d->result = -1;
}

void sc_done_destroy(sc_done_t *d)
{
    pthread_mutex_destroy(&d->lk);
    pthread_cond_destroy(&d->cv);
}

static void copy_text(char *dst, size_t cap, const void *src, size_t n)
{
    if (n > cap - 1)
        n = cap - 1;
    if (src != NULL && n > 0)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

void sc_on_done(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    (void)call;
    sc_done_t *d = user;
    int64_t now = zt_now_ms();
    int in_rt = zlink_in_runtime_context();
    pthread_mutex_lock(&d->lk);
    if (d->calls++ == 0) {
        d->result = o->result;
        d->remote_code = o->remote_code;
        d->at_ms = now;
        d->thread = pthread_self();
        d->in_runtime = in_rt;
        copy_text(d->reply, sizeof d->reply, o->payload, o->payload_size);
        copy_text(d->message, sizeof d->message, o->message, strlen(o->message));
    }
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->lk);
}

bool sc_done_wait_until(sc_done_t *d, int64_t until_ms)
{
    pthread_mutex_lock(&d->lk);
    while (d->calls == 0) {
        int64_t left = until_ms - zt_now_ms();
        if (left <= 0)
            break;
        struct timespec ts = sc_abstime(CLOCK_MONOTONIC, left);
        pthread_cond_timedwait(&d->cv, &d->lk, &ts);
    }
    bool done = d->calls > 0;
    pthread_mutex_unlock(&d->lk);
    return done;
}

bool sc_done_wait(sc_done_t *d, int ms)
{
    return sc_done_wait_until(d, zt_now_ms() + (int64_t)(ms * zt_timeout_mult()));
}

int sc_done_result(sc_done_t *d)
{
    pthread_mutex_lock(&d->lk);
    int r = d->result;
    pthread_mutex_unlock(&d->lk);
    return r;
}

void sc_done_expect(sc_done_t *d, int ms)
{
    if (!sc_done_wait(d, ms))
        ZT_FAIL("no completion within %d ms", ms);
}

int sc_done_calls(sc_done_t *d)
{
    pthread_mutex_lock(&d->lk);
    int n = d->calls;
    pthread_mutex_unlock(&d->lk);
    return n;
}

/* ------------------------------------------------------------- handlers */

/* The payload's tag: its text up to the first NUL. */
static void turn_tag(zlink_turn_t *turn, char *tag)
{
    size_t n = 0;
    const char *p = zlink_turn_payload(turn, &n);
    size_t k = 0;
    while (k < n && k < SC_TAG_MAX - 1 && p[k] != '\0')
        k++;
    copy_text(tag, SC_TAG_MAX, p, k);
}

static void on_send(zlink_turn_t *turn, void *user)
{
    sc_server_t *s = user;
    if (atomic_load(&s->gated))
        sc_gate_pass(&s->gate);
    char tag[SC_TAG_MAX];
    turn_tag(turn, tag);
    rec_add(&s->rec, tag);
    zlink_turn_end(turn, 0, NULL);
}

typedef struct delayed {
    sc_server_t *s;
    zlink_call_t *reply;
} delayed_t;

/* Timer thread: a delayed reply goes now; then it counts as sent. */
static void delayed_reply(void *arg)
{
    delayed_t *x = arg;
    (void)zlink_call_start(x->reply, NULL, NULL);
    zlink_call_release(x->reply);
    atomic_fetch_add(&x->s->replies_sent, 1);
    free(x);
}

static void on_request(zlink_turn_t *turn, void *user)
{
    sc_server_t *s = user;
    if (atomic_load(&s->gated))
        sc_gate_pass(&s->gate);
    char tag[SC_TAG_MAX];
    turn_tag(turn, tag);
    rec_add(&s->rec, tag);
    int mode = atomic_load(&s->reply_mode);
    if (mode == SC_REPLY_FAIL) {
        zlink_turn_end(turn, 1, "cancelled timeout"); /* the text must not decide */
        return;
    }
    zlink_fw_result_t rc;
    zlink_call_t *reply = zlink_turn_reply(turn, &rc);
    ZT_CHECK(reply != NULL);
    SC_EQ(zlink_call_set_payload(reply, "echo", "", tag, strlen(tag)), ZLINK_FW_OK);
    if (mode == SC_REPLY_NOW) {
        (void)zlink_call_start(reply, NULL, NULL);
        zlink_call_release(reply);
    } else if (mode == SC_REPLY_HOLD) {
        pthread_mutex_lock(&s->held_lk);
        if (s->nheld == s->held_cap) {
            size_t cap = s->held_cap == 0 ? 64 : s->held_cap * 2;
            void *grown = realloc(s->held, cap * sizeof *s->held);
            ZT_CHECK(grown != NULL);
            s->held = grown;
            s->held_cap = cap;
        }
        s->held[s->nheld].reply = reply;
        snprintf(s->held[s->nheld].tag, SC_TAG_MAX, "%s", tag);
        s->nheld++;
        pthread_mutex_unlock(&s->held_lk);
    } else {
        /* The handler ends its turn at once; the reply goes later. */
        pthread_mutex_lock(&s->held_lk);
        s->rng ^= s->rng << 13;
        s->rng ^= s->rng >> 7;
        s->rng ^= s->rng << 17;
        int span = s->delay_max - s->delay_min + 1;
        int delay = s->delay_min + (int)(s->rng % (uint64_t)span);
        pthread_mutex_unlock(&s->held_lk);
        delayed_t *x = malloc(sizeof *x);
        ZT_CHECK(x != NULL);
        x->s = s;
        x->reply = reply;
        sc_timer_at(s->timer, zt_now_ms() + delay, delayed_reply, x);
    }
    zlink_turn_end(turn, 0, NULL);
}

/* "sync": a synchronous terminator and a shutdown inside a handler. */
static void on_sync(zlink_turn_t *turn, void *user)
{
    sc_server_t *s = user;
    zlink_call_t *c = s->mode == SC_MESH ? sc_node_call(s->h, false, "A", "from-handler") : NULL;
    if (c != NULL) {
        zlink_outcome_t o;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        int64_t t0 = zt_now_ms();
        atomic_store(&s->sync_wait_rc, zlink_call_wait(c, &o));
        if (zt_now_ms() - t0 > ZT_MS(100))
            atomic_store(&s->sync_wait_rc, -2); /* not "at once" */
        zlink_call_release(c);
    }
    atomic_store(&s->sync_shutdown_rc, zlink_host_shutdown(s->h, ZLINK_MS(100)));
    atomic_fetch_add(&s->sync_ran, 1);
    zlink_turn_end(turn, 0, NULL);
}

/* The completion function handed to the "yield" handler's refused yield:
 * counts runs (none may happen). */
static void on_yield_done(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    (void)call;
    (void)o;
    sc_server_t *s = user;
    atomic_fetch_add(&s->yield_fn_ran, 1);
}

/* "yield": zlink_call_yield inside a handler turn of a channel, which is
 * not a Spot turn. */
static void on_yield(zlink_turn_t *turn, void *user)
{
    sc_server_t *s = user;
    zlink_call_t *c = s->mode == SC_MESH ? sc_node_call(s->h, false, "A", "yield-in-handler")
                                         : NULL;
    if (c != NULL) {
        atomic_store(&s->yield_rc, zlink_call_yield(c, on_yield_done, s));
        zlink_call_release(c);
    }
    atomic_fetch_add(&s->yield_ran, 1);
    zlink_turn_end(turn, 0, NULL);
}

static void on_ping(zlink_turn_t *turn, void *user)
{
    sc_server_t *s = user;
    atomic_fetch_add(&s->pings, 1);
    zlink_fw_result_t rc;
    zlink_call_t *reply = zlink_turn_reply(turn, &rc);
    if (reply != NULL) {
        zlink_call_set_payload(reply, "pong", "", s->name, strlen(s->name));
        zlink_call_start(reply, NULL, NULL);
        zlink_call_release(reply);
    }
    zlink_turn_end(turn, 0, NULL);
}

/* ---------------------------------------------------------------- hosts */

void sc_endpoint(char *buf, size_t cap, const char *tr, const char *tag, const char *name)
{
    static atomic_int seq;
    if (strcmp(tr, "tcp") == 0)
        snprintf(buf, cap, "tcp://127.0.0.1:0");
    else
        snprintf(buf, cap, "inproc://sc-%s-%s-%d-%d", tag, name, (int)getpid(),
                 atomic_fetch_add(&seq, 1));
}

zlink_host_t *sc_mesh_host(const char *name, const char *tr, bool listen, int64_t max_jobs)
{
    zlink_fw_result_t rc;
    zlink_host_t *h = zlink_host_new(name, &rc);
    ZT_CHECK(h != NULL);
    if (max_jobs > 0)
        SC_EQ(zlink_host_set_option(h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS, max_jobs), ZLINK_FW_OK);
    char ep[256];
    sc_endpoint(ep, sizeof ep, tr, "mesh", name);
    SC_EQ(zlink_host_add_mesh_node(h, "m", name, strlen(name), listen ? ep : NULL), ZLINK_FW_OK);
    return h;
}

void sc_host_end(zlink_host_t *h)
{
    SC_EQ(zlink_host_shutdown(h, ZLINK_MS(2000)), ZLINK_FW_OK);
    SC_EQ(zlink_host_destroy(h), ZLINK_FW_OK);
}

zlink_host_capacity_t sc_capacity(zlink_host_t *h)
{
    zlink_host_capacity_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    SC_EQ(zlink_host_capacity(h, &c), ZLINK_FW_OK);
    return c;
}

zlink_owner_status_t sc_owner_status(zlink_host_t *h, zlink_owner_kind_t kind, const char *name)
{
    zlink_owner_status_t st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    SC_EQ(zlink_host_owner_status(h, kind, name, &st), ZLINK_FW_OK);
    return st;
}

const char *const sc_drop_reasons[SC_NREASONS] = {"reason=no_handler", "reason=decode_error",
                                                  "reason=shutdown", "reason=backpressure",
                                                  "reason=stale_target"};

int64_t sc_dropped(zlink_host_t *h)
{
    int64_t sum = 0;
    for (size_t i = 0; i < SC_NREASONS; i++)
        sum += sc_metric(h, "zlink.mesh_node.messages.dropped", sc_drop_reasons[i]);
    return sum;
}

void sc_expect_no_drops(zlink_host_t *h, const char *who)
{
    for (size_t i = 0; i < SC_NREASONS; i++) {
        int64_t v = sc_metric(h, "zlink.mesh_node.messages.dropped", sc_drop_reasons[i]);
        if (v != 0)
            ZT_FAIL("%s dropped %lld records (%s)", who, (long long)v, sc_drop_reasons[i]);
    }
}

static void add_handlers(sc_server_t *s, zlink_owner_kind_t owner, const char *owner_name)
{
    zlink_host_t *h = s->h;
    SC_EQ(zlink_host_add_handler(h, owner, owner_name, ZLINK_MESSAGE_SEND, "m", on_send, s),
          ZLINK_FW_OK);
    SC_EQ(zlink_host_add_handler(h, owner, owner_name, ZLINK_MESSAGE_REQUEST, "m", on_request, s),
          ZLINK_FW_OK);
    SC_EQ(zlink_host_add_handler(h, owner, owner_name, ZLINK_MESSAGE_SEND, "sync", on_sync, s),
          ZLINK_FW_OK);
    SC_EQ(zlink_host_add_handler(h, owner, owner_name, ZLINK_MESSAGE_SEND, "yield", on_yield, s),
          ZLINK_FW_OK);
    SC_EQ(zlink_host_add_handler(h, owner, owner_name, ZLINK_MESSAGE_REQUEST, "ping", on_ping, s),
          ZLINK_FW_OK);
}

void sc_server_open(sc_server_t *s, sc_mode_t mode, const char *tr, const char *tag)
{
    zlink_fw_result_t rc;
    s->mode = mode;
    sc_gate_init(&s->gate);
    sc_rec_init(&s->rec);
    pthread_mutex_init(&s->held_lk, NULL);
    s->rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)s;
    char ep[256];
    sc_endpoint(ep, sizeof ep, tr, tag, s->name);
    s->h = zlink_host_new(s->name, &rc);
    ZT_CHECK(s->h != NULL);
    if (s->max_jobs > 0)
        SC_EQ(zlink_host_set_option(s->h, ZLINK_HOST_OPT_MAX_QUEUED_JOBS, s->max_jobs),
              ZLINK_FW_OK);
    const char *sock = mode == SC_MESH ? "m" : "svc";
    if (mode == SC_MESH) {
        SC_EQ(zlink_host_add_mesh_node(s->h, "m", s->name, strlen(s->name), ep), ZLINK_FW_OK);
        SC_EQ(zlink_mesh_add_channel_server(s->h, "m", "svc", s->weight < 0 ? 100 : s->weight),
              ZLINK_FW_OK);
        if (s->zero_channel)
            SC_EQ(zlink_mesh_add_channel_server(s->h, "m", "zero", 0), ZLINK_FW_OK);
        add_handlers(s, ZLINK_OWNER_CHANNEL, "svc");
        add_handlers(s, ZLINK_OWNER_NODE, "m");
    } else {
        SC_EQ(zlink_host_add_cs_server(s->h, "svc", ep), ZLINK_FW_OK);
        add_handlers(s, ZLINK_OWNER_CHANNEL, "svc");
    }
    if (s->hwm > 0) {
        if (mode == SC_MESH) {
            SC_EQ(zlink_mesh_set_option(s->h, sock, ZLINK_NODE_OPT_SNDHWM, (int64_t)s->hwm),
                  ZLINK_FW_OK);
            SC_EQ(zlink_mesh_set_option(s->h, sock, ZLINK_NODE_OPT_RCVHWM, (int64_t)s->hwm),
                  ZLINK_FW_OK);
        } else {
            SC_EQ(zlink_channel_set_option(s->h, sock, ZLINK_NODE_OPT_SNDHWM, (int64_t)s->hwm),
                  ZLINK_FW_OK);
            SC_EQ(zlink_channel_set_option(s->h, sock, ZLINK_NODE_OPT_RCVHWM, (int64_t)s->hwm),
                  ZLINK_FW_OK);
        }
    }
    SC_EQ(zlink_host_start(s->h), ZLINK_FW_OK);
    SC_EQ(zlink_host_endpoint(s->h, sock, s->bound, sizeof s->bound), ZLINK_FW_OK);
}

void sc_client_open(sc_client_t *a, sc_mode_t mode, sc_server_t **srv, size_t n)
{
    zlink_fw_result_t rc;
    a->mode = mode;
    a->h = zlink_host_new("A", &rc);
    ZT_CHECK(a->h != NULL);
    if (a->root_send_timeout != 0)
        SC_EQ(zlink_host_set_option(a->h, ZLINK_HOST_OPT_DEFAULT_SEND_TIMEOUT,
                                    a->root_send_timeout),
              ZLINK_FW_OK);
    if (mode == SC_MESH) {
        SC_EQ(zlink_host_add_mesh_node(a->h, "m", "A", 1, NULL), ZLINK_FW_OK);
        SC_EQ(zlink_mesh_add_channel_client(a->h, "m", "svc"), ZLINK_FW_OK);
        if (a->extra_channels) {
            SC_EQ(zlink_mesh_add_channel_client(a->h, "m", "none"), ZLINK_FW_OK);
            SC_EQ(zlink_mesh_add_channel_client(a->h, "m", "zero"), ZLINK_FW_OK);
        }
        for (size_t i = 0; i < n; i++)
            SC_EQ(zlink_mesh_connect(a->h, "m", srv[i]->bound, srv[i]->name,
                                     strlen(srv[i]->name)),
                  ZLINK_FW_OK);
        if (a->send_timeout != 0)
            SC_EQ(zlink_mesh_set_option(a->h, "m", ZLINK_NODE_OPT_SEND_TIMEOUT, a->send_timeout),
                  ZLINK_FW_OK);
        if (a->hwm > 0) {
            SC_EQ(zlink_mesh_set_option(a->h, "m", ZLINK_NODE_OPT_SNDHWM, (int64_t)a->hwm),
                  ZLINK_FW_OK);
            SC_EQ(zlink_mesh_set_option(a->h, "m", ZLINK_NODE_OPT_RCVHWM, (int64_t)a->hwm),
                  ZLINK_FW_OK);
        }
    } else {
        for (size_t i = 0; i < n; i++)
            SC_EQ(zlink_host_add_cs_client(a->h, "svc", srv[i]->bound), ZLINK_FW_OK);
        if (a->send_timeout != 0)
            SC_EQ(zlink_channel_set_option(a->h, "svc", ZLINK_NODE_OPT_SEND_TIMEOUT,
                                           a->send_timeout),
                  ZLINK_FW_OK);
        if (a->hwm > 0) {
            SC_EQ(zlink_channel_set_option(a->h, "svc", ZLINK_NODE_OPT_SNDHWM, (int64_t)a->hwm),
                  ZLINK_FW_OK);
            SC_EQ(zlink_channel_set_option(a->h, "svc", ZLINK_NODE_OPT_RCVHWM, (int64_t)a->hwm),
                  ZLINK_FW_OK);
        }
    }
    SC_EQ(zlink_host_start(a->h), ZLINK_FW_OK);
    if (mode == SC_MESH) {
        ZT_EVENTUALLY(zlink_mesh_ready_peers(a->h, "m", NULL) == (int)n, 5000);
        for (size_t i = 0; i < n; i++)
            ZT_EVENTUALLY(zlink_mesh_ready_peers(srv[i]->h, "m", NULL) == 1, 5000);
        return;
    }
    /* ClientServer has no readiness view: ping until every server answered
     * once (the DEALER picks a connected server per call). */
    for (int round = 0;; round++) {
        bool all = true;
        for (size_t i = 0; i < n; i++)
            all = all && atomic_load(&srv[i]->pings) > 0;
        if (all)
            break;
        ZT_CHECK(round < 500);
        zlink_call_t *c = zlink_call_request_to_channel(a->h, "svc", &rc);
        ZT_CHECK(c != NULL);
        SC_EQ(zlink_call_set_payload(c, "ping", "", "p", 1), ZLINK_FW_OK);
        SC_EQ(zlink_call_set_timeout(c, ZLINK_MS(ZT_MS(5000))), ZLINK_FW_OK);
        SC_EQ(sc_wait(c, NULL), ZLINK_FW_OK);
        zlink_call_release(c);
    }
}

void sc_server_drop_held(sc_server_t *s)
{
    pthread_mutex_lock(&s->held_lk);
    for (size_t i = 0; i < s->nheld; i++)
        zlink_call_release(s->held[i].reply);
    s->nheld = 0;
    pthread_mutex_unlock(&s->held_lk);
}

size_t sc_server_nheld(sc_server_t *s)
{
    pthread_mutex_lock(&s->held_lk);
    size_t n = s->nheld;
    pthread_mutex_unlock(&s->held_lk);
    return n;
}

zlink_call_t *sc_server_take_held(sc_server_t *s, const char *tag)
{
    zlink_call_t *c = NULL;
    pthread_mutex_lock(&s->held_lk);
    for (size_t i = 0; i < s->nheld; i++) {
        if (strcmp(s->held[i].tag, tag) == 0) {
            c = s->held[i].reply;
            s->held[i] = s->held[--s->nheld];
            break;
        }
    }
    pthread_mutex_unlock(&s->held_lk);
    return c;
}

void sc_server_close(sc_server_t *s)
{
    sc_gate_open(&s->gate);
    int st = zlink_host_state(s->h);
    if (st == ZLINK_HOST_SERVING || st == ZLINK_HOST_DRAINING)
        SC_EQ(zlink_host_shutdown(s->h, ZLINK_MS(2000)), ZLINK_FW_OK);
    sc_server_drop_held(s);
    SC_EQ(zlink_host_destroy(s->h), ZLINK_FW_OK);
    free(s->held);
    s->held = NULL;
    s->held_cap = 0;
    sc_rec_free(&s->rec);
    sc_gate_destroy(&s->gate);
    pthread_mutex_destroy(&s->held_lk);
}

void sc_client_close(sc_client_t *a)
{
    int st = zlink_host_state(a->h);
    if (st == ZLINK_HOST_SERVING || st == ZLINK_HOST_DRAINING)
        SC_EQ(zlink_host_shutdown(a->h, ZLINK_MS(2000)), ZLINK_FW_OK);
    SC_EQ(zlink_host_destroy(a->h), ZLINK_FW_OK);
}

/* ---------------------------------------------------------------- calls */

zlink_call_t *sc_call(sc_client_t *a, bool request, const char *channel, const char *tag,
                      size_t size)
{
    zlink_fw_result_t rc;
    if (channel == NULL)
        channel = "svc";
    zlink_call_t *c = request ? zlink_call_request_to_channel(a->h, channel, &rc)
                              : zlink_call_send_to_channel(a->h, channel, &rc);
    ZT_CHECK(c != NULL);
    size_t n = strlen(tag);
    if (size < n)
        size = n;
    char *buf = calloc(1, size + 1);
    ZT_CHECK(buf != NULL);
    memcpy(buf, tag, n);
    SC_EQ(zlink_call_set_payload(c, "m", "", buf, size), ZLINK_FW_OK);
    free(buf);
    return c;
}

zlink_call_t *sc_node_call(zlink_host_t *h, bool request, const char *rid, const char *tag)
{
    zlink_fw_result_t rc;
    zlink_call_t *c = request ? zlink_call_request_to_node(h, "m", rid, strlen(rid), &rc)
                              : zlink_call_send_to_node(h, "m", rid, strlen(rid), &rc);
    ZT_CHECK(c != NULL);
    SC_EQ(zlink_call_set_payload(c, "m", "", tag, strlen(tag)), ZLINK_FW_OK);
    return c;
}

int sc_wait(zlink_call_t *c, zlink_outcome_t *o)
{
    zlink_outcome_t mine;
    if (o == NULL)
        o = &mine;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    return zlink_call_wait(c, o);
}

zlink_host_status_t sc_status(zlink_host_t *h)
{
    zlink_host_status_t st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    SC_EQ(zlink_host_status(h, &st), ZLINK_FW_OK);
    return st;
}

int64_t sc_metric(zlink_host_t *h, const char *name, const char *labels)
{
    int64_t v = -1;
    SC_EQ(zlink_host_metric(h, name, labels, &v), ZLINK_FW_OK);
    return v;
}

/* ------------------------------------------------------------ saturate */

#define SAT_PAYLOAD 4096
#define SAT_MAX 100000

void sc_saturate(sc_client_t *a, sc_server_t *b, sc_sat_t *sat)
{
    memset(sat, 0, sizeof *sat);
    atomic_store(&b->gated, true);
    for (int i = 0;; i++) {
        ZT_CHECK(i < SAT_MAX);
        snprintf(sat->tag, sizeof sat->tag, "f%d", i);
        sc_done_init(&sat->done);
        sat->pending = sc_call(a, false, NULL, sat->tag, SAT_PAYLOAD);
        sat->started_ms = zt_now_ms();
        SC_EQ(zlink_call_start(sat->pending, sc_on_done, &sat->done), ZLINK_FW_OK);
        /* The harness's 100 ms, not scaled (a send timeout of a few
         * hundred ms must not end it first); the status confirms it. */
        if (!sc_done_wait_until(&sat->done, sat->started_ms + 100) &&
            sc_status(a->h).oneway_waiting == 1)
            return; /* pending, and waiting for room */
        /* It completed (or completes now: the window was short). */
        if (!sc_done_wait(&sat->done, 5000)) {
            zlink_host_status_t st = sc_status(a->h);
            zlink_host_capacity_t bc;
            memset(&bc, 0, sizeof bc);
            bc.struct_size = sizeof bc;
            (void)zlink_host_capacity(b->h, &bc);
            ZT_FAIL("send %s neither completed nor waited for room: A oneway_waiting %llu, "
                    "dispatcher_in_use %llu; B permits %llu, queued %llu, state %d, "
                    "gate waiting %d",
                    sat->tag, (unsigned long long)st.oneway_waiting,
                    (unsigned long long)st.dispatcher_in_use,
                    (unsigned long long)bc.permits_in_use, (unsigned long long)bc.queued_jobs,
                    bc.pressure_state, sc_gate_waiting(&b->gate));
        }
        pthread_mutex_lock(&sat->done.lk);
        int r = sat->done.result;
        pthread_mutex_unlock(&sat->done.lk);
        SC_EQ(r, ZLINK_FW_OK);
        zlink_call_release(sat->pending);
        sc_done_destroy(&sat->done);
        sat->accepted++;
    }
}

void sc_sat_free(sc_sat_t *sat)
{
    if (sat->pending != NULL)
        zlink_call_release(sat->pending);
    sat->pending = NULL;
    sc_done_destroy(&sat->done);
}

void sc_send_gated(sc_client_t *a, sc_server_t *s, sc_done_t *dd, zlink_call_t **dc, int n)
{
    atomic_store(&s->gated, true);
    for (int i = 0; i < n; i++) {
        char tag[SC_TAG_MAX];
        snprintf(tag, sizeof tag, "d%d", i + 1);
        sc_done_init(&dd[i]);
        dc[i] = sc_call(a, false, NULL, tag, 0);
        SC_EQ(zlink_call_start(dc[i], sc_on_done, &dd[i]), ZLINK_FW_OK);
        if (i == 0)
            ZT_EVENTUALLY(sc_gate_waiting(&s->gate) == 1, 5000);
        if (i == 1)
            ZT_EVENTUALLY(sc_capacity(s->h).pressure_state == ZLINK_PRESSURE_PAUSED, 5000);
    }
}
