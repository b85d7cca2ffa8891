/*
 * inproc.c — the in-process transport (engine.h): names bound in a
 * context, and links that join two sockets' pipes through shared queues.
 *
 * Design notes
 *  - A link has two sides, 0 (the connecting socket) and 1 (the binder).
 *    Side i's pipe writes out[i], which is side 1-i's in queue, so each
 *    queue is shared by the two pipes (each pipe holds one reference on
 *    it). There is no I/O thread: the queues' notifies wake the sockets
 *    directly.
 *  - Ownership: the link holds one reference on each pipe, and each
 *    socket holds the link through its pipe until it reaps that pipe
 *    (zl_inproc_release). The last release frees the link and drops its
 *    pipe references, so neither side's memory can go while the other
 *    side may still reach it (to end it, or to flag controls).
 *  - closed[i] records that side i is gone (zl_inproc_close). It is set
 *    once (atomic exchange) so the peer's pipe is ended once.
 *  - Locks: ns->lk guards the name list only. Everything else here is
 *    atomics and calls into the socket side, made with no lock held
 *    (zl_inproc_controls_queued only flags and wakes, so it may run under
 *    the caller's socket lock).
 */
#include "engine/engine.h"

#include "wire/zmp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct zl_inproc_name {
    zl_inproc_name_t *next;
    zl_tran_sock_t *binder;
    char name[];
};

struct zl_inproc_link {
    zl_tran_sock_t *ts[2];
    zl_pipe_t *pipe[2];
    zl_q_t *out[2];            /* written by side i */
    zl_q_t *cmp_out[2];        /* Completion lane written by side i, or NULL */
    _Atomic bool closed[2];
    _Atomic int refs;          /* one per side */
};

/* ------------------------------------------------------------ names */

void zl_inproc_ns_init(zl_inproc_ns_t *ns)
{
    zl_mutex_init(&ns->lk);
    ns->names = NULL;
}

void zl_inproc_ns_fini(zl_inproc_ns_t *ns)
{
    while (ns->names != NULL) {
        zl_inproc_name_t *n = ns->names;
        ns->names = n->next;
        free(n);
    }
    zl_mutex_fini(&ns->lk);
}

int zl_inproc_bind(zl_inproc_ns_t *ns, const char *name, zl_tran_sock_t *ts)
{
    size_t len = strlen(name);
    zl_mutex_lock(&ns->lk);
    for (zl_inproc_name_t *n = ns->names; n != NULL; n = n->next) {
        if (strcmp(n->name, name) == 0) {
            zl_mutex_unlock(&ns->lk);
            return EADDRINUSE;
        }
    }
    zl_inproc_name_t *n = malloc(sizeof *n + len + 1);
    if (n == NULL) {
        zl_mutex_unlock(&ns->lk);
        return ENOMEM;
    }
    memcpy(n->name, name, len + 1);
    n->binder = ts;
    n->next = ns->names;
    ns->names = n;
    zl_mutex_unlock(&ns->lk);
    return 0;
}

void zl_inproc_unbind(zl_inproc_ns_t *ns, const char *name, zl_tran_sock_t *ts)
{
    zl_mutex_lock(&ns->lk);
    zl_inproc_name_t **pp = &ns->names;
    while (*pp != NULL) {
        zl_inproc_name_t *n = *pp;
        if (n->binder == ts && (name == NULL || strcmp(n->name, name) == 0)) {
            *pp = n->next;
            free(n);
        } else {
            pp = &n->next;
        }
    }
    zl_mutex_unlock(&ns->lk);
}

zl_tran_sock_t *zl_inproc_find(zl_inproc_ns_t *ns, const char *name)
{
    zl_tran_sock_t *ts = NULL;
    zl_mutex_lock(&ns->lk);
    for (zl_inproc_name_t *n = ns->names; n != NULL; n = n->next) {
        if (strcmp(n->name, name) == 0) {
            ts = n->binder;
            break;
        }
    }
    zl_mutex_unlock(&ns->lk);
    return ts;
}

/* ------------------------------------------------------------ links */

static uint64_t hwm_min(uint64_t a, uint64_t b)
{
    if (a == 0)
        return b;
    if (b == 0)
        return a;
    return a < b ? a : b;
}

static void peer_info(const zl_tran_opts_t *o, zl_peer_info_t *info)
{
    memset(info, 0, sizeof *info);
    info->type = o->sock_type;
    info->rid = o->rid;
    info->weight = o->weight;
    info->lanes = 1;
}

void zl_inproc_release(zl_inproc_link_t *l)
{
    if (atomic_fetch_sub(&l->refs, 1) != 1)
        return;
    for (int i = 0; i < 2; i++)
        l->ts[i]->ops->pipe_unref(l->pipe[i]);
    free(l);
}

