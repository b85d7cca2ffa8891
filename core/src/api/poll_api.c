/*
 * poll_api.c — the public polling functions: zlink_poll and zlink_poller_*.
 *
 * Each function checks its arguments first, then the handles, then the
 * state (a wait in progress), then the target (registered or not, owned by
 * another poller), as core-contract §2 orders them, and only then changes
 * anything: a failed call leaves every registration as it was. The wait
 * itself is the engine in poller.c (design notes there).
 *
 * Serialization of one poller: p->lk is held for the whole of size, add,
 * modify, remove and destroy, and briefly by wait to set and clear
 * p->waiting. While p->waiting is set every other call on that poller
 * fails at once with CONFIG_BUSY/EBUSY (destroy: CLOSE_BUSY/EBUSY); the
 * waiting thread reads the set without the lock, which is safe because
 * nobody else may change it. Lock order: p->lk, then a socket's waker lock
 * or s->lk (completion claim/release), a monitor's lock, or a timer's lock
 * (one at a time). All of these functions run on application threads; only
 * zlink_poller_wait and zlink_poll block, and they hold no lock meanwhile.
 *
 * Handles are handle-table values (handle.h) and are told apart by the
 * kind they encode: a poller, a socket, a socket monitor or a timer. Every
 * call enters the poller's handle for its whole length (a wait included);
 * zlink_poller_destroy takes the close gate, so it fails with
 * CLOSE_BUSY/EBUSY while any other call on the poller is inside, and a
 * destroyed poller's handle is INVALID_HANDLE/EFAULT. A source handle is
 * entered while it is resolved and registered; a timer's registration keeps
 * that enter until the timer is removed (so the timer cannot be destroyed
 * meanwhile), a socket's or monitor's keeps a pin of the memory instead.
 */
#include "poll/poller.h"

#include "util/errors.h"
#include "sock/monitor.h"
#include "poll/timer.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

/* Any thread: resolves handle as a live poller and enters it. 0 (*out,
 * *slot; zl_handle_leave(*slot) once) or EFAULT. Never blocks. */
static int poller_from(void *handle, zl_poller_t **out, zl_hslot_t **slot)
{
    void *obj;
    if (zl_handle_enter(handle, ZL_HANDLE_POLLER, &obj, slot) != 0)
        return EFAULT;
    *out = obj;
    return 0;
}

/* CONFIG_BUSY has no errno row of its own (errors.c). Any thread. */
static zlink_config_result_t config_busy(void)
{
    zl_set_errno(EBUSY);
    return ZLINK_CONFIG_BUSY;
}

/* The prologue of every registration call: enters the handle, takes
 * p->lk and refuses while a wait is active. On ZLINK_CONFIG_OK the caller
 * is inside the handle and holds p->lk, and ends with poller_exit;
 * otherwise errno is set, no lock is held and nothing was entered. */
static zlink_config_result_t poller_enter(void *handle, zl_poller_t **out, zl_hslot_t **slot)
{
    zl_poller_t *p;
    if (poller_from(handle, &p, slot) != 0)
        return zl_config_fail(EFAULT);
    zl_mutex_lock(&p->lk);
    if (p->waiting) {
        zl_mutex_unlock(&p->lk);
        zl_handle_leave(*slot);
        return config_busy();
    }
    *out = p;
    return ZLINK_CONFIG_OK;
}

/* The epilogue matching poller_enter: drops p->lk, leaves the handle. */
static void poller_exit(zl_poller_t *p, zl_hslot_t *slot)
{
    zl_mutex_unlock(&p->lk);
    zl_handle_leave(slot);
}

/* -1 with both outputs set (zlink_poll, _size, _wait). Any thread. */
static int int_fail(zlink_config_result_t *error_out, int e)
{
    zlink_config_result_t r = zl_config_fail(e);
    if (error_out != NULL)
        *error_out = r;
    return -1;
}

static int int_busy(zlink_config_result_t *error_out)
{
    zlink_config_result_t r = config_busy();
    if (error_out != NULL)
        *error_out = r;
    return -1;
}

