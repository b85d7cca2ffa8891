/*
 * queue.c — frame FIFOs and the byte-counted directional queue (queue.h).
 *
 * Locks: zl_fq_t has none (its owner serializes). zl_q_t functions take q->lk
 * for their whole body and call an end's notify only after unlocking, so a
 * notify may take a socket lock without inverting the socket -> queue order.
 *
 * Memory: a FIFO allocates whole chunks, keeps FQ_SPARE_KEEP of them when
 * frames leave, and takes spares before it asks malloc. Every function that
 * appends first makes sure of the chunks it needs (zl_fq_reserve), then
 * moves frames: on ENOMEM nothing has moved. Reservations that must survive
 * a lock release (zl_q_reserve) count spare chunks only, because the reader
 * may take the whole chunk list, tail included, but never the spares.
 */
#include "msg/queue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ zl_fq_t */

void zl_fq_init(zl_fq_t *q)
{
    memset(q, 0, sizeof *q);
}

/* How many spare chunks a FIFO keeps when frames are popped: enough to
 * refill without a malloc in steady state; reservations may add more for a
 * moment, and they are used up by the push they were made for. */
#define FQ_SPARE_KEEP 1

/* Takes a chunk from the spare list, else from the allocator. The caller
 * owns it. Owner's serialization; no lock of its own. */
static zl_fq_chunk_t *fq_chunk_get(zl_fq_t *q)
{
    zl_fq_chunk_t *c = q->spare;
    if (c != NULL) {
        q->spare = c->next;
        q->nspare--;
    } else {
        c = malloc(sizeof *c);
        if (c == NULL)
            return NULL;
    }
    c->next = NULL;
    return c;
}

/* Gives back a chunk the FIFO no longer uses (kept as a spare or freed). */
static void fq_chunk_put(zl_fq_t *q, zl_fq_chunk_t *c)
{
    if (q->nspare < FQ_SPARE_KEEP) {
        c->next = q->spare;
        q->spare = c;
        q->nspare++;
    } else {
        free(c);
    }
}

/* Frees spare chunks beyond FQ_SPARE_KEEP (after a failed reservation). */
static void fq_trim_spares(zl_fq_t *q)
{
    while (q->nspare > FQ_SPARE_KEEP) {
        zl_fq_chunk_t *c = q->spare;
        q->spare = c->next;
        q->nspare--;
        free(c);
    }
}

/* Allocates spare chunks until q holds at least want of them. 0, or ENOMEM
 * (the spares beyond FQ_SPARE_KEEP are freed again, frames untouched). */
static int fq_add_spares(zl_fq_t *q, size_t want)
{
    while (q->nspare < want) {
        zl_fq_chunk_t *c = malloc(sizeof *c);
        if (c == NULL) {
            fq_trim_spares(q);
            return ENOMEM;
        }
        c->next = q->spare;
        q->spare = c;
        q->nspare++;
    }
    return 0;
}

/* Slots the next pushes can fill without a new chunk. */
static size_t fq_tail_room(const zl_fq_t *q)
{
    return q->tail == NULL ? 0 : ZL_FQ_CHUNK - q->tail_pos;
}

int zl_fq_reserve(zl_fq_t *q, size_t n)
{
    size_t room = fq_tail_room(q);
    if (n <= room)
        return 0;
    size_t chunks = (n - room + ZL_FQ_CHUNK - 1) / ZL_FQ_CHUNK;
    return fq_add_spares(q, chunks);
}

zl_frame_t *zl_fq_push(zl_fq_t *q)
{
    if (q->tail == NULL) {
        zl_fq_chunk_t *c = fq_chunk_get(q);
        if (c == NULL)
            return NULL;
        q->head = q->tail = c;
        q->head_pos = q->tail_pos = 0;
    } else if (q->tail_pos == ZL_FQ_CHUNK) {
        zl_fq_chunk_t *c = fq_chunk_get(q);
        if (c == NULL)
            return NULL;
        q->tail->next = c;
        q->tail = c;
        q->tail_pos = 0;
    }
    q->count++;
    return &q->tail->f[q->tail_pos++];
}

