/*
 * sockopt.h — socket options as tables: the row type, the rows every socket
 * type shares, and the lookup behind zlink_setsockopt / zlink_getsockopt.
 *
 * Design notes
 *  - One row per option (zl_sockopt_t): its number, value type, accepted
 *    range, access (read, write, or neither: NOT_SUPPORTED), whether it is
 *    fixed once the socket has an endpoint, its default, and where its
 *    value lives: a field of zl_sockopts_t, or a pair of hooks.
 *  - Who accepts an option is who owns its row. sockopt.c holds the rows
 *    every socket type accepts; each protocol lists its own rows in its ops
 *    table (zl_proto_ops_t.options, socket.h). A lookup tries the socket's
 *    protocol first, then the shared rows, so a protocol row shadows a
 *    shared row of the same number (CONFLATE: PUB and SUB could own a
 *    real one, the shared row only accepts "off"). A number in neither
 *    table is EINVAL.
 *  - Checks run in this order, each failing with the errno shown:
 *    known option (EINVAL) > access (read-only on set, write-only on get:
 *    EINVAL; not supported: ENOTSUP) > value size and range (EINVAL) >
 *    fixed once bound or connected (EBUSY) > the row's check hook (any
 *    errno) > store. Nothing is written on failure.
 *  - Locks: every hook and every field access runs under s->lk, except a
 *    row marked ZL_OPT_HOOK_UNLOCKED, whose hooks take what they need.
 *    Options are read by the engine only through zl_socket_get_opts (a
 *    snapshot under s->lk at bind, connect and accept).
 */
#ifndef ZL_SOCKOPT_H
#define ZL_SOCKOPT_H

#include "sock/sock_impl.h"

#include <limits.h>
#include <stddef.h>

/* Value types. INT and BOOL take exactly sizeof(int) bytes (BOOL is an
 * INT with the range 0..1); U64 and I64 exactly 8 bytes; STRING is a name
 * set as bytes (a trailing NUL allowed) and read back NUL-terminated;
 * BYTES is set through a hook only. */
typedef enum zl_opt_type {
    ZL_OPT_INT,
    ZL_OPT_BOOL,
    ZL_OPT_U64,
    ZL_OPT_I64,
    ZL_OPT_STRING,
    ZL_OPT_BYTES,
} zl_opt_type_t;

/* Row flags. */
#define ZL_OPT_READONLY 0x01      /* set: EINVAL */
#define ZL_OPT_WRITEONLY 0x02     /* get: EINVAL */
#define ZL_OPT_UNSUPPORTED 0x04   /* set and get: ENOTSUP, before any value check */
#define ZL_OPT_FIXED 0x08         /* set after the first bind or connect: EBUSY */
#define ZL_OPT_HOOK_UNLOCKED 0x10 /* hooks run without s->lk */

/* Marks a row without a zl_sockopts_t field. */
#define ZL_OPT_NO_FIELD ((size_t)-1)

typedef struct zl_sockopt zl_sockopt_t;

struct zl_sockopt {
    int id;                 /* ZLINK_* option number */
    zl_opt_type_t type;
    unsigned flags;         /* ZL_OPT_* */
    int64_t min, max;       /* INT / I64 rows: accepted values, inclusive;
                               STRING rows: max is the longest length */
    int64_t dflt;           /* INT / BOOL / U64 / I64 rows with a field */
    size_t field;           /* offsetof(zl_sockopts_t, ...) or ZL_OPT_NO_FIELD */
    /* Extra validation of an INT / BOOL value, after the range: returns 0
     * or the errno to fail with. Under s->lk (s->opts may be read). */
    int (*check)(zl_socket_t *s, int value);
    /* Stores an INT / BOOL value instead of the plain store into field
     * (the hook may still use field; WEIGHT also tells the peers). The
     * value passed the range and check. Under s->lk. Returns 0 or an
     * errno; nothing changed on failure. */
    int (*set_int)(zl_socket_t *s, int value);
    /* Stores a BYTES value: v/n are the caller's, unchecked. Under s->lk.
     * Returns 0 or an errno (EINVAL for a bad size); nothing changed on
     * failure. */
    int (*set_bytes)(zl_socket_t *s, const void *v, size_t n);
    /* Reads an INT / BOOL value that has no field: 0 with *out set, or an
     * errno. */
    int (*get_int)(zl_socket_t *s, int *out);
    /* Reads a STRING value that has no field into buf (cap bytes, always
     * large enough for the row's max + 1). */
    void (*get_string)(zl_socket_t *s, char *buf, size_t cap);
};

/* Row builders, so a table reads one option per line. */
#define ZL_OPT_ROW_INT(opt, lo, hi, def, member)                                              \
    {.id = (opt), .type = ZL_OPT_INT, .min = (lo), .max = (hi), .dflt = (def),               \
     .field = offsetof(zl_sockopts_t, member)}
#define ZL_OPT_ROW_BOOL(opt, def, member)                                                     \
    {.id = (opt), .type = ZL_OPT_BOOL, .min = 0, .max = 1, .dflt = (def),                    \
     .field = offsetof(zl_sockopts_t, member)}

/* Looks up opt for s's type: the protocol's rows first, then the shared
 * ones. NULL when s's type has no such option. Any thread; no lock (the
 * tables are constant). */
const zl_sockopt_t *zl_sockopt_find(const zl_socket_t *s, int opt);

/* Fills o with every default: the shared rows', then those of the
 * protocol's rows (type's ops), then the values that depend on the
 * context or type (LINGER from CTX_OPT_BLOCKY, a DEALER or ROUTER routing
 * id). Called by zl_socket_new before the socket is visible. */
void zl_sockopts_init(zl_sockopts_t *o, const zl_ctx_t *ctx, int type,
                      const zl_proto_ops_t *ops);

/* Under s->lk, at close (zl_socket_teardown): stops signalling and closes
 * the ZLINK_FD descriptor, if one was handed out. */
void zl_sockopt_release(zl_socket_t *s);

/* The longest BINDTODEVICE name (IFNAMSIZ - 1 on Linux). */
#define ZL_DEVICE_NAME_MAX 15

#endif /* ZL_SOCKOPT_H */