/* Frees what a failed connect made before any queue was handed over. */
static void link_abandon(zl_inproc_link_t *l, zl_q_t **qs, size_t nq)
{
    for (size_t i = 0; i < nq; i++)
        free(qs[i]);
    for (int i = 0; i < 2; i++) {
        if (l->pipe[i] != NULL) {
            l->ts[i]->ops->pipe_unref(l->pipe[i]); /* the socket's */
            l->ts[i]->ops->pipe_unref(l->pipe[i]); /* ours */
        }
    }
    free(l);
}

int zl_inproc_connect(zl_tran_sock_t *ts, zl_tran_sock_t *binder)
{
    zl_tran_opts_t o[2];
    zl_tran_get_opts(ts, &o[0]);
    zl_tran_get_opts(binder, &o[1]);
    if (!zmp_types_compatible(o[0].sock_type, o[1].sock_type))
        return EPROTOTYPE;
    zl_inproc_link_t *l = calloc(1, sizeof *l);
    if (l == NULL)
        return ENOMEM;
    l->ts[0] = ts;
    l->ts[1] = binder;
    atomic_init(&l->refs, 2);

    uint64_t id = zl_tran_next_id(); /* one id for both sides */
    zl_peer_info_t info[2];
    zl_q_end_t reader[2], writer[2];
    for (int i = 0; i < 2; i++) {
        peer_info(&o[1 - i], &info[i]); /* side i's peer is the other socket */
        zl_tran_pipe_args_t a = {.id = id, .peer = &info[i]};
        l->pipe[i] = l->ts[i]->ops->pipe_new_inproc(l->ts[i], &a, i == 0, &reader[i], &writer[i]);
        if (l->pipe[i] == NULL) {
            link_abandon(l, NULL, 0);
            return ENOMEM;
        }
    }
    /* out[i] is read by side 1-i: its reader end is that socket's. */
    zl_q_t *qs[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < 2; i++)
        qs[i] = zl_q_new(hwm_min(o[i].sndhwm, o[1 - i].rcvhwm), reader[1 - i], writer[i]);
    size_t nq = 2;
    if (zmp_lane_count(o[0].sock_type, o[1].sock_type) == 2) {
        /* ROUTER-ROUTER: the Completion lane, no HWM, no credit edges. */
        zl_q_end_t none = {NULL, NULL};
        for (int i = 0; i < 2; i++)
            qs[2 + i] = zl_q_new(0, reader[1 - i], none);
        nq = 4;
    }
    for (size_t i = 0; i < nq; i++) {
        if (qs[i] == NULL) {
            link_abandon(l, qs, nq);
            return ENOMEM;
        }
    }
    for (int i = 0; i < 2; i++) {
        l->out[i] = qs[i];
        l->cmp_out[i] = nq == 4 ? qs[2 + i] : NULL;
    }
    for (int i = 0; i < 2; i++)
        l->ts[i]->ops->pipe_set_queues(l->pipe[i], l->out[i], l->out[1 - i], l->cmp_out[i],
                                       l->cmp_out[1 - i], l, i);

    /* The binder first: a connect that finds it closing fails cleanly. A
     * refused attach has ended that pipe and dropped the socket's
     * reference; the link's reference keeps its memory. */
    int rc = binder->ops->pipe_attach(binder, l->pipe[1]);
    if (rc != 0) {
        atomic_store(&l->closed[1], true);
        ts->ops->pipe_unref(l->pipe[0]); /* ts never held its pipe */
        zl_inproc_release(l);
        zl_inproc_release(l);
        return rc;
    }
    rc = ts->ops->pipe_attach(ts, l->pipe[0]);
    if (rc != 0) {
        /* The binder took it but we cannot: end the binder's side. */
        atomic_store(&l->closed[0], true);
        binder->ops->pipe_ended(binder, l->pipe[1]);
        zl_inproc_release(l); /* ours; the binder releases when it reaps */
        return rc;
    }
    return 0;
}

void zl_inproc_close(zl_inproc_link_t *l, int side)
{
    if (atomic_exchange(&l->closed[side], true))
        return;
    zl_q_close_writer(l->out[side]);
    if (l->cmp_out[side] != NULL)
        zl_q_close_writer(l->cmp_out[side]);
    l->ts[1 - side]->ops->pipe_ended(l->ts[1 - side], l->pipe[1 - side]);
}

bool zl_inproc_closed(const zl_inproc_link_t *l, int side)
{
    return atomic_load(&l->closed[side]);
}

void zl_inproc_controls_queued(zl_inproc_link_t *l, int side)
{
    l->ts[1 - side]->ops->controls_queued(l->ts[1 - side]);
}

bool zl_inproc_peer_is(const zl_inproc_link_t *l, int side, const zl_tran_sock_t *peer_ts)
{
    return l->ts[1 - side] == peer_ts;
}
