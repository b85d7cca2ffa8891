/*
 * zlink/framework.h — the framework runtime's part of the public C ABI
 * (version node ZLINK_1.1). Included by zlink.h; never include it alone.
 *
 * The framework runs services on top of the Core: a Host serves channels
 * (ClientServer, RouteMesh) with handlers, and calls (send / request, to a
 * channel or to a mesh node) finish exactly once with one of the outcomes
 * seed 000 defines. Every rule (deadlines, admission waits, the completion
 * race, cancellation, shutdown, error kinds) is decided here in C; a
 * language binding only projects the call object's terminators onto its
 * async types. doc/abi.md states each function's thread, ownership and
 * lifetime rules; doc/framework.md explains the model.
 *
 * Handles (zlink_host_t, zlink_call_t, zlink_turn_t) are opaque values, not
 * addresses, checked by every function like the Core's: NULL, a forged
 * value, a handle of another kind or of a destroyed object gives
 * ZLINK_FW_INVALID_HANDLE and changes nothing.
 *
 * Framework calls do not set zlink_errno(): their result value says all.
 */
#ifndef ZLINK_FRAMEWORK_H
#define ZLINK_FRAMEWORK_H

#ifndef ZLINK_H
#error "include zlink.h, not zlink/framework.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ error kinds
 *
 * The 13 framework error kinds, numbered the same in every language
 * (framework-contract.md §3). There is no "cancelled" kind: a cancelled
 * call ends with ZLINK_FW_CANCELLED, which bindings map to their native
 * cancelled type. Nothing is ever classified from message text.
 */
#define ZLINK_ERROR_KINDS(X)                    \
    X(ZLINK_ERROR_NOT_FOUND, 0)                 \
    X(ZLINK_ERROR_ALREADY_EXISTS, 1)            \
    X(ZLINK_ERROR_TYPE_MISMATCH, 2)             \
    X(ZLINK_ERROR_NOT_CONFIGURED, 3)            \
    X(ZLINK_ERROR_REJECTED, 4)                  \
    X(ZLINK_ERROR_UNAVAILABLE, 5)               \
    X(ZLINK_ERROR_CAPACITY_EXCEEDED, 6)         \
    X(ZLINK_ERROR_DEADLINE_EXCEEDED, 7)         \
    X(ZLINK_ERROR_SHUTTING_DOWN, 8)             \
    X(ZLINK_ERROR_PROTOCOL_ERROR, 9)            \
    X(ZLINK_ERROR_INVALID_OPERATION, 10)        \
    X(ZLINK_ERROR_DATA_LOST, 11)                \
    X(ZLINK_ERROR_INTERNAL_FAILURE, 12)

#define ZLINK_ERROR_KIND_ENUMERATOR_(name, value) name = value,
typedef enum zlink_error_kind {
    ZLINK_ERROR_KINDS(ZLINK_ERROR_KIND_ENUMERATOR_)
} zlink_error_kind_t;
#undef ZLINK_ERROR_KIND_ENUMERATOR_

/* A framework result (the "framework" family of zlink.h's result table,
 * values 800..): 0 is success; ZLINK_FW_KIND_BASE + kind is a failure of
 * that error kind; CANCELLED, INVALID_ARGUMENT and INVALID_HANDLE are the
 * three results that are not error kinds. */
#define ZLINK_FW_KIND_BASE 800
#define ZLINK_FW_IS_KIND(r) ((r) >= 800 && (r) <= 812)
#define ZLINK_FW_KIND_OF(r) ((zlink_error_kind_t)((r)-ZLINK_FW_KIND_BASE))

/* --------------------------------------------------------------- durations
 *
 * Durations are int64 nanoseconds. A timeout rounds UP to whole
 * milliseconds and must then lie in 1..INT_MAX ms: 400 us is 1 ms;
 * 0, negative values, ZLINK_DURATION_INFINITE and anything above INT_MAX ms
 * are rejected with ZLINK_FW_INVALID_ARGUMENT (never replaced by a
 * default). */
#define ZLINK_DURATION_INFINITE INT64_MAX
#define ZLINK_MS(ms) ((int64_t)(ms)*1000000)

/* ------------------------------------------------------------------ host */

typedef struct zlink_host_s zlink_host_t;
typedef struct zlink_call_s zlink_call_t;
typedef struct zlink_turn_s zlink_turn_t;

