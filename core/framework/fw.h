/*
 * fw.h — the framework runtime's internal structures (doc/framework.md).
 *
 * Design notes
 * ------------
 * Threads:
 *  - application threads build and finish calls; a submit runs on the
 *    caller's thread up to the Core's DONTWAIT send (no thread hop);
 *  - one process-wide DISPATCHER thread (dispatch.c) owns every framework
 *    socket's completion queue (REQUEST replies, WRITABLE edges), the call
 *    deadline heap and the completion lane: callbacks run there, one at a
 *    time, each on a new turn after the record or timer that decided it
 *    has been handled;
 *  - per host, one INGRESS thread (host.c) receives records from the
 *    host's ROUTERs (taking a job permit before each receive), answers
 *    control commands and queues handler turns on their gates, and a pool
 *    of WORKER threads runs the turns.
 * Every framework thread is a runtime context (zf_ctx_*).
 *
 * Locks, outermost first: host->lk (topology, gates, peers, permits), then
 * zf_disp.lk (operation slots, callback queue, deadline heap, waiters).
 * The handle table lock is a leaf. No lock is held across a Core call that
 * can wait, nor across an application callback.
 *
 * Exactly-once: a call that was accepted (zf_call_accept) is PENDING and
 * owns a dispatcher slot. Every path that can end it (reply, error reply,
 * deadline, cancel, shutdown, connection loss, admission) calls
 * zf_call_finish, which moves PENDING -> DONE under zf_disp.lk: the one that
 * does it wins; the others return false and only clean up their own state.
 */
#ifndef ZF_FW_H
#define ZF_FW_H

#include "zlink.h"
#include "wire.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------- objects */

enum zf_kind { ZF_KIND_HOST = 1, ZF_KIND_CALL = 2, ZF_KIND_TURN = 3 };

/* The head of every handle object: a reference count and its destructor. */
typedef struct zf_obj {
    atomic_int refs;
    int kind;
    void (*destroy)(struct zf_obj *);
    void *handle; /* the public handle value */
} zf_obj_t;

/* handle.c. Registers o (taking one reference for the table); NULL on
 * ENOMEM. */
void *zf_handle_add(zf_obj_t *o);
/* The object of handle h if it is live and of kind, with a reference the
 * caller drops with zf_obj_unref; NULL otherwise. */
zf_obj_t *zf_handle_get(const void *h, int kind);
/* Ends handle h (later gets fail) and drops the table's reference. */
void zf_handle_remove(zf_obj_t *o);
void zf_obj_ref(zf_obj_t *o);
void zf_obj_unref(zf_obj_t *o);

/* Runtime execution context (thread-local depth). */
void zf_ctx_enter(void);
void zf_ctx_leave(void);
bool zf_ctx_active(void);

int64_t zf_now_ns(void);
/* A zeroed allocation for objects made per call or per record: glibc's
 * calloc bypasses the per-thread cache, and gcc turns malloc + memset
 * into calloc, so the zeroing happens in another function. */
void *zf_zalloc(size_t size);
/* Validates a public timeout (ns): rounds up to ms; 0 and *ms set on
 * success, ZLINK_FW_INVALID_ARGUMENT otherwise. */
int zf_timeout_ms(int64_t ns, int *ms);
/* Name check: 1..max bytes, valid UTF-8, no NUL (NUL-terminated input). */
bool zf_name_ok(const char *s, size_t max);

/* --------------------------------------------------------------- calls */

typedef struct zf_host zf_host_t;
typedef struct zf_turn zf_turn_t;
typedef struct zf_sock zf_sock_t;

enum zf_call_kind {
    ZF_CALL_SEND_CHANNEL = 1,
    ZF_CALL_REQUEST_CHANNEL,
    ZF_CALL_SEND_NODE,
    ZF_CALL_REQUEST_NODE,
    ZF_CALL_REPLY
};

enum zf_term { ZF_TERM_NONE = 0, ZF_TERM_START, ZF_TERM_WAIT };