void zl_fq_pop(zl_fq_t *q)
{
    q->count--;
    q->head_pos++;
    if (q->count == 0) {
        /* Keep the (single) chunk; rewind it. */
        zl_fq_chunk_t *c = q->head;
        while (c != q->tail) {
            zl_fq_chunk_t *n = c->next;
            fq_chunk_put(q, c);
            c = n;
        }
        q->head = q->tail;
        q->head_pos = q->tail_pos = 0;
        return;
    }
    if (q->head_pos == ZL_FQ_CHUNK) {
        zl_fq_chunk_t *c = q->head;
        q->head = c->next;
        q->head_pos = 0;
        fq_chunk_put(q, c);
    }
}

zl_frame_t *zl_fq_at(zl_fq_t *q, size_t i)
{
    zl_fq_chunk_t *c = q->head;
    size_t pos = q->head_pos + i;
    while (pos >= ZL_FQ_CHUNK) {
        pos -= ZL_FQ_CHUNK;
        c = c->next;
    }
    return &c->f[pos];
}

int zl_fq_splice(zl_fq_t *dst, zl_fq_t *src)
{
    if (src->count == 0)
        return 0;
    if (dst->count == 0) {
        /* O(1): dst adopts src's chunks. An empty FIFO holds at most one
         * (rewound) chunk; it becomes src's spare, so chunks circulate
         * between the two sides instead of being freed and allocated. */
        zl_fq_chunk_t *empty = dst->head;
        dst->head = src->head;
        dst->tail = src->tail;
        dst->head_pos = src->head_pos;
        dst->tail_pos = src->tail_pos;
        dst->count = src->count;
        src->head = src->tail = NULL;
        src->head_pos = src->tail_pos = 0;
        src->count = 0;
        if (empty != NULL)
            fq_chunk_put(src, empty);
        return 0;
    }
    /* dst is not empty: move frame by frame (frames are plain bytes, so a
     * memcpy moves a message), after making room for all of them, so that
     * a failure leaves both sides as they were. */
    if (zl_fq_reserve(dst, src->count) != 0)
        return ENOMEM;
    while (src->count > 0) {
        zl_frame_t *d = zl_fq_push(dst); /* reserved: cannot fail */
        memcpy(d, zl_fq_front(src), sizeof *d);
        zl_fq_pop(src);
    }
    return 0;
}

void zl_fq_clear(zl_fq_t *q)
{
    while (q->count > 0) {
        zl_frame_t *f = zl_fq_front(q);
        if (zl_msg_valid(&f->msg))
            zl_msg_release(&f->msg);
        zl_fq_pop(q);
    }
}

void zl_fq_fini(zl_fq_t *q)
{
    zl_fq_clear(q);
    zl_fq_chunk_t *c = q->head;
    while (c != NULL) {
        zl_fq_chunk_t *n = c->next;
        free(c);
        c = n;
    }
    c = q->spare;
    while (c != NULL) {
        zl_fq_chunk_t *n = c->next;
        free(c);
        c = n;
    }
    free(q->held);
    memset(q, 0, sizeof *q);
}

/* ------------------------------------------------------------ zl_q_t */

static uint64_t lwm_of(uint64_t hwm)
{
    return (hwm + 1) / 2;
}

zl_q_t *zl_q_new(uint64_t hwm, zl_q_end_t rd, zl_q_end_t wr)
{
    /* Cache-line aligned: see the layout of zl_q_t (sizeof is a multiple of
     * 64, as aligned_alloc wants). */
    zl_q_t *q = aligned_alloc(64, sizeof *q);
    if (q == NULL)
        return NULL;
    memset(q, 0, sizeof *q);
    zl_mutex_init(&q->lk);
    zl_fq_init(&q->fq);
    zl_fq_init(&q->ctl);
    q->hwm = hwm;
    q->lwm = lwm_of(hwm);
    q->rd = rd;
    q->wr = wr;
    atomic_init(&q->refs, 2);
    return q;
}