/* Pure: no unknown bit, and not ITEMS_DFLT (a count, not a bit). */
static bool mask_valid(short events)
{
    return (events & ~ZL_POLL_VALID_BITS) == 0;
}

static bool completion_socket_type(int type)
{
    return type == ZLINK_PAIR || type == ZLINK_DEALER || type == ZLINK_ROUTER ||
           type == ZLINK_STREAM;
}

/* The "socket type" mask_supported uses for a monitor handle. */
#define MONITOR_TYPE (-1)

/* 0, EINVAL (COMPLETION where it cannot be) or ENOTSUP (a bit the source
 * kind does not have) for a mask that passed mask_valid. sock_type only
 * for SOCKET sources: a socket's type, or MONITOR_TYPE. Pure. */
static int mask_supported(zlink_poller_source_kind_t kind, int sock_type, short events)
{
    if ((events & ZLINK_POLLCOMPLETION) &&
        (kind != ZLINK_POLLER_SOURCE_SOCKET || !completion_socket_type(sock_type)))
        return EINVAL;
    switch (kind) {
    case ZLINK_POLLER_SOURCE_SOCKET:
        if (events & ZLINK_POLLPRI)
            return ENOTSUP;
        if ((events & ZLINK_POLLOUT) && sock_type == MONITOR_TYPE)
            return ENOTSUP;
        if ((events & ZLINK_POLLROUTE) && sock_type != ZLINK_ROUTER)
            return ENOTSUP;
        return 0;
    case ZLINK_POLLER_SOURCE_FD:
        return (events & ZLINK_POLLROUTE) ? ENOTSUP : 0;
    case ZLINK_POLLER_SOURCE_TIMER:
        return (events & (ZLINK_POLLOUT | ZLINK_POLLPRI | ZLINK_POLLROUTE)) ? ENOTSUP : 0;
    }
    return EINVAL;
}

/* Whether handle is something a poller could hold (a socket or a
 * monitor, open or closed, or a live timer); decides ENOENT versus EFAULT
 * for a handle that is not registered. Asks the handle table only; any
 * thread. */
static bool handle_known(void *handle)
{
    int kind = zl_handle_kind(handle);
    if (kind == ZL_HANDLE_SOCKET || kind == ZL_HANDLE_MONITOR)
        return zl_handle_state(handle, kind) != EFAULT;
    return kind == ZL_HANDLE_TIMER && zl_handle_state(handle, kind) == 0;
}

/* What a handle given to zlink_poller_add or in a zlink_poll item is. */
typedef struct resolved {
    zlink_poller_source_kind_t kind;
    zl_socket_t *sock;     /* entered through its gate: zl_socket_leave it */
    zl_monitor_t *mon;     /* entered: mon_slot */
    zl_hslot_t *mon_slot;
    zl_timer_t *timer;     /* entered: timer_slot (kept by a registration) */
    zl_hslot_t *timer_slot;
    int type;              /* socket type, MONITOR_TYPE, or 0 */
} resolved_t;

/* Resolves handle by the kind it encodes and enters it. 0; EFAULT (not a
 * source); ESHUTDOWN (a closed socket or monitor). While entered, a socket
 * or monitor cannot be closed and a timer cannot be destroyed; the caller
 * ends with resolved_leave. Any thread; takes no lock. */
static int resolve_source(void *handle, resolved_t *r)
{
    memset(r, 0, sizeof *r);
    r->kind = ZLINK_POLLER_SOURCE_SOCKET;
    void *obj;
    int rc;
    switch (zl_handle_kind(handle)) {
    case ZL_HANDLE_TIMER:
        r->kind = ZLINK_POLLER_SOURCE_TIMER;
        return zl_timer_enter(handle, &r->timer, &r->timer_slot);
    case ZL_HANDLE_MONITOR:
        rc = zl_handle_enter(handle, ZL_HANDLE_MONITOR, &obj, &r->mon_slot);
        if (rc != 0)
            return rc == EFAULT ? EFAULT : ESHUTDOWN;
        r->mon = obj;
        r->type = MONITOR_TYPE;
        return 0;
    case ZL_HANDLE_SOCKET:
        rc = zl_socket_enter(handle, &r->sock);
        if (rc == 0)
            r->type = zl_socket_type(r->sock);
        else
            r->sock = NULL;
        return rc;
    default:
        return EFAULT;
    }
}