typedef enum zlink_host_state {
    ZLINK_HOST_PREPARING = 0, /* configurable; serves nothing */
    ZLINK_HOST_SERVING = 1,   /* accepting calls and records */
    ZLINK_HOST_DRAINING = 2,  /* shutdown began: new calls get SHUTTING_DOWN */
    ZLINK_HOST_STOPPED = 3,   /* everything finished; destroy it */
    ZLINK_HOST_FAILED = 4     /* start failed; destroy it */
} zlink_host_state_t;

/* Host options (zlink_host_set_option / get_option), int64 values.
 *   DEFAULT_REQUEST_TIMEOUT  ns, default 30 s; per mesh node and per call too
 *   DEFAULT_SEND_TIMEOUT     ns, the root fallback of every send-timeout
 *                            family; 1 s when unset
 *   SHUTDOWN_TIMEOUT         ns, the default drain deadline; 30 s
 *   ADMISSION_WAITERS        read-only: the pool of one-way sends that may
 *                            wait for room at once (ZLINK_ADMISSION_WAITERS)
 *   MAX_QUEUED_JOBS          the job-queue permit limit (seed 001):
 *                            1..2^31-1, default 128 x effective
 *                            processors (Balanced); PREPARING only. The
 *                            ingress takes a permit before each receive
 *                            and stops receiving while none is free
 *   HANDLER_THREADS          threads that run handler turns, 1..64;
 *                            default 2; PREPARING only */
#define ZLINK_HOST_OPT_DEFAULT_REQUEST_TIMEOUT 1
#define ZLINK_HOST_OPT_DEFAULT_SEND_TIMEOUT 2
#define ZLINK_HOST_OPT_SHUTDOWN_TIMEOUT 3
#define ZLINK_HOST_OPT_ADMISSION_WAITERS 4
#define ZLINK_HOST_OPT_MAX_QUEUED_JOBS 5
#define ZLINK_HOST_OPT_HANDLER_THREADS 6

/* The application job queue (seed 001), PREPARING only; checked again
 * together at start (a host whose values do not fit never serves: start
 * returns INVALID_ARGUMENT and the host is FAILED).
 *   JOB_QUEUE_PROFILE     zlink_job_queue_profile_t, default BALANCED: the
 *                         permit limit is jobs-per-processor x P unless
 *                         MAX_QUEUED_JOBS was set
 *   PAUSE_PERCENT         1..100, default 80: at ceil(M x pause / 100)
 *                         permits in use the host's receiving sockets are
 *                         set PAUSED
 *   RESUME_PERCENT        0..99, default 60, below PAUSE_PERCENT: at
 *                         floor(M x resume / 100) they are RUNNING again
 *   EFFECTIVE_PROCESSORS  P, 1..65536, or 0 to detect it (the smallest of
 *                         online CPUs, the affinity set and the cgroup CPU
 *                         quota); reads back the value in use
 * MAX_QUEUED_JOBS reads back the effective limit M (the manual value, or
 * the profile's). The Core's HWM settings are separate and never mixed in. */
#define ZLINK_HOST_OPT_JOB_QUEUE_PROFILE 7
#define ZLINK_HOST_OPT_PAUSE_PERCENT 8
#define ZLINK_HOST_OPT_RESUME_PERCENT 9
#define ZLINK_HOST_OPT_EFFECTIVE_PROCESSORS 10

/* The Core's HWM settings (seed 001 §2), PREPARING only. The host passes
 * them untouched to the Core context at start (zlink_ctx_set ZLINK_PROFILE,
 * zlink_ctx_set_data ZLINK_CORE_BUDGET_BYTES and
 * ZLINK_AUTO_HWM_MEMORY_LIMIT_BYTES) and computes nothing from them; they
 * never move the job queue's values, nor those these.
 *   CORE_HWM_PROFILE           a ZLINK_PROFILE_* value of zlink.h, or -1
 *                              (the default): unset, the Core's own
 *                              default (BALANCED) or the value in force
 *   CORE_BUDGET_BYTES          1..2^63-1, or 0 (the default): unset
 *   CORE_MEMORY_LIMIT_BYTES    1..2^63-1, or 0 (the default): unset
 * A value out of range is refused (INVALID_ARGUMENT, old value kept); a
 * budget or memory limit above the machine's memory (physical memory or
 * the cgroup's memory.max) makes start return INVALID_ARGUMENT. The
 * framework's Core context is shared by every host of the process: a host
 * that sets one of these while another started host holds the context
 * must ask for the value in force there, or start returns
 * INVALID_OPERATION (FAILED, nothing bound); unset takes the value in
 * force. Each reads back the value set (-1 / 0 unset). */
