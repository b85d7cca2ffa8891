/*
 * socket.h — the socket object shared by every pattern, its pipes, and the
 * calls the engine makes into it.
 *
 * Design notes
 *  - A socket owns a list of pipes, one per connected peer. A pipe has two
 *    zl_q_t: out (to the peer) and in (from the peer). For tcp and ipc the
 *    far end of both queues is an engine connection (zl_conn_t) running on
 *    an I/O thread; for inproc the far end is the peer socket's pipe, and
 *    the two pipes share their queues crosswise (engine/inproc.c). A ROUTER-ROUTER pipe has
 *    a second pair without HWM, cmp_out / cmp_in, for the Completion lane
 *    (replies and FLOWSTATE; lane 1 of the engine, or a second inproc
 *    pair).
 *  - s->lk protects the pipe list, routing state and pattern state. Each
 *    queue has its own lock, taken after s->lk when both are needed.
 *  - Blocking calls attempt under s->lk, then sleep without it. A waiter
 *    counts itself in s->waiters and reads the wake sequence s->wseq before
 *    its final attempt; it sleeps on wseq (a futex: the kernel sleeps only
 *    while wseq still holds the value read) until wseq changes. Anything
 *    that may satisfy a waiter (a queue notify, an attach, shutdown) calls
 *    zl_socket_wake: wseq++, then a futex wake when somebody waits. Queue
 *    notifies fire only after the waiter set reader_idle/writer_blocked
 *    under the queue lock, so no wake-up is lost; the wake takes no lock,
 *    so a notify may run while its caller holds any socket or queue lock.
 *  - The public handle is a handle-table value (handle.h), never the
 *    socket's address. The close gate is the handle's slot word: a call
 *    resolves and enters in one CAS with zl_socket_enter (fails once the
 *    close is accepted) and leaves with zl_socket_leave. zlink_close takes
 *    the gate only while no other call is inside (else EBUSY), sets
 *    s->closed for the pinned observers (pollers), tears down, and releases
 *    the slot: from then on the handle is stale and every call answers as
 *    for a closed socket, before and after zlink_ctx_term alike, without
 *    touching the socket's memory.
 *  - Socket memory is not freed at close: the object stays (tag ZL_SOCK_DEAD)
 *    until zlink_ctx_term, or until the last pin after it.
 *  - Threads: API calls on application threads; attach, detach and control
 *    calls on I/O threads; nothing here blocks an I/O thread except s->lk.
 */
#ifndef ZL_SOCKET_H
#define ZL_SOCKET_H

#include "engine/transport.h"
#include "msg/queue.h"
#include "util/hmap.h"
#include "util/rid.h"
#include "wire/zmp.h"
#include "util/handle.h"
#include "zlink.h"

typedef struct zl_ctx zl_ctx_t;
typedef struct zl_socket zl_socket_t;
typedef struct zl_pipe zl_pipe_t;
typedef struct zl_conn zl_conn_t;          /* engine connection (engine.h) */
typedef struct zl_endpoint zl_endpoint_t;  /* engine listener/connecter */
typedef struct zl_sockopt zl_sockopt_t;    /* one option's row (sockopt.h) */

#define ZL_SOCK_TAG 0x5A534F43u  /* "ZSOC" */
#define ZL_SOCK_DEAD 0x5A444544u /* "ZDED" */

/* ---- readiness for pollers (socket.c) ----
 *
 * A poller registers a waker on every socket it watches; zl_socket_wake
 * calls each registered waker after bumping wseq, so a poller blocked on
 * many sockets is woken by any of them. A waker's wake function runs on
 * any thread with the socket's waker lock held (a leaf): it must only
 * signal (bump a futex word, write an eventfd), never take other locks.
 */
typedef struct zl_waker {
    struct zl_waker *next;
    void (*wake)(struct zl_waker *w);
} zl_waker_t;

/* Completion queue and wait tokens (completion.h has the functions). */
typedef struct zl_cq_rec {
    struct zl_cq_rec *next;
    int kind;                        /* ZLINK_COMPLETION_* */
    uint64_t id;
    void *user_context;
    zlink_routing_id_t peer_rid;
    int send_result;                 /* ZLINK_SEND_ADMITTED / _TERMINAL */
    int send_errno;
    int request_result;              /* REQUEST: ZLINK_REQUEST_* */
    zlink_msg_t *reply_parts;        /* REQUEST: owned until popped */
    size_t reply_count;
} zl_cq_rec_t;

