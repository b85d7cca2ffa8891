/*
 * io.c — I/O threads: one libuv loop per thread, and the only doorway into
 * it from other threads.
 *
 * Design notes
 *  - Owns: the uv_loop_t, its uv_async_t wake-up handle, the thread, the
 *    task stack, the pool of closed connections (type-stable memory, see
 *    engine_int.h), the per-io count of live engine objects, and the
 *    descriptor of the peer-close set of paused connections (conn_read.c
 *    makes and uses it; it is closed here at the end).
 *  - Threads: the loop thread runs every callback. zl_io_post and
 *    zl_io_call may be called from any thread.
 *  - Task stack (MPSC, lock-free): posters push with a CAS on io->tasks; the
 *    poster that finds the stack empty sends the wake-up, so a burst of
 *    posts costs one uv_async_send. The loop takes the whole stack with one
 *    exchange, reverses it (oldest first) and runs it. A poster that pushes
 *    after the exchange finds the stack empty again and wakes the loop
 *    again, so nothing is stranded. Exchange-all cannot suffer ABA.
 *  - Locks: none, except the mutex + condvar a zl_io_call waiter sleeps on.
 *  - Spinning (low-latency mode, ZLINK_IO_SPIN_US): with a window set, the
 *    loop polls (uv_run NOWAIT plus the task stack) instead of sleeping
 *    for as long as something happened within the last window, then sleeps
 *    as usual; while it polls, io->spinning is 1 and a poster skips the
 *    uv_async_send. The poster's push and the loop's clearing of spinning
 *    are both followed by a sequentially consistent read of the other
 *    word, so either the poster sees 0 and wakes the loop, or the loop
 *    sees the task. Adaptive: after a quiet window the loop spins again
 *    only when its sleep ended within one window, or on every eighth
 *    sleep as a probe; an idle loop sleeps and costs nothing.
 *  - Signals: the thread runs with every signal blocked (see zl_io_new), so
 *    a reset peer cannot kill the process with SIGPIPE.
 *  - Shutdown (zl_io_destroy): a stop task marks the io stopping; once no
 *    live object remains (connections lingering on output keep it alive),
 *    the loop closes every handle left (uv_walk) including the wake-up, so
 *    uv_run returns; the thread runs any straggling tasks and exits; the
 *    destroyer joins it, closes the loop and frees the pooled connections.
 */
#include "engine_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t zl_tran_next_id(void)
{
    static _Atomic uint64_t next = 1;
    return atomic_fetch_add(&next, 1);
}

/* The io whose loop runs on this thread, or NULL. */
static _Thread_local zl_io_t *io_current;

bool zl_io_on_loop(const zl_io_t *io)
{
    return io_current == io;
}

/* Runs every queued task, oldest first. Loop thread. */
static void io_run_tasks(zl_io_t *io)
{
    zl_task_t *t = atomic_exchange_explicit(&io->tasks, NULL, memory_order_acquire);
    zl_task_t *fifo = NULL;
    if (t != NULL)
        io->activity++;
    while (t != NULL) {
        zl_task_t *next = t->next;
        t->next = fifo;
        fifo = t;
        t = next;
    }
    while (fifo != NULL) {
        zl_task_t *next = fifo->next;
        fifo->fn(fifo);  /* may free fifo */
        fifo = next;
    }
}

static void io_on_wake(uv_async_t *a)
{
    io_run_tasks(a->data);
}

void zl_io_post(zl_io_t *io, zl_task_t *t)
{
    zl_task_t *head = atomic_load_explicit(&io->tasks, memory_order_relaxed);
    do {
        t->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&io->tasks, &head, t, memory_order_seq_cst,
                                                    memory_order_relaxed));
    if (head == NULL && !atomic_load(&io->spinning) &&
        !atomic_load_explicit(&io->closed, memory_order_acquire))
        uv_async_send(&io->wake);
}

void zl_io_set_spin(zl_io_t *io, int64_t ns)
{
    atomic_store_explicit(&io->spin_ns, ns, memory_order_relaxed);
}

/* Polls for one window past the last activity; returns whether the loop
 * still has live handles (uv_run's answer) and sets *busy when anything
 * ran. Loop thread. */
static int io_spin(zl_io_t *io, int64_t ns, bool *busy)
{
    int alive = 1;
    uint64_t seen = io->activity;
    zl_spin_t sp;
    *busy = false;
    atomic_store(&io->spinning, 1);
    zl_spin_begin(&sp, ns);
    for (;;) {
        if (atomic_load_explicit(&io->tasks, memory_order_relaxed) != NULL)
            io_run_tasks(io);
        alive = uv_run(&io->loop, UV_RUN_NOWAIT);
        if (alive == 0 || io->stopping)
            break;
        if (io->activity != seen) {
            seen = io->activity;
            *busy = true;
            zl_spin_begin(&sp, ns);
        } else if (!zl_spin_step(&sp)) {
            break;
        }
    }
    atomic_store(&io->spinning, 0);
    /* A poster that saw spinning == 1 did not wake us: take its task. */
    if (atomic_load(&io->tasks) != NULL)
        io_run_tasks(io);
    return alive;
}

/* The loop: one sleep at a time (so a window set later is seen at the next
 * wake-up), polling between them while a window is set ("Spinning"). */
