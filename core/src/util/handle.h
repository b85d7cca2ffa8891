/*
 * handle.h — the handle table: what every public handle (context, socket,
 * socket monitor, poller, timer) really is.
 *
 * Design notes
 *  - A public handle is a `void *` to the application, but never the
 *    object's address: it is an opaque value that names one slot of a
 *    process-wide table. Resolving it reads only the table, which is ours,
 *    so a closed, destroyed, terminated, foreign or forged handle is
 *    refused with an errno instead of being dereferenced.
 *  - The value (64 bits): 63..60 a fixed nibble (ZL_HANDLE_MAGIC; no
 *    user-space address and no small integer carries it, and the value is
 *    never NULL), 59..56 the kind, 55..24 the slot's generation when the
 *    handle was made, 23..0 the slot index.
 *  - The table: segments of 64, 128, 256 ... slots, allocated when the free
 *    list runs dry and never freed, so a slot's memory stays valid for the
 *    life of the process whatever a handle says. One slot per cache line,
 *    so two busy objects never share a line.
 *  - Each slot has one atomic word: generation (32 bits) | kind (4) |
 *    CLOSED (1) | calls in flight (27). Because the three live in one word,
 *    "resolve the handle and enter the object" is one compare-and-swap: it
 *    succeeds only while the generation and kind are the handle's and
 *    CLOSED is clear, and it counts the caller in. Leaving is one atomic
 *    subtraction. Nothing else (no lock, no shared counter) is on the call
 *    path; a failed CAS touches nothing, so a stale handle never disturbs a
 *    slot that was reused.
 *  - Ending an object, two ways:
 *      zl_handle_close   the close gate: count 0 and open -> CLOSED in one
 *                        CAS, else EBUSY (another call is inside). Sockets,
 *                        pollers, timers and monitors end this way.
 *      zl_handle_shut    sets CLOSED while the caller itself is inside;
 *                        calls already inside finish, and the one whose
 *                        zl_handle_leave_last brings the count to 0 frees
 *                        the object (zlink_ctx_term, which must not fail
 *                        just because another thread reads an option).
 *    Either way, once the object is gone zl_handle_release bumps the
 *    generation and clears the kind: every handle of the old generation is
 *    stale from then on (ESTALE), until the 32-bit generation of that one
 *    slot wraps (2^32 reuses; free slots are reused oldest first, which
 *    spreads reuse over the whole table).
 *  - Locks: one mutex, held only to allocate a slot, release one, or grow
 *    the table; never by enter, leave or close.
 *  - Threads: every function may be called on any thread.
 *  - Only 64-bit builds are supported (the value needs 64 bits).
 */
#ifndef ZL_HANDLE_H
#define ZL_HANDLE_H

#include "util/platform.h"

#include <errno.h>
#include <stdint.h>

_Static_assert(sizeof(void *) == 8 && sizeof(uintptr_t) == 8,
               "handle values need 64-bit pointers");

/* Kinds (4 bits; 0 marks a free slot). */
enum {
    ZL_HANDLE_CTX = 1,
    ZL_HANDLE_SOCKET = 2,
    ZL_HANDLE_MONITOR = 3,
    ZL_HANDLE_POLLER = 4,
    ZL_HANDLE_TIMER = 5
};

#define ZL_HANDLE_MAGIC 0xAull
#define ZL_HANDLE_INDEX_BITS 24
#define ZL_HANDLE_SEG0_SHIFT 6          /* segment 0 holds 64 slots */
#define ZL_HANDLE_NSEGS 18              /* 64 * (2^18 - 1) slots < 2^24 */

/* The slot word. */
#define ZL_HW_COUNT_MASK ((1ull << 27) - 1)
#define ZL_HW_CLOSED (1ull << 27)
#define ZL_HW_KIND_SHIFT 28
#define ZL_HW_GEN_SHIFT 32
#define ZL_HW_IDENT_MASK (~((1ull << ZL_HW_KIND_SHIFT) - 1)) /* generation | kind */

typedef struct zl_hslot {
    _Atomic uint64_t word;     /* generation | kind | CLOSED | count */
    _Atomic(void *) obj;       /* the object while the slot is in use */
    uint32_t index;            /* this slot's index (fixed at growth) */
    uint32_t next_free;        /* free list link (table lock) */
    char pad[64 - 8 - 8 - 4 - 4];
} zl_hslot_t;

_Static_assert(sizeof(zl_hslot_t) == 64, "one slot per cache line");

/* The segments; written under the table lock, read by anyone. */
extern _Atomic(zl_hslot_t *) zl_handle_segs[ZL_HANDLE_NSEGS];

/* Out of line, for refused calls only: why (h) was refused by a slot
 * holding word. EFAULT: not a handle of that kind (never was, as far as the
 * table can tell); ESHUTDOWN: the object's close was accepted and is still
 * running; ESTALE: the object is gone. Pure; any thread. */
int zl_handle_refused(uintptr_t h, uint64_t word);

/* The slot a well-formed handle value names, or NULL (index beyond the
 * table). Any thread; no lock. */
static inline zl_hslot_t *zl_handle_slot_of(uintptr_t h)
{
    uint64_t v = (h & ((1ull << ZL_HANDLE_INDEX_BITS) - 1)) + (1ull << ZL_HANDLE_SEG0_SHIFT);
    unsigned top = 63u - (unsigned)__builtin_clzll(v);
    unsigned seg = top - ZL_HANDLE_SEG0_SHIFT;
    if (seg >= ZL_HANDLE_NSEGS)
        return NULL;
    zl_hslot_t *base = atomic_load_explicit(&zl_handle_segs[seg], memory_order_acquire);
    if (base == NULL)
        return NULL;
    return &base[v - (1ull << top)];
}

