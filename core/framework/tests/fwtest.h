/*
 * fwtest.h — helpers for the framework's tests (public API only): hosts
 * with a ClientServer channel or a mesh node, a gate (latch) handlers can
 * wait on, a recorder of what handlers saw, and a completion collector.
 */
#ifndef FWTEST_H
#define FWTEST_H

#include "zltest.h"
#include "zlink.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* Fails the case unless r == want, naming both results. */
#define FW_EQ(r, want)                                                                \
    do {                                                                              \
        int fw_r_ = (int)(r), fw_w_ = (int)(want);                                    \
        if (fw_r_ != fw_w_)                                                           \
            ZT_FAIL("%s = %s (%d), expected %s (%d)", #r, zlink_result_name(fw_r_),   \
                    fw_r_, zlink_result_name(fw_w_), fw_w_);                          \
    } while (0)

/* A latch: handlers wait until open. */
typedef struct fw_gate {
    pthread_mutex_t lk;
    pthread_cond_t cv;
    int open;
    int waiting;
} fw_gate_t;

static inline void fw_gate_init(fw_gate_t *g)
{
    pthread_mutex_init(&g->lk, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->open = 0;
    g->waiting = 0;
}

static inline void fw_gate_pass(fw_gate_t *g)
{
    pthread_mutex_lock(&g->lk);
    g->waiting++;
    pthread_cond_broadcast(&g->cv);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->lk);
    g->waiting--;
    pthread_mutex_unlock(&g->lk);
}

static inline void fw_gate_open(fw_gate_t *g)
{
    pthread_mutex_lock(&g->lk);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->lk);
}

static inline int fw_gate_waiting(fw_gate_t *g)
{
    pthread_mutex_lock(&g->lk);
    int n = g->waiting;
    pthread_mutex_unlock(&g->lk);
    return n;
}

/* What handlers saw: payloads in arrival order. */
#define FW_REC_MAX 4096
typedef struct fw_recorder {
    pthread_mutex_t lk;
    int count;
    char seen[FW_REC_MAX][32];
    fw_gate_t *gate; /* when set, handlers pass it before recording */
    int fail;        /* request handlers end the turn failed */
    int no_reply;    /* request handlers never reply */
    int respond;     /* request handlers answer with zlink_turn_respond */
    atomic_int respond_again; /* result of a second zlink_turn_respond */
} fw_recorder_t;

static inline void fw_recorder_init(fw_recorder_t *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lk, NULL);
}

static inline int fw_recorder_count(fw_recorder_t *r)
{
    pthread_mutex_lock(&r->lk);
    int n = r->count;
    pthread_mutex_unlock(&r->lk);
    return n;
}

static inline int fw_recorder_has(fw_recorder_t *r, const char *what)
{
    int n = 0;
    pthread_mutex_lock(&r->lk);
    for (int i = 0; i < r->count; i++)
        n += strcmp(r->seen[i], what) == 0;
    pthread_mutex_unlock(&r->lk);
    return n;
}

static inline void fw_record(fw_recorder_t *r, zlink_turn_t *turn)
{
    size_t n = 0;
    const void *p = zlink_turn_payload(turn, &n);
    char buf[32] = {0};
    if (n > sizeof buf - 1)
        n = sizeof buf - 1;
    if (p != NULL)
        memcpy(buf, p, n);
    pthread_mutex_lock(&r->lk);
    if (r->count < FW_REC_MAX)
        memcpy(r->seen[r->count++], buf, sizeof buf);
    pthread_mutex_unlock(&r->lk);
}

/* Handlers: record the payload (after the gate, if any); a request is
 * answered with its own payload. */
static inline void fw_on_send(zlink_turn_t *turn, void *user)
{
    fw_recorder_t *r = user;
    if (r->gate != NULL)
        fw_gate_pass(r->gate);
    fw_record(r, turn);
    zlink_turn_end(turn, 0, NULL);
}

/* The reply call of fw_on_request: the payload back as "echo". (A function
 * of its own: gcc 12 took the escaped address of fw_on_request's length for
 * a dangling pointer at this use, -Wdangling-pointer.) */
static inline void fw_echo_reply(zlink_turn_t *turn, const void *p, size_t n)
{
    zlink_fw_result_t rc;
    zlink_call_t *reply = zlink_turn_reply(turn, &rc);
    if (reply != NULL) {
        zlink_call_set_payload(reply, "echo", "", p, n);
        zlink_call_start(reply, NULL, NULL);
        zlink_call_release(reply);
    }
}

