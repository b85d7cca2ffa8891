/*
 * handle.c — framework handles, the runtime-context flag, time and the
 * argument checks every part of the framework shares.
 *
 * Handles are table values, never addresses: bit 62 marks a framework
 * handle, bits 56..59 the kind, 24..55 a slot generation and 0..23 the
 * slot. A lookup checks all of it under the table's lock (a leaf lock) and
 * returns the object with a reference, so a handle destroyed by another
 * thread meanwhile stays valid memory until the caller drops it.
 */
#include "fw.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define H_MARK (1ull << 62)
#define H_SLOT_BITS 24
#define H_MAX_SLOTS (1u << H_SLOT_BITS)

typedef struct hslot {
    zf_obj_t *obj;
    uint32_t gen;
    uint32_t next_free;
} hslot_t;

static pthread_mutex_t h_lk = PTHREAD_MUTEX_INITIALIZER;
static hslot_t *h_slots;
static uint32_t h_cap, h_len, h_free = UINT32_MAX;

static void *encode(uint32_t slot, uint32_t gen, int kind)
{
    uint64_t v = H_MARK | ((uint64_t)(kind & 0xF) << 56) | ((uint64_t)gen << 24) | slot;
    return (void *)(uintptr_t)v;
}

void *zf_handle_add(zf_obj_t *o)
{
    void *h = NULL;
    pthread_mutex_lock(&h_lk);
    uint32_t i;
    if (h_free != UINT32_MAX) {
        i = h_free;
        h_free = h_slots[i].next_free;
    } else {
        if (h_len == h_cap) {
            uint32_t ncap = h_cap ? h_cap * 2 : 64;
            hslot_t *n = ncap <= H_MAX_SLOTS ? realloc(h_slots, ncap * sizeof *n) : NULL;
            if (n == NULL) {
                pthread_mutex_unlock(&h_lk);
                return NULL;
            }
            h_slots = n;
            h_cap = ncap;
        }
        i = h_len++;
        h_slots[i].gen = 1;
    }
    h_slots[i].obj = o;
    h_slots[i].next_free = UINT32_MAX;
    atomic_fetch_add(&o->refs, 1);
    h = encode(i, h_slots[i].gen, o->kind);
    o->handle = h;
    pthread_mutex_unlock(&h_lk);
    return h;
}

zf_obj_t *zf_handle_get(const void *h, int kind)
{
    uint64_t v = (uint64_t)(uintptr_t)h;
    if ((v & (0xFull << 60)) != H_MARK || (int)((v >> 56) & 0xF) != kind)
        return NULL;
    uint32_t slot = (uint32_t)(v & (H_MAX_SLOTS - 1));
    uint32_t gen = (uint32_t)(v >> 24);
    zf_obj_t *o = NULL;
    pthread_mutex_lock(&h_lk);
    if (slot < h_len && h_slots[slot].obj != NULL && h_slots[slot].gen == gen &&
        h_slots[slot].obj->kind == kind) {
        o = h_slots[slot].obj;
        atomic_fetch_add(&o->refs, 1);
    }
    pthread_mutex_unlock(&h_lk);
    return o;
}

void zf_handle_remove(zf_obj_t *o)
{
    uint64_t v = (uint64_t)(uintptr_t)o->handle;
    uint32_t slot = (uint32_t)(v & (H_MAX_SLOTS - 1));
    bool had = false;
    pthread_mutex_lock(&h_lk);
    if (o->handle != NULL && slot < h_len && h_slots[slot].obj == o) {
        h_slots[slot].obj = NULL;
        h_slots[slot].gen++;
        h_slots[slot].next_free = h_free;
        h_free = slot;
        had = true;
    }
    pthread_mutex_unlock(&h_lk);
    if (had)
        zf_obj_unref(o);
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