/* An admitted request waiting for its one outcome (request.c). */
typedef struct zl_req {
    zl_hnode_t by_seq;               /* cq.reqs, key = seq */
    size_t heap_at;                  /* its index in cq.req_heap */
    uint64_t id;                     /* completion id */
    uint64_t seq;                    /* wire sequence */
    uint64_t pipe_id;                /* the connection it left on */
    int64_t deadline_ns;
    void *user_context;
    zlink_routing_id_t peer_rid;     /* ROUTER requests: the target */
} zl_req_t;

/* A REQUEST a ROUTER received and has not answered (request.c). */
typedef struct zl_rtoken {
    zl_hnode_t by_token;             /* cq.rtokens, key = token */
    zl_hnode_t by_source;            /* cq.rtoken_sources, key = hash of
                                        (rid, seq) */
    bool busy;                       /* checked out by a reply in progress */
    uint64_t token;
    uint64_t seq;
    zlink_routing_id_t rid;          /* the source */
} zl_rtoken_t;

typedef struct zl_token {
    struct zl_token *next;
    uint64_t id;
    void *user_context;
    uint64_t since;                  /* s->credit_seq before the refusal */
    bool for_request;                /* a refused request: ROUTER peers only */
    bool has_rid;                    /* ROUTER/STREAM: the target is rid */
    zlink_routing_id_t rid;
} zl_token_t;

typedef struct zl_cq {
    zl_cq_rec_t *head, *tail;
    size_t nrecs;
    size_t nwritable;                /* WRITABLE records queued (POLLOUT) */
    zl_token_t *tokens;
    size_t ntokens;
    zl_hmap_t reqs;                  /* admitted requests by sequence */
    zl_req_t **req_heap;             /* the same, a min-heap by deadline */
    size_t req_heap_cap;
    size_t nreqs;
    zl_hmap_t rtokens;               /* ROUTER: unanswered requests by token */
    zl_hmap_t rtoken_sources;        /* ... and by (source, sequence) */
    size_t nrtokens;
    uint64_t next_rtoken;
    uint64_t next_seq;               /* wire sequence of our requests */
    uint64_t next_id;
    void *owner;                     /* the poller owning POLLCOMPLETION */
} zl_cq_t;

/* Readiness bits (the values of ZLINK_POLLIN / ZLINK_POLLOUT). */
#define ZL_POLLIN 1
#define ZL_POLLOUT 2

/* Option values (sockopt.c has one table row per option, protocols their
 * own rows); the engine reads a copy at bind, connect and accept. */
typedef struct zl_sockopts {
    uint64_t sndhwm;          /* bytes, 0 = unlimited */
    uint64_t rcvhwm;
    int64_t maxmsgsize;       /* <= 0 unlimited */
    int sndtimeo;             /* ms, -1 infinite */
    int rcvtimeo;
    int linger;               /* ms, -1 infinite */
    int reconnect_ivl;        /* ms; -1 = no reconnect */
    int reconnect_ivl_max;    /* ms; 0 = no backoff */
    int backlog;
    int tcp_nodelay;
    int sndbuf, rcvbuf;       /* -1 = OS default */
    int tcp_keepalive;        /* -1 OS default, 0 off, 1 on */
    int tcp_keepalive_cnt;    /* probes; -1 = OS default */
    int tcp_keepalive_idle;   /* s before the first probe; -1 = OS default */
    int tcp_keepalive_intvl;  /* s between probes; -1 = OS default */
    int tos;                  /* IP_TOS / IPV6_TCLASS; 0 = OS default */
    int tcp_maxrt;            /* TCP_USER_TIMEOUT ms; 0 = OS default */
    char bind_device[16];     /* SO_BINDTODEVICE; "" = none */
    uint64_t affinity;        /* I/O threads for new endpoints; 0 = any */
    int immediate;            /* always 1 (sockopt.c) */
    int ipv6;
    int handshake_ivl;        /* ms; 0 = none */
    int connect_timeout;
    int zmp_metadata;
    int rid_dup_policy;
    uint32_t weight;          /* DEALER_WEIGHT / ROUTER_WEIGHT */
    int mandatory;            /* ROUTER */
    int probe;                /* DEALER/ROUTER */
    int request_timeout_ms;
    int conflate;
    int invert_matching;
    int pub_nodrop;
    int stream_notify;
    int stream_mode;          /* ZLINK_STREAM_RECV_* */
    zlink_routing_id_t rid;   /* own routing id (size 0 = none set) */
} zl_sockopts_t;

