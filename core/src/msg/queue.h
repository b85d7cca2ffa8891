/*
 * queue.h — frames, frame FIFOs and the byte-counted directional queue.
 *
 * Design notes
 *  - A record (one logical multipart message) travels as consecutive frames;
 *    every frame but the last carries ZMP_F_MORE. Records are pushed and
 *    popped whole, so a reader never sees half a record.
 *  - zl_fq_t is a single-threaded chunked FIFO of frames (no locks, no
 *    allocation per frame once warm). Owners protect it themselves.
 *  - zl_q_t is one direction of one pipe: a locked zl_fq_t plus the byte
 *    high-water mark of core-contract §3 (charge = payload + 64 per frame,
 *    LWM = ceil(hwm/2), one record admitted on an empty queue whatever its
 *    size). Each end is either a socket or an engine connection; the queue
 *    calls the other end's notify function, after dropping its lock, when:
 *      - the reader had found it empty and a record arrives (reader_idle);
 *      - the writer had been refused and bytes fell to the LWM or to zero
 *        (writer_blocked).
 *    Both flags are set under the lock by the party that is about to wait
 *    (writer_blocked is shared by every writer-side waiter: it is cleared
 *    only by the notifier, or by the registrant that raised it),
 *    so an edge is never lost: the state change and the flag test happen
 *    under the same lock.
 *  - Bytes stay charged while a reader holds them: an engine until its
 *    write completed (zl_q_release), so a sender blocks while the transport
 *    is full; a socket until the application received each record
 *    (zl_q_consume, lock-free, folded in by the writer when it needs room).
 *  - Memory: frames live in chunks of ZL_FQ_CHUNK. An append either
 *    completes or fails with ENOMEM / ZL_Q_NOMEM having changed nothing:
 *    the chunks it needs are allocated before the first frame moves.
 *    Nothing here aborts. A writer that must not fail after it has
 *    committed to something (several queues at once, a STREAM notice)
 *    reserves first (zl_q_reserve, zl_q_inject_reserve).
 *  - Lock order: socket lock before queue lock. notify functions are called
 *    with no queue lock held and take no socket lock (they stamp, bump a
 *    wake word, or post to an I/O thread), so a queue operation may run
 *    under any socket's lock.
 */
#ifndef ZL_QUEUE_H
#define ZL_QUEUE_H

#include "msg/msg.h"
#include "wire/zmp.h"
#include "util/platform.h"

/* A frame's flags and kind are the wire's (ZMP_F_*, ZMP_KIND_* of
 * wire/zmp.h): the codec copies them as they are. */

/* Per-frame overhead charged against a HWM. */
#define ZL_FRAME_OVERHEAD 64u

typedef struct zl_frame {
    zlink_msg_t msg;
    uint64_t seq;    /* request/reply sequence on a record's first frame */
    uint8_t kind;    /* ZMP_KIND_* (first frame of a record) */
    uint8_t flags;   /* ZMP_F_* */
    uint8_t pad[6];
} zl_frame_t;

static inline uint64_t zl_frame_charge(const zl_frame_t *f)
{
    return (uint64_t)zl_msg_size(&f->msg) + ZL_FRAME_OVERHEAD;
}

#define ZL_FQ_CHUNK 64

typedef struct zl_fq_chunk {
    struct zl_fq_chunk *next;
    zl_frame_t f[ZL_FQ_CHUNK];
} zl_fq_chunk_t;

typedef struct zl_fq {
    zl_fq_chunk_t *head;
    zl_fq_chunk_t *tail;
    uint32_t head_pos;   /* next frame to pop in head */
    uint32_t tail_pos;   /* next free slot in tail */
    size_t count;        /* frames queued */
    zl_fq_chunk_t *spare; /* recycled or reserved chunks (linked by next) */
    _Atomic size_t nspare; /* chunks on the spare list (atomic: a writer
                            reads it without the queue lock, zl_q_reserve) */
    zl_fq_chunk_t *held; /* set aside for one push that must not fail
                            (zl_q_inject_reserve); only zl_q_inject uses it */
} zl_fq_t;

void zl_fq_init(zl_fq_t *q);
/* Closes every queued frame's message and frees the chunks. */
void zl_fq_fini(zl_fq_t *q);
/* Closes every queued frame's message; keeps the FIFO usable. */
void zl_fq_clear(zl_fq_t *q);
/* A slot at the tail to fill in place, or NULL when out of memory (the FIFO
 * is then unchanged). The slot is uninitialized; it becomes part of the
 * FIFO at once. */