enum zf_state {
    ZF_ST_NEW = 0,  /* being built */
    ZF_ST_PENDING,  /* accepted: owns a slot, waits for its outcome */
    ZF_ST_DONE,     /* outcome decided; callback queued or waiter woken */
    ZF_ST_CLOSED    /* callback returned / waiter took it; slot released */
};

/* Admission of the call's record to its Core socket. */
enum zf_adm {
    ZF_ADM_NONE = 0,    /* not tried yet */
    ZF_ADM_SUBMITTING,  /* a thread is inside the Core send */
    ZF_ADM_WAITING,     /* refused for room; waits for its WRITABLE edge */
    ZF_ADM_ACCEPTED     /* the Core accepted it: never sent again */
};

/* Calls waiting for room at one target, oldest first (call.c). */
typedef struct zf_waitq {
    struct zf_call *head, *tail;
} zf_waitq_t;

typedef struct zf_call {
    zf_obj_t obj;
    zf_host_t *host;    /* counted reference (host->calls_alive) */
    int kind;
    /* Where it goes. A reply needs neither target nor rid, an operation
     * no reply_rid: they share their bytes (keeps the object small enough
     * for the allocator's per-thread cache). */
    char *target;                 /* channel or mesh name (owned); NULL for replies */
    union {
        zlink_routing_id_t rid;       /* node calls: the node; else the pick */
        zlink_routing_id_t reply_rid; /* reply calls: the requester */
    };
    /* payload */
    char *packet, *content_type;  /* one block with data (set_payload) */
    uint8_t *data;
    size_t size;
    bool has_payload;
    uint8_t *meta;                /* ZF_META_MAX bytes once metadata is set */
    size_t meta_len;
    uint8_t meta_count;
    int64_t timeout_ns;           /* 0: the default */
    /* reply calls: where the answer goes */
    zf_sock_t *reply_sock;
    uint64_t reply_token;
    uint64_t reply_corr, reply_op_high, reply_op_low;
    int reply_kind;               /* -1: ok reply; else an error kind */
    char *reply_message;

    atomic_int building;          /* a setter or the first terminator is inside */
    atomic_int term;              /* ZF_TERM_*: set once, by the first terminator */
    atomic_int cancelled_early;   /* zlink_call_cancel before it was accepted */
    /* completion; all below under zf_disp.lk */
    zlink_completion_fn fn;
    void *user;
    int state;
    bool counted;                 /* holds a dispatcher slot */
    uint32_t slot;
    uint32_t gen;
    uint64_t op_high, op_low, route_id;
    int64_t deadline;             /* the heap key; 0 when not in the heap */
    int64_t request_deadline;
    int64_t send_deadline;        /* admission: the family's send timeout */
    size_t heap_index;
    int adm;
    bool writable_seen;
    int later_result;             /* decided while a thread was inside the Core */
    const char *later_message;
    zf_waitq_t *waitq;            /* its target's queue (NULL: replies) */
    bool queued;
    struct zf_call *wnext, *wprev;
    bool ready;                   /* outcome delivered (wait / callback) */
    bool in_start;                /* zlink_call_start has not returned */
    bool deferred;                /* its callback waits for that return */
    /* zlink_call_start_held: the slot outlives fn until the binding says
     * its own callback returned (zlink_call_callback_done). */
    bool held;                    /* started with zlink_call_start_held */
    bool hold_ran;                /* the dispatcher has called fn */
    bool hold_returned;           /* fn returned; the slot waits for done */
    bool hold_done;               /* callback_done (or release) came */
    bool adm_counted;             /* counted in host->oneway_waiting */
    zf_sock_t *sock;              /* the socket it was submitted on */
    size_t nparts;
    struct zf_call *next_cb;      /* callback queue */
    struct zf_call *next_host;    /* host's pending list */
    struct zf_call *prev_host;
    /* the outcome */
    zlink_outcome_t outcome;
    /* The encoded record while not accepted, then (requests) the reply's
     * envelope frame the outcome's payload points into: never both. */
    union {
        zlink_msg_t parts[3];
        zlink_msg_t reply_msg;
    };
    bool has_reply_msg;
    char *out_text;               /* the reply's message, packet, content type */
} zf_call_t;