#define ZLINK_HOST_OPT_CORE_HWM_PROFILE 11
#define ZLINK_HOST_OPT_CORE_BUDGET_BYTES 12
#define ZLINK_HOST_OPT_CORE_MEMORY_LIMIT_BYTES 13

typedef enum zlink_job_queue_profile {
    ZLINK_JOB_QUEUE_COMPACT = 0,     /* 32 jobs per effective processor */
    ZLINK_JOB_QUEUE_LOW_LATENCY = 1, /* 64 */
    ZLINK_JOB_QUEUE_BALANCED = 2,    /* 128, the default */
    ZLINK_JOB_QUEUE_THROUGHPUT = 3   /* 256 */
} zlink_job_queue_profile_t;

/* The host's pressure state (seed 001 §6), applied as the receive-flow
 * state of its RouteMesh ROUTERs and ClientServer server ROUTERs. */
typedef enum zlink_pressure_state {
    ZLINK_PRESSURE_RUNNING = 0,
    ZLINK_PRESSURE_PAUSED = 1
} zlink_pressure_state_t;

/* Mesh node and ClientServer channel options (zlink_mesh_set_option,
 * zlink_channel_set_option).
 *   SEND_TIMEOUT     ns; the family's send timeout (mesh node: its ROUTER;
 *                    CS client: its DEALER; CS server: its ROUTER)
 *   REQUEST_TIMEOUT  ns; mesh node only: the default for its requests
 *   SNDHWM, RCVHWM   bytes, passed to the Core socket (0 unlimited)
 */
#define ZLINK_NODE_OPT_SEND_TIMEOUT 1
#define ZLINK_NODE_OPT_REQUEST_TIMEOUT 2
#define ZLINK_NODE_OPT_SNDHWM 3
#define ZLINK_NODE_OPT_RCVHWM 4

#define ZLINK_DEFAULT_REQUEST_TIMEOUT ZLINK_MS(30000)
#define ZLINK_DEFAULT_SEND_TIMEOUT ZLINK_MS(1000)
#define ZLINK_DEFAULT_SHUTDOWN_TIMEOUT ZLINK_MS(30000)
/* One-way sends of one host waiting for room at once; one more completes
 * with DEADLINE_EXCEEDED at once and its payload is not kept. */
#define ZLINK_ADMISSION_WAITERS 1024
/* In-flight operations plus queued or running completion callbacks of the
 * process; one more is CAPACITY_EXCEEDED before anything is sent. */
#define ZLINK_DISPATCHER_CAPACITY 4096
#define ZLINK_LIVENESS_PROBE_INTERVAL ZLINK_MS(5000)
#define ZLINK_LIVENESS_DEADLINE ZLINK_MS(15000)
#define ZLINK_METADATA_MAX 1024

/* A new host in PREPARING, named for diagnostics (1..64 bytes); NULL with
 * *result (may be NULL) set. Several hosts may live in one process. */
ZLINK_EXPORT zlink_host_t *zlink_host_new(const char *name, zlink_fw_result_t *result);
/* Options: an invalid value gives INVALID_ARGUMENT and keeps the old one. */
ZLINK_EXPORT zlink_fw_result_t zlink_host_set_option(zlink_host_t *host, int option, int64_t value);
ZLINK_EXPORT zlink_fw_result_t zlink_host_get_option(zlink_host_t *host, int option, int64_t *value);

/* ClientServer. A channel name is 1..255 bytes, unique in the host.
 * Server: a ROUTER listening on endpoint that serves channel's handlers.
 * Client: a DEALER connecting to endpoint; sends and requests only. Adding
 * the same client channel again adds another server endpoint: the DEALER
 * connects to each and the Core picks a ready one per call. Options read
 * back their effective values (timeouts in whole ms, rounded up). */
ZLINK_EXPORT zlink_fw_result_t zlink_host_add_cs_server(zlink_host_t *host, const char *channel,
                                          const char *endpoint);
ZLINK_EXPORT zlink_fw_result_t zlink_host_add_cs_client(zlink_host_t *host, const char *channel,
                                          const char *endpoint);
ZLINK_EXPORT zlink_fw_result_t zlink_channel_set_option(zlink_host_t *host, const char *channel,
                                          int option, int64_t value);
ZLINK_EXPORT zlink_fw_result_t zlink_channel_get_option(zlink_host_t *host, const char *channel,
                                          int option, int64_t *value);

/* RouteMesh. One node per mesh name per host, with its routing id (1..255
 * bytes, unique in the mesh) and one ROUTER. listen is optional (NULL: the
 * node only connects). Peers are manual: connect names the peer's endpoint
 * and routing id; the hello / admit exchange (doc/protocol.md) makes the
 * peer ready. */
