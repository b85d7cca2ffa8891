/*
 * handle.c — framework handles, the runtime-context flag, time and the
 * argument checks every part of the framework shares.
 *
 * Handles are table values, never addresses: bit 62 marks a framework
 * handle, bits 56..59 the kind, 24..55 a slot generation and 0..23 the
 * slot. A lookup checks all of it under its slot's stripe lock (a leaf
 * lock) and returns the object with a reference, so a handle destroyed by
 * another thread meanwhile stays valid memory until the caller drops it.
 * A slot's generation is 32 bits: a stale handle is recognized until its
 * slot has been reused 2^32 times.
 */
#include "fw.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define H_MARK (1ull << 62)
#define H_SLOT_BITS 24
#define H_MAX_SLOTS (1u << H_SLOT_BITS)
#define H_CHUNK_BITS 10
#define H_CHUNK (1u << H_CHUNK_BITS)
#define H_CHUNKS (H_MAX_SLOTS / H_CHUNK)
#define H_STRIPES 64

/* Slots live in chunks that never move once allocated, so a lookup needs
 * no table-wide lock: it locks only the stripe of its slot. The free list
 * and chunk allocation have a lock of their own. */
typedef struct hslot {
    zf_obj_t *obj;
    uint32_t gen;
    uint32_t next_free;
} hslot_t;

static hslot_t *_Atomic h_chunks[H_CHUNKS];
static pthread_mutex_t h_stripes[H_STRIPES];
static pthread_once_t h_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t h_alloc_lk = PTHREAD_MUTEX_INITIALIZER;
static uint32_t h_len, h_free = UINT32_MAX;

static void h_init(void)
{
    for (int i = 0; i < H_STRIPES; i++)
        pthread_mutex_init(&h_stripes[i], NULL);
}

static hslot_t *slot_at(uint32_t i)
{
    hslot_t *c = atomic_load_explicit(&h_chunks[i >> H_CHUNK_BITS], memory_order_acquire);
    return c != NULL ? &c[i & (H_CHUNK - 1)] : NULL;
}

static pthread_mutex_t *stripe(uint32_t i)
{
    return &h_stripes[i % H_STRIPES];
}

static void *encode(uint32_t slot, uint32_t gen, int kind)
{
    uint64_t v = H_MARK | ((uint64_t)(kind & 0xF) << 56) | ((uint64_t)gen << 24) | slot;
    return (void *)(uintptr_t)v;
}

void *zf_handle_add(zf_obj_t *o)
{
    pthread_once(&h_once, h_init);
    pthread_mutex_lock(&h_alloc_lk);
    uint32_t i;
    if (h_free != UINT32_MAX) {
        i = h_free;
        h_free = slot_at(i)->next_free;
    } else {
        if (h_len == H_MAX_SLOTS) {
            pthread_mutex_unlock(&h_alloc_lk);
            return NULL;
        }
        i = h_len;
        if ((i & (H_CHUNK - 1)) == 0) {
            hslot_t *c = calloc(H_CHUNK, sizeof *c);
            if (c == NULL) {
                pthread_mutex_unlock(&h_alloc_lk);
                return NULL;
            }
            for (uint32_t k = 0; k < H_CHUNK; k++)
                c[k].gen = 1;
            atomic_store_explicit(&h_chunks[i >> H_CHUNK_BITS], c, memory_order_release);
        }
        h_len++;
    }
    pthread_mutex_unlock(&h_alloc_lk);
    hslot_t *sl = slot_at(i);
    atomic_fetch_add(&o->refs, 1);
    pthread_mutex_lock(stripe(i));
    sl->obj = o;
    sl->next_free = UINT32_MAX;
    void *h = encode(i, sl->gen, o->kind);
    o->handle = h;
    pthread_mutex_unlock(stripe(i));
    return h;
}

zf_obj_t *zf_handle_get(const void *h, int kind)
{
    uint64_t v = (uint64_t)(uintptr_t)h;
    if ((v & (0xFull << 60)) != H_MARK || (int)((v >> 56) & 0xF) != kind)
        return NULL;
    uint32_t i = (uint32_t)(v & (H_MAX_SLOTS - 1));
    uint32_t gen = (uint32_t)(v >> 24);
    hslot_t *sl = slot_at(i);
    if (sl == NULL)
        return NULL;
    zf_obj_t *o = NULL;
    pthread_mutex_lock(stripe(i));
    if (sl->obj != NULL && sl->gen == gen && sl->obj->kind == kind) {
        o = sl->obj;
        atomic_fetch_add(&o->refs, 1);
    }
    pthread_mutex_unlock(stripe(i));
    return o;
}