struct zl_pipe {
    zl_socket_t *sock;
    zl_q_t *out;              /* records to the peer (we write) */
    zl_q_t *in;               /* records from the peer (we read) */
    zl_conn_t *conn;          /* NULL for inproc */
    zl_endpoint_t *ep;        /* endpoint it came through, or NULL */
    zl_peer_info_t peer;
    zlink_routing_id_t rid;   /* how this socket names the peer (ROUTER) */
    uint64_t id;              /* connection id, unique in the context */
    int64_t swrr_acc;         /* DEALER smooth weighted round-robin */
    bool swrr_tried;          /* DEALER: refused during this selection */
    bool remote_paused;       /* the peer's receive flow is PAUSED */
    _Atomic uint64_t credit_stamp; /* s->credit_seq at this pipe's last wake
                                      edge (credit at LWM, attach, weight
                                      0 -> positive, RESUME) */
    bool reply_head_checked;  /* rxq head already looked at for replies */
    uint64_t flow_epoch_out;  /* last FLOWSTATE epoch we sent on this pipe */
    uint64_t flow_epoch_in;   /* last FLOWSTATE epoch we applied from it */
    int64_t flow_pause_start_ns; /* when this peer's current pause began */
    uint64_t attach_seq;      /* attach order, DEALER tiebreak */
    bool attached;            /* a route: the pattern may send to it */
    bool linked;              /* in s->pipes */
    bool ended;               /* transport gone; in-queue may hold records */
    bool inproc;
    zl_fq_t rxq;              /* records taken from in, not yet received
                                 (the socket's single consumer, under s->lk) */
    zl_q_t *cmp_out;          /* ROUTER-ROUTER Completion lane (lane 1):
                                 replies and FLOWSTATE to the peer, no HWM;
                                 NULL on single-lane pipes */
    zl_q_t *cmp_in;           /* Completion lane from the peer: replies */
    zl_fq_t cmp_rxq;          /* records taken from cmp_in (under s->lk) */
    zl_inproc_link_t *link;   /* inproc: the link to the peer's pipe */
    int link_side;            /* inproc: our side of it (engine.h) */
    struct zl_pipe *next, *prev; /* s->pipes */
    _Atomic int refs;
    void *proto;              /* pattern data (PUB subscriptions ...) */
};

/* Pattern operations. All but send/recv/setopt/getopt run under s->lk. */
typedef struct zl_proto_ops {
    int type;
    size_t proto_size;                  /* bytes of pattern state */
    void (*init)(zl_socket_t *s);
    void (*fini)(zl_socket_t *s);
    /* A handshaked pipe wants in. Return 0 to accept, or an errno to refuse
     * (the engine closes the connection). */
    int (*attach)(zl_socket_t *s, zl_pipe_t *p);
    /* The pipe's transport ended (its in-queue may still hold records). */
    void (*detach)(zl_socket_t *s, zl_pipe_t *p);
    /* A control frame arrived on p (WEIGHT, SUBSCRIBE, CANCEL). */
    void (*control)(zl_socket_t *s, zl_pipe_t *p, const zl_frame_t *f);
    /* Chooses the target pipe(s) for one record and pushes it (frames are
     * moved out on success, untouched otherwise). rid is the target for
     * ROUTER and STREAM, NULL otherwise. Returns 0, EAGAIN when no target
     * has room now (writer_blocked is registered on every refused queue, or
     * no pipe is attached yet: attach wakes the socket), or another errno
     * (EHOSTUNREACH, ...). NULL for patterns that cannot send. */
    int (*send)(zl_socket_t *s, const zlink_routing_id_t *rid, zl_frame_t *frames, size_t n);
    /* Called for every record popped by the fair queue; returns false to
     * drop it (SUB filtering). NULL accepts everything. */
    bool (*accept)(zl_socket_t *s, zl_pipe_t *p, zl_frame_t *frames, size_t n);
    /* The options only this type accepts (sockopt.h): they are looked up
     * before the shared rows and may shadow one. NULL when none. */
    const zl_sockopt_t *options;
    size_t noptions;
} zl_proto_ops_t;

