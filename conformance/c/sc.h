/*
 * sc.h — the default harness of the SC cases (framework-contract.md §7,
 * "Default harness"; seed 000 §17), public API only.
 *
 * Design notes
 * ------------
 * A case builds hosts in this process: A (the caller) and one or more
 * servers (B, or S1 and S2). In SC_MESH mode every host is a node of mesh
 * "m" with its name as routing id; a server listens and serves channel
 * "svc" at a weight, A connects to each server (manual peers) and is a
 * client of "svc". In SC_CS mode a server is a ClientServer server of
 * "svc" and A a ClientServer client naming every server's endpoint.
 *
 * What a server does with a record is set in its sc_server_t before the
 * record arrives: pass the gate first (gated), and for a request reply at
 * once, hold the reply call, reply after a delay on the timer thread, or
 * fail the turn. Two more packets test the terminators from inside a
 * handler turn: a one-way "sync" makes the handler try zlink_call_wait and
 * zlink_host_shutdown (sync_*), a one-way "yield" zlink_call_yield
 * (yield_*). Every handler records the payload's tag (the payload's
 * text up to its first NUL, at most 31 bytes) in the server's recorder.
 *
 * Threads and locks: handlers run on the servers' worker threads and
 * completion callbacks on the dispatcher; the recorder, the held-reply list
 * and each completion collector (sc_done_t) have their own mutex, leaves
 * all. The timer (sc_timer_t) is one thread of the case that runs due
 * entries in due order, with no lock held while an entry runs.
 *
 * Waiting: every wait ends on the observable event it waits for; its
 * timeout (scaled by ZT_TIMEOUT_MULT) is only the failure bound. The one
 * deliberate observation window is "pending" (the harness's definition:
 * a call has not completed after 100 ms), confirmed by the host's status.
 */
#ifndef CONF_SC_H
#define CONF_SC_H

#include "conf.h"
#include "zlink.h"
#include "zltest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define SC_MAX_TRANSPORTS 3
#define SC_MAX_SERVERS 3
#define SC_TAG_MAX 32

/* Fails the case unless the framework result r is want, naming both. */
#define SC_EQ(r, want)                                                                   \
    do {                                                                                 \
        int sc_r_ = (int)(r), sc_w_ = (int)(want);                                       \
        if (sc_r_ != sc_w_)                                                              \
            ZT_FAIL("%s = %s (%d), expected %s (%d)", #r, zlink_result_name(sc_r_), sc_r_, \
                    zlink_result_name(sc_w_), sc_w_);                                    \
    } while (0)

/* The transports of a case, from its "transports" parameter. */
size_t sc_transports(const conf_params_t *params, const char **out);
/* Runs round(tr) once per transport of the case's "transports", in order. */
void sc_each_transport(const conf_params_t *params, void (*round)(const char *tr));
/* The instant ms milliseconds from now on clock (a pthread_cond_timedwait
 * deadline for a condition variable of that clock). */
struct timespec sc_abstime(clockid_t clock, int64_t ms);

/* ------------------------------------------------------------- the gate */

/* A latch handlers wait on; may be closed again. */
typedef struct sc_gate {
    pthread_mutex_t lk;
    pthread_cond_t cv;
    bool open;
    int waiting;
} sc_gate_t;

void sc_gate_init(sc_gate_t *g);
void sc_gate_pass(sc_gate_t *g);
void sc_gate_open(sc_gate_t *g);
void sc_gate_close(sc_gate_t *g);
int sc_gate_waiting(sc_gate_t *g);
void sc_gate_destroy(sc_gate_t *g);

/* ---------------------------------------------------------- the recorder */

typedef struct sc_rec {
    pthread_mutex_t lk;
    size_t count, cap;
    char (*seen)[SC_TAG_MAX];
} sc_rec_t;

void sc_rec_init(sc_rec_t *r);
void sc_rec_free(sc_rec_t *r);
size_t sc_rec_count(sc_rec_t *r);
/* How many records had tag. */
int sc_rec_has(sc_rec_t *r, const char *tag);

