/*
 * sockopt.c — zlink_setsockopt / zlink_getsockopt driven by option rows,
 * the rows every socket type shares, and the option defaults.
 *
 * Design notes
 *  - Owns nothing at run time: the tables are constant. Values live in
 *    s->opts (zl_sockopts_t) or behind a row's hooks; see sockopt.h for the
 *    row type, the lookup order (protocol rows, then these) and the order
 *    of checks.
 *  - Locks: s->lk around every field access and hook, except rows marked
 *    ZL_OPT_HOOK_UNLOCKED (EVENTS asks for readiness, which locks itself).
 *    Threads: application threads only.
 *  - The shared table says what each option does; doc/options.md is the
 *    reader's version of the same list. An option that would be accepted
 *    without any effect has no row (the number is reserved in zlink.h).
 */
#include "sock/sock_impl.h"
#include "sockopt.h"

#include "ctx.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* --------------------------------------------------------------- hooks */

/* TYPE: the socket type (fixed at creation). Under s->lk. */
static int type_get(zl_socket_t *s, int *out)
{
    *out = s->type;
    return 0;
}

/* LAST_ENDPOINT: the address of the last successful bind (or inproc
 * bind / connect), "" before any. Under s->lk. */
static void last_endpoint_get(zl_socket_t *s, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", s->last_endpoint);
}

/* ZLINK_FD: an eventfd the socket signals at every wake-up, i.e. at every
 * change a poller would be woken for; readable means "read ZLINK_EVENTS".
 * Reading EVENTS clears the signal first, then reports the readiness now,
 * so a change after that read signals again and none is lost. */

/* The waker (socket.h): any thread, with the socket's waker lock held. */
static void events_fd_wake(zl_waker_t *w)
{
    zl_socket_t *s = (zl_socket_t *)(void *)((char *)w - offsetof(zl_socket_t, events_waker));
    uint64_t one = 1;
    ssize_t rc = write(atomic_load(&s->events_fd), &one, sizeof one);
    ZL_UNUSED(rc); /* EAGAIN: the counter is already non-zero */
}

/* FD get: makes the eventfd at the first call (signalled, so the caller
 * reads EVENTS once before waiting). Under s->lk. ENOMEM / EMFILE ... */
static int fd_get(zl_socket_t *s, int *out)
{
    int fd = atomic_load(&s->events_fd);
    if (fd < 0) {
        fd = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fd < 0)
            return errno;
        atomic_store(&s->events_fd, fd);
        s->events_waker.wake = events_fd_wake;
        zl_socket_add_waker(s, &s->events_waker);
    }
    *out = fd;
    return 0;
}

void zl_sockopt_release(zl_socket_t *s)
{
    int fd = atomic_load(&s->events_fd);
    if (fd < 0)
        return;
    zl_socket_remove_waker(s, &s->events_waker); /* no write after this */
    atomic_store(&s->events_fd, -1);
    close(fd);
}

/* EVENTS: the readiness zlink_poll would report for POLLIN | POLLOUT now
 * (clearing ZLINK_FD's signal first). No lock held (zl_socket_readiness
 * takes s->lk). */
static int events_get(zl_socket_t *s, int *out)
{
    int fd = atomic_load(&s->events_fd);
    if (fd >= 0) {
        uint64_t count;
        ssize_t rc = read(fd, &count, sizeof count);
        ZL_UNUSED(rc); /* EAGAIN: not signalled */
    }
    *out = zl_socket_readiness(s, ZL_POLLIN | ZL_POLLOUT);
    return 0;
}

/* IMMEDIATE: records only ever go to connections whose handshake is done
 * (a pipe exists only then), which is IMMEDIATE 1; queueing for
 * unfinished connections (0) is not something this runtime does. */
static int immediate_check(zl_socket_t *s, int value)
{
    ZL_UNUSED(s);
    return value == 1 ? 0 : ENOTSUP;
}

/* The shared row of an option only some protocols implement (CONFLATE,
 * INVERT_MATCHING): readable, 0 is accepted, 1 is NOT_SUPPORTED. */
static int off_only_check(zl_socket_t *s, int value)
{
    ZL_UNUSED(s);
    return value == 0 ? 0 : ENOTSUP;
}