/* call.c */
int zf_call_finish(zf_call_t *c, int result, uint32_t remote_code, const char *message);
void zf_call_finish_reply(zf_call_t *c, zlink_completion_t *rec);
void zf_call_on_writable(zf_call_t *c, const zlink_completion_t *rec);
void zf_call_free_parts(zf_call_t *c);
/* A reply call of host h (turn.c fills in where it goes). */
zf_call_t *zf_call_new_reply(zf_host_t *h, zlink_fw_result_t *result);
/* Shutdown's end: every call of h still pending completes as shutdown. */
void zf_calls_shutdown(zf_host_t *h);

/* ---------------------------------------------------------- dispatcher */

#define ZF_UCTX_CALL (1ull << 63)
#define ZF_UCTX_HELLO 1u
#define ZF_UCTX_PROBE 2u

struct zf_disp {
    pthread_mutex_t lk;
    pthread_cond_t waiters;     /* zlink_call_wait */
    /* operation slots (ZLINK_DISPATCHER_CAPACITY) */
    zf_call_t **slots;
    uint32_t *gens;
    uint32_t *free_list;
    uint32_t free_count;
    uint32_t in_use;            /* reserved slots: pending + callbacks */
    uint64_t op_high;           /* this process lifecycle's OperationId high */
    uint64_t op_low_next;
    /* the callback lane */
    zf_call_t *cb_head, *cb_tail;
    /* the deadline heap */
    zf_call_t **heap;
    size_t heap_len, heap_cap;
    int64_t armed;              /* the deadline the thread sleeps for */
    bool sleeping;
    /* the thread, its poller and its command queue */
    pthread_t thread;
    bool stop;
    int wake_fd;
    void *poller;
    void *ctx;                  /* the process-wide Core context */
    int users;                  /* started hosts */
    struct zf_cmd *cmd_head, *cmd_tail;
    struct zf_sock *watch_list; /* sockets to add to the poller (async) */
};

extern struct zf_disp zf_disp;

/* The Core HWM settings a host passes to the Core context (seed 001 §2),
 * untouched: profile -1, budget 0 and memory_limit 0 mean unset. */
typedef struct zf_core_hwm {
    int profile;                /* ZLINK_PROFILE_* or -1 */
    uint64_t budget;            /* ZLINK_CORE_BUDGET_BYTES or 0 */
    uint64_t memory_limit;      /* ZLINK_AUTO_HWM_MEMORY_LIMIT_BYTES or 0 */
} zf_core_hwm_t;

/* Called by zlink_host_start (host->lk held; blocks on the process-wide
 * init lock only). Starts the dispatcher and the Core context with the
 * first host (users counts started hosts) and gives the first host's set
 * Core HWM values to the new context. A later host, while the context
 * lives, must ask for the values in force (unset takes them):
 * otherwise INVALID_OPERATION and nothing is acquired. 0 or a framework
 * result. */
int zf_disp_acquire(void **ctx, const zf_core_hwm_t *hwm);
void zf_disp_release(void);
/* Adds / removes a socket's completion queue to the dispatcher's poller;
 * waits until the thread has done it. */
int zf_disp_watch(zf_sock_t *s);
void zf_disp_unwatch(zf_sock_t *s);
/* Under zf_disp.lk: asks the thread to watch s from now on, without
 * waiting (a CS server ROUTER is watched only once one of its replies had
 * to wait for room: its completion queue holds nothing else). */
void zf_disp_watch_locked(zf_sock_t *s);
/* Under zf_disp.lk: reserve / release a slot for c. */
int zf_disp_reserve(zf_call_t *c);
void zf_disp_unreserve(zf_call_t *c);
/* Under zf_disp.lk: a call whose callback (fn, and for a held start the
 * binding's callback too) has returned: CLOSED, its slot and its count in
 * callbacks_queued given back. The caller drops the runtime's reference
 * after unlocking. */