struct zl_socket {
    _Atomic uint32_t tag;             /* ZL_SOCK_TAG until teardown ends (an
                                         internal marker; handles are checked
                                         in the handle table, never here) */
    int type;
    zl_tran_sock_t tran;              /* what the engine holds (transport.h) */
    zl_ctx_t *ctx;
    const zl_proto_ops_t *ops;
    zl_hslot_t *hslot;                /* the handle's slot: the close gate
                                         (fixed at creation) */
    zl_mutex_t lk;
    /* The wake word is written by I/O threads and peers on every wake-up:
     * padding keeps it off the lines of the fields read by every call. */
    char pad_wake[64];
    _Atomic uint32_t wseq;            /* bumped by every zl_socket_wake;
                                         blocked callers wait on it */
    _Atomic int waiters;
    _Atomic int ctl_pending;          /* inproc control frames to apply */
    _Atomic int nwakers;              /* pollers watching (fast check) */
    zl_mutex_t wake_lk;               /* leaf: guards wakers */
    zl_waker_t *wakers;
    _Atomic uint64_t pins;            /* pollers and monitors holding the
                                         memory, plus ZL_PINS_ORPHAN once the
                                         context is gone (one word, so exactly
                                         one party sees "no pins, orphan") */
    _Atomic int cq_edge;              /* a wake happened while tokens live */
    _Atomic uint64_t credit_seq;      /* counts wake edges of pipes */
    zl_cq_t cq;                       /* under lk */
    struct zl_monitor *monitor;       /* socket monitor, or NULL (monitor.c) */
    _Atomic int events_fd;            /* ZLINK_FD: an eventfd made at the first
                                         get, or -1 (sockopt.c) */
    zl_waker_t events_waker;          /* signals events_fd on every wake */
    int flow_state;                   /* -1 never set, 0 RUNNING, 1 PAUSED */
    uint64_t flow_paused_conns;       /* peers that currently pause us */
    uint64_t flow_pause_total, flow_resume_total, flow_stale_total;
    int64_t flow_last_pause_ns;       /* monotonic time of the last PAUSE */
    uint64_t flow_last_pause_ms;      /* how long the last completed pause lasted */
    _Atomic int64_t req_deadline;     /* earliest pending request deadline
                                         (INT64_MAX: none) for waiters */
    zl_pipe_t *last_pipe;             /* the pipe the last send chose */
    bool req_send;                    /* a request is being sent (DEALER
                                         picks only ROUTER peers) */
    bool reply_send;                  /* a reply is being sent (ROUTER:
                                         the Completion lane if the peer
                                         has one) */
    uint64_t recv_token;              /* ROUTER: token of the last receive */
    uint64_t route_gen;               /* ROUTER: bumped per route change */
    uint64_t route_acked;             /* route_gen at the last snapshot */
    uint64_t recv_route;              /* route of the last router receive */
    char pad_gate[64];
    _Atomic bool closed;              /* set once zlink_close took the gate;
                                         read by pollers of a pinned socket */
    char pad_end[63];
    zl_sockopts_t opts;               /* written under lk */
    zl_pipe_t *pipes;                 /* all pipes, attached or draining */
    size_t npipes;
    zl_pipe_t *rr_next;               /* fair-queue rotor (receive) */
    uint64_t attach_counter;
    zl_endpoint_t **eps;              /* bound and connected endpoints */
    struct zl_alias {
        char *endpoint;
        zlink_routing_id_t rid;
    } *aliases;                       /* ROUTER: CONNECT_ROUTING_ID per connect */
    size_t naliases;
    size_t neps, eps_cap;
    char last_endpoint[300];
    zlink_routing_id_t connect_rid;   /* ROUTER CONNECT_ROUTING_ID, one-shot */
    zlink_routing_id_t recv_rid;      /* storage behind the borrowed rid view */
    _Atomic int64_t maxmsgsize_now;   /* opts.maxmsgsize as last set, for
                                         the engine's per-packet snapshot
                                         (STREAM PACKET) without s->lk */
    int stream_mode_holds;            /* STREAM: binds/connects in progress
                                         (under lk): the mode may not change */
    bool stream_mode_fixed;           /* STREAM: one succeeded (under lk) */
    bool closing;
    _Atomic bool terminated;          /* ctx shut down: calls get ETERM */
    zl_frame_t *rx;                   /* receive scratch (under lk) */
    size_t stash_n;                   /* > 0: rx[0..stash_n) is a record handed
                                         back (SUB short topic), returned by
                                         the next receive */
    size_t rx_cap;
    struct zl_socket *ctx_next;       /* ctx list */
    void *proto;                      /* pattern state (ops->proto_size) */
};

/* ---- lifecycle (socket.c) ---- */

/* Resolves a socket handle and enters its close gate (one CAS on the
 * handle's slot; the handle value is never dereferenced). 0: *out is the
 * socket, and the caller must zl_socket_leave it exactly once. Otherwise
 * ESHUTDOWN (closed, or its close is running; before or after
 * zlink_ctx_term) or EFAULT (not a socket handle: NULL, another kind,
 * garbage). Any thread; no lock; never blocks. */