static inline void fw_on_request(zlink_turn_t *turn, void *user)
{
    fw_recorder_t *r = user;
    if (r->gate != NULL)
        fw_gate_pass(r->gate);
    fw_record(r, turn);
    if (r->fail) {
        zlink_turn_end(turn, 1, "cancelled timeout"); /* the text must not matter */
        return;
    }
    if (r->no_reply) {
        zlink_turn_end(turn, 0, NULL);
        return;
    }
    size_t n = 0;
    const void *p = zlink_turn_payload(turn, &n);
    if (r->respond) {
        /* on a one-way turn it is refused and leaves the turn open */
        zlink_fw_result_t rr = zlink_turn_respond(turn, "echo", "", p, n);
        atomic_store(&r->respond_again, zlink_turn_respond(turn, "echo", "", p, n));
        if (rr != ZLINK_FW_OK)
            zlink_turn_end(turn, 1, "respond failed");
        return;
    }
    fw_echo_reply(turn, p, n);
    zlink_turn_end(turn, 0, NULL);
}

/* Endpoints for one test transport ("inproc", "ipc", "tcp"). */
static inline void fw_endpoint(char *buf, size_t cap, const char *tr, const char *tag)
{
    if (strcmp(tr, "tcp") == 0)
        snprintf(buf, cap, "tcp://127.0.0.1:0");
    else if (strcmp(tr, "ipc") == 0)
        zt_ipc_endpoint(buf, cap, tag);
    else
        snprintf(buf, cap, "inproc://fw-%s-%d", tag, (int)getpid());
}

/* A started host with a CS server channel "svc" (handlers "m" for send and
 * request recording into rec) on endpoint ep; *bound gets the address. */
static inline zlink_host_t *fw_cs_server(const char *name, const char *ep, fw_recorder_t *rec,
                                         char *bound, size_t cap)
{
    zlink_fw_result_t rc;
    zlink_host_t *h = zlink_host_new(name, &rc);
    ZT_CHECK(h != NULL);
    FW_EQ(zlink_host_add_cs_server(h, "svc", ep), ZLINK_FW_OK);
    FW_EQ(zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_SEND, "m",
                                 fw_on_send, rec),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_REQUEST, "m",
                                 fw_on_request, rec),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_start(h), ZLINK_FW_OK);
    FW_EQ(zlink_host_endpoint(h, "svc", bound, cap), ZLINK_FW_OK);
    return h;
}

static inline zlink_host_t *fw_cs_client(const char *name, const char *ep)
{
    zlink_fw_result_t rc;
    zlink_host_t *h = zlink_host_new(name, &rc);
    ZT_CHECK(h != NULL);
    FW_EQ(zlink_host_add_cs_client(h, "svc", ep), ZLINK_FW_OK);
    FW_EQ(zlink_host_start(h), ZLINK_FW_OK);
    return h;
}

/* A call of kind to "svc" with payload text, not finished. */
static inline zlink_call_t *fw_call(zlink_host_t *h, int request, const char *text)
{
    zlink_fw_result_t rc;
    zlink_call_t *c = request ? zlink_call_request_to_channel(h, "svc", &rc)
                              : zlink_call_send_to_channel(h, "svc", &rc);
    ZT_CHECK(c != NULL);
    FW_EQ(zlink_call_set_payload(c, "m", "", text, strlen(text)), ZLINK_FW_OK);
    return c;
}

/* Finishes c synchronously; returns the result, copies the reply text. */
static inline int fw_wait(zlink_call_t *c, char *reply, size_t cap)
{
    zlink_outcome_t o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    int rc = zlink_call_wait(c, &o);
    if (reply != NULL && cap > 0) {
        size_t n = o.payload_size < cap - 1 ? o.payload_size : cap - 1;
        if (o.payload != NULL)
            memcpy(reply, o.payload, n);
        reply[n] = '\0';
    }
    return rc;
}

/* A completion collector for zlink_call_start. */
typedef struct fw_done {
    atomic_int calls;
    atomic_int result;
    atomic_int in_submit; /* raised while a submit is on the caller's stack */
    atomic_int on_submit_stack;
    pthread_t submitter;
    atomic_int same_thread;
} fw_done_t;

static inline void fw_on_done(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    fw_done_t *d = user;
    if (atomic_load(&d->in_submit))
        atomic_fetch_add(&d->on_submit_stack, 1);
    if (pthread_equal(pthread_self(), d->submitter))
        atomic_fetch_add(&d->same_thread, 1);
    atomic_store(&d->result, o->result);
    atomic_fetch_add(&d->calls, 1);
    zlink_call_release(call);
}

#endif
