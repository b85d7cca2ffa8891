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
 *  - Sockets closed by the user stay allocated (dead) until term; their
 *    handles were released at close (handle.h), so a stale socket handle is
 *    refused by the handle table before and after term alike.
 *  - The context's own handle: every zlink_ctx_* call (and zlink_socket)
 *    enters it with zl_ctx_enter and leaves with zl_ctx_leave. zlink_ctx_term
 *    ends by shutting the handle (later calls get EFAULT) and the last call
 *    to leave, term itself or a call that was still inside, frees the
 *    context, so a call racing with term never reads freed memory.
 */
#ifndef ZL_CTX_H
#define ZL_CTX_H

#include "engine/engine.h"
#include "sock/socket.h"

typedef struct zl_io zl_io_t;


struct zl_ctx {
    zl_hslot_t *hslot;               /* the handle's slot (fixed) */
    zl_mutex_t lk;
    zl_cond_t cv;
    int io_threads;
    int max_sockets;
    int max_msgsz;
    int blocky;
    int profile;
    int auto_hwm;
    int recalc_debounce_ms;
    _Atomic int spin_us;             /* ZLINK_SPIN_US: read by waiters
                                        without c->lk */
    int io_spin_us;                  /* ZLINK_IO_SPIN_US (under lk) */
    int sched_policy;
    int priority;
    char thread_name_prefix[16];
    uint64_t auto_hwm_memory_limit, runtime_memory_limit, core_budget;
    zl_io_t **ios;
    int nios;
    unsigned io_rotor;
    zl_socket_t *sockets;            /* live and dead sockets */
    int nlive;
    zl_inproc_ns_t inproc;           /* inproc names (engine/inproc.c) */
    bool shutdown;
    bool terminating;
};

/* Resolves a context handle and enters it: 0 (*out is the context; call
 * zl_ctx_leave once) or EFAULT (not a live context: NULL, another kind,
 * garbage, or terminated). Any thread; no lock; never blocks. */
int zl_ctx_enter(const void *handle, zl_ctx_t **out);
/* Ends a call zl_ctx_enter admitted; frees the context when this was the
 * last call inside a context that zlink_ctx_term finished. Any thread; the
 * caller holds no context lock and does not touch c afterwards. */
void zl_ctx_leave(zl_ctx_t *c);
/* Frees a context's memory and releases its handle slot (nothing inside,
 * handle closed or never published). Called by zl_ctx_leave and by
 * zlink_ctx_new's failure path. */
void zl_ctx_free(zl_ctx_t *c);
/* An I/O thread for a new endpoint, starting the threads on first use:
 * the next one in turn among those whose bit is set in affinity (bit i =
 * I/O thread i; 0 = any, the socket's ZLINK_AFFINITY). Application thread;
 * takes ctx->lk. Returns NULL with errno: ETERM after shutdown, EINVAL when
 * affinity names none of the context's threads, ENOMEM. */
zl_io_t *zl_ctx_pick_io(zl_ctx_t *ctx, uint64_t affinity);

/* inproc names (engine/inproc.c keeps them). bind: 0, EADDRINUSE, ENOMEM,
 * ETERM after shutdown. unbind: name NULL = every name of ts. find: the
 * socket bound to name, or NULL. Caller holds nothing. */
int zl_ctx_inproc_bind(zl_ctx_t *ctx, const char *name, zl_tran_sock_t *ts);
void zl_ctx_inproc_unbind(zl_ctx_t *ctx, const char *name, zl_tran_sock_t *ts);
zl_tran_sock_t *zl_ctx_inproc_find(zl_ctx_t *ctx, const char *name);

/* Adds a new socket to the context's list (api/context_api.c). 0, or
 * ETERM after shutdown, EMFILE over MAX_SOCKETS. Takes ctx->lk. */
int zl_ctx_add_socket(zl_ctx_t *c, zl_socket_t *s);
/* A socket of c was closed: wakes a zlink_ctx_term waiting for the
 * application's sockets. Takes ctx->lk. */
void zl_ctx_socket_closed(zl_ctx_t *c);

/* zlink_ctx_shutdown inside the context's handle: marks the context and
 * every socket terminated (blocked calls return ETERM). Takes ctx->lk, then
 * each socket's s->lk. */
void zl_ctx_shutdown(zl_ctx_t *c);
/* zlink_ctx_term inside the context's handle: shuts down, waits (blocks)
 * until the application closed every socket, stops the I/O threads and
 * hands every socket to its last pin. 0, or EBUSY when another term is
 * running. The caller then ends the handle. */
int zl_ctx_term(zl_ctx_t *c);

#endif /* ZL_CTX_H */
