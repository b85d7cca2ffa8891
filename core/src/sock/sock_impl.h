/*
 * sock_impl.h — the socket core's structures: the socket, its pipes, its
 * options and its completion queue. Only the socket core (sock/) and the
 * patterns (protocols/, which are extensions of it) include this; the
 * engine, the poller and the facade see the opaque types and functions of
 * socket.h. core/src/LAYERS names who may include it, and
 * //core:layering_test enforces that.
 *
 * Design notes on locking, threads and the close gate are in socket.h.
 */
#ifndef ZL_SOCK_IMPL_H
#define ZL_SOCK_IMPL_H

#include "sock/socket.h"

/* Completion queue and wait tokens (completion.h has the functions). */
struct zl_cq_rec {
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
};

/* An admitted request waiting for its one outcome (request.c). */
struct zl_req {
    zl_hnode_t by_seq;               /* cq.reqs, key = seq */
    size_t heap_at;                  /* its index in cq.req_heap */
    uint64_t id;                     /* completion id */
    uint64_t seq;                    /* wire sequence */
    uint64_t pipe_id;                /* the connection it left on */
    int64_t deadline_ns;
    void *user_context;
    zlink_routing_id_t peer_rid;     /* ROUTER requests: the target */
};

/* A REQUEST a ROUTER received and has not answered (request.c). */
struct zl_rtoken {
    zl_hnode_t by_token;             /* cq.rtokens, key = token */
    zl_hnode_t by_source;            /* cq.rtoken_sources, key = hash of
                                        (rid, seq) */
    bool busy;                       /* checked out by a reply in progress */
    uint64_t token;
    uint64_t seq;
    zlink_routing_id_t rid;          /* the source */
};

struct zl_token {
    struct zl_token *next;
    uint64_t id;
    void *user_context;
    uint64_t since;                  /* s->credit_seq before the refusal */
    bool for_request;                /* a refused request: ROUTER peers only */
    bool has_rid;                    /* ROUTER/STREAM: the target is rid */
    zlink_routing_id_t rid;
};

struct zl_cq {
    zl_cq_rec_t *head, *tail;
    size_t nrecs;
    size_t nwritable;                /* WRITABLE records queued (POLLOUT) */
    zl_token_t *tokens;
    size_t ntokens;
    zl_hmap_t reqs;                  /* admitted requests by sequence */
    zl_req_t **req_heap;             /* the same, a min-heap by deadline */
    size_t req_heap_cap;
    size_t nreqs;
    bool late_replies;               /* a request timed out: its reply may
                                        still come and must be taken (and
                                        dropped) even with none pending */
    zl_hmap_t rtokens;               /* ROUTER: unanswered requests by token */
    zl_hmap_t rtoken_sources;        /* ... and by (source, sequence) */
    size_t nrtokens;
    zl_rtoken_t *spare_rtoken;       /* ROUTER: allocated before a receive,
                                        so a REQUEST's token cannot fail */
    uint64_t next_rtoken;
    uint64_t next_seq;               /* wire sequence of our requests */
    uint64_t next_id;
    void *owner;                     /* the poller owning POLLCOMPLETION */
};


/* Option values (sockopt.c has one table row per option, protocols their
 * own rows); the engine reads a copy at bind, connect and accept. */
struct zl_sockopts {
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
};

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
    bool linked;              /* in s->pipes and s->pipes_by_rid */
    zl_hnode_t rid_node;      /* in s->pipes_by_rid, keyed by rid's hash */
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
    /* Receive readiness (recv.c): the fair queue looks only at the pipes on
     * the socket's ready ring. A pipe leaves it when the queue was found
     * empty (which arms the queue's reader notify), and comes back through
     * the socket's lock-free inbox when that notify fires. */
    bool rx_ready;            /* on s->rx_ring (under s->lk) */
    struct zl_pipe *rx_next, *rx_prev; /* the ring, circular (under s->lk) */
    _Atomic bool rx_posted;   /* on s->rx_inbox, holding a reference */
    struct zl_pipe *rx_post_next; /* the inbox's link (set by the poster) */
    _Atomic int refs;
    void *proto;              /* pattern data (PUB subscriptions ...) */
};

/* Pattern operations. All but send/recv/setopt/getopt run under s->lk. */
struct zl_proto_ops {
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
};

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
    _Atomic(zl_pipe_t *) rx_inbox;    /* pipes whose input became non-empty,
                                         pushed by their writers' notify
                                         (zl_pipe_in_notify), taken whole by
                                         the fair queue */
    _Atomic int waiters;              /* callers about to sleep on wseq (a
                                         spinning caller is not one: its
                                         wake costs no system call) */
    _Atomic bool spin_hot;            /* low-latency mode: the last wait
                                         ended within the window (send.c) */
    _Atomic unsigned spin_cold;       /* waits since it did not: every
                                         eighth spins as a probe */
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
    zl_hmap_t pipes_by_rid;           /* the linked pipes by their rid (ROUTER
                                         and STREAM find a route here) */
    zl_pipe_t *rx_ring;               /* the ready ring at its rotor: the
                                         next pipe the fair queue looks at */
    size_t rx_nready;                 /* pipes on the ring */
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

/* Under s->lk: the peer behind p is paused (not a send target now). */
static inline bool zl_pipe_paused(const zl_pipe_t *p)
{
    return p->remote_paused;
}

/* Pipes in s->pipes: iteration under s->lk. */
#define ZL_FOREACH_PIPE(s, p) for (zl_pipe_t *p = (s)->pipes; p != NULL; p = p->next)

#endif /* ZL_SOCK_IMPL_H */