void zl_q_unref(zl_q_t *q)
{
    if (q == NULL || atomic_fetch_sub(&q->refs, 1) != 1)
        return;
    zl_fq_fini(&q->fq);
    zl_fq_fini(&q->ctl);
    zl_mutex_fini(&q->lk);
    free(q);
}

/* Under q->lk: folds the charge a lock-free reader consumed (zl_q_consume)
 * into bytes. */
static inline void fold_consumed(zl_q_t *q)
{
    if (atomic_load(&q->consumed) == 0)
        return;
    uint64_t c = atomic_exchange(&q->consumed, 0);
    q->bytes -= c;
    q->inflight -= c;
}

/* Under q->lk: whether a waiting writer should be told about credit. */
static bool writer_wake_due(zl_q_t *q)
{
    if (!atomic_load(&q->writer_blocked))
        return false;
    fold_consumed(q);
    if (q->hwm != 0 && q->bytes > q->lwm && !q->reader_closed)
        return false;
    atomic_store(&q->writer_blocked, false);
    return true;
}

/* Under q->lk, after a refusal: registers the writer, then looks once more
 * at what a lock-free reader consumed meanwhile (the reader adds, then
 * reads writer_blocked; we set it, then read consumed: one of the two sees
 * the other). Returns true when the record now fits after all. */
static bool writer_register(zl_q_t *q, uint64_t charge);

static inline void notify(zl_q_end_t *e)
{
    if (e->notify != NULL)
        e->notify(e->arg);
}

static inline bool admits(const zl_q_t *q, uint64_t charge)
{
    return q->hwm == 0 || q->bytes == 0 || q->bytes + charge <= q->hwm;
}

/* Under q->lk: admission with lazy folding of consumed charge. */
static bool admit(zl_q_t *q, uint64_t charge)
{
    if (admits(q, charge))
        return true;
    fold_consumed(q);
    return admits(q, charge) || writer_register(q, charge);
}

static bool writer_register(zl_q_t *q, uint64_t charge)
{
    /* The flag is shared by every writer-side waiter of this queue: clear
     * it again only if this call raised it, or another waiter's
     * registration would be erased. */
    bool was = atomic_exchange(&q->writer_blocked, true);
    fold_consumed(q);
    if (!admits(q, charge))
        return false;
    if (!was)
        atomic_store(&q->writer_blocked, false);
    return true;
}

bool zl_q_has_room(zl_q_t *q, uint64_t charge)
{
    zl_mutex_lock(&q->lk);
    bool ok = !q->reader_closed && admit(q, charge);
    zl_mutex_unlock(&q->lk);
    return ok;
}

int zl_q_reserve(zl_q_t *q, size_t n)
{
    /* Spare chunks only: the tail's free slots do not count, since a
     * reader taking everything (zl_q_take_all) takes the tail chunk too.
     * Only this queue's writer takes spares (its pushes, serialized by the
     * caller's lock, which it holds until its push); the reader only adds
     * them. So enough spares seen without the queue lock stay enough: the
     * common case takes no lock (a PUB with NODROP 1 reserves on every
     * subscriber for every record). */
    size_t want = (n + ZL_FQ_CHUNK - 1) / ZL_FQ_CHUNK;
    if (atomic_load_explicit(&q->fq.nspare, memory_order_acquire) >= want)
        return 0;
    zl_mutex_lock(&q->lk);
    int rc = fq_add_spares(&q->fq, want);
    zl_mutex_unlock(&q->lk);
    return rc;
}

int zl_q_reserve_ctl(zl_q_t *q)
{
    /* The reader of the control list pops one frame at a time, which only
     * adds free slots (a drained list rewinds its chunk) and spares: the
     * tail's free slots count here. */
    zl_mutex_lock(&q->lk);
    int rc = zl_fq_reserve(&q->ctl, 1);
    zl_mutex_unlock(&q->lk);
    return rc;
}

int zl_q_inject_reserve(zl_q_t *q)
{
    zl_mutex_lock(&q->lk);
    int rc = 0;
    if (q->fq.held == NULL) {
        q->fq.held = malloc(sizeof *q->fq.held);
        if (q->fq.held == NULL)
            rc = ENOMEM;
    }
    zl_mutex_unlock(&q->lk);
    return rc;
}