void zf_disp_callback_closed(zf_call_t *c);
/* Under zf_disp.lk: (re)arms c's deadline (0 removes it). */
void zf_disp_set_deadline(zf_call_t *c, int64_t deadline);
/* Under zf_disp.lk: queues c's callback. Returns true when the dispatcher
 * must be woken (the caller wakes it after unlocking). */
bool zf_disp_queue_callback(zf_call_t *c);
void zf_disp_wake(void);
zf_call_t *zf_disp_call_of(uint64_t uctx);

/* -------------------------------------------------------------- sockets */

enum zf_sock_role { ZF_SOCK_CS_SERVER = 1, ZF_SOCK_CS_CLIENT, ZF_SOCK_MESH };

/* One Core socket of a host. */
struct zf_sock {
    zf_host_t *host;
    int role;
    void *s;                    /* the Core socket */
    char name[ZF_NAME_MAX + 1]; /* channel (CS) or mesh name */
    char endpoint[256];         /* listen endpoint; CS client: the first */
    char (*more_endpoints)[256]; /* CS client: further servers */
    size_t nmore;
    /* Runtime setters write these while calls read them: atomics. */
    _Atomic int64_t send_timeout;    /* ns; 0 = the host's root fallback */
    _Atomic int64_t request_timeout; /* ns; 0 = the host's default (mesh only) */
    uint64_t sndhwm, rcvhwm;
    bool hwm_set[2];
    struct zf_mesh *mesh;       /* ZF_SOCK_MESH */
    struct zf_gate *gate;       /* CS server: the channel's gate */
    zf_waitq_t waitq;           /* CS client: calls waiting for room */
    /* ingress (under host->lk): the receive rotation and the permit FIFO */
    int rx_index;               /* place in the host's rotation, -1: none */
    bool src_waiting;           /* in the host's FIFO of sources waiting for a permit */
    bool rx_pollin;             /* leader only: the host's poller has POLLIN on it */
    int64_t src_wait_since;
    struct zf_sock *src_next;
    bool watched;               /* under zf_disp.lk: in the dispatcher's poller */
    bool watch_pending;         /* under zf_disp.lk: on zf_disp.watch_list */
    struct zf_sock *next_watch;
    struct zf_sock *next;
};

/* ------------------------------------------------------------- the host */

/* A handler key and its function. */
typedef struct zf_handler {
    int owner;
    char owner_name[ZF_NAME_MAX + 1];
    int kind;
    char packet[ZF_NAME_MAX + 1];
    zlink_handler_fn fn;
    void *user;
    bool handoff;               /* ZLINK_HANDLER_HANDOFF: fn only hands the turn over */
    struct zf_gate *gate;
    struct zf_handler *next;
} zf_handler_t;

/* An execution gate: turns of one gate never overlap. It is the serial
 * owner of its records (002 §8's execution object): a record is counted
 * as queued (count and bytes) from the receive that accepted it until its
 * turn opens, and as running from then until the turn's terminal end; the
 * move between the two happens in one host->lk hold (no gap, no double
 * count). accepted_seq numbers the records the gate accepted; a record
 * refused before the gate (no handler, malformed, draining) takes none. */
typedef struct zf_gate {
    zf_turn_t *head, *tail;     /* waiting turns */
    uint64_t accepted_seq;      /* the last accepted record's sequence */
    uint64_t queued, queued_bytes;
    uint64_t running, running_bytes;
    uint64_t handled;           /* turns that ended */
    bool busy;                  /* a turn is open */
    bool in_runq;
    struct zf_gate *next_run;
    struct zf_gate *next;
    int owner;
    char name[ZF_NAME_MAX + 1];
} zf_gate_t;

/* A channel membership of a peer (hello/admit/update) or of the node. */
typedef struct zf_member {
    char channel[ZF_NAME_MAX + 1];
    int weight;
} zf_member_t;