static void io_loop(zl_io_t *io)
{
    bool hot = true;
    unsigned cold = 0;
    for (;;) {
        int64_t ns = atomic_load_explicit(&io->spin_ns, memory_order_relaxed);
        if (ns > 0 && !io->stopping && (hot || (++cold & 7) == 0)) {
            bool busy;
            if (io_spin(io, ns, &busy) == 0)
                return;
            hot = busy;
        }
        int64_t t0 = ns > 0 ? zl_clock_ns() : 0;
        if (uv_run(&io->loop, UV_RUN_ONCE) == 0)
            return;
        if (ns > 0)
            hot = zl_clock_ns() - t0 <= ns;
    }
}

/* ---------------------------------------------------------- zl_io_call */

typedef struct io_call {
    zl_task_t task;
    void (*fn)(void *arg);
    void *arg;
    zl_mutex_t lk;
    zl_cond_t cv;
    bool done;
} io_call_t;

static void io_call_run(zl_task_t *t)
{
    io_call_t *c = (io_call_t *)t;
    c->fn(c->arg);
    zl_mutex_lock(&c->lk);
    c->done = true;
    zl_cond_signal(&c->cv);
    zl_mutex_unlock(&c->lk);
}

void zl_io_call(zl_io_t *io, void (*fn)(void *arg), void *arg)
{
    if (io_current == io) {
        fn(arg);
        return;
    }
    io_call_t c;
    memset(&c, 0, sizeof c);
    c.task.fn = io_call_run;
    c.fn = fn;
    c.arg = arg;
    zl_mutex_init(&c.lk);
    zl_cond_init(&c.cv);
    zl_io_post(io, &c.task);
    zl_mutex_lock(&c.lk);
    while (!c.done)
        zl_cond_wait_until(&c.cv, &c.lk, -1);
    zl_mutex_unlock(&c.lk);
    zl_cond_fini(&c.cv);
    zl_mutex_fini(&c.lk);
}

/* ------------------------------------------------------------ lifecycle */

static void io_close_walk(uv_handle_t *h, void *arg)
{
    ZL_UNUSED(arg);
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

/* Stopping and idle: close whatever is left so uv_run returns. */
static void io_finish(zl_io_t *io)
{
    atomic_store_explicit(&io->closed, true, memory_order_release);
    uv_walk(&io->loop, io_close_walk, NULL);
}

void zl_io_live_add(zl_io_t *io, int delta)
{
    io->live += delta;
    if (io->live == 0 && io->stopping)
        io_finish(io);
}

static void io_on_stop(zl_task_t *t)
{
    zl_io_t *io = (zl_io_t *)((char *)t - offsetof(zl_io_t, stop_task));
    io->stopping = true;
    if (io->live == 0)
        io_finish(io);
}

static void *io_main(void *arg)
{
    zl_io_t *io = arg;
    io_current = io;
#if defined(__linux__)
    pthread_setname_np(pthread_self(), io->name);
#endif
    io_loop(io);
    /* Tasks posted after the wake-up closed (none expected) still run, so a
     * zl_io_call never waits forever. */
    io_run_tasks(io);
    io_current = NULL;
    return NULL;
}

zl_io_t *zl_io_new(const char *name)
{
    zl_io_t *io = calloc(1, sizeof *io);
    if (io == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    snprintf(io->name, sizeof io->name, "%s", name != NULL ? name : "zlink/IO");
    io->hup_fd = -1;
    int rc = uv_loop_init(&io->loop);
    if (rc != 0) {
        free(io);
        errno = -rc;
        return NULL;
    }
    rc = uv_async_init(&io->loop, &io->wake, io_on_wake);
    if (rc != 0) {
        uv_loop_close(&io->loop);
        free(io);
        errno = -rc;
        return NULL;
    }
    io->wake.data = io;
    io->stop_task.fn = io_on_stop;
    zl_io_hup_init(io); /* on failure paused conns go unwatched */
    /* The thread starts with every signal blocked (it inherits this mask):
     * application handlers never run on it, and a write to a connection
     * the peer reset raises SIGPIPE only as a pending, blocked signal of
     * this thread instead of killing the process (libuv writes with plain
     * write(2), without MSG_NOSIGNAL). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&io->thread, NULL, io_main, io);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        uv_walk(&io->loop, io_close_walk, NULL); /* the wake-up and the peer-close poll */
        uv_run(&io->loop, UV_RUN_DEFAULT);
        uv_loop_close(&io->loop);
        if (io->hup_fd >= 0)
            close(io->hup_fd);
        free(io);
        errno = rc;
        return NULL;
    }
    return io;
}

void zl_io_destroy(zl_io_t *io)
{
    if (io == NULL)
        return;
    zl_io_post(io, &io->stop_task);
    pthread_join(io->thread, NULL);
    /* Handles closed during the last tasks need one more turn. */
    while (uv_loop_close(&io->loop) == UV_EBUSY) {
        uv_walk(&io->loop, io_close_walk, NULL);
        uv_run(&io->loop, UV_RUN_NOWAIT);
    }
    if (io->hup_fd >= 0)
        close(io->hup_fd); /* its poll handle was closed with the others */
    zl_conn_t *c = io->every;
    while (c != NULL) {
        zl_conn_t *next = c->every_next;
        free(c);
        c = next;
    }
    free(io);
}