ZLINK_EXPORT zlink_fw_result_t zlink_host_add_mesh_node(zlink_host_t *host, const char *mesh,
                                          const void *rid, size_t rid_size,
                                          const char *listen_endpoint);
ZLINK_EXPORT zlink_fw_result_t zlink_mesh_connect(zlink_host_t *host, const char *mesh, const char *endpoint,
                                    const void *peer_rid, size_t peer_rid_size);
ZLINK_EXPORT zlink_fw_result_t zlink_mesh_set_option(zlink_host_t *host, const char *mesh, int option,
                                       int64_t value);
ZLINK_EXPORT zlink_fw_result_t zlink_mesh_get_option(zlink_host_t *host, const char *mesh, int option,
                                       int64_t *value);
/* Channel membership of the mesh node: a client sends to the channel's
 * servers; a server (weight 0..10000, default 100) is picked by weighted
 * select-one among ready members with weight > 0. set_weight works while
 * serving and is announced to the peers. */
ZLINK_EXPORT zlink_fw_result_t zlink_mesh_add_channel_client(zlink_host_t *host, const char *mesh,
                                               const char *channel);
ZLINK_EXPORT zlink_fw_result_t zlink_mesh_add_channel_server(zlink_host_t *host, const char *mesh,
                                               const char *channel, int weight);
ZLINK_EXPORT zlink_fw_result_t zlink_mesh_set_weight(zlink_host_t *host, const char *mesh,
                                       const char *channel, int weight);
/* The endpoint a CS server channel or mesh node listens on (port 0
 * resolved), NUL-terminated into buf[0..size). INVALID_OPERATION before the
 * host serves; NOT_FOUND for a name without a listener; INVALID_ARGUMENT
 * for a buffer too small. */
ZLINK_EXPORT zlink_fw_result_t zlink_host_endpoint(zlink_host_t *host, const char *name,
                                                   char *buf, size_t size);
/* Mesh peers that are ready (hello/admit done, alive), for tests and
 * status; the count, or -1 with *result set. */
ZLINK_EXPORT int zlink_mesh_ready_peers(zlink_host_t *host, const char *mesh, zlink_fw_result_t *result);

/* Handlers. Owner is a channel (ZLINK_OWNER_CHANNEL: a CS server channel or
 * a mesh channel server, named by channel) or a mesh node
 * (ZLINK_OWNER_NODE: node-direct records, named by mesh). The key is
 * (owner kind, owner name, message kind, packet name); a duplicate key gives
 * ALREADY_EXISTS. PREPARING only. A handler runs as a turn (see below);
 * handlers of one channel share one execution gate, node-direct handlers
 * one gate per mesh node: two turns of one gate never overlap. */
typedef enum zlink_owner_kind {
    ZLINK_OWNER_CHANNEL = 1,
    ZLINK_OWNER_NODE = 2
} zlink_owner_kind_t;

typedef enum zlink_message_kind {
    ZLINK_MESSAGE_SEND = 1,    /* one-way */
    ZLINK_MESSAGE_REQUEST = 2  /* expects a reply */
} zlink_message_kind_t;

typedef void (*zlink_handler_fn)(zlink_turn_t *turn, void *user);

ZLINK_EXPORT zlink_fw_result_t zlink_host_add_handler(zlink_host_t *host, zlink_owner_kind_t owner,
                                        const char *owner_name, zlink_message_kind_t kind,
                                        const char *packet, zlink_handler_fn fn, void *user);

/* Since ZLINK_1.4: zlink_host_add_handler with flags (0 is the same as
 * zlink_host_add_handler; an unknown bit is INVALID_ARGUMENT).
 * ZLINK_HANDLER_HANDOFF says fn is a binding's trampoline: it hands the
 * turn to an executor of the binding's own (an event loop, a pump) and
 * returns at once, running no application code. The runtime may then call
 * fn on any thread, and does so on the thread that ends the previous turn
 * of the same gate (zlink_turn_end / zlink_turn_respond outside a handler
 * function) when the gate has a turn waiting: a busy gate's next turn
 * reaches the executor without waking a host thread. Turns of one gate
 * still never overlap, and each turn is handed to fn exactly once. So fn
 * may run inside zlink_turn_end / zlink_turn_respond: their caller must not
 * hold a lock that fn takes. */
typedef enum zlink_handler_flags {
    ZLINK_HANDLER_HANDOFF = 1
} zlink_handler_flags_t;