/* STREAM_OPT_RECV_MODE on any other type: NOT_SUPPORTED (after the size
 * check on set, before it on get, as the contract's receive-mode rule). */
static int stream_only_check(zl_socket_t *s, int value)
{
    ZL_UNUSED(s);
    ZL_UNUSED(value);
    return ENOTSUP;
}

static int stream_only_get(zl_socket_t *s, int *out)
{
    ZL_UNUSED(s);
    ZL_UNUSED(out);
    return ENOTSUP;
}

/* -1 (the OS default) or a positive value: TCP_KEEPALIVE_CNT / _IDLE /
 * _INTVL (the kernel refuses 0), SNDBUF / RCVBUF (a buffer of 0 bytes is
 * no setting; libuv would read the size instead of writing it). */
static int positive_or_default_check(zl_socket_t *s, int value)
{
    ZL_UNUSED(s);
    return value == -1 || value > 0 ? 0 : EINVAL;
}

/* ---------------------------------------------------- the shared table */

#define ZL_NO_LIMIT_LO INT_MIN
#define ZL_NO_LIMIT_HI INT_MAX

static const zl_sockopt_t shared_rows[] = {
    /* Queues and message size. */
    {.id = ZLINK_SNDHWM, .type = ZL_OPT_U64, .dflt = ZLINK_HWM_DFLT,
     .field = offsetof(zl_sockopts_t, sndhwm)},
    {.id = ZLINK_RCVHWM, .type = ZL_OPT_U64, .dflt = ZLINK_HWM_DFLT,
     .field = offsetof(zl_sockopts_t, rcvhwm)},
    {.id = ZLINK_MAXMSGSIZE, .type = ZL_OPT_I64, .min = INT64_MIN, .max = INT64_MAX,
     .dflt = -1, .field = offsetof(zl_sockopts_t, maxmsgsize)},
    /* Timeouts and close. LINGER's default depends on the context. */
    ZL_OPT_ROW_INT(ZLINK_SNDTIMEO, -1, INT_MAX, ZLINK_TIMEO_DFLT, sndtimeo),
    ZL_OPT_ROW_INT(ZLINK_RCVTIMEO, -1, INT_MAX, ZLINK_TIMEO_DFLT, rcvtimeo),
    ZL_OPT_ROW_INT(ZLINK_LINGER, -1, INT_MAX, -1, linger),
    /* Connecting and listening. */
    ZL_OPT_ROW_INT(ZLINK_RECONNECT_IVL, -1, INT_MAX, 100, reconnect_ivl),
    ZL_OPT_ROW_INT(ZLINK_RECONNECT_IVL_MAX, 0, INT_MAX, 0, reconnect_ivl_max),
    ZL_OPT_ROW_INT(ZLINK_BACKLOG, 0, INT_MAX, 100, backlog),
    ZL_OPT_ROW_INT(ZLINK_HANDSHAKE_IVL, 0, INT_MAX, 30000, handshake_ivl),
    ZL_OPT_ROW_INT(ZLINK_CONNECT_TIMEOUT, 0, INT_MAX, 0, connect_timeout),
    {.id = ZLINK_AFFINITY, .type = ZL_OPT_U64, .dflt = 0,
     .field = offsetof(zl_sockopts_t, affinity)},
    ZL_OPT_ROW_BOOL(ZLINK_IPV6, 0, ipv6),
    ZL_OPT_ROW_BOOL(ZLINK_ZMP_METADATA, 0, zmp_metadata),
    ZL_OPT_ROW_INT(ZLINK_OPT_RID_DUPLICATE_POLICY, ZLINK_RID_DUPLICATE_REJECT,
                   ZLINK_RID_DUPLICATE_HANDOVER, ZLINK_RID_DUPLICATE_REJECT, rid_dup_policy),
    {.id = ZLINK_IMMEDIATE, .type = ZL_OPT_BOOL, .min = 0, .max = 1, .dflt = 1,
     .field = offsetof(zl_sockopts_t, immediate), .check = immediate_check},
    /* TCP: applied to every tcp connection (engine/tcp_opts.c). */
    ZL_OPT_ROW_BOOL(ZLINK_TCP_NODELAY, 1, tcp_nodelay),
    {.id = ZLINK_SNDBUF, .type = ZL_OPT_INT, .min = -1, .max = INT_MAX, .dflt = -1,
     .field = offsetof(zl_sockopts_t, sndbuf), .check = positive_or_default_check},
    {.id = ZLINK_RCVBUF, .type = ZL_OPT_INT, .min = -1, .max = INT_MAX, .dflt = -1,
     .field = offsetof(zl_sockopts_t, rcvbuf), .check = positive_or_default_check},
    ZL_OPT_ROW_INT(ZLINK_TCP_KEEPALIVE, -1, 1, -1, tcp_keepalive),
    {.id = ZLINK_TCP_KEEPALIVE_CNT, .type = ZL_OPT_INT, .min = -1, .max = 127, .dflt = -1,
     .field = offsetof(zl_sockopts_t, tcp_keepalive_cnt), .check = positive_or_default_check},
    {.id = ZLINK_TCP_KEEPALIVE_IDLE, .type = ZL_OPT_INT, .min = -1, .max = 32767, .dflt = -1,
     .field = offsetof(zl_sockopts_t, tcp_keepalive_idle), .check = positive_or_default_check},
    {.id = ZLINK_TCP_KEEPALIVE_INTVL, .type = ZL_OPT_INT, .min = -1, .max = 32767, .dflt = -1,
     .field = offsetof(zl_sockopts_t, tcp_keepalive_intvl), .check = positive_or_default_check},
    ZL_OPT_ROW_INT(ZLINK_TOS, 0, 255, 0, tos),
    ZL_OPT_ROW_INT(ZLINK_TCP_MAXRT, 0, INT_MAX, 0, tcp_maxrt),
    {.id = ZLINK_BINDTODEVICE, .type = ZL_OPT_STRING, .max = ZL_DEVICE_NAME_MAX,
     .field = offsetof(zl_sockopts_t, bind_device)},
    /* Read-only. */
    {.id = ZLINK_TYPE, .type = ZL_OPT_INT, .flags = ZL_OPT_READONLY,
     .field = ZL_OPT_NO_FIELD, .get_int = type_get},
    {.id = ZLINK_LAST_ENDPOINT, .type = ZL_OPT_STRING, .flags = ZL_OPT_READONLY,
     .max = sizeof(((zl_socket_t *)0)->last_endpoint) - 1, .field = ZL_OPT_NO_FIELD,
     .get_string = last_endpoint_get},
    {.id = ZLINK_FD, .type = ZL_OPT_INT, .flags = ZL_OPT_READONLY, .field = ZL_OPT_NO_FIELD,
     .get_int = fd_get},
    {.id = ZLINK_EVENTS, .type = ZL_OPT_INT, .flags = ZL_OPT_READONLY | ZL_OPT_HOOK_UNLOCKED,
     .field = ZL_OPT_NO_FIELD, .get_int = events_get},
    /* Options a protocol may own; elsewhere only "off" (or nothing). */
    {.id = ZLINK_CONFLATE, .type = ZL_OPT_BOOL, .min = 0, .max = 1,
     .field = offsetof(zl_sockopts_t, conflate), .check = off_only_check},
    {.id = ZLINK_INVERT_MATCHING, .type = ZL_OPT_BOOL, .min = 0, .max = 1,
     .field = offsetof(zl_sockopts_t, invert_matching), .check = off_only_check},
    {.id = ZLINK_STREAM_OPT_RECV_MODE, .type = ZL_OPT_INT, .min = ZL_NO_LIMIT_LO,
     .max = ZL_NO_LIMIT_HI, .field = ZL_OPT_NO_FIELD, .check = stream_only_check,
     .get_int = stream_only_get},
    /* The contract names it and says NOT_SUPPORTED. */
    {.id = ZLINK_BLOCKY, .type = ZL_OPT_INT, .flags = ZL_OPT_UNSUPPORTED,
     .field = ZL_OPT_NO_FIELD},
};

