/*
 * queue.c — frame FIFOs and the byte-counted directional queue (queue.h).
 *
 * Locks: zl_fq_t has none (its owner serializes). zl_q_t functions take q->lk
 * for their whole body and call an end's notify only after unlocking, so a
 * notify may take a socket lock without inverting the socket -> queue order.
 */
#include "msg/queue.h"

#include <stdlib.h>

/* ------------------------------------------------------------ zl_fq_t */

void zl_fq_init(zl_fq_t *q)
{
    memset(q, 0, sizeof *q);
}

static zl_fq_chunk_t *fq_chunk_get(zl_fq_t *q)
{
    zl_fq_chunk_t *c = q->spare;
    if (c != NULL) {
        q->spare = NULL;
    } else {
        c = malloc(sizeof *c);
        if (c == NULL)
            return NULL;
    }
    c->next = NULL;
    return c;
}

static void fq_chunk_put(zl_fq_t *q, zl_fq_chunk_t *c)
{
    if (q->spare == NULL)
        q->spare = c;
    else
        free(c);
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

void zl_fq_splice(zl_fq_t *dst, zl_fq_t *src)
{
    if (src->count == 0)
        return;
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
        if (empty != NULL) {
            if (src->spare == NULL)
                src->spare = empty;
            else
                free(empty);
        }
        return;
    }
    /* dst is not empty: move frame by frame (frames are plain bytes, so a
     * memcpy moves a message). */
    while (src->count > 0) {
        zl_frame_t *d = zl_fq_push(dst);
        if (d == NULL)
            abort(); /* chunk allocation failure mid-splice: out of memory */
        memcpy(d, zl_fq_front(src), sizeof *d);
        zl_fq_pop(src);
    }
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
    free(q->spare);
    memset(q, 0, sizeof *q);
}

/* ------------------------------------------------------------ zl_q_t */

static uint64_t lwm_of(uint64_t hwm)
{
    return (hwm + 1) / 2;
}

zl_q_t *zl_q_new(uint64_t hwm, zl_q_end_t rd, zl_q_end_t wr)
{
    zl_q_t *q = calloc(1, sizeof *q);
    if (q == NULL)
        return NULL;
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

void zl_q_inject(zl_q_t *q, zl_frame_t *frames, size_t n)
{
    uint64_t charge = 0;
    zl_mutex_lock(&q->lk);
    for (size_t i = 0; i < n; i++) {
        zl_frame_t *d = zl_fq_push(&q->fq);
        if (d == NULL)
            abort(); /* out of memory */
        charge += zl_frame_charge(&frames[i]);
        memcpy(d, &frames[i], sizeof *d);
        zl_msg_init_empty(&frames[i].msg);
    }
    q->records++;
    q->bytes += charge;
    q->reader_idle = false;
    zl_mutex_unlock(&q->lk);
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
    for (size_t i = 0; i < n; i++) {
        zl_frame_t *d = zl_fq_push(&q->fq);
        if (d == NULL)
            abort(); /* a 5 KiB chunk allocation failed: out of memory */
        memcpy(d, &frames[i], sizeof *d);
        zl_msg_init_empty(&frames[i].msg);
    }
    q->records++;
    q->bytes += charge;
    bool wake = q->reader_idle;
    q->reader_idle = false;
    zl_mutex_unlock(&q->lk);
    if (wake)
        notify(&q->rd);
    return ZL_Q_OK;
}

bool zl_q_deliver(zl_q_t *q, zl_fq_t *fq, size_t records, uint64_t charge)
{
    zl_mutex_lock(&q->lk);
    if (q->reader_closed) {
        zl_mutex_unlock(&q->lk);
        zl_fq_clear(fq);
        return false;
    }
    zl_fq_splice(&q->fq, fq);
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
    return full;
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
    fold_consumed(q);
    uint64_t c = q->bytes - q->inflight;
    q->inflight = q->bytes;
    zl_fq_splice(out, &q->fq);
    q->records = 0;
    *eof = false;
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
    zl_fq_splice(&dead, &q->fq);
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

void zl_q_push_ctl(zl_q_t *q, zl_frame_t *f)
{
    zl_mutex_lock(&q->lk);
    if (q->reader_closed) {
        zl_mutex_unlock(&q->lk);
        zl_msg_release(&f->msg);
        zl_msg_init_empty(&f->msg);
        return;
    }
    zl_frame_t *d = zl_fq_push(&q->ctl);
    if (d == NULL)
        abort(); /* out of memory */
    memcpy(d, f, sizeof *d);
    zl_msg_init_empty(&f->msg);
    zl_mutex_unlock(&q->lk);
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

/* Under q->lk: drops queued controls named name (rare: rebuilds the FIFO). */
static void drop_named_controls(zl_fq_t *fq, size_t *records, uint64_t *bytes, const void *name,
                                size_t nlen)
{
    bool any = false;
    for (size_t i = 0; i < fq->count && !any; i++)
        any = is_named_control(zl_fq_at(fq, i), name, nlen);
    if (!any)
        return;
    zl_fq_t keep;
    zl_fq_init(&keep);
    bool in_record = false; /* never drop a frame inside a record */
    while (fq->count > 0) {
        zl_frame_t *f = zl_fq_front(fq);
        if (!in_record && is_named_control(f, name, nlen)) {
            *bytes -= zl_frame_charge(f);
            (*records)--;
            zl_msg_release(&f->msg);
        } else {
            zl_frame_t *d = zl_fq_push(&keep);
            if (d == NULL)
                abort(); /* out of memory */
            memcpy(d, f, sizeof *d);
            in_record = (f->flags & ZMP_F_MORE) != 0;
        }
        zl_fq_pop(fq);
    }
    zl_fq_splice(fq, &keep);
    zl_fq_fini(&keep);
}

int zl_q_push_control_latest(zl_q_t *q, zl_frame_t *f, const void *name, size_t nlen)
{
    zl_mutex_lock(&q->lk);
    if (q->reader_closed) {
        zl_mutex_unlock(&q->lk);
        return ZL_Q_CLOSED;
    }
    drop_named_controls(&q->fq, &q->records, &q->bytes, name, nlen);
    zl_mutex_unlock(&q->lk);
    return zl_q_push(q, f, 1, true);
}