static inline int zl_socket_enter(const void *handle, zl_socket_t **out)
{
    void *obj;
    zl_hslot_t *slot;
    int rc = zl_handle_enter(handle, ZL_HANDLE_SOCKET, &obj, &slot);
    if (ZL_LIKELY(rc == 0)) {
        *out = obj;
        return 0;
    }
    return rc == EFAULT ? EFAULT : ESHUTDOWN;
}

/* Ends a call zl_socket_enter admitted. Any thread; one atomic op. */
static inline void zl_socket_leave(zl_socket_t *s)
{
    zl_handle_leave(s->hslot);
}

/* Wakes blocked callers of s if any (any thread, no locks held). */
void zl_socket_wake(zl_socket_t *s);
/* Queue-end notify adapter: arg is the socket. */
void zl_socket_notify(void *arg);

/* ---- pipes (socket.c) ----
 *
 * The engine reaches these through the operations table of
 * engine/transport.h (sock_tran_ops in socket.c); inproc calls them
 * directly. */

/* Offers the pipe to the pattern. Returns 0 when attached; otherwise an
 * errno and the pipe is already ended (the connection must close). */
int zl_socket_pipe_attach(zl_socket_t *s, zl_pipe_t *p);
/* The connection ended: no more records will arrive on p->in and p->out
 * is abandoned. The socket keeps the pipe until its in-queue is drained. */
void zl_socket_pipe_ended(zl_socket_t *s, zl_pipe_t *p);
/* Drops one pipe reference; frees at zero. */
void zl_pipe_unref(zl_pipe_t *p);

/* Snapshot of the options (inproc; the engine gets zl_tran_opts_t). */
void zl_socket_get_opts(zl_socket_t *s, zl_sockopts_t *out);
/* MAXMSGSIZE as the socket has it now (<= 0 unlimited), for decoders that
 * take the limit per message rather than per connection (STREAM PACKET:
 * at each packet's length prefix). Any thread, no lock (one atomic load). */
static inline int64_t zl_socket_maxmsgsize_now(zl_socket_t *s)
{
    return atomic_load_explicit(&s->maxmsgsize_now, memory_order_relaxed);
}
/* ROUTER: takes (clears) the CONNECT_ROUTING_ID alias for a connect. */
void zl_socket_take_connect_rid(zl_socket_t *s, zlink_routing_id_t *out);

void zl_socket_add_waker(zl_socket_t *s, zl_waker_t *w);
void zl_socket_remove_waker(zl_socket_t *s, zl_waker_t *w);

/* Level readiness of s for the ZL_POLLIN / ZL_POLLOUT bits in
 * events (other bits are ignored here): IN when a whole record can be
 * received, OUT when a send to some peer would find room (aggregate, not a
 * guarantee). Registers interest on every queue it finds not ready, so the
 * next change calls zl_socket_wake. Any thread; takes s->lk. A closed or
 * terminated socket reports nothing here (see zl_socket_state). */
int zl_socket_readiness(zl_socket_t *s, int events);

/* POLLCOMPLETION: whether the completion queue holds a record (publishes
 * recovered wait tokens first). Any thread; takes s->lk. */
bool zl_socket_completion_ready(zl_socket_t *s);
/* The one poller registration that owns POLLCOMPLETION: claim gives 0 or
 * EBUSY (another owner); release by the owner. Any thread. */
int zl_socket_completion_claim(zl_socket_t *s, void *owner);
void zl_socket_completion_release(zl_socket_t *s, void *owner);
/* POLLROUTE (ROUTER): whether the selected routes changed since the last
 * successful zlink_router_routes_snapshot. Any thread; takes s->lk. */
bool zl_socket_route_changed(zl_socket_t *s);

/* Lifecycle as a poller sees it (no lock): 0 open, ESHUTDOWN closed,
 * ETERM context shut down. */
int zl_socket_state(const zl_socket_t *s);

/* Pins keep a socket's memory after close and after zlink_ctx_term until
 * the last pin goes (a poller's registration, an open monitor). Any
 * thread. zl_socket_orphan (zlink_ctx_term) frees the socket now if
 * nothing pins it, else leaves the free to the last unpin. */
#define ZL_PINS_ORPHAN (1ull << 62)
void zl_socket_pin(zl_socket_t *s);
void zl_socket_unpin(zl_socket_t *s);
void zl_socket_orphan(zl_socket_t *s);

/* ---- socket monitor (monitor.c) ----
 *
 * Reports one event to s's monitor, if one is open and subscribed to the
 * event's bit; otherwise does nothing (cheap). p (may be NULL) supplies the
 * routing id and connection id; local/remote (may be NULL) the addresses.
 * Any thread, no locks held by the caller except possibly s->lk when
 * have_lock is true. Never blocks: a full monitor queue drops the event.
 */
