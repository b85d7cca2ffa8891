/*
 * msg.h — the internal view of zlink_msg_t.
 *
 * Design notes
 *  - A zlink_msg_t is 64 opaque bytes. Internally it is a zl_msg_t: a tag
 *    that tells an initialized message from garbage, a type, and either an
 *    inline payload (<= ZLINK_MSG_INLINE_MAX bytes) or a pointer to payload
 *    bytes plus the reference-counted zl_content_t that owns them.
 *  - Types:
 *      INLINE  payload lives in the message itself; refcnt is 1.
 *      HEAP    one malloc holds the zl_content_t header and the payload.
 *      EXT     user memory from zlink_msg_init_data with a free function.
 *      BORROW  user memory with a NULL free function; refcnt is 1; never freed.
 *      SLICE   a view into a shared receive chunk (zl_chunk_t) owned by an
 *              engine; the chunk's count covers every slice.
 *  - Copies share content through an atomic reference count; the last
 *    release frees it (HEAP: free; EXT: ffn(data, hint); SLICE: chunk).
 *  - Thread rules: one message is used by one thread at a time; shared
 *    content may be released from any thread.
 */
#ifndef ZL_MSG_H
#define ZL_MSG_H

#include "zlink.h"
#include "util/platform.h"

#include <string.h>

#define ZL_MSG_TAG 0x5A4D5347u /* "ZMSG" */

enum zl_msg_type {
    ZL_MSG_INLINE = 1,
    ZL_MSG_HEAP = 2,
    ZL_MSG_EXT = 3,
    ZL_MSG_BORROW = 4,
    ZL_MSG_SLICE = 5
};

/* The shared owner of a non-inline payload. */
typedef struct zl_content {
    _Atomic uint32_t refs;
    uint32_t kind;        /* enum zl_msg_type of the owner: HEAP, EXT or SLICE */
    zlink_free_fn *ffn;   /* EXT only */
    void *hint;           /* EXT: the user's hint; HEAP, SLICE: where the
                             block goes back to (msg.c) */
    union {
        void *data;       /* EXT: the user's pointer (passed to ffn) */
        size_t block;     /* HEAP, SLICE from the large-block cache: the
                             block's bytes (msg.c) */
    };
} zl_content_t;

/* A receive chunk: engines read into it and hand out SLICE messages. The
 * chunk is freed when the engine and every slice have released it. */
typedef struct zl_chunk {
    zl_content_t c;       /* c.kind == ZL_MSG_SLICE, c.refs counts holders */
    size_t cap;
    unsigned char data[];
} zl_chunk_t;

typedef struct zl_msg {
    uint32_t tag;         /* ZL_MSG_TAG while initialized */
    uint8_t type;         /* enum zl_msg_type */
    uint8_t isize;        /* INLINE: payload size */
    uint8_t pad[2];
    union {
        unsigned char inl[56];
        struct {
            void *data;
            size_t size;
            zl_content_t *content; /* NULL for BORROW */
        } ref;
    } u;
} zl_msg_t;

_Static_assert(sizeof(zl_msg_t) == sizeof(zlink_msg_t), "zl_msg_t must be 64 bytes");
_Static_assert(ZLINK_MSG_INLINE_MAX <= 56, "inline payload does not fit");

static inline zl_msg_t *zl_msg(zlink_msg_t *m) { return (zl_msg_t *)(void *)m; }
static inline const zl_msg_t *zl_cmsg(const zlink_msg_t *m)
{
    return (const zl_msg_t *)(const void *)m;
}

static inline bool zl_msg_valid(const zlink_msg_t *m)
{
    return m != NULL && zl_cmsg(m)->tag == ZL_MSG_TAG;
}

/* An empty (size 0) initialized message. Never fails. */
static inline void zl_msg_init_empty(zlink_msg_t *m)
{
    zl_msg_t *x = zl_msg(m);
    x->tag = ZL_MSG_TAG;
    x->type = ZL_MSG_INLINE;
    x->isize = 0;
}

static inline size_t zl_msg_size(const zlink_msg_t *m)
{
    const zl_msg_t *x = zl_cmsg(m);
    return x->type == ZL_MSG_INLINE ? x->isize : x->u.ref.size;
}

static inline void *zl_msg_data(zlink_msg_t *m)
{
    zl_msg_t *x = zl_msg(m);
    return x->type == ZL_MSG_INLINE ? (void *)x->u.inl : x->u.ref.data;
}

/* Moves src into dst without looking at dst (dst must hold nothing that
 * needs releasing); src is left empty and initialized. Never fails. */
static inline void zl_msg_move_raw(zlink_msg_t *dst, zlink_msg_t *src)
{
    memcpy(dst, src, sizeof *dst);
    zl_msg_init_empty(src);
}

/* Makes dst (holding nothing) a copy of valid src sharing its payload:
 * inline bytes are copied, shared content gains a reference. Never fails. */
static inline void zl_msg_share(zlink_msg_t *dst, const zlink_msg_t *src)
{
    memcpy(dst, src, sizeof *dst);
    const zl_msg_t *x = zl_cmsg(src);
    if (x->type != ZL_MSG_INLINE && x->u.ref.content != NULL)
        atomic_fetch_add_explicit(&x->u.ref.content->refs, 1, memory_order_relaxed);
}

/* Releases the payload of a valid message and leaves it uninitialized
 * (tag cleared). Callable from any thread that owns the message. */
void zl_msg_release(zlink_msg_t *m);

void zl_msg_release(zlink_msg_t *m);

/* Releases every valid message of parts[0..n) (they become uninitialized). */
static inline void zl_multipart_release(zlink_msg_t *parts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (zl_msg_valid(&parts[i]))
            zl_msg_release(&parts[i]);
}

/* The send calls' failure rule: every slot is consumed and left empty but
 * initialized. NULL-safe. */
static inline void zl_multipart_release_init(zlink_msg_t *parts, size_t n)
{
    if (parts == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        if (zl_msg_valid(&parts[i])) {
            zl_msg_release(&parts[i]);
            zl_msg_init_empty(&parts[i]);
        }
    }
}

/* Initializes m with size bytes copied from data (inline when small,
 * otherwise HEAP). Returns 0 or ENOMEM. */
int zl_msg_init_copy(zlink_msg_t *m, const void *data, size_t size);

/* Bytes in the block pool's global lists, all classes (tests: each class
 * keeps at most 8 MiB there; 0 when the pool is not built in, under
 * AddressSanitizer). Any thread. */
size_t zl_msg_pool_listed_bytes(void);
/* Bytes the large-block cache keeps (tests: at most 8 MiB; 0 under
 * AddressSanitizer, which has no cache). Any thread. */
size_t zl_msg_big_cached_bytes(void);

/* Allocates a receive chunk with cap payload bytes and one reference held by
 * the caller. Returns NULL on allocation failure. */
zl_chunk_t *zl_chunk_new(size_t cap);
/* Drops one reference; frees the chunk at zero. Any thread. */
void zl_chunk_release(zl_chunk_t *ch);
/* Initializes m as a view of data[0..size) inside ch; payloads small enough
 * are copied inline instead. Takes its own chunk reference when it does not
 * copy. Never fails. */
void zl_msg_init_slice(zlink_msg_t *m, zl_chunk_t *ch, const void *data, size_t size);

#endif /* ZL_MSG_H */
