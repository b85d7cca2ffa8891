/*
 * ctx.c — context internals: I/O thread start-up, the socket list, the
 * inproc registry, shutdown and termination. The public zlink_ctx_*
 * functions are in api/context_api.c.
 *
 * Locks: ctx->lk guards every field. It is taken before a socket's lock
 * and never held across a call into the engine that waits for an I/O thread.
 */
#include "ctx.h"

#include "engine/engine.h"
#include "errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int zl_ctx_check(void *handle, zl_ctx_t **out)
{
    zl_ctx_t *c = handle;
    if (c == NULL || c->tag != ZL_CTX_TAG)
        return EFAULT;
    *out = c;
    return 0;
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

int zl_ctx_inproc_bind(zl_ctx_t *ctx, const char *name, zl_socket_t *s)
{
    zl_mutex_lock(&ctx->lk);
    if (ctx->shutdown) {
        zl_mutex_unlock(&ctx->lk);
        return ETERM;
    }
    for (zl_inproc_entry_t *e = ctx->inproc; e != NULL; e = e->next) {
        if (strcmp(e->name, name) == 0) {
            zl_mutex_unlock(&ctx->lk);
            return EADDRINUSE;
        }
    }
    zl_inproc_entry_t *e = calloc(1, sizeof *e);
    size_t len = strlen(name);
    if (e != NULL)
        e->name = malloc(len + 1);
    if (e == NULL || e->name == NULL) {
        free(e);
        zl_mutex_unlock(&ctx->lk);
        return ENOMEM;
    }
    memcpy(e->name, name, len + 1);
    e->sock = s;
    e->next = ctx->inproc;
    ctx->inproc = e;
    zl_mutex_unlock(&ctx->lk);
    return 0;
}

void zl_ctx_inproc_unbind(zl_ctx_t *ctx, const char *name, zl_socket_t *s)
{
    zl_mutex_lock(&ctx->lk);
    zl_inproc_entry_t **pp = &ctx->inproc;
    while (*pp != NULL) {
        zl_inproc_entry_t *e = *pp;
        if (e->sock == s && (name == NULL || strcmp(e->name, name) == 0)) {
            *pp = e->next;
            free(e->name);
            free(e);
        } else {
            pp = &e->next;
        }
    }
    zl_mutex_unlock(&ctx->lk);
}

zl_socket_t *zl_ctx_inproc_find(zl_ctx_t *ctx, const char *name)
{
    zl_socket_t *s = NULL;
    zl_mutex_lock(&ctx->lk);
    for (zl_inproc_entry_t *e = ctx->inproc; e != NULL; e = e->next) {
        if (strcmp(e->name, name) == 0) {
            s = e->sock;
            break;
        }
    }
    zl_mutex_unlock(&ctx->lk);
    return s;
}
