/*
 * test_queue.c — unit tests of core/src/queue.h: the chunked frame FIFO
 * (zl_fq_t) and the byte-counted directional queue (zl_q_t).
 *
 * Design notes
 *  - The queue is driven directly, as a socket or an engine would: records
 *    of frames whose payloads are real messages, ends whose notify
 *    functions count their calls. Cases check the numbers core-contract §3
 *    fixes (charge = payload + 64 per frame, LWM = ceil(HWM / 2), one
 *    record admitted on an empty queue), who is notified and how often, the
 *    order of frames, and that every payload is released exactly once
 *    (external payloads count their free calls; ASan's leak check sees the
 *    rest).
 *  - One case runs a writer and a reader thread against a small HWM and
 *    waits only on the queue's own notifications, so a lost wake-up shows
 *    as a case that hangs (bounded by a timeout that fails it).
 */
#include "msg/queue.h"
#include "zltest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------- helpers */

/* An end of a queue: counts the notifications it gets and lets a thread
 * wait for the next one. */
typedef struct end {
    atomic_int calls;
    pthread_mutex_t lk;
    pthread_cond_t cv;
} end_t;

static void end_init(end_t *e)
{
    atomic_init(&e->calls, 0);
    pthread_mutex_init(&e->lk, NULL);
    pthread_cond_init(&e->cv, NULL);
}

static void end_fini(end_t *e)
{
    pthread_mutex_destroy(&e->lk);
    pthread_cond_destroy(&e->cv);
}

static void end_notify(void *arg)
{
    end_t *e = arg;
    pthread_mutex_lock(&e->lk);
    atomic_fetch_add(&e->calls, 1);
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->lk);
}

/* Waits until e has been notified more than seen times; fails the case
 * after 10 s (scaled): a lost wake-up. */
static void end_wait_past(end_t *e, int seen)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ZT_MS(10000) / 1000;
    pthread_mutex_lock(&e->lk);
    while (atomic_load(&e->calls) <= seen) {
        if (pthread_cond_timedwait(&e->cv, &e->lk, &until) != 0 && atomic_load(&e->calls) <= seen) {
            pthread_mutex_unlock(&e->lk);
            ZT_FAIL("no notification after %d: a lost wake-up", seen);
        }
    }
    pthread_mutex_unlock(&e->lk);
}

static zl_q_end_t end_of(end_t *e)
{
    zl_q_end_t x = {end_notify, e};
    return x;
}

/* External payloads that count their release. */
static atomic_int freed;

static void count_free(void *data, void *hint)
{
    (void)data;
    (void)hint;
    atomic_fetch_add(&freed, 1);
}

static unsigned char big[4096]; /* backing bytes of external payloads */

/* A frame whose payload is size copied bytes, all equal to fill. */
static zl_frame_t frame_copy(size_t size, unsigned char fill, uint8_t flags)
{
    zl_frame_t f;
    unsigned char buf[512];
    memset(&f, 0, sizeof f);
    ZT_CHECK(size <= sizeof buf);
    memset(buf, fill, size);
    ZT_EQ_INT(zl_msg_init_copy(&f.msg, buf, size), 0);
    f.flags = flags;
    return f;
}

/* A frame whose payload is size bytes of big, freed through count_free. */
static zl_frame_t frame_ext(size_t size, uint8_t flags)
{
    zl_frame_t f;
    memset(&f, 0, sizeof f);
    ZT_EQ_INT(zlink_msg_init_data(&f.msg, big, size, count_free, NULL), ZLINK_CONFIG_OK);
    f.flags = flags;
    return f;
}

/* Pushes a one-frame record of size payload bytes tagged seq; returns the
 * push result. On refusal the frame is released here. */
static int push_one(zl_q_t *q, size_t size, uint64_t seq)
{
    zl_frame_t f = frame_copy(size, (unsigned char)seq, 0);
    f.seq = seq;
    int r = zl_q_push(q, &f, 1, false);
    if (r != ZL_Q_OK) {
        ZT_CHECK(zl_msg_valid(&f.msg)); /* refused: still the caller's */
        ZT_EQ_INT(zl_msg_size(&f.msg), size);
        zl_msg_release(&f.msg);
    } else {
        ZT_CHECK(zl_msg_valid(&f.msg)); /* taken: left empty, initialized */
        ZT_EQ_INT(zl_msg_size(&f.msg), 0);
    }
    return r;
}