#define NROWS(t) (sizeof(t) / sizeof((t)[0]))

static const zl_sockopt_t *rows_find(const zl_sockopt_t *rows, size_t n, int opt)
{
    for (size_t i = 0; i < n; i++) {
        if (rows[i].id == opt)
            return &rows[i];
    }
    return NULL;
}

const zl_sockopt_t *zl_sockopt_find(const zl_socket_t *s, int opt)
{
    const zl_sockopt_t *row = NULL;
    if (s->ops->options != NULL)
        row = rows_find(s->ops->options, s->ops->noptions, opt);
    if (row == NULL)
        row = rows_find(shared_rows, NROWS(shared_rows), opt);
    return row;
}

/* ------------------------------------------------------------ defaults */

static void rows_defaults(zl_sockopts_t *o, const zl_sockopt_t *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const zl_sockopt_t *r = &rows[i];
        if (r->field == ZL_OPT_NO_FIELD)
            continue;
        char *at = (char *)o + r->field;
        switch (r->type) {
        case ZL_OPT_INT:
        case ZL_OPT_BOOL: {
            int v = (int)r->dflt;
            memcpy(at, &v, sizeof v);
            break;
        }
        case ZL_OPT_U64:
        case ZL_OPT_I64: {
            int64_t v = r->dflt;
            memcpy(at, &v, sizeof v);
            break;
        }
        case ZL_OPT_STRING:
        case ZL_OPT_BYTES:
            break; /* zeroed: empty */
        }
    }
}