/* Leaves what resolve_source entered (a timer's enter only if no
 * registration took it over: r->timer_slot is then NULL). */
static void resolved_leave(resolved_t *r)
{
    if (r->sock != NULL)
        zl_socket_leave(r->sock);
    if (r->mon_slot != NULL)
        zl_handle_leave(r->mon_slot);
    if (r->timer_slot != NULL)
        zl_handle_leave(r->timer_slot);
    r->sock = NULL;
    r->mon_slot = r->timer_slot = NULL;
}

/* Under p->lk: the registration of a socket, monitor or timer handle. */
static zl_pollsrc_t *find_handle(zl_poller_t *p, const void *handle)
{
    for (size_t i = 0; i < p->set.n; i++) {
        zl_pollsrc_t *src = p->set.src[i];
        if (src->kind != ZLINK_POLLER_SOURCE_FD && src->handle == handle)
            return src;
    }
    return NULL;
}

/* Under p->lk: the registration of fd, or NULL. */
static zl_pollsrc_t *find_fd(zl_poller_t *p, int fd)
{
    for (size_t i = 0; i < p->set.n; i++) {
        zl_pollsrc_t *src = p->set.src[i];
        if (src->kind == ZLINK_POLLER_SOURCE_FD && src->fd == fd)
            return src;
    }
    return NULL;
}

/* Under p->lk, no wait active: registers a validated source, r (NULL for
 * an FD) or fd. Checks the target (duplicate, timer owner, completion
 * owner), then attaches. On success a timer's registration takes over
 * r->timer_slot (set to NULL here). On failure nothing changed and the
 * errno is returned. */
static int poller_register(zl_poller_t *p, resolved_t *r, void *handle, int fd,
                           void *user_data, short events)
{
    zl_pollsrc_t *dup = r == NULL ? find_fd(p, fd) : find_handle(p, handle);
    if (dup != NULL)
        return EEXIST;
    if (zl_pollset_reserve(&p->set, 1) != 0)
        return ENOMEM;
    zl_pollsrc_t *src = calloc(1, sizeof *src);
    if (src == NULL)
        return ENOMEM;
    src->kind = r == NULL ? ZLINK_POLLER_SOURCE_FD : r->kind;
    src->handle = handle;
    src->fd = r == NULL ? fd : -1;
    if (r != NULL) {
        src->sock = r->sock;
        src->mon = r->mon;
        src->timer = r->timer;
    }
    src->events = events;
    src->user_data = user_data;
    if (src->timer != NULL) {
        int rc = zl_timer_attach(src->timer, p, &p->set.sig);
        if (rc != 0) {
            free(src);
            return rc; /* EBUSY: another poller holds it */
        }
    }
    if (src->sock != NULL && (events & ZLINK_POLLCOMPLETION)) {
        int rc = zl_socket_completion_claim(src->sock, p);
        if (rc != 0) {
            free(src);
            return rc; /* EBUSY: another poller owns the completion bit */
        }
        src->cq_owner = true;
    }
    if (src->timer != NULL) {
        src->timer_slot = r->timer_slot;
        r->timer_slot = NULL;
    }
    zl_pollsrc_attach(&p->set, src);
    return 0;
}

/* Under p->lk, no wait active: changes the mask of a registered source to
 * events (validated by the caller). Claims or releases the completion bit
 * as needed; on failure nothing changed. */