/* The generation | kind a slot word must carry for handle h. */
static inline uint64_t zl_handle_ident(uintptr_t h)
{
    return (((uint64_t)h >> ZL_HANDLE_INDEX_BITS) & 0xFFFFFFFFull) << ZL_HW_GEN_SHIFT |
           (((uint64_t)h >> 56) & 0xFull) << ZL_HW_KIND_SHIFT;
}

/* The kind encoded in a handle value, or 0 when the value is not shaped
 * like a handle at all. Says nothing about whether the object lives.
 * Pure; any thread. */
static inline int zl_handle_kind(const void *handle)
{
    uintptr_t h = (uintptr_t)handle;
    if ((h >> 60) != ZL_HANDLE_MAGIC)
        return 0;
    return (int)((h >> 56) & 0xF);
}

/* Resolves handle as an object of kind and enters it (one CAS; see the
 * design notes). 0: *obj_out is the object and *slot_out its slot, and the
 * caller must call zl_handle_leave(*slot_out) (or leave_last) exactly once.
 * Otherwise EFAULT, ESHUTDOWN or ESTALE (zl_handle_refused) and nothing
 * was entered. Never blocks; never reads memory the handle points at. */
static inline int zl_handle_enter(const void *handle, int kind, void **obj_out,
                                  zl_hslot_t **slot_out)
{
    uintptr_t h = (uintptr_t)handle;
    if (ZL_UNLIKELY((h >> 56) != ((ZL_HANDLE_MAGIC << 4) | (unsigned)kind)))
        return EFAULT;
    zl_hslot_t *slot = zl_handle_slot_of(h);
    if (ZL_UNLIKELY(slot == NULL))
        return EFAULT;
    uint64_t want = zl_handle_ident(h);
    uint64_t w = atomic_load_explicit(&slot->word, memory_order_relaxed);
    for (;;) {
        if (ZL_UNLIKELY((w & (ZL_HW_IDENT_MASK | ZL_HW_CLOSED)) != want)) {
            int rc = zl_handle_refused(h, w);
            return rc != 0 ? rc : EFAULT; /* never 0; tells the compiler so */
        }
        if (ZL_LIKELY(atomic_compare_exchange_weak_explicit(
                &slot->word, &w, w + 1, memory_order_acquire, memory_order_relaxed)))
            break;
    }
    *obj_out = atomic_load_explicit(&slot->obj, memory_order_relaxed);
    *slot_out = slot;
    return 0;
}

/* Ends a call that zl_handle_enter admitted (one atomic subtraction). The
 * caller must not touch the object afterwards unless it holds another
 * reference. For objects that can be shut (contexts) use leave_last. */
static inline void zl_handle_leave(zl_hslot_t *slot)
{
    atomic_fetch_sub_explicit(&slot->word, 1, memory_order_release);
}

/* Like zl_handle_leave; returns true when this was the last call inside a
 * slot that zl_handle_shut closed: the caller then frees the object and
 * calls zl_handle_release. */
static inline bool zl_handle_leave_last(zl_hslot_t *slot)
{
    uint64_t w = atomic_fetch_sub_explicit(&slot->word, 1, memory_order_acq_rel);
    return (w & ZL_HW_CLOSED) != 0 && (w & ZL_HW_COUNT_MASK) == 1;
}

/* Allocates a slot for obj (already fully built: the handle is usable by
 * other threads as soon as it is returned) and writes its handle value and
 * slot; *slot_out is written before the slot is published, so it may be a
 * field of obj that the leave path reads. 0 or ENOMEM (the table could not
 * grow, or is full): nothing written. Takes the table lock. */
int zl_handle_new(int kind, void *obj, void **handle_out, zl_hslot_t **slot_out);

/* The close gate. 0: the slot is CLOSED (no call can enter any more and
 * none is inside); *obj_out and *slot_out are the object and its slot, and
 * the caller tears the object down and then calls zl_handle_release.
 * Otherwise EFAULT (not a handle of kind), EBUSY (a call is inside, or a
 * hold is kept; nothing changed), ESHUTDOWN (another close is running) or
 * ESTALE (already gone). Never blocks. */
int zl_handle_close(const void *handle, int kind, void **obj_out, zl_hslot_t **slot_out);

/* Closes a slot the caller is inside of: later enters fail (ESHUTDOWN),
 * calls already inside go on. The caller then ends its own call with
 * zl_handle_leave_last, and whoever gets true from it frees the object. */
void zl_handle_shut(zl_hslot_t *slot);

/* A CLOSED slot with nothing inside (or one whose handle was never handed
 * out: a constructor's failure path), whose object is gone: bumps the
 * generation, clears the kind and queues the slot for reuse. Every handle
 * of the old generation gets ESTALE from now on. Takes the table lock. */
void zl_handle_release(zl_hslot_t *slot);

/* What zl_handle_enter would answer now, without entering: 0 (live),
 * EFAULT, ESHUTDOWN or ESTALE. A snapshot; any thread; no lock. */
int zl_handle_state(const void *handle, int kind);

#endif /* ZL_HANDLE_H */