/* Takes everything (as an engine would) and returns the frames' charge. */
static uint64_t take_all(zl_q_t *q, zl_fq_t *out, size_t *frames)
{
    uint64_t charge = 0;
    bool eof = true;
    *frames = zl_q_take_all(q, out, &charge, &eof);
    ZT_CHECK(!eof || *frames == 0);
    return charge;
}

/* Releases and pops every frame of fq, checking seq runs first..; returns
 * how many. */
static size_t drain_in_order(zl_fq_t *fq, uint64_t first)
{
    size_t n = 0;
    while (fq->count > 0) {
        zl_frame_t *f = zl_fq_front(fq);
        ZT_EQ_U64(f->seq, first + n);
        zl_msg_release(&f->msg);
        zl_fq_pop(fq);
        n++;
    }
    return n;
}

#define CHARGE(payload) ((uint64_t)(payload) + ZL_FRAME_OVERHEAD)

/* ---------------------------------------------------------- zl_fq_t */

/* Frames come out in push order across chunk boundaries; zl_fq_at sees
 * the same order; an emptied FIFO is usable again. */
static void fq_order_across_chunks(void)
{
    zl_fq_t fq;
    zl_fq_init(&fq);
    ZT_CHECK(zl_fq_front(&fq) == NULL);
    for (int round = 0; round < 2; round++) {
        const size_t n = 3 * ZL_FQ_CHUNK + 5;
        for (size_t i = 0; i < n; i++) {
            zl_frame_t *f = zl_fq_push(&fq);
            ZT_CHECK(f != NULL);
            zl_msg_init_empty(&f->msg);
            f->seq = i;
        }
        ZT_EQ_INT(fq.count, n);
        for (size_t i = 0; i < n; i += 17)
            ZT_EQ_U64(zl_fq_at(&fq, i)->seq, i);
        ZT_EQ_U64(zl_fq_at(&fq, n - 1)->seq, n - 1);
        /* pop half, push more: the FIFO wraps into fresh chunks */
        for (size_t i = 0; i < n / 2; i++) {
            ZT_EQ_U64(zl_fq_front(&fq)->seq, i);
            zl_fq_pop(&fq);
        }
        for (size_t i = n; i < n + ZL_FQ_CHUNK; i++) {
            zl_frame_t *f = zl_fq_push(&fq);
            zl_msg_init_empty(&f->msg);
            f->seq = i;
        }
        ZT_EQ_INT(drain_in_order(&fq, n / 2), n - n / 2 + ZL_FQ_CHUNK);
        ZT_EQ_INT(fq.count, 0);
        ZT_CHECK(zl_fq_front(&fq) == NULL);
    }
    zl_fq_fini(&fq);
}

/* Splicing into an empty FIFO moves everything at once, in order; into a
 * non-empty one it appends; the source is left empty and usable. */
static void fq_splice(void)
{
    zl_fq_t a, b;
    zl_fq_init(&a);
    zl_fq_init(&b);
    for (uint64_t i = 0; i < 2 * ZL_FQ_CHUNK + 3; i++) {
        zl_frame_t *f = zl_fq_push(&b);
        zl_msg_init_empty(&f->msg);
        f->seq = i;
    }
    zl_fq_splice(&a, &b); /* a empty */
    ZT_EQ_INT(a.count, 2 * ZL_FQ_CHUNK + 3);
    ZT_EQ_INT(b.count, 0);
    ZT_CHECK(zl_fq_front(&b) == NULL);
    for (uint64_t i = 0; i < 5; i++) { /* b reusable */
        zl_frame_t *f = zl_fq_push(&b);
        zl_msg_init_empty(&f->msg);
        f->seq = 2 * ZL_FQ_CHUNK + 3 + i;
    }
    zl_fq_splice(&a, &b); /* a not empty: appended */
    ZT_EQ_INT(a.count, 2 * ZL_FQ_CHUNK + 8);
    ZT_EQ_INT(b.count, 0);
    zl_fq_splice(&a, &b); /* empty source: nothing */
    ZT_EQ_INT(a.count, 2 * ZL_FQ_CHUNK + 8);
    ZT_EQ_INT(drain_in_order(&a, 0), 2 * ZL_FQ_CHUNK + 8);
    zl_fq_fini(&a);
    zl_fq_fini(&b);
}

/* zl_fq_clear releases every queued payload once and keeps the FIFO
 * usable; zl_fq_fini releases what is left. */