static int poller_change(zl_poller_t *p, zl_pollsrc_t *src, short events)
{
    int type = src->sock != NULL ? zl_socket_type(src->sock) : src->mon != NULL ? MONITOR_TYPE : 0;
    int rc = mask_supported(src->kind, type, events);
    if (rc != 0)
        return rc;
    if (src->sock != NULL) {
        bool want = (events & ZLINK_POLLCOMPLETION) != 0;
        if (want && !src->cq_owner) {
            rc = zl_socket_completion_claim(src->sock, p);
            if (rc != 0)
                return rc;
            src->cq_owner = true;
        } else if (!want && src->cq_owner) {
            zl_socket_completion_release(src->sock, p);
            src->cq_owner = false;
        }
    }
    src->events = events;
    return 0;
}

/* Under p->lk, no wait active: unregisters and frees src. */
static void poller_unregister(zl_poller_t *p, zl_pollsrc_t *src)
{
    zl_pollsrc_detach(&p->set, src, p);
    free(src);
}

/* Wait thread, after the engine returned n > 0: writes up to cap events,
 * starting after the last source reported by the previous wait so that a
 * small array cannot starve any source. Marks each returned POLLERR of a
 * closed socket as reported. */
static int poller_emit(zl_poller_t *p, zlink_poller_event_t *ev, int cap)
{
    size_t n = p->set.n;
    size_t first = n > 0 ? p->rotor % n : 0;
    size_t next = first;
    int k = 0;
    for (size_t i = 0; i < n && k < cap; i++) {
        size_t j = (first + i) % n;
        zl_pollsrc_t *src = p->set.src[j];
        if (src->ready == 0)
            continue;
        zlink_poller_event_t *e = &ev[k++];
        memset(e, 0, sizeof *e);
        e->source_kind = src->kind;
        e->fd = (zlink_fd_t)-1;
        e->user_data = src->user_data;
        e->events = src->ready;
        switch (src->kind) {
        case ZLINK_POLLER_SOURCE_SOCKET:
            e->socket = src->handle;
            if (src->ready & ZLINK_POLLERR)
                src->err_reported = true;
            break;
        case ZLINK_POLLER_SOURCE_FD:
            e->fd = src->fd;
            break;
        case ZLINK_POLLER_SOURCE_TIMER:
            e->timer = src->handle;
            break;
        }
        next = j + 1;
    }
    p->rotor = n > 0 ? next % n : 0;
    return k;
}

/* ------------------------------------------------------------- the poller */

ZLINK_EXPORT void *zlink_poller_new(void)
{
    zl_poller_t *p = calloc(1, sizeof *p);
    if (p == NULL) {
        zl_set_errno(ENOMEM);
        return NULL;
    }
    zl_mutex_init(&p->lk);
    zl_pollset_init(&p->set, true);
    void *handle = NULL;
    zl_hslot_t *slot;
    if (zl_handle_new(ZL_HANDLE_POLLER, p, &handle, &slot) != 0) {
        zl_pollset_fini(&p->set);
        zl_mutex_fini(&p->lk);
        free(p);
        zl_set_errno(ENOMEM);
        return NULL;
    }
    return handle;
}

ZLINK_EXPORT zlink_close_result_t zlink_poller_destroy(void **poller_p)
{
    if (poller_p == NULL)
        return zl_close_fail(EFAULT);
    void *obj;
    zl_hslot_t *slot;
    int rc = zl_handle_close(*poller_p, ZL_HANDLE_POLLER, &obj, &slot);
    if (rc != 0)
        /* EBUSY: another call is inside (a wait, for one). */
        return zl_close_fail(rc == EBUSY ? EBUSY : EFAULT);
    zl_poller_t *p = obj;
    /* Nobody else is inside, and nobody can enter: no wait is active. */
    zl_mutex_lock(&p->lk);
    while (p->set.n > 0)
        poller_unregister(p, p->set.src[p->set.n - 1]);
    zl_mutex_unlock(&p->lk);
    zl_pollset_fini(&p->set);
    zl_mutex_fini(&p->lk);
    free(p);
    zl_handle_release(slot);
    *poller_p = NULL;
    return ZLINK_CLOSE_OK;
}