void zl_sockopts_init(zl_sockopts_t *o, const zl_ctx_t *ctx, int type, const zl_proto_ops_t *ops)
{
    memset(o, 0, sizeof *o);
    rows_defaults(o, shared_rows, NROWS(shared_rows));
    if (ops->options != NULL)
        rows_defaults(o, ops->options, ops->noptions);
    /* Fields no row of this type names, read by shared code. */
    o->weight = ZLINK_WEIGHT_DFLT;
    o->request_timeout_ms = ZLINK_REQUEST_TIMEOUT_DFLT;
    o->stream_mode = ZLINK_STREAM_RECV_UNSPECIFIED;
    /* CTX_OPT_BLOCKY 0 makes new sockets default to LINGER 0. */
    o->linger = ctx->blocky ? -1 : 0;
    if (type == ZLINK_DEALER || type == ZLINK_ROUTER)
        zl_routing_id_generate(&o->rid);
}

/* ---------------------------------------------------------- set and get */

/* Copies len bytes to the caller: EINVAL when *n is smaller (nothing
 * written), else *n = len. */
static int put_bytes(void *v, size_t *n, const void *src, size_t len)
{
    if (*n < len)
        return EINVAL;
    memcpy(v, src, len);
    *n = len;
    return 0;
}

/* A STRING value as set: n bytes, one trailing NUL allowed, no other NUL,
 * at most max bytes. Returns the length or -1 (EINVAL). */
static long string_length(const void *v, size_t n, int64_t max)
{
    if (n > 0 && v == NULL)
        return -1;
    if (n > 0 && ((const char *)v)[n - 1] == '\0')
        n--;
    if ((int64_t)n > max || (n > 0 && memchr(v, '\0', n) != NULL))
        return -1;
    return (long)n;
}

static bool has_endpoints(const zl_socket_t *s)
{
    return s->npipes > 0 || s->neps > 0;
}

/* Under s->lk: the state checks, then the store (field or hook). */
static int set_locked(zl_socket_t *s, const zl_sockopt_t *row, const void *v, size_t n, int iv,
                      uint64_t u, long slen)
{
    if ((row->flags & ZL_OPT_FIXED) && has_endpoints(s))
        return EBUSY;
    char *at = row->field == ZL_OPT_NO_FIELD ? NULL : (char *)&s->opts + row->field;
    switch (row->type) {
    case ZL_OPT_INT:
    case ZL_OPT_BOOL: {
        int rc = row->check != NULL ? row->check(s, iv) : 0;
        if (rc != 0)
            return rc;
        if (row->set_int != NULL)
            return row->set_int(s, iv);
        if (at != NULL)
            memcpy(at, &iv, sizeof iv);
        return 0;
    }
    case ZL_OPT_U64:
    case ZL_OPT_I64:
        if (at != NULL)
            memcpy(at, &u, sizeof u);
        return 0;
    case ZL_OPT_STRING:
        if (at == NULL)
            return EINVAL;
        memset(at, 0, (size_t)row->max + 1);
        if (slen > 0)
            memcpy(at, v, (size_t)slen);
        return 0;
    case ZL_OPT_BYTES:
        return row->set_bytes != NULL ? row->set_bytes(s, v, n) : EINVAL;
    }
    return EINVAL;
}