static void fq_clear_and_fini_release_payloads(void)
{
    zl_fq_t fq;
    zl_fq_init(&fq);
    atomic_store(&freed, 0);
    for (int i = 0; i < 100; i++)
        *zl_fq_push(&fq) = frame_ext(100, 0);
    zl_fq_clear(&fq);
    ZT_EQ_INT(atomic_load(&freed), 100);
    ZT_EQ_INT(fq.count, 0);
    for (int i = 0; i < 3; i++)
        *zl_fq_push(&fq) = frame_ext(100, 0);
    ZT_EQ_INT(fq.count, 3);
    zl_fq_fini(&fq);
    ZT_EQ_INT(atomic_load(&freed), 103);
}

/* ------------------------------------------------- zl_q_t admission */

/* Each frame is charged its payload plus 64; records are admitted while
 * they fit under the HWM; a refused push leaves its frames with the
 * caller and changes nothing. */
static void q_charge_and_hwm(void)
{
    end_t rd, wr;
    end_init(&rd);
    end_init(&wr);
    zl_q_t *q = zl_q_new(3 * CHARGE(100), end_of(&rd), end_of(&wr));
    ZT_CHECK(q != NULL);
    for (uint64_t i = 0; i < 3; i++)
        ZT_EQ_INT(push_one(q, 100, i), ZL_Q_OK);
    ZT_EQ_U64(zl_q_bytes(q), 3 * CHARGE(100));
    ZT_EQ_INT(zl_q_records(q), 3);
    ZT_EQ_INT(push_one(q, 0, 3), ZL_Q_FULL); /* even an empty frame costs 64 */
    ZT_EQ_U64(zl_q_bytes(q), 3 * CHARGE(100));
    ZT_EQ_INT(zl_q_records(q), 3);
    ZT_CHECK(!zl_q_has_room(q, CHARGE(0)));

    /* a two-frame record is charged per frame */
    zl_q_t *q2 = zl_q_new(CHARGE(10) + CHARGE(20), end_of(&rd), end_of(&wr));
    zl_frame_t rec[2] = {frame_copy(10, 1, ZMP_F_MORE), frame_copy(20, 2, 0)};
    ZT_EQ_INT(zl_q_push(q2, rec, 2, false), ZL_Q_OK);
    ZT_EQ_U64(zl_q_bytes(q2), CHARGE(10) + CHARGE(20));
    ZT_EQ_INT(zl_q_records(q2), 1);
    ZT_EQ_INT(push_one(q2, 0, 0), ZL_Q_FULL);

    ZT_EQ_INT(atomic_load(&rd.calls), 0);
    ZT_EQ_INT(atomic_load(&wr.calls), 0);
    zl_q_unref(q);
    zl_q_unref(q);
    zl_q_unref(q2);
    zl_q_unref(q2);
    end_fini(&rd);
    end_fini(&wr);
}

/* An empty queue admits one record whatever its size; HWM 0 admits
 * everything; control frames bypass the HWM. */
static void q_empty_admits_one_and_unlimited(void)
{
    end_t rd, wr;
    end_init(&rd);
    end_init(&wr);
    zl_q_t *q = zl_q_new(100, end_of(&rd), end_of(&wr));
    ZT_EQ_INT(push_one(q, 500, 0), ZL_Q_OK); /* 564 > 100, but empty */
    ZT_EQ_U64(zl_q_bytes(q), CHARGE(500));
    ZT_EQ_INT(push_one(q, 0, 1), ZL_Q_FULL);
    zl_frame_t c = frame_copy(8, 9, ZMP_F_CONTROL);
    ZT_EQ_INT(zl_q_push(q, &c, 1, true), ZL_Q_OK);
    ZT_EQ_U64(zl_q_bytes(q), CHARGE(500) + CHARGE(8));
    ZT_EQ_INT(zl_q_records(q), 2);

    zl_q_t *u = zl_q_new(0, end_of(&rd), end_of(&wr));
    for (uint64_t i = 0; i < 1000; i++)
        ZT_EQ_INT(push_one(u, 300, i), ZL_Q_OK);
    ZT_EQ_U64(zl_q_bytes(u), 1000 * CHARGE(300));
    ZT_CHECK(zl_q_has_room(u, UINT64_MAX / 2));
    zl_q_unref(q);
    zl_q_unref(q);
    zl_q_unref(u);
    zl_q_unref(u);
    end_fini(&rd);
    end_fini(&wr);
}

/* ------------------------------------------- zl_q_t credit, notify */

/* An engine reader: bytes stay charged from zl_q_take_all until
 * zl_q_release; a refused writer is notified once, when bytes fall to
 * ceil(HWM / 2), not before; afterwards the push is admitted. */