int zl_q_inject(zl_q_t *q, zl_frame_t *frames, size_t n)
{
    uint64_t charge = 0;
    zl_mutex_lock(&q->lk);
    if (zl_fq_reserve(&q->fq, n) != 0) {
        /* The chunk set aside by zl_q_inject_reserve covers one chunk's
         * worth of frames; it is used only here. */
        if (q->fq.held == NULL || n > ZL_FQ_CHUNK) {
            zl_mutex_unlock(&q->lk);
            return ZL_Q_NOMEM;
        }
        q->fq.held->next = q->fq.spare;
        q->fq.spare = q->fq.held;
        q->fq.nspare++;
        q->fq.held = NULL;
    }
    for (size_t i = 0; i < n; i++) {
        zl_frame_t *d = zl_fq_push(&q->fq); /* reserved: cannot fail */
        charge += zl_frame_charge(&frames[i]);
        memcpy(d, &frames[i], sizeof *d);
        zl_msg_init_empty(&frames[i].msg);
    }
    q->records++;
    q->bytes += charge;
    q->reader_idle = false;
    zl_mutex_unlock(&q->lk);
    return ZL_Q_OK;
}

/* Under q->lk: appends one whole record of n frames, with room already
 * admitted; reserves its chunks first so that it is all or nothing.
 * Returns ZL_Q_OK (frames moved out; *wake says whether the reader must be
 * notified) or ZL_Q_NOMEM (nothing queued, frames untouched). */
static int push_locked(zl_q_t *q, zl_frame_t *frames, size_t n, uint64_t charge, bool *wake)
{
    if (zl_fq_reserve(&q->fq, n) != 0)
        return ZL_Q_NOMEM;
    for (size_t i = 0; i < n; i++) {
        zl_frame_t *d = zl_fq_push(&q->fq); /* reserved: cannot fail */
        memcpy(d, &frames[i], sizeof *d);
        zl_msg_init_empty(&frames[i].msg);
    }
    q->records++;
    q->bytes += charge;
    *wake = q->reader_idle;
    q->reader_idle = false;
    return ZL_Q_OK;
}

int zl_q_push(zl_q_t *q, zl_frame_t *frames, size_t n, bool control)
{
    uint64_t charge = 0;
    for (size_t i = 0; i < n; i++)
        charge += zl_frame_charge(&frames[i]);

    zl_mutex_lock(&q->lk);
    if (q->reader_closed) {
        zl_mutex_unlock(&q->lk);
        return ZL_Q_CLOSED;
    }
    if (!control && !admit(q, charge)) {
        zl_mutex_unlock(&q->lk);
        return ZL_Q_FULL;
    }
    bool wake = false;
    int rc = push_locked(q, frames, n, charge, &wake);
    zl_mutex_unlock(&q->lk);
    if (wake)
        notify(&q->rd);
    return rc;
}

int zl_q_deliver(zl_q_t *q, zl_fq_t *fq, size_t records, uint64_t charge)
{
    zl_mutex_lock(&q->lk);
    if (q->reader_closed) {
        zl_mutex_unlock(&q->lk);
        zl_fq_clear(fq);
        return ZL_Q_CLOSED;
    }
    if (zl_fq_splice(&q->fq, fq) != 0) {
        zl_mutex_unlock(&q->lk);
        return ZL_Q_NOMEM; /* fq still holds every record */
    }
    q->records += records;
    q->bytes += charge;
    bool full = false;
    if (q->hwm != 0 && q->bytes >= q->hwm) {
        fold_consumed(q);
        if (q->bytes >= q->hwm) {
            bool was = atomic_exchange(&q->writer_blocked, true);
            fold_consumed(q);
            full = q->bytes >= q->hwm;
            if (!full && !was)
                atomic_store(&q->writer_blocked, false);
        }
    }
    bool wake = q->reader_idle && records > 0;
    if (wake)
        q->reader_idle = false;
    zl_mutex_unlock(&q->lk);
    if (wake)
        notify(&q->rd);
    return full ? ZL_Q_FULL : ZL_Q_OK;
}