/* ------------------------------------------------------------- the timer */

typedef void sc_timer_fn(void *arg);

typedef struct sc_timer_entry {
    int64_t due_ms;
    uint64_t seq;
    sc_timer_fn *fn;
    void *arg;
} sc_timer_entry_t;

typedef struct sc_timer {
    pthread_mutex_t lk;
    pthread_cond_t cv;
    sc_timer_entry_t *heap;
    size_t len, cap;
    uint64_t seq;
    bool stop;
    pthread_t thread;
} sc_timer_t;

void sc_timer_start(sc_timer_t *t);
/* Runs fn(arg) on the timer thread at due_ms (zt_now_ms clock). */
void sc_timer_at(sc_timer_t *t, int64_t due_ms, sc_timer_fn *fn, void *arg);
/* Runs what is still scheduled (each at its time), then joins the thread. */
void sc_timer_finish(sc_timer_t *t);

/* --------------------------------------------------- completion collector */

/* What one call's completion callback saw. */
typedef struct sc_done {
    pthread_mutex_t lk;
    pthread_cond_t cv;
    int calls;          /* callbacks run for the call */
    int result;
    uint32_t remote_code;
    int64_t at_ms;      /* when the first callback ran */
    char reply[SC_TAG_MAX];
    char message[64];
    pthread_t thread;   /* the thread the callback ran on */
    int in_runtime;     /* zlink_in_runtime_context() in the callback */
} sc_done_t;

void sc_done_init(sc_done_t *d);
void sc_done_destroy(sc_done_t *d);
/* The zlink_completion_fn of sc_done_t (user = the collector); never
 * releases the call. */
void sc_on_done(zlink_call_t *call, const zlink_outcome_t *o, void *user);
/* Waits up to ms (scaled) for the first callback; true once it ran. */
bool sc_done_wait(sc_done_t *d, int ms);
/* Waits until the absolute time until_ms (zt_now_ms clock, not scaled):
 * for a scenario's own instants ("cancel at 100 ms"). */
bool sc_done_wait_until(sc_done_t *d, int64_t until_ms);
/* The first callback's result (-1 before it ran). */
int sc_done_result(sc_done_t *d);
/* Waits for the first callback; fails the case after ms (scaled). */
void sc_done_expect(sc_done_t *d, int ms);
int sc_done_calls(sc_done_t *d);

/* ------------------------------------------------------------- the hosts */

typedef enum sc_mode { SC_MESH = 1, SC_CS = 2 } sc_mode_t;

typedef enum sc_reply_mode {
    SC_REPLY_NOW = 0,   /* answer with the request's own payload */
    SC_REPLY_HOLD,      /* take the reply call and keep it (sc_server_held) */
    SC_REPLY_DELAY,     /* answer after delay_min..delay_max ms (timer) */
    SC_REPLY_FAIL       /* end the turn failed: "cancelled timeout" */
} sc_reply_mode_t;

typedef struct sc_held {
    zlink_call_t *reply;
    char tag[SC_TAG_MAX];
} sc_held_t;

typedef struct sc_server {
    /* set before sc_server_open */
    const char *name;      /* host name and mesh routing id */
    int weight;            /* mesh: weight in "svc" (default 100 when < 0) */
    int max_jobs;          /* 0: the default */
    uint64_t hwm;          /* 0: the default; else SNDHWM and RCVHWM */
    bool zero_channel;     /* mesh: also serve "zero" at weight 0 */
    /* behaviour, may change while serving */
    atomic_bool gated;
    atomic_int reply_mode; /* sc_reply_mode_t */
    int delay_min, delay_max;
    sc_timer_t *timer;     /* SC_REPLY_DELAY */
    /* state */
    zlink_host_t *h;
    sc_mode_t mode;
    char bound[256];
    sc_gate_t gate;
    sc_rec_t rec;
    atomic_int pings;
    atomic_int replies_sent; /* delayed replies started */
    atomic_int sync_wait_rc, sync_shutdown_rc, sync_ran;
    atomic_int yield_rc, yield_ran, yield_fn_ran; /* the "yield" handler */
    pthread_mutex_t held_lk;
    sc_held_t *held;
    size_t nheld, held_cap;
    uint64_t rng;
} sc_server_t;