zl_frame_t *zl_fq_push(zl_fq_t *q);
/* Makes sure the next n zl_fq_push calls on q succeed without allocating,
 * as long as nothing else touches q in between (the owner's lock held
 * throughout). Returns 0, or ENOMEM with the frames of q unchanged. */
int zl_fq_reserve(zl_fq_t *q, size_t n);
/* The head frame, or NULL when empty. */
static inline zl_frame_t *zl_fq_front(zl_fq_t *q)
{
    return q->count ? &q->head->f[q->head_pos] : NULL;
}
/* Removes the head frame; its message must have been moved out or closed. */
void zl_fq_pop(zl_fq_t *q);
/* Appends all of src to dst; src is left empty. An empty dst adopts src's
 * chunks in O(1) and never fails; otherwise the frames are copied and the
 * chunks dst needs are allocated first, so the move is all or nothing:
 * returns 0, or ENOMEM with both FIFOs exactly as they were. */
int zl_fq_splice(zl_fq_t *dst, zl_fq_t *src);
/* The i-th frame from the head (i < count). */
zl_frame_t *zl_fq_at(zl_fq_t *q, size_t i);

/* One end of a zl_q_t: whoever must be told about the other side's progress. */
typedef struct zl_q_end {
    void (*notify)(void *arg);
    void *arg;
} zl_q_end_t;

typedef struct zl_q {
    zl_mutex_t lk;
    zl_fq_t fq;
    size_t records;        /* whole records in fq */
    uint64_t bytes;        /* charge queued plus in flight */
    uint64_t inflight;     /* part of bytes taken by an engine, not released */
    uint64_t hwm;          /* 0 = unlimited */
    uint64_t lwm;          /* ceil(hwm/2) */
    bool reader_idle;      /* reader found it empty; notify on next push */
    bool writer_closed;    /* no more records will come */
    bool reader_closed;    /* records are no longer wanted: pushes fail */
    zl_q_end_t rd;
    zl_q_end_t wr;
    zl_fq_t ctl;           /* inproc control frames (no HWM, no engine) */
    _Atomic int refs;      /* one per end */
    /* What a lock-free reader writes on every record (zl_q_consume), on a
     * cache line of its own so that it does not bounce the line of the
     * fields a writer reads for admission (zl_q_new aligns the queue). */
    _Alignas(64) _Atomic uint64_t consumed; /* charge a socket reader
                                  consumed, not yet folded into bytes */
    _Atomic bool writer_blocked; /* writer was refused; notify at LWM */
} zl_q_t;

/* A queue with both ends attached (refs = 2). hwm 0 = unlimited. */
zl_q_t *zl_q_new(uint64_t hwm, zl_q_end_t rd, zl_q_end_t wr);
/* Drops one end's reference; frees (closing queued frames) at zero. */
void zl_q_unref(zl_q_t *q);

/* Results of the push family. */
#define ZL_Q_OK 0
#define ZL_Q_FULL 1     /* no room: writer_blocked was set */
#define ZL_Q_CLOSED 2   /* reader end closed: frames not taken */
#define ZL_Q_NOMEM 3    /* out of memory: frames not taken, queue unchanged */

/* Writer, under the lock that serializes this queue's writers (the socket
 * lock): makes sure that the next zl_q_push of up to n frames, or the next
 * control push (zl_q_push_control_latest) of one frame, cannot fail for
 * lack of memory, whatever the reader takes meanwhile. It keeps enough
 * spare chunks for that; the reader never takes spare chunks, it only
 * returns them. Lets a caller reserve on several queues before it commits
 * to any (all or nothing). Returns 0 or ENOMEM (nothing queued changed). */
int zl_q_reserve(zl_q_t *q, size_t n);
/* The same for the next zl_q_push_ctl (inproc control list). */
int zl_q_reserve_ctl(zl_q_t *q);

/* Whether a record of charge bytes would be admitted now. A refusal
 * registers the writer (writer_blocked) like a refused push, so the
 * writer is notified when room appears. */
bool zl_q_has_room(zl_q_t *q, uint64_t charge);

/* Reader only: appends a record the reader itself generates (STREAM
 * connect/disconnect notices), ignoring the HWM and notifying nobody; the
 * caller wakes its own waiters. Frames are moved out on ZL_Q_OK and left
 * untouched on ZL_Q_NOMEM. A one-frame record after zl_q_inject_reserve
 * cannot fail. */