size_t zl_q_take_all(zl_q_t *q, zl_fq_t *out, uint64_t *charge, bool *eof)
{
    zl_mutex_lock(&q->lk);
    size_t n = q->fq.count;
    if (n == 0) {
        q->reader_idle = true;
        *eof = q->writer_closed;
        zl_mutex_unlock(&q->lk);
        return 0;
    }
    *eof = false;
    if (zl_fq_splice(out, &q->fq) != 0) {
        /* out is not empty and cannot grow now: the records stay here. */
        zl_mutex_unlock(&q->lk);
        return 0;
    }
    fold_consumed(q);
    uint64_t c = q->bytes - q->inflight;
    q->inflight = q->bytes;
    q->records = 0;
    zl_mutex_unlock(&q->lk);
    *charge += c;
    return n;
}

void zl_q_release(zl_q_t *q, uint64_t charge)
{
    zl_mutex_lock(&q->lk);
    q->bytes -= charge;
    q->inflight -= charge;
    bool wake = writer_wake_due(q);
    zl_mutex_unlock(&q->lk);
    if (wake)
        notify(&q->wr);
}

void zl_q_close_writer(zl_q_t *q)
{
    zl_mutex_lock(&q->lk);
    q->writer_closed = true;
    bool wake = q->reader_idle;
    q->reader_idle = false;
    zl_mutex_unlock(&q->lk);
    if (wake)
        notify(&q->rd);
}

void zl_q_close_reader(zl_q_t *q)
{
    zl_fq_t dead;
    zl_fq_init(&dead);
    zl_mutex_lock(&q->lk);
    q->reader_closed = true;
    (void)zl_fq_splice(&dead, &q->fq); /* dead is empty: cannot fail */
    q->records = 0;
    fold_consumed(q);
    q->bytes = q->inflight;
    bool wake = atomic_exchange(&q->writer_blocked, false);
    zl_mutex_unlock(&q->lk);
    zl_fq_fini(&dead);
    if (wake)
        notify(&q->wr);
}

void zl_q_consume(zl_q_t *q, uint64_t charge)
{
    atomic_fetch_add(&q->consumed, charge);
    if (!atomic_load(&q->writer_blocked))
        return;
    zl_mutex_lock(&q->lk);
    bool wake = writer_wake_due(q);
    zl_mutex_unlock(&q->lk);
    if (wake)
        notify(&q->wr);
}

bool zl_q_poll_in(zl_q_t *q)
{
    zl_mutex_lock(&q->lk);
    bool ready = q->records > 0;
    if (!ready)
        q->reader_idle = true;
    zl_mutex_unlock(&q->lk);
    return ready;
}

uint64_t zl_q_bytes(zl_q_t *q)
{
    zl_mutex_lock(&q->lk);
    fold_consumed(q);
    uint64_t b = q->bytes;
    zl_mutex_unlock(&q->lk);
    return b;
}

size_t zl_q_records(zl_q_t *q)
{
    zl_mutex_lock(&q->lk);
    size_t r = q->records;
    zl_mutex_unlock(&q->lk);
    return r;
}

int zl_q_push_ctl(zl_q_t *q, zl_frame_t *f)
{
    zl_mutex_lock(&q->lk);
    if (q->reader_closed) {
        zl_mutex_unlock(&q->lk);
        zl_msg_release(&f->msg);
        zl_msg_init_empty(&f->msg);
        return ZL_Q_CLOSED;
    }
    zl_frame_t *d = zl_fq_push(&q->ctl);
    if (d == NULL) {
        zl_mutex_unlock(&q->lk);
        return ZL_Q_NOMEM; /* f untouched */
    }
    memcpy(d, f, sizeof *d);
    zl_msg_init_empty(&f->msg);
    zl_mutex_unlock(&q->lk);
    return ZL_Q_OK;
}