static void q_release_wakes_writer_at_lwm(void)
{
    end_t rd, wr;
    end_init(&rd);
    end_init(&wr);
    const uint64_t hwm = 4 * CHARGE(100); /* 656; LWM 328 = 2 records */
    zl_q_t *q = zl_q_new(hwm, end_of(&rd), end_of(&wr));
    for (uint64_t i = 0; i < 4; i++)
        ZT_EQ_INT(push_one(q, 100, i), ZL_Q_OK);
    zl_fq_t out;
    zl_fq_init(&out);
    size_t frames = 0;
    ZT_EQ_U64(take_all(q, &out, &frames), 4 * CHARGE(100));
    ZT_EQ_INT(frames, 4);
    ZT_EQ_INT(zl_q_records(q), 0);
    ZT_EQ_U64(zl_q_bytes(q), hwm); /* in flight: still charged */
    ZT_EQ_INT(push_one(q, 100, 4), ZL_Q_FULL);

    zl_q_release(q, CHARGE(100)); /* 492 > 328 */
    ZT_EQ_INT(atomic_load(&wr.calls), 0);
    zl_q_release(q, CHARGE(100)); /* 328 = LWM */
    ZT_EQ_INT(atomic_load(&wr.calls), 1);
    zl_q_release(q, CHARGE(100)); /* no second edge */
    ZT_EQ_INT(atomic_load(&wr.calls), 1);
    ZT_EQ_U64(zl_q_bytes(q), CHARGE(100));
    ZT_EQ_INT(push_one(q, 100, 4), ZL_Q_OK);
    zl_q_release(q, CHARGE(100));
    ZT_EQ_U64(zl_q_bytes(q), CHARGE(100));
    ZT_EQ_INT(drain_in_order(&out, 0), 4);

    /* the charge of a second take counts only what was not in flight */
    ZT_EQ_U64(take_all(q, &out, &frames), CHARGE(100));
    ZT_EQ_INT(frames, 1);
    ZT_EQ_INT(drain_in_order(&out, 4), 1);
    zl_q_release(q, CHARGE(100));
    ZT_EQ_U64(zl_q_bytes(q), 0);
    ZT_EQ_INT(atomic_load(&wr.calls), 1);
    ZT_EQ_INT(atomic_load(&rd.calls), 0); /* the reader never waited */
    zl_fq_fini(&out);
    zl_q_unref(q);
    zl_q_unref(q);
    end_fini(&rd);
    end_fini(&wr);
}

/* A socket reader returns credit per record with zl_q_consume: lock-free
 * while no writer waits (bytes fold in when read or when admission needs
 * them), and it wakes a refused writer at the LWM, once. zl_q_has_room's
 * refusal registers the writer like a refused push. */
static void q_consume_wakes_writer_at_lwm(void)
{
    end_t rd, wr;
    end_init(&rd);
    end_init(&wr);
    const uint64_t hwm = 4 * CHARGE(50); /* LWM 2 records */
    zl_q_t *q = zl_q_new(hwm, end_of(&rd), end_of(&wr));
    for (uint64_t i = 0; i < 4; i++)
        ZT_EQ_INT(push_one(q, 50, i), ZL_Q_OK);
    zl_fq_t batch;
    zl_fq_init(&batch);
    size_t frames = 0;
    ZT_EQ_U64(take_all(q, &batch, &frames), hwm);

    /* no writer waiting: consuming wakes nobody; bytes fold in on read */
    zl_q_consume(q, CHARGE(50));
    ZT_EQ_U64(zl_q_bytes(q), 3 * CHARGE(50));
    ZT_EQ_INT(atomic_load(&wr.calls), 0);
    ZT_EQ_INT(push_one(q, 50, 4), ZL_Q_OK); /* fits again: 4 records */
    ZT_CHECK(!zl_q_has_room(q, CHARGE(50))); /* registers the writer */
    zl_q_consume(q, CHARGE(50)); /* 3 records > LWM */
    ZT_EQ_INT(atomic_load(&wr.calls), 0);
    zl_q_consume(q, CHARGE(50)); /* 2 records = LWM */
    ZT_EQ_INT(atomic_load(&wr.calls), 1);
    zl_q_consume(q, CHARGE(50));
    ZT_EQ_INT(atomic_load(&wr.calls), 1);
    ZT_EQ_U64(zl_q_bytes(q), CHARGE(50)); /* record 4, queued */
    ZT_EQ_INT(zl_q_records(q), 1);
    ZT_EQ_INT(drain_in_order(&batch, 0), 4);
    zl_fq_fini(&batch);
    zl_q_unref(q);
    zl_q_unref(q);
    end_fini(&rd);
    end_fini(&wr);
}