typedef struct sc_client {
    /* set before sc_client_open */
    uint64_t hwm;             /* 0: the default */
    int64_t send_timeout;     /* 0: unset (root fallback) */
    int64_t root_send_timeout; /* 0: unset (1 s) */
    bool extra_channels;      /* mesh: also a client of "none" and "zero" */
    /* state */
    zlink_host_t *h;
    sc_mode_t mode;
} sc_client_t;

/* Creates and starts a server on transport tr ("inproc", "tcp"). Set the
 * configuration fields (zeroed struct plus name) first. */
void sc_server_open(sc_server_t *s, sc_mode_t mode, const char *tr, const char *tag);
/* Creates and starts A with the servers srv[0..n) as peers (mesh) or
 * endpoints (CS); returns when A can reach each of them: mesh peers ready
 * on both ends, CS servers each answered a ping. */
void sc_client_open(sc_client_t *a, sc_mode_t mode, sc_server_t **srv, size_t n);
/* Shuts the host down (2 s deadline) if still serving, and frees it; the
 * server's gate is opened first and held replies are released unstarted. */
void sc_server_close(sc_server_t *s);
void sc_client_close(sc_client_t *a);
/* Releases every held reply call unstarted. */
void sc_server_drop_held(sc_server_t *s);
size_t sc_server_nheld(sc_server_t *s);
/* Takes the held reply of tag out of the list (NULL if none). */
zlink_call_t *sc_server_take_held(sc_server_t *s, const char *tag);

/* ------------------------------------------------------------- calls */

/* A call from a to channel "svc" (or channel) with packet "m" and payload
 * tag, padded with NUL bytes to size (0: just the tag). */
zlink_call_t *sc_call(sc_client_t *a, bool request, const char *channel, const char *tag,
                      size_t size);
/* A node-direct call from a to node rid of mesh "m". */
zlink_call_t *sc_node_call(zlink_host_t *h, bool request, const char *rid, const char *tag);
/* Finishes c with zlink_call_wait; the result. */
int sc_wait(zlink_call_t *c, zlink_outcome_t *o);
/* A's status (fails the case on error). */
zlink_host_status_t sc_status(zlink_host_t *h);
int64_t sc_metric(zlink_host_t *h, const char *name, const char *labels);

/* "Saturate B" (framework-contract.md §7): b has max_jobs 1, hwm 16 KiB
 * and is gated; a (hwm 16 KiB) sends 4 KiB one-ways "f0", "f1" ... to
 * "svc" until one stays pending 100 ms with a's status showing a one-way
 * waiting for room. The pending one is returned (its collector in *pending,
 * its tag in pending_tag); *accepted gets the count of the others, which
 * all completed normally. */
typedef struct sc_sat {
    zlink_call_t *pending;
    sc_done_t done;
    int64_t started_ms;
    char tag[SC_TAG_MAX];
    int accepted;
} sc_sat_t;

void sc_saturate(sc_client_t *a, sc_server_t *b, sc_sat_t *sat);
void sc_sat_free(sc_sat_t *sat);

/* Gates s and starts one-ways "d1".."d<n>" from a to "svc" (n >= 2), each
 * with its collector dd[i] (initialised here; the caller destroys it) and
 * call dc[i] (the caller releases it); returns once d1 waits at s's gate
 * and, after d2, s (max_jobs 1) is PAUSED. */
void sc_send_gated(sc_client_t *a, sc_server_t *s, sc_done_t *dd, zlink_call_t **dc, int n);