void zl_socket_event(zl_socket_t *s, bool have_lock, uint32_t event, uint64_t value,
                     const zl_pipe_t *p, const char *local, const char *remote, uint32_t lane,
                     uint32_t flags);

/* ---- used by patterns and the facade (socket.c) ---- */

/* Creates a socket with the pattern ops (protocols/protocols.h) in ctx
 * (ctx->lk not held). NULL with errno. */
zl_socket_t *zl_socket_new(zl_ctx_t *ctx, const zl_proto_ops_t *ops);
/* The close gate has been taken by the caller: tears the socket down
 * (endpoints, pipes), leaving the memory for the context to free. */
void zl_socket_teardown(zl_socket_t *s);
/* Frees a torn-down socket (zlink_ctx_term). */
void zl_socket_free(zl_socket_t *s);
/* Marks the socket terminated (ctx shutdown) and wakes its waiters. */
void zl_socket_terminate(zl_socket_t *s);

int zl_socket_bind(zl_socket_t *s, const char *ep);
int zl_socket_connect(zl_socket_t *s, const char *ep);
int zl_socket_unbind(zl_socket_t *s, const char *ep);
int zl_socket_disconnect(zl_socket_t *s, const char *ep);
/* ROUTER/STREAM: starts closing the live pipe named rid. 0 or ENOENT. */
int zl_socket_disconnect_rid(zl_socket_t *s, const zlink_routing_id_t *rid);
/* zlink_setsockopt / zlink_getsockopt behind the facade (sockopt.c): the
 * option's row decides. Application thread; takes s->lk. 0 or an errno;
 * nothing is stored (set) or written (get) on failure. */
int zl_socket_setopt(zl_socket_t *s, int opt, const void *v, size_t n);
int zl_socket_getopt(zl_socket_t *s, int opt, void *v, size_t *n);

/* Sends one record made of the caller's parts (consumed on success and
 * failure). Waits per flags and SNDTIMEO. Returns 0 or an errno; a
 * DONTWAIT refusal for lack of room (EAGAIN) registers a wait token whose
 * id goes to *token (0 when none could be registered). */
int zl_socket_submit(zl_socket_t *s, const zlink_routing_id_t *rid, zlink_msg_t *parts,
                     size_t n, int flags, void *user_context, uint64_t *token);

/* zlink_request: like zl_socket_submit, and once admitted req (owned by
 * the socket from then on) waits for its outcome; req->deadline_ns holds
 * the caller's timeout in ms (0: the socket's REQUEST_TIMEOUT) on entry. */
int zl_socket_submit_request(zl_socket_t *s, const zlink_routing_id_t *rid, zlink_msg_t *parts,
                             size_t n, int flags, zl_req_t *req, uint64_t *req_id,
                             uint64_t *token);
/* zlink_reply / zlink_reply_error: sends a REPLY (error: an ERROR_REPLY,
 * whose parts[0] is the errno part) with seq to rid (waits per SNDTIMEO)
 * and retires reply_token when admitted. */
int zl_socket_submit_reply(zl_socket_t *s, const zlink_routing_id_t *rid, zlink_msg_t *parts,
                           size_t n, uint64_t seq, uint64_t reply_token, bool error);

/* The blocking discipline of every socket call: runs attempt(s, arg)
 * under s->lk until it returns something other than EAGAIN, DONTWAIT is
 * set, or the timeout read from *timeo_opt (under s->lk, at the first
 * attempt) expires. ETERM / ESHUTDOWN once the socket is shut down or
 * closing. No locks held by the caller. */
int zl_socket_wait_for(zl_socket_t *s, int flags, const int *timeo_opt,
                       int (*attempt)(zl_socket_t *s, void *arg), void *arg);
/* Like zl_socket_submit but the first frame is prepended from (topic,len). */
int zl_socket_submit_topic(zl_socket_t *s, const char *topic, zlink_msg_t *parts, size_t n,
                           int flags);
/* Receives one whole record into parts[0..cap) per flags and RCVTIMEO.
 * skip_first moves frame 0 into *first instead of parts (SUB topic).
 * On ENOBUFS *count is the needed count and nothing was consumed.
 * *pipe_rid (optional) receives the source pipe's routing id view.
 * Returns 0 or an errno. */
int zl_socket_receive(zl_socket_t *s, zlink_msg_t *first, zlink_msg_t *parts, size_t cap,
                      size_t *count, int flags, const zlink_routing_id_t **pipe_rid);