ZLINK_EXPORT int zlink_poller_size(void *poller, zlink_config_result_t *error_out)
{
    zl_poller_t *p;
    zl_hslot_t *slot;
    if (poller_from(poller, &p, &slot) != 0)
        return int_fail(error_out, EFAULT);
    zl_mutex_lock(&p->lk);
    if (p->waiting) {
        zl_mutex_unlock(&p->lk);
        zl_handle_leave(slot);
        return int_busy(error_out);
    }
    int n = (int)p->set.n;
    zl_mutex_unlock(&p->lk);
    zl_handle_leave(slot);
    if (error_out != NULL)
        *error_out = ZLINK_CONFIG_OK;
    return n;
}

ZLINK_EXPORT zlink_config_result_t zlink_poller_add(void *poller, void *source, void *user_data,
                                                    short events)
{
    if (!mask_valid(events))
        return zl_config_fail(EINVAL);
    zl_poller_t *p = NULL;
    zl_hslot_t *pslot = NULL;
    zlink_config_result_t busy = poller_enter(poller, &p, &pslot);
    if (busy != ZLINK_CONFIG_OK)
        return busy;
    resolved_t r;
    int rc = resolve_source(source, &r);
    if (rc == 0) {
        rc = mask_supported(r.kind, r.type, events);
        if (rc == 0)
            rc = poller_register(p, &r, source, -1, user_data, events);
        resolved_leave(&r);
    }
    poller_exit(p, pslot);
    return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
}

ZLINK_EXPORT zlink_config_result_t zlink_poller_modify(void *poller, void *source, short events)
{
    if (!mask_valid(events))
        return zl_config_fail(EINVAL);
    zl_poller_t *p = NULL;
    zl_hslot_t *pslot = NULL;
    zlink_config_result_t busy = poller_enter(poller, &p, &pslot);
    if (busy != ZLINK_CONFIG_OK)
        return busy;
    zl_pollsrc_t *src = find_handle(p, source);
    int rc;
    if (src == NULL)
        rc = handle_known(source) ? ENOENT : EFAULT;
    else
        rc = poller_change(p, src, events);
    poller_exit(p, pslot);
    return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
}

ZLINK_EXPORT zlink_config_result_t zlink_poller_remove(void *poller, void *source)
{
    zl_poller_t *p = NULL;
    zl_hslot_t *pslot = NULL;
    zlink_config_result_t busy = poller_enter(poller, &p, &pslot);
    if (busy != ZLINK_CONFIG_OK)
        return busy;
    zl_pollsrc_t *src = find_handle(p, source);
    int rc = 0;
    if (src == NULL)
        rc = handle_known(source) ? ENOENT : EFAULT;
    else
        poller_unregister(p, src);
    poller_exit(p, pslot);
    return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
}

ZLINK_EXPORT zlink_config_result_t zlink_poller_add_fd(void *poller, zlink_fd_t fd,
                                                       void *user_data, short events)
{
    if (fd < 0 || !mask_valid(events))
        return zl_config_fail(EINVAL);
    zl_poller_t *p = NULL;
    zl_hslot_t *pslot = NULL;
    zlink_config_result_t busy = poller_enter(poller, &p, &pslot);
    if (busy != ZLINK_CONFIG_OK)
        return busy;
    int rc = mask_supported(ZLINK_POLLER_SOURCE_FD, 0, events);
    if (rc == 0)
        rc = poller_register(p, NULL, NULL, fd, user_data, events);
    poller_exit(p, pslot);
    return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
}

ZLINK_EXPORT zlink_config_result_t zlink_poller_modify_fd(void *poller, zlink_fd_t fd,
                                                          short events)
{
    if (fd < 0 || !mask_valid(events))
        return zl_config_fail(EINVAL);
    zl_poller_t *p = NULL;
    zl_hslot_t *pslot = NULL;
    zlink_config_result_t busy = poller_enter(poller, &p, &pslot);
    if (busy != ZLINK_CONFIG_OK)
        return busy;
    zl_pollsrc_t *src = find_fd(p, fd);
    int rc = src == NULL ? ENOENT : poller_change(p, src, events);
    poller_exit(p, pslot);
    return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
}