typedef struct zf_peer {
    struct zf_mesh *mesh;
    zlink_routing_id_t rid;
    bool manual;                /* we connect to it and say hello */
    char endpoint[256];
    bool routed;                /* the Core has a route to it */
    bool ready;                 /* hello/admit done and alive */
    bool hello_pending;
    bool draining;              /* its last UPDATE said it drains */
    uint64_t lifecycle;
    uint64_t update_seq;
    zf_member_t *members;
    size_t nmembers;
    int64_t last_seen;
    int64_t next_probe;
    bool probe_pending;
    uint64_t nonce;
    zf_waitq_t waitq;           /* under zf_disp.lk: calls waiting for room */
    struct zf_peer *next;
} zf_peer_t;

typedef struct zf_mesh {
    zf_sock_t *sock;
    char name[ZF_NAME_MAX + 1];
    zlink_routing_id_t rid;
    uint64_t lifecycle;
    uint64_t update_seq;
    zf_member_t *members;       /* this node's server channels */
    size_t nmembers;
    char **clients;             /* channels this node calls */
    size_t nclients;
    zf_peer_t *peers;
    zf_gate_t *node_gate;       /* node-direct handlers */
    bool members_dirty;         /* announce an UPDATE */
    uint64_t rng;
} zf_mesh_t;

/* A control message from another thread to the ingress thread. */
typedef struct zf_hmsg {
    int what;                   /* ZF_HMSG_* */
    zf_peer_t *peer;
    int result;                 /* request_result of the control request */
    zf_rec_t rec;
    zlink_msg_t parts[3];
    size_t nparts;
    struct zf_hmsg *next;
} zf_hmsg_t;

enum { ZF_HMSG_HELLO_DONE = 1, ZF_HMSG_PROBE_DONE };

struct zf_host {
    zf_obj_t obj;
    char name[65];
    pthread_mutex_t lk;
    pthread_cond_t cv;          /* workers; shutdown waits */
    atomic_int state;
    /* options */
    _Atomic int64_t request_timeout, send_timeout, shutdown_timeout;
    pthread_mutex_t shutdown_lk; /* one shutdown of this host at a time */
    int handler_threads;
    uint64_t max_jobs;          /* M, effective (set at start) */
    /* the job queue's configuration (seed 001 §2, §6); under lk */
    int jq_profile;             /* zlink_job_queue_profile_t */
    uint64_t jq_manual_max;     /* 0: unset */
    int pause_pct, resume_pct;
    uint64_t procs_override;    /* 0: detect */
    uint64_t procs;             /* P in use */
    uint64_t pause_count, resume_count;
    zf_core_hwm_t core_hwm;     /* the Core's HWM settings, under lk */
    /* topology */
    zf_sock_t *socks;
    zf_handler_t *handlers;
    zf_gate_t *gates;
    /* threads */
    void *ctx;
    pthread_t *workers;         /* host threads (host_main) */
    int nworkers;
    void *thread_args;          /* host.c: one per host thread */
    int leader;                 /* id of the thread with the ingress role, 0 none */
    bool leader_in_turn;        /* the leader runs a turn */
    int64_t leader_turn_since;
    int idle;                   /* host threads waiting for work */
    int watcher;                /* the idle thread that looks periodically */
    bool stop;
    int wake_fd;
    void *poller;
    zf_hmsg_t *msg_head, *msg_tail;
    /* turns */
    zf_gate_t *run_head, *run_tail;
    uint64_t turns_running, turns_queued;
    uint64_t permits_in_use;
    bool ingress_waits_permit;
    /* pressure (seed 001 §6), under lk unless noted */
    uint64_t peak_permits;
    int pressure;               /* zlink_pressure_state_t */
    int64_t paused_since;       /* monotonic ns, 0 while RUNNING */
    int64_t cum_pause_ns;
    uint64_t m_trans_paused, m_trans_running;
    zf_sock_t *src_head, *src_tail; /* sources waiting for a permit, oldest first */
    uint64_t nsrc_waiting;
    int nrx;                    /* sockets in the receive rotation */
    int rx_cursor;              /* rx_index where the last rotation stopped */
    uint64_t m_capacity_waits;
    int64_t m_capacity_wait_ns;
    _Atomic uint64_t flow_seq;  /* bumped on every pressure transition */
    /* the applier (pressure_apply) and the core_hwm.* readers, under flow_lk */
    pthread_mutex_t flow_lk;
    _Atomic uint64_t flow_applied; /* the flow_seq last applied */
    int flow_state_applied;     /* the state the sockets have */
    bool flow_closed;           /* sockets are closing: apply nothing */
    atomic_llong m_flow_failures;
    /* calls (under zf_disp.lk) */
    zf_call_t *pending;
    uint64_t requests_inflight;
    uint64_t oneway_waiting;
    uint64_t callbacks_queued;  /* on the lane, or held back until their
                                 * zlink_call_start returns (deferred) */
    /* shutdown */
    bool draining;              /* under zf_disp.lk */
    bool replies_closed;        /* under zf_disp.lk: shutdown's last sweep of
                                 * pending calls began; no reply starts now */
    bool stop_waits;            /* under host->lk: shutdown waits for turns */
    /* metrics (atomics) */
    atomic_llong m_dropped_no_handler, m_dropped_decode, m_dropped_shutdown,
        m_request_timeouts, m_sel_no_member, m_sel_not_ready, m_sel_draining,
        m_protocol_errors;
};