/* The reader is notified only when it found the queue empty (take_all or
 * poll_in) and a record arrives, once per such wait; closing the writer
 * notifies an idle reader and makes the next empty take report eof after
 * the last record. */
static void q_reader_notified_once_per_idle(void)
{
    end_t rd, wr;
    end_init(&rd);
    end_init(&wr);
    zl_q_t *q = zl_q_new(0, end_of(&rd), end_of(&wr));
    zl_fq_t out;
    zl_fq_init(&out);
    size_t frames = 0;

    ZT_EQ_INT(push_one(q, 1, 0), ZL_Q_OK); /* the reader never looked */
    ZT_EQ_INT(atomic_load(&rd.calls), 0);
    ZT_EQ_U64(take_all(q, &out, &frames), CHARGE(1));
    ZT_EQ_INT(push_one(q, 1, 1), ZL_Q_OK); /* a non-empty take: not idle */
    ZT_EQ_INT(atomic_load(&rd.calls), 0);
    take_all(q, &out, &frames);
    ZT_EQ_INT(frames, 1);
    bool eof = true;
    uint64_t charge = 0;
    ZT_EQ_INT(zl_q_take_all(q, &out, &charge, &eof), 0); /* empty: idle */
    ZT_CHECK(!eof);
    ZT_EQ_U64(charge, 0);
    ZT_EQ_INT(push_one(q, 1, 2), ZL_Q_OK);
    ZT_EQ_INT(atomic_load(&rd.calls), 1);
    ZT_EQ_INT(push_one(q, 1, 3), ZL_Q_OK);
    ZT_EQ_INT(atomic_load(&rd.calls), 1);

    /* poll_in: true while a record is queued, and marks idle when not */
    ZT_CHECK(zl_q_poll_in(q));
    take_all(q, &out, &frames);
    ZT_EQ_INT(frames, 2);
    ZT_CHECK(!zl_q_poll_in(q));
    ZT_EQ_INT(push_one(q, 1, 4), ZL_Q_OK);
    ZT_EQ_INT(atomic_load(&rd.calls), 2);

    /* inject: ignores the HWM and notifies nobody */
    take_all(q, &out, &frames);
    ZT_EQ_INT(zl_q_take_all(q, &out, &charge, &eof), 0);
    zl_frame_t notice = frame_copy(4, 7, 0);
    notice.seq = 5;
    zl_q_inject(q, &notice, 1);
    ZT_EQ_INT(zl_msg_size(&notice.msg), 0);
    ZT_EQ_INT(atomic_load(&rd.calls), 2);
    ZT_EQ_INT(zl_q_records(q), 1);

    /* close_writer: the queued record first, then eof */
    ZT_EQ_INT(zl_q_take_all(q, &out, &charge, &eof), 1);
    ZT_CHECK(!eof);
    ZT_EQ_INT(zl_q_take_all(q, &out, &charge, &eof), 0);
    ZT_CHECK(!eof);
    zl_q_close_writer(q); /* the reader is idle: told */
    ZT_EQ_INT(atomic_load(&rd.calls), 3);
    ZT_EQ_INT(zl_q_take_all(q, &out, &charge, &eof), 0);
    ZT_CHECK(eof);
    ZT_EQ_INT(drain_in_order(&out, 0), 6);
    ZT_EQ_INT(atomic_load(&wr.calls), 0);
    zl_fq_fini(&out);
    zl_q_unref(q);
    zl_q_unref(q);
    end_fini(&rd);
    end_fini(&wr);
}

/* An engine writer delivers whatever the HWM and learns when bytes
 * reached it; the reader, if idle, is notified once per delivery with
 * records. */
