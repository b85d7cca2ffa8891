/*
 * ctx.c — context internals: I/O thread start-up, the socket list, the
 * inproc registry, shutdown and termination. The public zlink_ctx_*
 * functions are in api/context_api.c.
 *
 * Locks: ctx->lk guards every field. It is taken before a socket's lock
 * and never held across a call into the engine that waits for an I/O thread.
 */
#include "sock/sock_impl.h"
#include "sock/ctx.h"

#include "engine/engine.h"
#include "util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int zl_ctx_enter(const void *handle, zl_ctx_t **out)
{
    void *obj;
    zl_hslot_t *slot;
    if (zl_handle_enter(handle, ZL_HANDLE_CTX, &obj, &slot) != 0)
        return EFAULT;
    *out = obj;
    return 0;
}

void zl_ctx_leave(zl_ctx_t *c)
{
    if (zl_handle_leave_last(c->hslot))
        zl_ctx_free(c);
}

void zl_ctx_free(zl_ctx_t *c)
{
    if (c->hslot != NULL)
        zl_handle_release(c->hslot);
    zl_inproc_ns_fini(&c->inproc);
    zl_cond_fini(&c->cv);
    zl_mutex_fini(&c->lk);
    free(c);
}

zl_io_t *zl_ctx_pick_io(zl_ctx_t *ctx, uint64_t affinity)
{
    zl_mutex_lock(&ctx->lk);
    if (ctx->shutdown) {
        zl_mutex_unlock(&ctx->lk);
        zl_set_errno(ETERM);
        return NULL;
    }
    if (ctx->nios == 0) {
        int n = ctx->io_threads > 0 ? ctx->io_threads : 1;
        ctx->ios = calloc((size_t)n, sizeof *ctx->ios);
        if (ctx->ios == NULL) {
            zl_mutex_unlock(&ctx->lk);
            zl_set_errno(ENOMEM);
            return NULL;
        }
        for (int i = 0; i < n; i++) {
            char name[32];
            snprintf(name, sizeof name, "%s/IO/%d",
                     ctx->thread_name_prefix[0] ? ctx->thread_name_prefix : "zlink", i);
            ctx->ios[i] = zl_io_new(name);
            if (ctx->ios[i] == NULL) {
                int e = errno;
                for (int j = 0; j < i; j++)
                    zl_io_destroy(ctx->ios[j]);
                free(ctx->ios);
                ctx->ios = NULL;
                zl_mutex_unlock(&ctx->lk);
                zl_set_errno(e ? e : ENOMEM);
                return NULL;
            }
            zl_io_set_spin(ctx->ios[i], (int64_t)ctx->io_spin_us * 1000);
        }
        ctx->nios = n;
    }
    zl_io_t *io = NULL;
    for (unsigned k = 0; k < (unsigned)ctx->nios && io == NULL; k++) {
        unsigned i = (ctx->io_rotor + k) % (unsigned)ctx->nios;
        if (affinity == 0 || (i < 64 && (affinity & (1ull << i)) != 0)) {
            io = ctx->ios[i];
            ctx->io_rotor = i + 1;
        }
    }
    zl_mutex_unlock(&ctx->lk);
    if (io == NULL)
        zl_set_errno(EINVAL); /* no such I/O thread */
    return io;
}

int zl_ctx_inproc_bind(zl_ctx_t *ctx, const char *name, zl_tran_sock_t *ts)
{
    zl_mutex_lock(&ctx->lk);
    bool down = ctx->shutdown;
    zl_mutex_unlock(&ctx->lk);
    if (down)
        return ETERM;
    return zl_inproc_bind(&ctx->inproc, name, ts);
}

void zl_ctx_inproc_unbind(zl_ctx_t *ctx, const char *name, zl_tran_sock_t *ts)
{
    zl_inproc_unbind(&ctx->inproc, name, ts);
}

zl_tran_sock_t *zl_ctx_inproc_find(zl_ctx_t *ctx, const char *name)
{
    return zl_inproc_find(&ctx->inproc, name);
}

void zl_ctx_shutdown(zl_ctx_t *c)
{
    zl_mutex_lock(&c->lk);
    c->shutdown = true;
    for (zl_socket_t *s = c->sockets; s != NULL; s = s->ctx_next)
        zl_socket_terminate(s);
    zl_mutex_unlock(&c->lk);
}

/* Used by zlink_socket: registers a new socket; 0, ETERM or EMFILE. */
int zl_ctx_add_socket(zl_ctx_t *c, zl_socket_t *s)
{
    zl_mutex_lock(&c->lk);
    int rc = 0;
    if (c->shutdown)
        rc = ETERM;
    else if (c->nlive >= c->max_sockets)
        rc = EMFILE;
    else {
        s->ctx_next = c->sockets;
        c->sockets = s;
        c->nlive++;
    }
    zl_mutex_unlock(&c->lk);
    return rc;
}

/* Used by zlink_close: one live socket fewer. */
void zl_ctx_socket_closed(zl_ctx_t *c)
{
    zl_mutex_lock(&c->lk);
    c->nlive--;
    zl_cond_broadcast(&c->cv);
    zl_mutex_unlock(&c->lk);
}

int zl_ctx_term(zl_ctx_t *c)
{
    zl_mutex_lock(&c->lk);
    if (c->terminating) {
        zl_mutex_unlock(&c->lk);
        return EBUSY;
    }
    c->terminating = true;
    c->shutdown = true;
    for (zl_socket_t *s = c->sockets; s != NULL; s = s->ctx_next)
        zl_socket_terminate(s);
    zl_mutex_unlock(&c->lk);

    /* As the contract says, term blocks until the application has closed
     * every socket: blocking calls now fail with ETERM, which tells the
     * owning threads to close. zl_ctx_socket_closed signals c->cv. */
    zl_mutex_lock(&c->lk);
    while (c->nlive > 0)
        zl_cond_wait_until(&c->cv, &c->lk, -1);
    zl_mutex_unlock(&c->lk);
    /* The I/O threads finish flushing (linger) and closing, then stop. No
     * new one can start: zl_ctx_pick_io refuses after shutdown. */
    for (int i = 0; i < c->nios; i++)
        zl_io_destroy(c->ios[i]);
    /* The lists are taken under the lock: a zlink_ctx_shutdown or
     * zlink_ctx_get of another thread may still be inside the context. */
    zl_mutex_lock(&c->lk);
    free(c->ios);
    c->ios = NULL;
    c->nios = 0;
    zl_socket_t *s = c->sockets;
    c->sockets = NULL;
    zl_mutex_unlock(&c->lk);
    while (s != NULL) {
        zl_socket_t *next = s->ctx_next;
        /* A socket a poller or monitor still pins outlives the context;
         * the last unpin frees it. */
        zl_socket_orphan(s);
        s = next;
    }
    return 0;
}