/* Puts a record the last receive returned back, to be returned first by
 * the next receive (after BUFFER_TOO_SMALL on a SUB topic). Takes s->lk.
 * It goes back into the receive scratch it came out of, which still has
 * room for it, so this needs no memory: returns 0 and owns the parts. ENOMEM
 * only for a record that did not come from the last receive (the caller
 * keeps the parts). */
int zl_socket_stash(zl_socket_t *s, zlink_msg_t *first, zlink_msg_t *parts, size_t n);
/* Under s->lk: the ROUTER alias given with CONNECT_ROUTING_ID for the
 * connect that made ep (size 0 if none). */
bool zl_socket_alias_for(zl_socket_t *s, const zl_endpoint_t *ep, zlink_routing_id_t *out);

/* Under s->lk: pushes a record to one pipe's out queue; returns 0, EAGAIN
 * (full, writer_blocked set), EPIPE (pipe gone) or ENOMEM (no memory for
 * the queue to grow). The frames are moved out on 0 only. */
int zl_pipe_push(zl_pipe_t *p, zl_frame_t *frames, size_t n, bool control);
/* Under s->lk: applies inproc control frames the peers queued (cheap when
 * none: one atomic load). */
void zl_socket_apply_controls(zl_socket_t *s);
/* ---- request / reply (request.c) ---- */

/* Under s->lk: moves every REPLY / ERROR_REPLY at the head of p's input
 * into the completion queue (a reply behind unread DATA waits). Returns 0
 * when a non-reply record is at the head (in p->rxq), EAGAIN when the
 * input is empty, EPIPE when it is empty and its writer is gone. */
int zl_req_drain_replies(zl_socket_t *s, zl_pipe_t *p);
/* Under s->lk: completes the requests of every reply queued on p's
 * Completion lane (ROUTER-ROUTER; nothing otherwise). Only completion
 * observation (zl_cq_process) and a pipe's end call it, so receives never
 * touch that lane; a late reply waits there until the next observation
 * with requests pending, or the pipe's end. */
void zl_req_drain_cmp(zl_socket_t *s, zl_pipe_t *p);
/* Under s->lk: whether a ROUTER has all ZL_CQ_SLOTS reply tokens in use
 * (a REQUEST cannot be received until one is answered or forgotten). */
bool zl_req_tokens_full(const zl_socket_t *s);
/* Under s->lk: completes expired requests as TIMED_OUT and refreshes
 * s->req_deadline. */
void zl_req_expire(zl_socket_t *s);
/* Under s->lk: every request that left on p ends NOT_CONNECTED. */
void zl_req_pipe_ended(zl_socket_t *s, zl_pipe_t *p);
/* Under s->lk: a ROUTER received a REQUEST (first frame f) from p:
 * returns its reply token (nonzero) or 0 when none can be kept. */
uint64_t zl_req_token_new(zl_socket_t *s, zl_pipe_t *p, const zl_frame_t *f);
/* Under s->lk: whether p's peer already has an unanswered request with
 * this sequence (reusing a live sequence is a protocol violation). */
bool zl_req_seq_live(zl_socket_t *s, const zl_pipe_t *p, uint64_t seq);
/* Under s->lk: closes the connection behind an engine pipe now (ROUTER
 * handover); p stops being a route at once and ends when the engine is
 * done. Nothing for inproc pipes. */
void zl_pipe_close(zl_pipe_t *p);
/* Under s->lk: p's peer broke the protocol: its connection closes (inproc
 * pipes cannot misbehave this way). */
void zl_pipe_violation(zl_socket_t *s, zl_pipe_t *p);
/* Under s->lk: retires every reply token of source rid (its removal). */
void zl_req_forget_source(zl_socket_t *s, const zlink_routing_id_t *rid);
/* Under s->lk: makes room for one more admitted request (the completion
 * record it will need is reserved now, so its outcome cannot fail later).
 * 0 or ENOBUFS / ENOMEM. */
int zl_req_reserve(zl_socket_t *s);
/* Under s->lk: r was pushed to s->last_pipe and now waits for its outcome
 * (zl_req_reserve made room for it). */
void zl_req_admitted(zl_socket_t *s, zl_req_t *r);
/* Under s->lk: the reply for token was admitted; retires the token. */
void zl_req_token_used(zl_socket_t *s, uint64_t token);
/* zlink_request inside the socket's gate, arguments checked: sends the
 * request (parts consumed, as the send rules say, except on EINVAL,
 * ENOTSUP and ENOMEM, where the caller still owns them) and on 0 sets
 * *id_out to its completion id; on a DONTWAIT refusal to the wait token's
 * id (0 when none). Returns 0 or an errno (ENOENT: NONE to an unknown
 * ROUTER target). Takes s->lk; may wait per flags and SNDTIMEO. */