ZLINK_EXPORT zlink_config_result_t zlink_poller_remove_fd(void *poller, zlink_fd_t fd)
{
    if (fd < 0)
        return zl_config_fail(EINVAL);
    zl_poller_t *p = NULL;
    zl_hslot_t *pslot = NULL;
    zlink_config_result_t busy = poller_enter(poller, &p, &pslot);
    if (busy != ZLINK_CONFIG_OK)
        return busy;
    zl_pollsrc_t *src = find_fd(p, fd);
    int rc = 0;
    if (src == NULL)
        rc = ENOENT;
    else
        poller_unregister(p, src);
    poller_exit(p, pslot);
    return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
}

ZLINK_EXPORT zlink_config_result_t zlink_poller_add_timer(void *poller, void *timer,
                                                          void *user_data)
{
    zl_poller_t *p = NULL;
    zl_hslot_t *pslot = NULL;
    zlink_config_result_t busy = poller_enter(poller, &p, &pslot);
    if (busy != ZLINK_CONFIG_OK)
        return busy;
    resolved_t r = {.kind = ZLINK_POLLER_SOURCE_TIMER};
    int rc = zl_timer_enter(timer, &r.timer, &r.timer_slot);
    if (rc == 0) {
        rc = poller_register(p, &r, timer, -1, user_data, ZLINK_POLLIN);
        resolved_leave(&r);
    }
    poller_exit(p, pslot);
    return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
}

ZLINK_EXPORT zlink_config_result_t zlink_poller_remove_timer(void *poller, void *timer)
{
    zl_poller_t *p = NULL;
    zl_hslot_t *pslot = NULL;
    zlink_config_result_t busy = poller_enter(poller, &p, &pslot);
    if (busy != ZLINK_CONFIG_OK)
        return busy;
    int rc = 0;
    if (zl_handle_state(timer, ZL_HANDLE_TIMER) != 0) {
        rc = EFAULT; /* a registered timer is always live (it is held) */
    } else {
        zl_pollsrc_t *src = find_handle(p, timer);
        if (src == NULL)
            rc = ENOENT;
        else
            poller_unregister(p, src);
    }
    poller_exit(p, pslot);
    return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
}

ZLINK_EXPORT int zlink_poller_wait(void *poller, zlink_poller_event_t *events, int event_capacity,
                                   long timeout_ms, zlink_config_result_t *error_out)
{
    int64_t deadline = zl_poll_deadline(timeout_ms);
    if (events == NULL || event_capacity <= 0)
        return int_fail(error_out, EINVAL);
    zl_poller_t *p;
    zl_hslot_t *slot;
    if (poller_from(poller, &p, &slot) != 0)
        return int_fail(error_out, EFAULT);
    zl_mutex_lock(&p->lk);
    if (p->waiting) {
        zl_mutex_unlock(&p->lk);
        zl_handle_leave(slot);
        return int_busy(error_out);
    }
    p->waiting = true;
    zl_mutex_unlock(&p->lk);

    int err = 0;
    int n = zl_pollset_wait(&p->set, deadline, &err);
    if (n > 0)
        n = poller_emit(p, events, event_capacity);

    zl_mutex_lock(&p->lk);
    p->waiting = false;
    zl_mutex_unlock(&p->lk);
    zl_handle_leave(slot);
    if (n < 0)
        return int_fail(error_out, err);
    if (error_out != NULL)
        *error_out = ZLINK_CONFIG_OK;
    return n;
}

/* --------------------------------------------------------------- one-shot */

/* Detaches every source of a zlink_poll set (from the back: O(1) each).
 * The calling thread, which owns the set; takes the sources' waker locks. */
static void poll_set_clear(zl_pollset_t *set)
{
    while (set->n > 0)
        zl_pollsrc_detach(set, set->src[set->n - 1], NULL);
}