static void q_deliver_reports_full(void)
{
    end_t rd, wr;
    end_init(&rd);
    end_init(&wr);
    zl_q_t *q = zl_q_new(3 * CHARGE(10), end_of(&rd), end_of(&wr));
    zl_fq_t in, out;
    zl_fq_init(&in);
    zl_fq_init(&out);
    bool eof;
    uint64_t charge = 0;
    ZT_EQ_INT(zl_q_take_all(q, &out, &charge, &eof), 0); /* reader idle */

    for (uint64_t i = 0; i < 2; i++) {
        zl_frame_t *f = zl_fq_push(&in);
        *f = frame_copy(10, 1, 0);
        f->seq = i;
    }
    ZT_EQ_INT(zl_q_deliver(q, &in, 2, 2 * CHARGE(10)), ZL_Q_OK); /* 2 of 3 */
    ZT_EQ_INT(in.count, 0);
    ZT_EQ_INT(atomic_load(&rd.calls), 1);
    for (uint64_t i = 2; i < 5; i++) {
        zl_frame_t *f = zl_fq_push(&in);
        *f = frame_copy(10, 1, 0);
        f->seq = i;
    }
    ZT_EQ_INT(zl_q_deliver(q, &in, 3, 3 * CHARGE(10)), ZL_Q_FULL); /* 5 > 3: full */
    ZT_EQ_INT(atomic_load(&rd.calls), 1);              /* not idle now */
    ZT_EQ_INT(zl_q_records(q), 5);
    ZT_EQ_U64(zl_q_bytes(q), 5 * CHARGE(10));

    charge = 0;
    ZT_EQ_INT(zl_q_take_all(q, &out, &charge, &eof), 5);
    /* the writer registered: credit down to the LWM, ceil(222 / 2) = 111,
     * that is one record of 74 left, wakes it */
    zl_q_release(q, 2 * CHARGE(10)); /* 222 */
    zl_q_release(q, 1 * CHARGE(10)); /* 148 */
    ZT_EQ_INT(atomic_load(&wr.calls), 0);
    zl_q_release(q, 1 * CHARGE(10)); /* 74 */
    ZT_EQ_INT(atomic_load(&wr.calls), 1);
    zl_q_release(q, 1 * CHARGE(10));
    ZT_EQ_U64(zl_q_bytes(q), 0);
    ZT_EQ_INT(drain_in_order(&out, 0), 5);
    zl_fq_fini(&in);
    zl_fq_fini(&out);
    zl_q_unref(q);
    zl_q_unref(q);
    end_fini(&rd);
    end_fini(&wr);
}

/* ------------------------------------------------------ zl_q_t close */

/* Closing the reader releases every queued payload, refuses later pushes
 * (frames stay the caller's), wakes a refused writer, and turns a
 * delivery into a release; bytes in flight stay charged until returned.
 * The last unref releases what is still queued. */
static void q_close_reader(void)
{
    end_t rd, wr;
    end_init(&rd);
    end_init(&wr);
    atomic_store(&freed, 0);
    zl_q_t *q = zl_q_new(2 * CHARGE(100), end_of(&rd), end_of(&wr));
    zl_frame_t f = frame_ext(100, 0);
    ZT_EQ_INT(zl_q_push(q, &f, 1, false), ZL_Q_OK);
    zl_fq_t out;
    zl_fq_init(&out);
    size_t frames;
    take_all(q, &out, &frames); /* one record in flight */
    for (int i = 0; i < 2; i++) {
        f = frame_ext(100, 0);
        ZT_EQ_INT(zl_q_push(q, &f, 1, false), i == 0 ? ZL_Q_OK : ZL_Q_FULL);
    }
    ZT_CHECK(zl_msg_valid(&f.msg)); /* the refused one */
    ZT_EQ_INT(atomic_load(&freed), 0);

    zl_q_close_reader(q);
    ZT_EQ_INT(atomic_load(&freed), 1); /* the queued one */
    ZT_EQ_INT(atomic_load(&wr.calls), 1);
    ZT_EQ_INT(zl_q_records(q), 0);
    ZT_EQ_U64(zl_q_bytes(q), CHARGE(100)); /* the one in flight */
    ZT_EQ_INT(zl_q_push(q, &f, 1, false), ZL_Q_CLOSED);
    ZT_EQ_INT(zl_q_push(q, &f, 1, true), ZL_Q_CLOSED);
    ZT_CHECK(zl_msg_valid(&f.msg));
    ZT_EQ_INT(zl_msg_size(&f.msg), 100);
    ZT_CHECK(!zl_q_has_room(q, 1));
    zl_msg_release(&f.msg);
    ZT_EQ_INT(atomic_load(&freed), 2);

    zl_fq_t in;
    zl_fq_init(&in);
    *zl_fq_push(&in) = frame_ext(100, 0);
    ZT_EQ_INT(zl_q_deliver(q, &in, 1, CHARGE(100)), ZL_Q_CLOSED);
    ZT_EQ_INT(atomic_load(&freed), 3);
    ZT_EQ_INT(in.count, 0);
    zl_fq_fini(&in);

    zl_q_release(q, CHARGE(100));
    ZT_EQ_U64(zl_q_bytes(q), 0);
    zl_fq_fini(&out); /* the in-flight payload, released by its reader */
    ZT_EQ_INT(atomic_load(&freed), 4);
    zl_q_unref(q);
    zl_q_unref(q);

    /* unref with records still queued */
    q = zl_q_new(0, end_of(&rd), end_of(&wr));
    for (int i = 0; i < 3; i++) {
        f = frame_ext(10, 0);
        ZT_EQ_INT(zl_q_push(q, &f, 1, false), ZL_Q_OK);
    }
    zl_q_unref(q);
    ZT_EQ_INT(atomic_load(&freed), 4); /* one end left */
    zl_q_unref(q);
    ZT_EQ_INT(atomic_load(&freed), 7);
    end_fini(&rd);
    end_fini(&wr);
}