int zl_req_submit(zl_socket_t *s, const zlink_routing_id_t *rid, zlink_msg_t *parts, size_t n,
                  int flags, uint32_t timeout_ms, void *user_context, uint64_t *id_out);
/* zlink_reply / zlink_reply_error inside the router's gate, arguments
 * checked (token nonzero, src_rid set): checks the token out (EBUSY while
 * another reply uses it), sends the REPLY or (error > 0) the ERROR_REPLY,
 * and retires the token once admitted. Parts are consumed in every case.
 * 0, ENOTSUP (not a ROUTER), ENOENT (unknown token or source gone), EBUSY,
 * ENOMEM, or a send's errno. Takes s->lk; may wait per SNDTIMEO. */
int zl_req_reply(zl_socket_t *s, const zlink_routing_id_t *src_rid, uint64_t token, int error,
                 zlink_msg_t *parts, size_t n);
/* Under s->lk: frees requests and tokens (close). */
void zl_req_clear(zl_socket_t *s);

/* ---- receive-flow state (flow.c), DEALER and ROUTER ---- */

/* Stores the socket's receive-flow state and, when it changed, tells every
 * attached peer (FLOWSTATE with the next per-connection epoch). Any
 * thread; takes s->lk. 0 or an errno. */
int zl_flow_set(zl_socket_t *s, int state);
/* Under s->lk: a new pipe learns the current state (if ever set). 0, or
 * ENOMEM when the FLOWSTATE could not be queued (the attach is refused). */
int zl_flow_attach(zl_socket_t *s, zl_pipe_t *p);
/* Under s->lk: applies a FLOWSTATE control from p's peer (ignores a
 * malformed one; a duplicate or older epoch counts as stale). Returns true
 * when f was a FLOWSTATE frame. */
bool zl_flow_control(zl_socket_t *s, zl_pipe_t *p, const zl_frame_t *f);
/* Under s->lk: a control frame f reached a pipe that already ended; a
 * FLOWSTATE among them counts as stale (no event). */
void zl_flow_foreign(zl_socket_t *s, const zl_frame_t *f);
/* Under s->lk: the peer behind p is paused (not a send target now). */
static inline bool zl_pipe_paused(const zl_pipe_t *p)
{
    return p->remote_paused;
}

/* Records a wake edge of p (its stamp becomes a new credit_seq) and wakes
 * its socket: wait tokens aimed at p become WRITABLE. Any thread, no lock
 * (the out queue's writer-end notify). */
void zl_pipe_credit_notify(void *arg);
void zl_pipe_stamp(zl_pipe_t *p);

/* Under s->lk: PROBE — queues one empty record to a new pipe. 0, or ENOMEM
 * (nothing queued; the attach that asked for it is refused). */
int zl_pipe_send_probe(zl_pipe_t *p);
/* Under s->lk: queues a control frame (flags, body copied) to one pipe's
 * peer. Returns 0, EPIPE (the pipe is gone: dropped) or ENOMEM (nothing
 * queued; the peer's view is unchanged). Attach-time callers refuse the
 * pipe on ENOMEM; callers that tell several peers use the reservation
 * below so that they can fail before any peer was told. */
int zl_pipe_send_control(zl_pipe_t *p, uint8_t flags, const void *body, size_t len);
/* Under s->lk, which must stay held until the send: makes sure the next
 * zl_pipe_send_control_msg of a control of this kind to p cannot fail for
 * lack of memory. 0, EPIPE (ended) or ENOMEM. */
int zl_pipe_control_reserve(zl_pipe_t *p, uint8_t flags, const void *body, size_t len);
/* Under s->lk: like zl_pipe_send_control with a prepared body, which is
 * shared (the caller keeps its own reference). */
int zl_pipe_send_control_msg(zl_pipe_t *p, uint8_t flags, const zlink_msg_t *body);
/* Under s->lk: sends one control to every attached pipe, all or nothing:
 * 0, or ENOMEM when the body or room on any pipe's queue could not be had
 * (then no pipe got it). */
int zl_socket_broadcast_control(zl_socket_t *s, uint8_t flags, const void *body, size_t len);

/* Pipes in s->pipes: iteration helpers under s->lk. */
#define ZL_FOREACH_PIPE(s, p) for (zl_pipe_t *p = (s)->pipes; p != NULL; p = p->next)

/* Removes an ended and drained pipe from the socket (under s->lk). */
void zl_socket_reap_pipe(zl_socket_t *s, zl_pipe_t *p);


#endif /* ZL_SOCKET_H */