ZLINK_EXPORT zlink_fw_result_t zlink_host_add_handler_ex(zlink_host_t *host,
                                                         zlink_owner_kind_t owner,
                                                         const char *owner_name,
                                                         zlink_message_kind_t kind,
                                                         const char *packet, zlink_handler_fn fn,
                                                         void *user, uint32_t flags);

/* PREPARING -> SERVING: binds, connects, starts the host's threads. Any
 * failure leaves the host FAILED (it never serves) and names the cause:
 * INVALID_ARGUMENT for bad configuration, UNAVAILABLE for an endpoint that
 * cannot be bound. */
ZLINK_EXPORT zlink_fw_result_t zlink_host_start(zlink_host_t *host);
/* Graceful shutdown (application thread only; INVALID_OPERATION in a
 * runtime context). New calls get SHUTTING_DOWN at once; accepted work
 * (pending calls, queued and running turns, accepted callbacks) drains for
 * up to deadline (a duration in ns; 0 = the SHUTDOWN_TIMEOUT option); calls
 * still pending then complete with SHUTTING_DOWN and queued turns are
 * answered SHUTTING_DOWN. It then waits for running handlers to return and
 * open turns to end (C cannot stop a handler), and returns when the host is
 * STOPPED. OK for a STOPPED host; INVALID_OPERATION for one that never
 * served. A second call waits for the same end. */
ZLINK_EXPORT zlink_fw_result_t zlink_host_shutdown(zlink_host_t *host, int64_t deadline);
/* Frees a PREPARING, STOPPED or FAILED host (SERVING: shuts it down first
 * with the default deadline). The handle is dead afterwards. */
ZLINK_EXPORT zlink_fw_result_t zlink_host_destroy(zlink_host_t *host);
/* The host's state, or -1 for a bad handle. */
ZLINK_EXPORT int zlink_host_state(zlink_host_t *host);

/* Status (DECISIONS D4 C3): a snapshot; set struct_size first (a struct
 * at least this version's size; larger ones get zeros after its fields). */
typedef struct zlink_host_status {
    uint32_t struct_size;
    int32_t state;                    /* zlink_host_state_t */
    int32_t is_ready;                 /* 1 only while SERVING */
    int32_t accepting_work;           /* 1 while new calls are accepted */
    uint64_t requests_inflight;       /* this host's pending requests */
    uint64_t oneway_waiting;          /* one-way sends waiting for room */
    uint64_t admission_waiters_max;   /* ZLINK_ADMISSION_WAITERS */
    uint64_t dispatcher_in_use;       /* process: in-flight ops + callbacks */
    uint64_t dispatcher_capacity;     /* ZLINK_DISPATCHER_CAPACITY */
    uint64_t turns_running;           /* handler turns open now */
    uint64_t turns_queued;            /* records waiting for their gate */
    uint64_t max_queued_jobs;         /* permit limit */
    uint64_t permits_in_use;
    uint64_t reserved[8];
} zlink_host_status_t;

ZLINK_EXPORT zlink_fw_result_t zlink_host_status(zlink_host_t *host, zlink_host_status_t *status);

/* The capacity section of the status (seed 001, framework-contract.md §6):
 * a snapshot; struct_size as for zlink_host_status. Counters (waits,
 * transitions, durations) count from creation or the last
 * zlink_host_reset_metrics. Durations in ns. */
typedef struct zlink_host_capacity {
    uint32_t struct_size;
    int32_t profile;                   /* zlink_job_queue_profile_t */
    uint64_t manual_max;               /* MAX_QUEUED_JOBS as set; 0 unset */
    uint32_t pause_percent;
    uint32_t resume_percent;
    uint64_t effective_processors;     /* P */
    uint64_t effective_max;            /* M */
    uint64_t pause_count;              /* ceil(M x pause / 100) */
    uint64_t resume_count;             /* floor(M x resume / 100) */
    uint64_t reserved_supply_permits;  /* taken for a receive, not yet a job */
    uint64_t queued_jobs;              /* jobs waiting for their handler */
    uint64_t permits_in_use;           /* reserved + queued */
    uint64_t peak_permits_in_use;
    int32_t pressure_state;            /* zlink_pressure_state_t */
    int32_t reserved0;
    int64_t current_pause_ns;          /* 0 while RUNNING */
    int64_t cumulative_pause_ns;
    uint64_t transitions_paused;       /* RUNNING -> PAUSED edges */
    uint64_t transitions_running;      /* PAUSED -> RUNNING edges */
    uint64_t capacity_waiters;         /* sources waiting for a permit now */
    uint64_t capacity_waits;           /* waits begun */
    int64_t capacity_wait_ns;          /* time spent in ended waits */
    uint64_t flow_state_config_failures;
    uint64_t reserved[8];
} zlink_host_capacity_t;