/* ------------------------------------------------- zl_q_t controls */

/* A named control replaces the still-queued control of the same name
 * (the latest wins, queued at the end); other records and controls of
 * other names keep their order; the charge follows. */
static void q_push_control_latest(void)
{
    end_t rd, wr;
    end_init(&rd);
    end_init(&wr);
    zl_q_t *q = zl_q_new(0, end_of(&rd), end_of(&wr));
    static const char w1[] = "WEIGHT1", w2[] = "WEIGHT2", s1[] = "SUBSCRB";
    zl_frame_t f;

    ZT_EQ_INT(push_one(q, 10, 0), ZL_Q_OK);
    f = frame_copy(0, 0, ZMP_F_CONTROL);
    ZT_EQ_INT(zl_msg_init_copy(&f.msg, w1, 7), 0);
    f.seq = 100;
    ZT_EQ_INT(zl_q_push_control_latest(q, &f, "WEIGHT", 6), ZL_Q_OK);
    f = frame_copy(0, 0, ZMP_F_CONTROL);
    ZT_EQ_INT(zl_msg_init_copy(&f.msg, s1, 7), 0);
    f.seq = 200;
    ZT_EQ_INT(zl_q_push_control_latest(q, &f, "SUBSCR", 6), ZL_Q_OK);
    ZT_EQ_INT(push_one(q, 10, 1), ZL_Q_OK);
    ZT_EQ_INT(zl_q_records(q), 4);
    ZT_EQ_U64(zl_q_bytes(q), 2 * CHARGE(10) + 2 * CHARGE(7));

    f = frame_copy(0, 0, ZMP_F_CONTROL);
    ZT_EQ_INT(zl_msg_init_copy(&f.msg, w2, 7), 0);
    f.seq = 101;
    ZT_EQ_INT(zl_q_push_control_latest(q, &f, "WEIGHT", 6), ZL_Q_OK);
    ZT_EQ_INT(zl_q_records(q), 4);
    ZT_EQ_U64(zl_q_bytes(q), 2 * CHARGE(10) + 2 * CHARGE(7));

    zl_fq_t out;
    zl_fq_init(&out);
    size_t frames;
    take_all(q, &out, &frames);
    ZT_EQ_INT(frames, 4);
    const uint64_t want[] = {0, 200, 1, 101};
    for (int i = 0; i < 4; i++) {
        zl_frame_t *x = zl_fq_front(&out);
        ZT_EQ_U64(x->seq, want[i]);
        if (x->seq == 101)
            ZT_EQ_MEM(zl_msg_data(&x->msg), w2, 7);
        zl_msg_release(&x->msg);
        zl_fq_pop(&out);
    }
    zl_fq_fini(&out);

    /* the inproc control side queue: FIFO, and gone once the reader is */
    zl_frame_t c = frame_copy(3, 1, ZMP_F_CONTROL);
    c.seq = 1;
    zl_q_push_ctl(q, &c);
    c = frame_copy(3, 2, ZMP_F_CONTROL);
    c.seq = 2;
    zl_q_push_ctl(q, &c);
    ZT_EQ_INT(zl_q_records(q), 0); /* beside the records, not among them */
    zl_frame_t got;
    ZT_CHECK(zl_q_pop_ctl(q, &got));
    ZT_EQ_U64(got.seq, 1);
    zl_msg_release(&got.msg);
    ZT_CHECK(zl_q_pop_ctl(q, &got));
    ZT_EQ_U64(got.seq, 2);
    zl_msg_release(&got.msg);
    ZT_CHECK(!zl_q_pop_ctl(q, &got));
    zl_q_close_reader(q);
    atomic_store(&freed, 0);
    c = frame_ext(5, ZMP_F_CONTROL);
    zl_q_push_ctl(q, &c); /* released at once */
    ZT_EQ_INT(atomic_load(&freed), 1);
    ZT_CHECK(!zl_q_pop_ctl(q, &got));
    f = frame_copy(4, 0, ZMP_F_CONTROL);
    ZT_EQ_INT(zl_q_push_control_latest(q, &f, "WEIG", 4), ZL_Q_CLOSED);
    ZT_CHECK(zl_msg_valid(&f.msg));
    zl_msg_release(&f.msg);
    ZT_EQ_INT(atomic_load(&rd.calls), 0);
    zl_q_unref(q);
    zl_q_unref(q);
    end_fini(&rd);
    end_fini(&wr);
}