void zf_handle_remove(zf_obj_t *o)
{
    uint64_t v = (uint64_t)(uintptr_t)o->handle;
    uint32_t i = (uint32_t)(v & (H_MAX_SLOTS - 1));
    hslot_t *sl = o->handle != NULL ? slot_at(i) : NULL;
    bool had = false;
    if (sl != NULL) {
        pthread_mutex_lock(stripe(i));
        if (sl->obj == o) {
            sl->obj = NULL;
            sl->gen++;
            if (sl->gen == 0)
                sl->gen = 1;
            had = true;
        }
        pthread_mutex_unlock(stripe(i));
    }
    if (had) {
        pthread_mutex_lock(&h_alloc_lk);
        sl->next_free = h_free;
        h_free = i;
        pthread_mutex_unlock(&h_alloc_lk);
        zf_obj_unref(o);
    }
}

void zf_obj_ref(zf_obj_t *o)
{
    atomic_fetch_add(&o->refs, 1);
}

void zf_obj_unref(zf_obj_t *o)
{
    if (o != NULL && atomic_fetch_sub(&o->refs, 1) == 1)
        o->destroy(o);
}

/* ------------------------------------------------------ runtime context */

static _Thread_local int ctx_depth;

void zf_ctx_enter(void)
{
    ctx_depth++;
}

void zf_ctx_leave(void)
{
    if (ctx_depth > 0)
        ctx_depth--;
}

bool zf_ctx_active(void)
{
    return ctx_depth > 0;
}

ZLINK_EXPORT zlink_fw_result_t zlink_runtime_context_enter(void)
{
    zf_ctx_enter();
    return ZLINK_FW_OK;
}

ZLINK_EXPORT zlink_fw_result_t zlink_runtime_context_leave(void)
{
    if (ctx_depth == 0)
        return ZLINK_FW_INVALID_OPERATION;
    zf_ctx_leave();
    return ZLINK_FW_OK;
}

ZLINK_EXPORT int zlink_in_runtime_context(void)
{
    return ctx_depth > 0;
}

/* ------------------------------------------------------------ utilities */

__attribute__((noinline)) static void zero_bytes(void *p, size_t size)
{
    memset(p, 0, size);
}

void *zf_zalloc(size_t size)
{
    void *p = malloc(size);
    if (p != NULL)
        zero_bytes(p, size);
    return p;
}

int64_t zf_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int zf_timeout_ms(int64_t ns, int *ms)
{
    if (ns <= 0 || ns == ZLINK_DURATION_INFINITE)
        return ZLINK_FW_INVALID_ARGUMENT;
    int64_t v = ns / 1000000 + (ns % 1000000 != 0);
    if (v > INT_MAX)
        return ZLINK_FW_INVALID_ARGUMENT;
    if (ms != NULL)
        *ms = (int)v;
    return ZLINK_FW_OK;
}

/* Strict UTF-8 (no overlongs, no surrogates, <= U+10FFFF), no NUL. */
static bool utf8_ok(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = p[i];
        size_t len;
        unsigned min;
        if (c == 0)
            return false;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            len = 2, min = 0x80, c &= 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3, min = 0x800, c &= 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4, min = 0x10000, c &= 0x07;
        } else {
            return false;
        }
        if (i + len > n)
            return false;
        for (size_t k = 1; k < len; k++) {
            if ((p[i + k] & 0xC0) != 0x80)
                return false;
            c = (c << 6) | (p[i + k] & 0x3F);
        }
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

bool zf_name_ok(const char *s, size_t max)
{
    if (s == NULL)
        return false;
    size_t n = strnlen(s, max + 1);
    return n >= 1 && n <= max && utf8_ok((const unsigned char *)s, n);
}

static const char *const kind_names[] = {
    "NotFound",     "AlreadyExists",    "TypeMismatch",     "NotConfigured", "Rejected",
    "Unavailable",  "CapacityExceeded", "DeadlineExceeded", "ShuttingDown",  "ProtocolError",
    "InvalidOperation", "DataLost",     "InternalFailure"};

ZLINK_EXPORT const char *zlink_error_kind_name(int kind)
{
    if (kind < 0 || kind > 12)
        return "unknown";
    return kind_names[kind];
}