int zl_socket_setopt(zl_socket_t *s, int opt, const void *v, size_t n)
{
    const zl_sockopt_t *row = zl_sockopt_find(s, opt);
    if (row == NULL)
        return EINVAL;
    if (row->flags & ZL_OPT_UNSUPPORTED)
        return ENOTSUP;
    if (row->flags & ZL_OPT_READONLY)
        return EINVAL;
    int iv = 0;
    uint64_t u = 0;
    long slen = 0;
    switch (row->type) {
    case ZL_OPT_INT:
    case ZL_OPT_BOOL:
        if (v == NULL || n != sizeof(int))
            return EINVAL;
        memcpy(&iv, v, sizeof iv);
        if (iv < row->min || iv > row->max)
            return EINVAL;
        break;
    case ZL_OPT_U64:
    case ZL_OPT_I64:
        if (v == NULL || n != sizeof u)
            return EINVAL;
        memcpy(&u, v, sizeof u);
        break; /* the I64 row's range is the whole type */
    case ZL_OPT_STRING:
        slen = string_length(v, n, row->max);
        if (slen < 0)
            return EINVAL;
        break;
    case ZL_OPT_BYTES:
        break; /* the hook checks */
    }
    bool lock = !(row->flags & ZL_OPT_HOOK_UNLOCKED);
    if (lock)
        zl_mutex_lock(&s->lk);
    int rc = set_locked(s, row, v, n, iv, u, slen);
    /* MAXMSGSIZE is also read without s->lk (STREAM PACKET decoders, at
     * each prefix): its mirror follows every set. */
    if (lock) {
        atomic_store_explicit(&s->maxmsgsize_now, s->opts.maxmsgsize, memory_order_relaxed);
        zl_mutex_unlock(&s->lk);
    }
    return rc;
}

int zl_socket_getopt(zl_socket_t *s, int opt, void *v, size_t *n)
{
    if (v == NULL || n == NULL)
        return EFAULT;
    const zl_sockopt_t *row = zl_sockopt_find(s, opt);
    if (row == NULL)
        return EINVAL;
    if (row->flags & ZL_OPT_UNSUPPORTED)
        return ENOTSUP;
    if (row->flags & ZL_OPT_WRITEONLY)
        return EINVAL;
    bool lock = !(row->flags & ZL_OPT_HOOK_UNLOCKED);
    const char *at = row->field == ZL_OPT_NO_FIELD ? NULL : (const char *)&s->opts + row->field;
    int rc = 0;
    switch (row->type) {
    case ZL_OPT_INT:
    case ZL_OPT_BOOL: {
        int iv = 0;
        if (lock)
            zl_mutex_lock(&s->lk);
        if (row->get_int != NULL)
            rc = row->get_int(s, &iv);
        else if (at != NULL)
            memcpy(&iv, at, sizeof iv);
        else
            rc = EINVAL;
        if (lock)
            zl_mutex_unlock(&s->lk);
        return rc != 0 ? rc : put_bytes(v, n, &iv, sizeof iv);
    }
    case ZL_OPT_U64:
    case ZL_OPT_I64: {
        uint64_t u = 0;
        if (*n != sizeof u || at == NULL)
            return EINVAL;
        zl_mutex_lock(&s->lk);
        memcpy(&u, at, sizeof u);
        zl_mutex_unlock(&s->lk);
        return put_bytes(v, n, &u, sizeof u);
    }
    case ZL_OPT_STRING: {
        char buf[sizeof(((zl_socket_t *)0)->last_endpoint)];
        buf[0] = '\0';
        if (lock)
            zl_mutex_lock(&s->lk);
        if (row->get_string != NULL)
            row->get_string(s, buf, sizeof buf);
        else if (at != NULL)
            snprintf(buf, sizeof buf, "%.*s", (int)row->max, at);
        else
            rc = EINVAL;
        if (lock)
            zl_mutex_unlock(&s->lk);
        return rc != 0 ? rc : put_bytes(v, n, buf, strlen(buf) + 1);
    }
    case ZL_OPT_BYTES:
        return EINVAL; /* write-only in this version */
    }
    return EINVAL;
}