ZLINK_EXPORT int zlink_poll(zlink_pollitem_t *items, int item_count, long timeout_ms,
                            zlink_config_result_t *error_out)
{
    int64_t deadline = zl_poll_deadline(timeout_ms);
    if (item_count < 0 || (items == NULL && item_count > 0))
        return int_fail(error_out, EINVAL);

    /* Arguments of every item first: bits, COMPLETION, FD numbers. */
    size_t active = 0;
    for (int i = 0; i < item_count; i++) {
        items[i].revents = 0;
        short ev = items[i].events;
        if (ev == 0)
            continue;
        if (!mask_valid(ev) || (ev & ZLINK_POLLCOMPLETION) ||
            (items[i].socket == NULL && items[i].fd < 0))
            return int_fail(error_out, EINVAL);
        active++;
    }
    if (active == 0) {
        if (error_out != NULL)
            *error_out = ZLINK_CONFIG_OK;
        return 0;
    }

    /* The set lives on this stack for the usual sizes. */
    zl_pollsrc_t src_buf[ZLINK_POLLITEMS_DFLT];
    zl_pollsrc_t *ptr_buf[ZLINK_POLLITEMS_DFLT];
    struct pollfd pfd_buf[ZLINK_POLLITEMS_DFLT + 1];
    zl_pollsrc_t *srcs = src_buf;
    void *heap = NULL;
    zl_pollset_t set;
    zl_pollset_init(&set, false);
    set.src = ptr_buf;
    set.pfd = pfd_buf;
    if (active > ZLINK_POLLITEMS_DFLT) {
        size_t bytes = active * sizeof(zl_pollsrc_t) + active * sizeof(zl_pollsrc_t *) +
                       (active + 1) * sizeof(struct pollfd);
        heap = malloc(bytes);
        if (heap == NULL)
            return int_fail(error_out, ENOMEM);
        srcs = heap;
        set.src = (zl_pollsrc_t **)(srcs + active);
        set.pfd = (struct pollfd *)(set.src + active);
    }
    set.cap = active;
    set.pfd_cap = active + 1;

    /* Handles: enter each socket, check what its type supports, attach. */
    int rc = 0;
    size_t k = 0;
    for (int i = 0; i < item_count && rc == 0; i++) {
        zlink_pollitem_t *it = &items[i];
        if (it->events == 0)
            continue;
        zl_pollsrc_t *src = &srcs[k++];
        memset(src, 0, sizeof *src);
        src->events = it->events;
        src->user_data = it;
        src->fd = -1;
        if (it->socket == NULL) {
            src->kind = ZLINK_POLLER_SOURCE_FD;
            src->fd = it->fd;
            rc = mask_supported(ZLINK_POLLER_SOURCE_FD, 0, it->events);
        } else {
            resolved_t r;
            rc = resolve_source(it->socket, &r);
            src->kind = r.kind;
            src->handle = it->socket;
            if (rc == ESHUTDOWN) {
                /* Closed before the call: reported as POLLERR. */
                src->closed_early = true;
                rc = 0;
            } else if (rc == 0 && r.kind == ZLINK_POLLER_SOURCE_TIMER) {
                resolved_leave(&r);
                rc = ENOTSUP;  /* timers are watched through a poller */
            } else if (rc == 0) {
                src->sock = r.sock;
                src->mon = r.mon;
                rc = mask_supported(ZLINK_POLLER_SOURCE_SOCKET, r.type, it->events);
                if (rc == 0)
                    zl_pollsrc_attach(&set, src); /* pins: the enter can go */
                resolved_leave(&r);
                continue;
            }
        }
        if (rc == 0)
            zl_pollsrc_attach(&set, src);
    }

    int err = 0;
    int n = -1;
    if (rc != 0)
        err = rc;
    else
        n = zl_pollset_wait(&set, deadline, &err);
    if (n > 0) {
        n = 0;
        for (size_t i = 0; i < set.n; i++) {
            zl_pollsrc_t *src = set.src[i];
            zlink_pollitem_t *it = src->user_data;
            if (src->ready != 0) {
                it->revents = src->ready;
                n++;
            }
        }
    }
    poll_set_clear(&set);
    zl_pollsig_fini(&set.sig);
    free(heap);
    if (n < 0)
        return int_fail(error_out, err);
    if (error_out != NULL)
        *error_out = ZLINK_CONFIG_OK;
    return n;
}