/* ------------------------------------------------------- two threads */

enum { STREAM_RECORDS = 20000 };

typedef struct flow {
    zl_q_t *q;
    end_t rd, wr;
} flow_t;

static void *writer_main(void *arg)
{
    flow_t *fl = arg;
    for (uint64_t i = 0; i < STREAM_RECORDS;) {
        int seen = atomic_load(&fl->wr.calls);
        zl_frame_t f = frame_copy((size_t)(i % 200), (unsigned char)i, 0);
        f.seq = i;
        int r = zl_q_push(fl->q, &f, 1, false);
        if (r == ZL_Q_OK) {
            i++;
            continue;
        }
        ZT_EQ_INT(r, ZL_Q_FULL);
        zl_msg_release(&f.msg);
        end_wait_past(&fl->wr, seen); /* the reader's credit will come */
    }
    zl_q_close_writer(fl->q);
    return NULL;
}

/* A writer and a socket-style reader (take_all, then zl_q_consume per
 * record) under a HWM of a few records, each waiting only for the other
 * side's notify: every record arrives once, in order, with its payload,
 * then eof; bytes never exceed HWM plus one record; nothing is left. */
static void q_two_threads_no_lost_wakeup(void)
{
    static flow_t fl;
    end_init(&fl.rd);
    end_init(&fl.wr);
    const uint64_t hwm = 4 * CHARGE(200);
    fl.q = zl_q_new(hwm, end_of(&fl.rd), end_of(&fl.wr));
    pthread_t w;
    ZT_EQ_INT(pthread_create(&w, NULL, writer_main, &fl), 0);
    zl_fq_t batch;
    zl_fq_init(&batch);
    uint64_t next = 0;
    for (;;) {
        int seen = atomic_load(&fl.rd.calls);
        uint64_t charge = 0;
        bool eof = false;
        size_t n = zl_q_take_all(fl.q, &batch, &charge, &eof);
        if (n == 0) {
            if (eof)
                break;
            end_wait_past(&fl.rd, seen);
            continue;
        }
        ZT_CHECK(charge <= hwm + CHARGE(200));
        while (batch.count > 0) {
            zl_frame_t *f = zl_fq_front(&batch);
            ZT_EQ_U64(f->seq, next);
            ZT_EQ_INT(zl_msg_size(&f->msg), next % 200);
            if (next % 200 > 0)
                ZT_EQ_INT(((unsigned char *)zl_msg_data(&f->msg))[0], (unsigned char)next);
            uint64_t c = zl_frame_charge(f);
            zl_msg_release(&f->msg);
            zl_fq_pop(&batch);
            zl_q_consume(fl.q, c);
            next++;
        }
    }
    ZT_EQ_INT(pthread_join(w, NULL), 0);
    ZT_EQ_U64(next, STREAM_RECORDS);
    ZT_EQ_U64(zl_q_bytes(fl.q), 0);
    ZT_EQ_INT(zl_q_records(fl.q), 0);
    zl_fq_fini(&batch);
    zl_q_unref(fl.q);
    zl_q_unref(fl.q);
    end_fini(&fl.rd);
    end_fini(&fl.wr);
}

static const zt_case_t cases[] = {
    ZT_CASE(fq_order_across_chunks),
    ZT_CASE(fq_splice),
    ZT_CASE(fq_clear_and_fini_release_payloads),
    ZT_CASE(q_charge_and_hwm),
    ZT_CASE(q_empty_admits_one_and_unlimited),
    ZT_CASE(q_release_wakes_writer_at_lwm),
    ZT_CASE(q_consume_wakes_writer_at_lwm),
    ZT_CASE(q_reader_notified_once_per_idle),
    ZT_CASE(q_deliver_reports_full),
    ZT_CASE(q_close_reader),
    ZT_CASE(q_push_control_latest),
    ZT_CASE(q_two_threads_no_lost_wakeup),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
