/*
 * ctx.h — the context: options, I/O threads, the socket list and the
 * inproc name registry.
 *
 * Design notes
 *  - ctx->lk protects everything here. It is never held while taking a
 *    socket lock for long work; the order is ctx->lk before s->lk.
 *  - I/O threads start lazily when the first socket needs one (bind or
 *    connect on tcp/ipc) and stop in zlink_ctx_term.
 *  - zlink_ctx_shutdown marks every socket terminated and wakes its waiters;
 *    blocking calls then return ETERM.
 *  - Sockets closed by the user stay allocated (dead) until term so a stale
 *    handle is detected, not dereferenced after free.
 */
#ifndef ZL_CTX_H
#define ZL_CTX_H

#include "socket.h"

typedef struct zl_io zl_io_t;

#define ZL_CTX_TAG 0x5A435458u  /* "ZCTX" */

typedef struct zl_inproc_entry {
    char *name;
    zl_socket_t *sock;               /* the binder */
    struct zl_inproc_entry *next;
} zl_inproc_entry_t;

struct zl_ctx {
    uint32_t tag;
    zl_mutex_t lk;
    zl_cond_t cv;
    int io_threads;
    int max_sockets;
    int max_msgsz;
    int blocky;
    int profile;
    int auto_hwm;
    int recalc_debounce_ms;
    int sched_policy;
    int priority;
    char thread_name_prefix[16];
    uint64_t auto_hwm_memory_limit, runtime_memory_limit, core_budget;
    zl_io_t **ios;
    int nios;
    unsigned io_rotor;
    zl_socket_t *sockets;            /* live and dead sockets */
    int nlive;
    zl_inproc_entry_t *inproc;
    bool shutdown;
    bool terminating;
};

/* Validates a context handle: 0 or EFAULT. */
int zl_ctx_check(void *handle, zl_ctx_t **out);
/* An I/O thread for a new endpoint, starting the threads on first use:
 * the next one in turn among those whose bit is set in affinity (bit i =
 * I/O thread i; 0 = any, the socket's ZLINK_AFFINITY). Application thread;
 * takes ctx->lk. Returns NULL with errno: ETERM after shutdown, EINVAL when
 * affinity names none of the context's threads, ENOMEM. */
zl_io_t *zl_ctx_pick_io(zl_ctx_t *ctx, uint64_t affinity);

/* inproc registry. bind: 0, EADDRINUSE, ETERM. */
int zl_ctx_inproc_bind(zl_ctx_t *ctx, const char *name, zl_socket_t *s);
void zl_ctx_inproc_unbind(zl_ctx_t *ctx, const char *name, zl_socket_t *s);
/* The socket bound to name, or NULL. Caller holds nothing. */
zl_socket_t *zl_ctx_inproc_find(zl_ctx_t *ctx, const char *name);

#endif /* ZL_CTX_H */