/* host.c */
zf_host_t *zf_host_get(zlink_host_t *h);
int zf_host_serving(zf_host_t *h);
void zf_host_wake(zf_host_t *h);
void zf_host_post(zf_host_t *h, zf_hmsg_t *m);
zf_sock_t *zf_host_find_sock(zf_host_t *h, int role, const char *name);
int64_t zf_sock_send_timeout(zf_sock_t *s);
int64_t zf_sock_request_timeout(zf_sock_t *s);
/* Mesh routing for a call (under host->lk): the peer of a node call or the
 * select-one pick of a channel call. 0 or an error result. */
int zf_mesh_route(zf_host_t *h, zf_call_t *c, zf_sock_t **sock);
/* Under host->lk: a permit was released. */
void zf_host_permit_release(zf_host_t *h);
/* Turn t ended (any thread, no lock held): its gate opens. */
void zf_gate_turn_ended(zf_host_t *h, zf_turn_t *t);

/* ----------------------------------------------------------------- turns */

struct zf_turn {
    zf_obj_t obj;
    zf_host_t *host;
    zf_gate_t *gate;
    zf_handler_t *handler;
    zf_sock_t *sock;
    zlink_routing_id_t src;     /* the sender's routing id */
    uint64_t token;             /* Core reply token (requests) */
    uint64_t seq;               /* its gate's accepted sequence number */
    uint64_t bytes;             /* the record's bytes (every part) */
    zlink_msg_t parts[3];
    size_t nparts;
    zf_rec_t rec;
    char *packet, *ctype;
    bool replied;
    bool ended;
    void *meta_cache;           /* metadata values handed out (turn.c) */
    struct zf_turn *next;
};

/* turn.c */
/* Fills a new turn for handler x from a received record and its decoded
 * form rec (parts owned by the turn on success, rec's views moved into
 * them). 0 or ENOMEM (the parts are given back). */
int zf_turn_init(zf_turn_t *t, zf_host_t *h, zf_handler_t *x, zf_sock_t *s,
                 const zlink_routing_id_t *src, uint64_t token, zlink_msg_t *parts,
                 size_t n, const zf_rec_t *rec);
/* Frees a turn that never ran (shutdown). */
void zf_turn_discard(zf_turn_t *t);
/* Worker thread: opens the turn and calls its handler. */
void zf_turn_run(zf_turn_t *t);
void zf_turn_free_parts(zf_turn_t *t);
/* Sends a framework error reply for a request that reached no handler. */
void zf_reply_error_raw(zf_sock_t *s, const zlink_routing_id_t *rid, uint64_t token,
                        const zf_rec_t *req, uint32_t terminal, const char *message);
uint32_t zf_terminal_of_kind(int kind);
int zf_kind_of_terminal(uint32_t terminal);

#endif