ZLINK_EXPORT zlink_fw_result_t zlink_host_capacity(zlink_host_t *host,
                                                   zlink_host_capacity_t *capacity);
/* An owner's queue (1.2; DECISIONS D4 C3, 002 §8): the execution gate of
 * (owner kind, owner name), which exists once a handler names it. A record
 * is queued from the receive that accepted it for this owner until its
 * turn opens, then running until the turn ends; the move between the two
 * is one step (never both, never neither). Bytes count every part of the
 * framework record. accepted_seq is the sequence number of the last record
 * the owner accepted (the first is 1); a record refused before the owner
 * (no handler, malformed, the host draining) takes none, and counts
 * nowhere. struct_size as for zlink_host_status; NOT_FOUND for an owner no
 * handler names. */
typedef struct zlink_owner_status {
    uint32_t struct_size;
    int32_t busy;                      /* 1 while a turn is open */
    uint64_t accepted_seq;
    uint64_t queued_records;
    uint64_t queued_bytes;
    uint64_t running_records;
    uint64_t running_bytes;
    uint64_t handled;                  /* turns that ended */
    uint64_t reserved[8];
} zlink_owner_status_t;

ZLINK_EXPORT zlink_fw_result_t zlink_host_owner_status(zlink_host_t *host,
                                                       zlink_owner_kind_t owner,
                                                       const char *owner_name,
                                                       zlink_owner_status_t *status);
/* Zeroes the epoch counters (waits, transitions, cumulative pause, drops,
 * timeouts, failures) and rebases the peak to the current permits in use;
 * configuration, the pressure state and the current pause are kept. */
ZLINK_EXPORT zlink_fw_result_t zlink_host_reset_metrics(zlink_host_t *host);

/* Metrics: the value of one series, by name and label set ("" for none,
 * else "key=value"), e.g. ("zlink.mesh_node.messages.dropped",
 * "reason=decode_error"). NOT_FOUND for a series this version does not
 * have. Counters count from host creation.
 * The zlink.host.core_hwm.* series are a read-only projection of the Core
 * state of this host's sockets (0 before start and once they close), in
 * bytes: effective_budget (the Core context's CORE_BUDGET_BYTES; 0 when
 * unset: this Core computes no auto-HWM budget), applied (the SNDHWM +
 * RCVHWM marks of the host's sockets; "state=send|receive" for one
 * direction), accounted{state=send|receive} (bytes the Core queues hold
 * for the host's sockets, completion lane included),
 * completion_accounted{state=send|receive} (0: this Core does not count
 * the completion lane apart; its bytes are in accounted), blocked_ratio
 * (ppm; 0, no auto-HWM) and profile (the Core context's ZLINK_PROFILE,
 * also before start: the value start will pass, or the Core default). */
ZLINK_EXPORT zlink_fw_result_t zlink_host_metric(zlink_host_t *host, const char *name, const char *labels,
                                   int64_t *value);

/* ---------------------------------------------------------------- calls
 *
 * A call is built, then finished by exactly one terminator:
 *   zlink_call_start   general async (requests) and one-way submit (sends):
 *                      returns at once; fn runs once, later, on the
 *                      completion dispatcher's lane in a new turn, never
 *                      on the caller's stack. A non-zero return means the
 *                      call was not accepted and fn will never run.
 *   zlink_call_wait    synchronous: blocks this application thread until the
 *                      outcome; INVALID_OPERATION at once in a runtime context
 *   zlink_call_yield   releases the caller's Spot gate while waiting; only in
 *                      a SpotWide / Instance Spot turn, which this version
 *                      does not have: INVALID_OPERATION before anything is sent
 * A second terminator gives INVALID_OPERATION and changes nothing. A
 * terminator that refuses the call (any result but INVALID_ARGUMENT, e.g.
 * NOT_FOUND, SHUTTING_DOWN, CAPACITY_EXCEEDED) has used it up: build a new
 * call to try again. fn may be NULL when nobody wants the outcome.
 * zlink_call_cancel may come at any time (idempotent): before a terminator
 * it makes that terminator return ZLINK_FW_CANCELLED without sending; after,
 * if it wins the race, the outcome is ZLINK_FW_CANCELLED; it never recalls
 * an accepted one-way. zlink_call_release drops the application's
 * reference and ends the handle (it may be called from fn): a started call
 * still completes and fn still runs, receiving the now dead handle only to
 * tell calls apart; the object is freed after both.
 */