/* ------------------------------------------------ small host helpers */

/* A fresh endpoint of transport tr into buf: "tcp://127.0.0.1:0", or an
 * inproc name unique in this process (tag, name, pid and a counter). */
void sc_endpoint(char *buf, size_t cap, const char *tr, const char *tag, const char *name);
/* A mesh host of mesh "m" named name (also its routing id), listening on
 * a fresh endpoint of tr unless listen is false, with M = max_jobs (0:
 * the default). Not started; fails the case on error. */
zlink_host_t *sc_mesh_host(const char *name, const char *tr, bool listen, int64_t max_jobs);
/* Shuts h down (2 s deadline) and destroys it; fails the case on error. */
void sc_host_end(zlink_host_t *h);
/* h's job-queue capacity (zlink_host_capacity; fails the case on error). */
zlink_host_capacity_t sc_capacity(zlink_host_t *h);
/* The status of owner (kind, name) on h (fails the case on error). */
zlink_owner_status_t sc_owner_status(zlink_host_t *h, zlink_owner_kind_t kind, const char *name);

/* The label sets of zlink.mesh_node.messages.dropped, one per reason;
 * "reason=no_handler" first. */
#define SC_NREASONS 5
extern const char *const sc_drop_reasons[SC_NREASONS];
/* The sum of h's messages.dropped over every reason. */
int64_t sc_dropped(zlink_host_t *h);
/* Fails the case, naming who and the reason, unless h dropped nothing. */
void sc_expect_no_drops(zlink_host_t *h, const char *who);

/* -------------------------------------------- raw-wire encoding (sc_wire.c) */

/* Big-endian stores and load of the service wire (doc/protocol.md §14). */
void sc_put_u32(uint8_t *b, uint32_t v);
void sc_put_u64(uint8_t *b, uint64_t v);
uint64_t sc_get_u64(const uint8_t *b);

/* A frame built in a fixed buffer; a write past it fails the case. */
typedef struct sc_wire {
    uint8_t b[512];
    size_t n;
} sc_wire_t;

/* Empties w. */
void sc_wire_init(sc_wire_t *w);
/* Appends n bytes of p. */
void sc_wire_bytes(sc_wire_t *w, const void *p, size_t n);
/* Appends v big-endian. */
void sc_wire_u8(sc_wire_t *w, uint8_t v);
void sc_wire_u16(sc_wire_t *w, uint16_t v);
void sc_wire_u32(sc_wire_t *w, uint32_t v);
void sc_wire_u64(sc_wire_t *w, uint64_t v);
/* Appends s with its one-byte length (s at most 255 bytes). */
void sc_wire_l8(sc_wire_t *w, const char *s);
/* Appends the magic "ZM" 1, the command byte and the flags byte. */
void sc_wire_prefix(sc_wire_t *w, uint8_t command, uint8_t flags);
/* m gets a copy of w's bytes (the caller closes or sends m). */
void sc_wire_msg(zlink_msg_t *m, const sc_wire_t *w);
/* parts[0..*n) (*n = 2) of a framework record to channel: a CHANNEL_SEND
 * (correlation 0) or CHANNEL_REQUEST (no timeout) with the flags byte and
 * op_low op, and the envelope of packet "m", content type "", around
 * payload[0..size). The caller owns the parts (sends or closes them). */
void sc_wire_record(zlink_msg_t *parts, size_t *n, uint8_t flags, uint64_t correlation,
                    uint64_t op, const char *channel, const void *payload, size_t size);

/* A deadline-exceeded check: elapsed must not be below want_ms and at most
 * want_ms + 250 ms (the tolerance scaled by ZT_TIMEOUT_MULT). */
#define SC_ON_TIME(elapsed, want_ms) sc__on_time(__FILE__, __LINE__, (elapsed), (want_ms))
void sc__on_time(const char *file, int line, int64_t elapsed, int64_t want_ms);

#endif /* CONF_SC_H */
