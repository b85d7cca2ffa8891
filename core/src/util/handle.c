/*
 * handle.c — the handle table (design notes in handle.h): slot allocation,
 * growth, the close gate, release, and the classification of refused
 * handles. The call path (enter, leave) is inline in handle.h.
 *
 * Locks: table.lk guards the free list and the segment count; enter, leave,
 * close and shut never take it. Segments are published with a release
 * store after they are fully initialized and are never freed, so readers
 * need no lock to find a slot.
 */
#include "util/handle.h"

#include <stdlib.h>
#include <string.h>

_Atomic(zl_hslot_t *) zl_handle_segs[ZL_HANDLE_NSEGS];

#define NO_SLOT UINT32_MAX

static struct {
    pthread_mutex_t lk;
    unsigned nsegs;                  /* segments allocated so far */
    uint32_t free_head, free_tail;   /* FIFO of free slot indexes */
} table = {PTHREAD_MUTEX_INITIALIZER, 0, NO_SLOT, NO_SLOT};

/* The slot with index idx of an allocated segment. Any thread. */
static zl_hslot_t *slot_at(uint32_t idx)
{
    return zl_handle_slot_of((uintptr_t)idx);
}

/* Under table.lk, free list empty: allocates the next segment (twice the
 * size of the previous one) and puts all its slots on the free list.
 * 0 or ENOMEM (no memory, or the table has its maximum size). */
static int table_grow_locked(void)
{
    if (table.nsegs == ZL_HANDLE_NSEGS)
        return ENOMEM;
    size_t n = (size_t)1 << (ZL_HANDLE_SEG0_SHIFT + table.nsegs);
    zl_hslot_t *seg = aligned_alloc(sizeof(zl_hslot_t), n * sizeof *seg);
    if (seg == NULL)
        return ENOMEM;
    memset(seg, 0, n * sizeof *seg);
    uint32_t first = (uint32_t)(n - ((size_t)1 << ZL_HANDLE_SEG0_SHIFT));
    for (size_t i = 0; i < n; i++) {
        atomic_init(&seg[i].word, 0);
        atomic_init(&seg[i].obj, NULL);
        seg[i].index = first + (uint32_t)i;
        seg[i].next_free = i + 1 < n ? first + (uint32_t)i + 1 : NO_SLOT;
    }
    table.free_head = first;
    table.free_tail = first + (uint32_t)n - 1;
    atomic_store_explicit(&zl_handle_segs[table.nsegs], seg, memory_order_release);
    table.nsegs++;
    return 0;
}

int zl_handle_new(int kind, void *obj, void **handle_out, zl_hslot_t **slot_out)
{
    pthread_mutex_lock(&table.lk);
    if (table.free_head == NO_SLOT) {
        int rc = table_grow_locked();
        if (rc != 0) {
            pthread_mutex_unlock(&table.lk);
            return rc;
        }
    }
    zl_hslot_t *s = slot_at(table.free_head);
    table.free_head = s->next_free;
    if (table.free_head == NO_SLOT)
        table.free_tail = NO_SLOT;
    s->next_free = NO_SLOT;
    pthread_mutex_unlock(&table.lk);

    /* Nobody can enter a free slot (its kind is 0), so plain stores do;
     * the release store of the word publishes obj, and *slot_out (often a
     * field of obj that zl_*_leave reads), with it: even a thread that
     * guesses the handle before we return sees both. */
    uint64_t gen = atomic_load_explicit(&s->word, memory_order_relaxed) >> ZL_HW_GEN_SHIFT;
    if (gen == 0)
        gen = 1; /* generation 0 is never issued */
    *slot_out = s;
    atomic_store_explicit(&s->obj, obj, memory_order_relaxed);
    atomic_store_explicit(&s->word,
                          gen << ZL_HW_GEN_SHIFT | (uint64_t)kind << ZL_HW_KIND_SHIFT,
                          memory_order_release);
    uintptr_t h = (uintptr_t)(ZL_HANDLE_MAGIC << 60 | (uint64_t)kind << 56 |
                              gen << ZL_HANDLE_INDEX_BITS | s->index);
    *handle_out = (void *)h;
    return 0;
}

int zl_handle_refused(uintptr_t h, uint64_t word)
{
    uint32_t hgen = (uint32_t)(h >> ZL_HANDLE_INDEX_BITS);
    uint32_t sgen = (uint32_t)(word >> ZL_HW_GEN_SHIFT);
    unsigned hkind = (unsigned)(h >> 56) & 0xF;
    unsigned skind = (unsigned)(word >> ZL_HW_KIND_SHIFT) & 0xF;
    if (hgen == sgen)
        return hkind == skind && (word & ZL_HW_CLOSED) ? ESHUTDOWN : EFAULT;
    /* An older generation of this slot: a handle whose object is gone. A
     * newer one was never issued. */
    if (hgen != 0 && (int32_t)(hgen - sgen) < 0)
        return ESTALE;
    return EFAULT;
}

int zl_handle_close(const void *handle, int kind, void **obj_out, zl_hslot_t **slot_out)
{
    uintptr_t h = (uintptr_t)handle;
    if ((h >> 56) != ((ZL_HANDLE_MAGIC << 4) | (unsigned)kind))
        return EFAULT;
    zl_hslot_t *s = zl_handle_slot_of(h);
    if (s == NULL)
        return EFAULT;
    uint64_t want = zl_handle_ident(h);
    uint64_t w = want; /* open, nobody inside */
    if (atomic_compare_exchange_strong_explicit(&s->word, &w, want | ZL_HW_CLOSED,
                                                memory_order_acq_rel, memory_order_relaxed)) {
        *obj_out = atomic_load_explicit(&s->obj, memory_order_relaxed);
        *slot_out = s;
        return 0;
    }
    if ((w & ZL_HW_IDENT_MASK) == want)
        return (w & ZL_HW_CLOSED) ? ESHUTDOWN : EBUSY;
    return zl_handle_refused(h, w);
}

void zl_handle_shut(zl_hslot_t *slot)
{
    atomic_fetch_or_explicit(&slot->word, ZL_HW_CLOSED, memory_order_acq_rel);
}

void zl_handle_release(zl_hslot_t *s)
{
    /* CLOSED with a count of 0: no enter can succeed and nobody is inside,
     * so nothing else writes the word while we do. */
    uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
    uint32_t gen = (uint32_t)(w >> ZL_HW_GEN_SHIFT) + 1;
    if (gen == 0)
        gen = 1;
    atomic_store_explicit(&s->obj, NULL, memory_order_relaxed);
    atomic_store_explicit(&s->word, (uint64_t)gen << ZL_HW_GEN_SHIFT, memory_order_release);

    pthread_mutex_lock(&table.lk);
    s->next_free = NO_SLOT;
    if (table.free_tail == NO_SLOT)
        table.free_head = s->index;
    else
        slot_at(table.free_tail)->next_free = s->index;
    table.free_tail = s->index;
    pthread_mutex_unlock(&table.lk);
}

int zl_handle_state(const void *handle, int kind)
{
    uintptr_t h = (uintptr_t)handle;
    if ((h >> 56) != ((ZL_HANDLE_MAGIC << 4) | (unsigned)kind))
        return EFAULT;
    zl_hslot_t *s = zl_handle_slot_of(h);
    if (s == NULL)
        return EFAULT;
    uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
    if ((w & (ZL_HW_IDENT_MASK | ZL_HW_CLOSED)) == zl_handle_ident(h))
        return 0;
    return zl_handle_refused(h, w);
}