typedef struct zlink_outcome {
    uint32_t struct_size;      /* sizeof(zlink_outcome_t) */
    int32_t result;            /* 0, ZLINK_FW_CANCELLED or ZLINK_FW_KIND_BASE+kind */
    uint32_t remote_code;      /* a remote error's wire terminalResult, else 0 */
    uint32_t reserved;
    const char *message;       /* for humans only; never NULL ("" if none) */
    const void *payload;       /* a reply's payload (request OK), else NULL */
    size_t payload_size;
    const char *packet;        /* the reply's packet name ("" if none) */
    const char *content_type;  /* the reply's content type ("" if none) */
} zlink_outcome_t;
/* Everything an outcome points to lives as long as the call object.
 * zlink_call_wait accepts an outcome struct at least as large as this
 * version's (struct_size) and fills this version's fields. */

typedef void (*zlink_completion_fn)(zlink_call_t *call, const zlink_outcome_t *outcome,
                                    void *user);

/* Builders; NULL with *result (may be NULL) set for bad arguments or an
 * unknown host. The target is checked when the call is finished, not here. */
ZLINK_EXPORT zlink_call_t *zlink_call_send_to_channel(zlink_host_t *host, const char *channel,
                                                      zlink_fw_result_t *result);
ZLINK_EXPORT zlink_call_t *zlink_call_request_to_channel(zlink_host_t *host,
                                                         const char *channel, zlink_fw_result_t *result);
ZLINK_EXPORT zlink_call_t *zlink_call_send_to_node(zlink_host_t *host, const char *mesh,
                                                   const void *rid, size_t rid_size,
                                                   zlink_fw_result_t *result);
ZLINK_EXPORT zlink_call_t *zlink_call_request_to_node(zlink_host_t *host, const char *mesh,
                                                      const void *rid, size_t rid_size,
                                                      zlink_fw_result_t *result);
/* The payload: packet name (1..255 bytes), content type (0..255 bytes; ""
 * means application/json) and bytes (copied). Required before a terminator. */
ZLINK_EXPORT zlink_fw_result_t zlink_call_set_payload(zlink_call_t *call, const char *packet,
                                        const char *content_type, const void *data,
                                        size_t size);
/* Requests: the whole-call timeout (resolve, admission, handler, reply). */
ZLINK_EXPORT zlink_fw_result_t zlink_call_set_timeout(zlink_call_t *call, int64_t timeout);
/* Metadata: UTF-8 key and value, no NUL, <= ZLINK_METADATA_MAX bytes in
 * total; the last value of a key wins. */
ZLINK_EXPORT zlink_fw_result_t zlink_call_set_metadata(zlink_call_t *call, const char *key,
                                         const char *value);

ZLINK_EXPORT zlink_fw_result_t zlink_call_start(zlink_call_t *call, zlink_completion_fn fn, void *user);
ZLINK_EXPORT zlink_fw_result_t zlink_call_wait(zlink_call_t *call, zlink_outcome_t *outcome);
/* Since ZLINK_1.3. A held start, for bindings that run the language's
 * callback on an executor of their own (a pump, a thread pool, an event
 * loop): zlink_call_start_held is zlink_call_start (same results, same
 * exactly-once fn on the dispatcher's lane; fn may not be NULL:
 * INVALID_ARGUMENT), except that the call's completion dispatcher slot
 * stays reserved after fn returns, until zlink_call_callback_done says the
 * language's callback has returned. fn should hand the outcome over and
 * return; the dispatcher then runs the next completion at once, while a
 * callback blocked in user code still counts against
 * ZLINK_DISPATCHER_CAPACITY (seed 000 §17) and in dispatcher_in_use.
 * The outcome stays valid until then too.
 * zlink_call_callback_done: any thread, exactly once per held start, after
 * the dispatcher called fn (also while fn still runs: the slot is then
 * given back when fn returns). INVALID_OPERATION for a call not started
 * held, before fn was called, or a second time; INVALID_HANDLE for a bad
 * or released handle. zlink_call_release of a held call ends its hold as
 * done would (nobody could call done afterwards): keep the handle until
 * done. A host's shutdown waits for held slots exactly as for running
 * callbacks (after its deadline too: C cannot stop a callback), so a
 * binding calls done on every path, its callback's failure included. */
ZLINK_EXPORT zlink_fw_result_t zlink_call_start_held(zlink_call_t *call, zlink_completion_fn fn,
                                                     void *user);