int zl_q_inject(zl_q_t *q, zl_frame_t *frames, size_t n);
/* Reader only: sets one chunk aside so that the next one-frame zl_q_inject
 * cannot fail (the STREAM disconnect notice, reserved at attach). Writers
 * never use it. Returns 0 or ENOMEM. */
int zl_q_inject_reserve(zl_q_t *q);

/* Writer: appends one whole record of n frames (moved out of frames[]; the
 * caller's frames are left empty on ZL_Q_OK and untouched otherwise).
 * control != 0 bypasses the HWM (control frames). ZL_Q_NOMEM: a chunk for
 * the frames could not be allocated; nothing was queued. */
int zl_q_push(zl_q_t *q, zl_frame_t *frames, size_t n, bool control);

/* Writer (engine): appends a batch of records from fq whatever the HWM
 * (the engine already read them off the wire). Returns ZL_Q_OK, or
 * ZL_Q_FULL when bytes reached the HWM afterwards (the records were
 * delivered; the writer should stop producing until its notify is called),
 * or ZL_Q_NOMEM when the chunks to hold them could not be allocated: then
 * nothing was delivered and fq still holds every record (the engine closes
 * the connection, see conn_read.c). On reader_closed the frames are closed
 * (ZL_Q_CLOSED). */
int zl_q_deliver(zl_q_t *q, zl_fq_t *fq, size_t records, uint64_t charge);

/* Reader (engine or socket): moves every queued record into out
 * (appending) and adds their charge to *charge; the bytes stay charged
 * until the reader returns them (zl_q_release / zl_q_consume).
 * Returns the number of frames taken. When nothing was queued, sets
 * reader_idle and reports *eof = writer_closed. An empty out never fails;
 * when out still holds frames and memory to append to it is lacking,
 * nothing is taken and 0 is returned with *eof false (reader_idle is not
 * set): the reader works through what out holds and takes again later. */
size_t zl_q_take_all(zl_q_t *q, zl_fq_t *out, uint64_t *charge, bool *eof);
/* Reader (engine): returns charge bytes of credit after writing them. */
void zl_q_release(zl_q_t *q, uint64_t charge);
/* Reader (socket, after zl_q_take_all): returns the credit of one record it
 * consumed from its private batch. Lock-free unless a writer is blocked, in
 * which case it takes the lock and wakes the writer at the LWM. The writer
 * folds consumed charge into bytes whenever admission would fail, so the
 * HWM and LWM stay exact per record. */
void zl_q_consume(zl_q_t *q, uint64_t charge);

/* Marks the writer end done: zl_q_take_all reports eof after the last
 * record. */
void zl_q_close_writer(zl_q_t *q);
/* Marks the reader end gone: queued frames are closed, pushes fail with
 * ZL_Q_CLOSED and a blocked writer is notified. */
void zl_q_close_reader(zl_q_t *q);

/* Writer: queues a named control frame (CONTROL flag; its body starts with
 * name[0..nlen)) after removing any still-queued control of the same name:
 * only the latest of each kind is kept, in enqueue order (contract §7).
 * Controls bypass the HWM. Returns ZL_Q_OK, ZL_Q_CLOSED or ZL_Q_NOMEM (f
 * untouched and nothing removed on either failure). */
int zl_q_push_control_latest(zl_q_t *q, zl_frame_t *f, const void *name, size_t nlen);

/* Inproc only: control frames (WEIGHT, SUBSCRIBE, CANCEL) travel beside
 * the records, since no engine is there to hand them to the socket. The
 * writer appends (frame moved out on ZL_Q_OK; on ZL_Q_CLOSED the frame's
 * message is released, the peer being gone; on ZL_Q_NOMEM f is untouched);
 * the reader pops one at a time (false when none). Neither notifies. */
int zl_q_push_ctl(zl_q_t *q, zl_frame_t *f);
bool zl_q_pop_ctl(zl_q_t *q, zl_frame_t *out);

/* Reader: whether a whole record is queued; when not, marks the reader
 * idle so the next record notifies it (for pollers). */
bool zl_q_poll_in(zl_q_t *q);

/* Snapshot of queued bytes (for options and diagnostics). */
uint64_t zl_q_bytes(zl_q_t *q);
size_t zl_q_records(zl_q_t *q);

#endif /* ZL_QUEUE_H */