bool zl_q_pop_ctl(zl_q_t *q, zl_frame_t *out)
{
    zl_mutex_lock(&q->lk);
    zl_frame_t *f = zl_fq_front(&q->ctl);
    if (f != NULL) {
        memcpy(out, f, sizeof *out);
        zl_fq_pop(&q->ctl);
    }
    zl_mutex_unlock(&q->lk);
    return f != NULL;
}

/* Under q->lk: whether frame f is a standalone control named name. */
static bool is_named_control(zl_frame_t *f, const void *name, size_t nlen)
{
    if (!(f->flags & ZMP_F_CONTROL) || (f->flags & ZMP_F_MORE))
        return false;
    return zl_msg_size(&f->msg) >= nlen && memcmp(zl_msg_data(&f->msg), name, nlen) == 0;
}

/* Under q->lk: drops the frames of fq beyond its first keep (their
 * messages must have been moved out), freeing chunks no longer needed. */
static void fq_truncate(zl_fq_t *fq, size_t keep)
{
    if (keep == fq->count)
        return;
    if (keep == 0) {
        while (fq->count > 0)
            zl_fq_pop(fq);
        return;
    }
    size_t last = fq->head_pos + keep - 1; /* position of the last kept frame */
    zl_fq_chunk_t *c = fq->head;
    while (last >= ZL_FQ_CHUNK) {
        last -= ZL_FQ_CHUNK;
        c = c->next;
    }
    zl_fq_chunk_t *x = c->next;
    while (x != NULL) {
        zl_fq_chunk_t *n = x->next;
        fq_chunk_put(fq, x);
        x = n;
    }
    c->next = NULL;
    fq->tail = c;
    fq->tail_pos = (uint32_t)last + 1;
    fq->count = keep;
}

/* Under q->lk: drops queued controls named name, compacting the FIFO in
 * place (rare; needs no memory, so it cannot fail). */
static void drop_named_controls(zl_fq_t *fq, size_t *records, uint64_t *bytes, const void *name,
                                size_t nlen)
{
    bool any = false;
    for (size_t i = 0; i < fq->count && !any; i++)
        any = is_named_control(zl_fq_at(fq, i), name, nlen);
    if (!any)
        return;
    /* A read and a write cursor walk the chunks; kept frames slide down
     * over dropped ones. */
    zl_fq_chunk_t *rc = fq->head, *wc = fq->head;
    uint32_t rp = fq->head_pos, wp = fq->head_pos;
    size_t kept = 0;
    bool in_record = false; /* never drop a frame inside a record */
    for (size_t i = 0; i < fq->count; i++) {
        zl_frame_t *f = &rc->f[rp];
        if (++rp == ZL_FQ_CHUNK) {
            rc = rc->next;
            rp = 0;
        }
        if (!in_record && is_named_control(f, name, nlen)) {
            *bytes -= zl_frame_charge(f);
            (*records)--;
            zl_msg_release(&f->msg);
            continue;
        }
        in_record = (f->flags & ZMP_F_MORE) != 0;
        if (&wc->f[wp] != f)
            memcpy(&wc->f[wp], f, sizeof *f);
        kept++;
        if (++wp == ZL_FQ_CHUNK) {
            wc = wc->next;
            wp = 0;
        }
    }
    fq_truncate(fq, kept);
}

int zl_q_push_control_latest(zl_q_t *q, zl_frame_t *f, const void *name, size_t nlen)
{
    uint64_t charge = zl_frame_charge(f);
    zl_mutex_lock(&q->lk);
    if (q->reader_closed) {
        zl_mutex_unlock(&q->lk);
        return ZL_Q_CLOSED;
    }
    /* Room first: a failure must leave the older control in place. */
    if (zl_fq_reserve(&q->fq, 1) != 0) {
        zl_mutex_unlock(&q->lk);
        return ZL_Q_NOMEM;
    }
    drop_named_controls(&q->fq, &q->records, &q->bytes, name, nlen);
    bool wake = false;
    int rc = push_locked(q, f, 1, charge, &wake); /* reserved: cannot fail */
    zl_mutex_unlock(&q->lk);
    if (wake)
        notify(&q->rd);
    return rc;
}