ZLINK_EXPORT zlink_fw_result_t zlink_call_callback_done(zlink_call_t *call);
ZLINK_EXPORT zlink_fw_result_t zlink_call_yield(zlink_call_t *call, zlink_completion_fn fn, void *user);
ZLINK_EXPORT zlink_fw_result_t zlink_call_cancel(zlink_call_t *call);
ZLINK_EXPORT zlink_fw_result_t zlink_call_release(zlink_call_t *call);

/* ---------------------------------------------------------------- turns
 *
 * A handler gets a turn: the record and the gate. The turn stays open after
 * the handler function returns, until zlink_turn_end: an async handler
 * (a Task, a Promise, a coroutine) keeps its gate while it runs. Replies are
 * calls made from the turn; a request's turn answers once (a second reply
 * gives INVALID_OPERATION). Ending a request's turn without a reply answers
 * INTERNAL_FAILURE; ending it with failed = 1 answers INTERNAL_FAILURE with
 * message (a handler exception). A reply call taken but never started
 * answers nothing (the requester's timeout ends its call). Accessors and
 * the pointers they return are valid until the turn ends; after
 * zlink_turn_end the handle is dead (INVALID_HANDLE).
 */
ZLINK_EXPORT int zlink_turn_kind(zlink_turn_t *turn);   /* zlink_message_kind_t or -1 */
ZLINK_EXPORT const char *zlink_turn_packet(zlink_turn_t *turn);
ZLINK_EXPORT const char *zlink_turn_content_type(zlink_turn_t *turn);
ZLINK_EXPORT const void *zlink_turn_payload(zlink_turn_t *turn, size_t *size);
/* The value of metadata key, or NULL. */
ZLINK_EXPORT const char *zlink_turn_metadata(zlink_turn_t *turn, const char *key);
/* The sender: mesh node routing id (node records) or "" for ClientServer. */
ZLINK_EXPORT zlink_fw_result_t zlink_turn_source(zlink_turn_t *turn, zlink_routing_id_t *rid);
/* The record's sequence number in its owner's queue (1.2; see
 * zlink_owner_status_t), or 0 for a bad handle. */
ZLINK_EXPORT uint64_t zlink_turn_sequence(zlink_turn_t *turn);
/* A reply call: finish it with zlink_call_start (completes at send
 * acceptance) or zlink_call_wait (not in a runtime context). */
ZLINK_EXPORT zlink_call_t *zlink_turn_reply(zlink_turn_t *turn, zlink_fw_result_t *result);
/* An error reply of kind (a framework error kind) with message. */
ZLINK_EXPORT zlink_call_t *zlink_turn_reply_error(zlink_turn_t *turn, zlink_error_kind_t kind,
                                                  const char *message, zlink_fw_result_t *result);
ZLINK_EXPORT zlink_fw_result_t zlink_turn_end(zlink_turn_t *turn, int failed, const char *message);
/* Answers a request's turn with this payload and ends the turn, in one
 * call (the common handler's last line): the same reply as zlink_turn_reply
 * + zlink_call_set_payload + zlink_call_start(reply, NULL, NULL) +
 * zlink_turn_end, without a call object when the Core takes the reply at
 * once. A reply that must wait for room waits like any reply; nobody sees
 * its completion. OK; INVALID_OPERATION when the turn is not a request or
 * was already answered (the turn is then still open); INVALID_ARGUMENT for a
 * bad packet, content type or data (still open); UNAVAILABLE or
 * SHUTTING_DOWN when the requester or the socket is gone (the turn ended). */
ZLINK_EXPORT zlink_fw_result_t zlink_turn_respond(zlink_turn_t *turn, const char *packet,
                                                  const char *content_type, const void *data,
                                                  size_t size);

/* ------------------------------------------------------ runtime context
 *
 * Every framework thread is a runtime execution context; a binding marks its
 * own handler threads (Node's loop, a Java pump, the .NET pool) the same way.
 * zlink_call_wait and zlink_host_shutdown fail with INVALID_OPERATION there.
 */
ZLINK_EXPORT zlink_fw_result_t zlink_runtime_context_enter(void);
ZLINK_EXPORT zlink_fw_result_t zlink_runtime_context_leave(void);
ZLINK_EXPORT int zlink_in_runtime_context(void);

/* The name of an error kind ("NotFound" ...), static; "unknown" else. */
ZLINK_EXPORT const char *zlink_error_kind_name(int kind);

#ifdef __cplusplus
}
#endif

#endif /* ZLINK_FRAMEWORK_H */
