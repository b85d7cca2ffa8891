/*
 * dispatch.c — the process-wide completion dispatcher (seed 000 §10-11).
 *
 * Design notes
 * ------------
 * Owns, for the whole process:
 *  - the Core context every host's sockets live in (so inproc links work
 *    between hosts of one process);
 *  - the operation slots: ZLINK_DISPATCHER_CAPACITY entries. A call takes
 *    one when it is accepted and gives it back when its callback has
 *    returned (or its waiter has taken the outcome), so in-flight
 *    operations plus queued or running callbacks never exceed the cap and
 *    queuing a callback can never fail. A slot's index and generation make
 *    the ReplyRouteId and the Core user_context of the call's record;
 *  - the deadline heap of pending calls;
 *  - the completion lane: one thread, the DISPATCHER, runs every callback
 *    one at a time. A call started with zlink_call_start_held keeps its
 *    slot (and its count in the host's callbacks_queued, which shutdown's
 *    drain waits for) after fn returned, until the binding calls
 *    zlink_call_callback_done from whichever thread ran the language's
 *    callback: a binding can hand the outcome to its own executor, return
 *    at once, and still have a callback blocked in user code count
 *    against the cap (seed 000 §17). It also owns the completion queue of every framework
 *    socket (replies, WRITABLE edges) and fires deadlines. A callback is
 *    queued by whichever path won the call (zf_call_finish) and runs at the
 *    top of the dispatcher's loop, after the record or timer that decided
 *    it has been handled: a new turn, never the submitter's stack or the
 *    transport's.
 *
 * Lock: zf_disp.lk guards all of it. The thread drops it around Core calls
 * and callbacks. Sockets are added to and removed from its poller only by
 * the thread itself (commands), because a poller cannot change while it
 * waits.
 */
#include "fw.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct zf_disp zf_disp = {
    .lk = PTHREAD_MUTEX_INITIALIZER,
    .waiters = PTHREAD_COND_INITIALIZER,
};

static pthread_mutex_t init_lk = PTHREAD_MUTEX_INITIALIZER;

enum { CMD_WATCH = 1, CMD_UNWATCH };

typedef struct zf_cmd {
    int what;
    zf_sock_t *sock;
    int result;
    bool done;
    struct zf_cmd *next;
} zf_cmd_t;

/* ------------------------------------------------------------- slots */

static int slots_init(void)
{
    if (zf_disp.slots != NULL)
        return 0;
    uint32_t n = ZLINK_DISPATCHER_CAPACITY;
    zf_disp.slots = calloc(n, sizeof *zf_disp.slots);
    zf_disp.gens = calloc(n, sizeof *zf_disp.gens);
    zf_disp.free_list = calloc(n, sizeof *zf_disp.free_list);
    if (zf_disp.slots == NULL || zf_disp.gens == NULL || zf_disp.free_list == NULL) {
        free(zf_disp.slots);
        free(zf_disp.gens);
        free(zf_disp.free_list);
        zf_disp.slots = NULL;
        return ZLINK_FW_INTERNAL_FAILURE;
    }
    for (uint32_t i = 0; i < n; i++)
        zf_disp.free_list[i] = n - 1 - i;
    zf_disp.free_count = n;
    /* OperationId high word: this process lifecycle, random where the
     * platform gives randomness, never zero. */
    uint64_t r = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f != NULL) {
        if (fread(&r, sizeof r, 1, f) != 1)
            r = 0;
        fclose(f);
    }
    if (r == 0)
        r = ((uint64_t)getpid() << 32) ^ (uint64_t)zf_now_ns();
    zf_disp.op_high = r | 1;
    return 0;
}

int zf_disp_reserve(zf_call_t *c)
{
    if (zf_disp.free_count == 0)
        return ZLINK_FW_CAPACITY_EXCEEDED;
    uint32_t i = zf_disp.free_list[--zf_disp.free_count];
    uint32_t g = ++zf_disp.gens[i];
    if (g == 0)
        g = zf_disp.gens[i] = 1;
    zf_disp.slots[i] = c;
    zf_disp.in_use++;
    c->slot = i;
    c->gen = g;
    c->counted = true;
    c->op_high = zf_disp.op_high;
    c->op_low = ++zf_disp.op_low_next;
    c->route_id = ((uint64_t)g << 16) | i;
    return 0;
}

void zf_disp_unreserve(zf_call_t *c)
{
    if (!c->counted)
        return;
    c->counted = false;
    zf_disp.slots[c->slot] = NULL;
    zf_disp.free_list[zf_disp.free_count++] = c->slot;
    zf_disp.in_use--;
}

void zf_disp_callback_closed(zf_call_t *c)
{
    c->state = ZF_ST_CLOSED;
    zf_disp_unreserve(c);
    if (c->host != NULL)
        c->host->callbacks_queued--;
    pthread_cond_broadcast(&zf_disp.waiters);
}

zf_call_t *zf_disp_call_of(uint64_t uctx)
{
    if (!(uctx & ZF_UCTX_CALL))
        return NULL;
    uint32_t slot = (uint32_t)(uctx & 0xFFFF);
    uint32_t gen = (uint32_t)((uctx >> 16) & 0xFFFFFFFFu);
    zf_call_t *c = NULL;
    pthread_mutex_lock(&zf_disp.lk);
    if (zf_disp.slots != NULL && slot < ZLINK_DISPATCHER_CAPACITY &&
        zf_disp.slots[slot] != NULL && zf_disp.gens[slot] == gen) {
        c = zf_disp.slots[slot];
        zf_obj_ref(&c->obj);
    }
    pthread_mutex_unlock(&zf_disp.lk);
    return c;
}

/* ---------------------------------------------------------- deadlines */

static bool earlier(size_t a, size_t b)
{
    return zf_disp.heap[a]->deadline < zf_disp.heap[b]->deadline;
}

static void heap_swap(size_t a, size_t b)
{
    zf_call_t *t = zf_disp.heap[a];
    zf_disp.heap[a] = zf_disp.heap[b];
    zf_disp.heap[b] = t;
    zf_disp.heap[a]->heap_index = a + 1;
    zf_disp.heap[b]->heap_index = b + 1;
}

static void heap_up(size_t i)
{
    while (i > 0 && earlier(i, (i - 1) / 2)) {
        heap_swap(i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_down(size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < zf_disp.heap_len && earlier(l, m))
            m = l;
        if (r < zf_disp.heap_len && earlier(r, m))
            m = r;
        if (m == i)
            return;
        heap_swap(i, m);
        i = m;
    }
}

static void heap_remove(zf_call_t *c)
{
    if (c->heap_index == 0)
        return;
    size_t i = c->heap_index - 1;
    size_t last = --zf_disp.heap_len;
    c->heap_index = 0;
    if (i != last) {
        zf_disp.heap[i] = zf_disp.heap[last];
        zf_disp.heap[i]->heap_index = i + 1;
        heap_down(i);
        heap_up(i);
    }
}

/* The heap never grows past the number of slots (one entry per pending
 * call), so it is allocated once at that size. */
void zf_disp_set_deadline(zf_call_t *c, int64_t deadline)
{
    heap_remove(c);
    c->deadline = deadline;
    if (deadline == 0)
        return;
    zf_disp.heap[zf_disp.heap_len] = c;
    c->heap_index = ++zf_disp.heap_len;
    heap_up(zf_disp.heap_len - 1);
    if (zf_disp.sleeping && (zf_disp.armed == 0 || deadline < zf_disp.armed)) {
        zf_disp.armed = deadline;
        uint64_t one = 1;
        if (write(zf_disp.wake_fd, &one, sizeof one) < 0) {
            /* the counter is saturated: the thread is awake anyway */
        }
    }
}

/* ------------------------------------------------------------ the lane */

bool zf_disp_queue_callback(zf_call_t *c)
{
    c->next_cb = NULL;
    if (zf_disp.cb_tail != NULL)
        zf_disp.cb_tail->next_cb = c;
    else
        zf_disp.cb_head = c;
    zf_disp.cb_tail = c;
    if (c->host != NULL)
        c->host->callbacks_queued++;
    return zf_disp.sleeping && !pthread_equal(pthread_self(), zf_disp.thread);
}

void zf_disp_wake(void)
{
    uint64_t one = 1;
    if (zf_disp.wake_fd > 0 && write(zf_disp.wake_fd, &one, sizeof one) < 0) {
        /* saturated counter: a wake-up is pending anyway */
    }
}

/* Runs queued callbacks, each on its own turn. Called by the thread with
 * zf_disp.lk held; drops it around each callback. */
static void run_callbacks(void)
{
    zf_call_t *done = NULL; /* closed, its runtime reference still to drop */
    while (zf_disp.cb_head != NULL) {
        zf_call_t *c = zf_disp.cb_head;
        zf_disp.cb_head = c->next_cb;
        if (zf_disp.cb_head == NULL)
            zf_disp.cb_tail = NULL;
        c->hold_ran = true; /* from here on zlink_call_callback_done is allowed */
        pthread_mutex_unlock(&zf_disp.lk);
        if (done != NULL)
            zf_obj_unref(&done->obj);
        done = NULL;
        if (c->fn != NULL)
            c->fn((zlink_call_t *)c->obj.handle, &c->outcome, c->user);
        pthread_mutex_lock(&zf_disp.lk);
        if (c->held && !c->hold_done) {
            /* A held start: the binding's callback has not returned yet.
             * The slot, the host's callback count and the runtime's
             * reference stay until zlink_call_callback_done. */
            c->hold_returned = true;
            continue;
        }
        zf_disp_callback_closed(c);
        done = c;
    }
    if (done != NULL) {
        pthread_mutex_unlock(&zf_disp.lk);
        zf_obj_unref(&done->obj); /* outside the lock: it may free the call */
        pthread_mutex_lock(&zf_disp.lk);
    }
}

/* Fires due deadlines. With zf_disp.lk held; drops it around finishing. */
static void fire_deadlines(void)
{
    int64_t now = zf_now_ns();
    while (zf_disp.heap_len > 0 && zf_disp.heap[0]->deadline <= now) {
        zf_call_t *c = zf_disp.heap[0];
        heap_remove(c);
        zf_obj_ref(&c->obj);
        pthread_mutex_unlock(&zf_disp.lk);
        zf_call_finish(c, ZLINK_FW_DEADLINE_EXCEEDED, 0, "deadline exceeded");
        zf_obj_unref(&c->obj);
        pthread_mutex_lock(&zf_disp.lk);
    }
}

/* A control request's outcome (HELLO -> ADMIT/REJECT, PROBE -> ACK) goes
 * to the peer's host, whose ingress thread owns the peer. */
static void control_done(uint64_t uctx, zlink_completion_t *rec)
{
    zf_peer_t *peer = (zf_peer_t *)(uintptr_t)(uctx & ~(uint64_t)7);
    zf_hmsg_t *m = calloc(1, sizeof *m);
    if (m == NULL)
        return; /* the peer's liveness deadline covers a lost answer */
    m->what = (uctx & 7) == ZF_UCTX_HELLO ? ZF_HMSG_HELLO_DONE : ZF_HMSG_PROBE_DONE;
    m->peer = peer;
    m->result = rec->request_result;
    if (rec->request_result == ZLINK_REQUEST_OK && rec->reply_part_count <= 3) {
        for (size_t i = 0; i < rec->reply_part_count; i++) {
            zlink_msg_init(&m->parts[i]);
            zlink_msg_move(&m->parts[i], &rec->reply_parts[i]);
        }
        m->nparts = rec->reply_part_count;
    }
    zf_host_post(peer->mesh->sock->host, m);
}

/* Drains up to a batch of one socket's completion records. */
static void drain_completions(zf_sock_t *s)
{
    for (int i = 0; i < 256; i++) {
        zlink_completion_t rec;
        memset(&rec, 0, sizeof rec);
        rec.struct_size = sizeof rec;
        if (zlink_completion_recv(s->s, &rec, ZLINK_RECV_FLAGS_DONTWAIT) != ZLINK_RECV_OK)
            return;
        uint64_t uctx = (uint64_t)(uintptr_t)rec.user_context;
        if (uctx & ZF_UCTX_CALL) {
            zf_call_t *c = zf_disp_call_of(uctx);
            if (c != NULL) {
                if (rec.kind == ZLINK_COMPLETION_REQUEST)
                    zf_call_finish_reply(c, &rec);
                else if (rec.kind == ZLINK_COMPLETION_WRITABLE)
                    zf_call_on_writable(c, &rec);
                zf_obj_unref(&c->obj);
            }
        } else if (uctx != 0 && rec.kind == ZLINK_COMPLETION_REQUEST) {
            control_done(uctx, &rec);
        }
        zlink_completion_close(&rec);
    }
}

void zf_disp_watch_locked(zf_sock_t *s)
{
    if (s->watched || s->watch_pending)
        return;
    s->watch_pending = true;
    s->next_watch = zf_disp.watch_list;
    zf_disp.watch_list = s;
    if (!pthread_equal(pthread_self(), zf_disp.thread))
        zf_disp_wake();
}

static void run_commands(void)
{
    while (zf_disp.watch_list != NULL) {
        zf_sock_t *s = zf_disp.watch_list;
        zf_disp.watch_list = s->next_watch;
        s->watch_pending = false;
        pthread_mutex_unlock(&zf_disp.lk);
        int rc = zlink_poller_add(zf_disp.poller, s->s, s, ZLINK_POLLCOMPLETION);
        pthread_mutex_lock(&zf_disp.lk);
        s->watched = rc == ZLINK_CONFIG_OK || rc == ZLINK_CONFIG_CONFLICT;
    }
    while (zf_disp.cmd_head != NULL) {
        zf_cmd_t *cmd = zf_disp.cmd_head;
        zf_disp.cmd_head = cmd->next;
        if (zf_disp.cmd_head == NULL)
            zf_disp.cmd_tail = NULL;
        pthread_mutex_unlock(&zf_disp.lk);
        int rc;
        if (cmd->what == CMD_WATCH)
            rc = zlink_poller_add(zf_disp.poller, cmd->sock->s, cmd->sock, ZLINK_POLLCOMPLETION);
        else
            rc = zlink_poller_remove(zf_disp.poller, cmd->sock->s);
        pthread_mutex_lock(&zf_disp.lk);
        cmd->sock->watched = cmd->what == CMD_WATCH && rc == ZLINK_CONFIG_OK;
        cmd->result = rc;
        cmd->done = true;
        pthread_cond_broadcast(&zf_disp.waiters);
    }
}

static void *disp_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "zf/dispatch");
    zf_ctx_enter();
    zlink_poller_event_t ev[32];
    pthread_mutex_lock(&zf_disp.lk);
    while (!zf_disp.stop) {
        run_commands();
        fire_deadlines();
        run_callbacks();
        /* run_callbacks and the steps before it drop the lock: a callback
         * or command queued meanwhile found the thread awake (no wake-up
         * written), so look again before sleeping. */
        if (zf_disp.cmd_head != NULL || zf_disp.cb_head != NULL || zf_disp.watch_list != NULL)
            continue;
        long timeout = -1;
        zf_disp.armed = 0;
        if (zf_disp.heap_len > 0) {
            int64_t d = zf_disp.heap[0]->deadline - zf_now_ns();
            timeout = d <= 0 ? 0 : (long)((d + 999999) / 1000000);
            zf_disp.armed = zf_disp.heap[0]->deadline;
        }
        zf_disp.sleeping = true;
        pthread_mutex_unlock(&zf_disp.lk);
        int n = zlink_poller_wait(zf_disp.poller, ev, 32, timeout, NULL);
        for (int i = 0; i < n; i++) {
            if (ev[i].source_kind == ZLINK_POLLER_SOURCE_FD) {
                uint64_t v;
                if (read(zf_disp.wake_fd, &v, sizeof v) < 0) {
                    /* EAGAIN: another reader drained it */
                }
            } else if (ev[i].user_data != NULL) {
                drain_completions(ev[i].user_data);
            }
        }
        pthread_mutex_lock(&zf_disp.lk);
        zf_disp.sleeping = false;
    }
    run_commands();
    pthread_mutex_unlock(&zf_disp.lk);
    zf_ctx_leave();
    return NULL;
}

/* ------------------------------------------------------------ lifetime */

/* Under init_lk, the context running: 0 when every set value of hwm is the
 * one in force in zf_disp.ctx, else INVALID_OPERATION (a second host may
 * not change the Core's HWM settings under the hosts already using it). */
static int core_hwm_matches(const zf_core_hwm_t *hwm)
{
    if (hwm->profile >= 0 && zlink_ctx_get(zf_disp.ctx, ZLINK_PROFILE, NULL) != hwm->profile)
        return ZLINK_FW_INVALID_OPERATION;
    const struct {
        int option;
        uint64_t want;
    } bytes[] = {{ZLINK_CORE_BUDGET_BYTES, hwm->budget},
                 {ZLINK_AUTO_HWM_MEMORY_LIMIT_BYTES, hwm->memory_limit}};
    for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++) {
        uint64_t v = 0;
        size_t n = sizeof v;
        if (bytes[i].want == 0)
            continue;
        if (zlink_ctx_get_data(zf_disp.ctx, bytes[i].option, &v, &n) != ZLINK_CONFIG_OK ||
            v != bytes[i].want)
            return ZLINK_FW_INVALID_OPERATION;
    }
    return 0;
}

/* Under init_lk, a new context no socket uses yet: passes the set values of
 * hwm to it as they are (seed 001 §2: the framework computes nothing). */
static int core_hwm_apply(const zf_core_hwm_t *hwm)
{
    if (hwm->profile >= 0 && zlink_ctx_set(zf_disp.ctx, ZLINK_PROFILE, hwm->profile) != ZLINK_CONFIG_OK)
        return ZLINK_FW_INVALID_ARGUMENT;
    if (hwm->budget != 0 &&
        zlink_ctx_set_data(zf_disp.ctx, ZLINK_CORE_BUDGET_BYTES, &hwm->budget,
                           sizeof hwm->budget) != ZLINK_CONFIG_OK)
        return ZLINK_FW_INVALID_ARGUMENT;
    if (hwm->memory_limit != 0 &&
        zlink_ctx_set_data(zf_disp.ctx, ZLINK_AUTO_HWM_MEMORY_LIMIT_BYTES, &hwm->memory_limit,
                           sizeof hwm->memory_limit) != ZLINK_CONFIG_OK)
        return ZLINK_FW_INVALID_ARGUMENT;
    return 0;
}

int zf_disp_acquire(void **ctx, const zf_core_hwm_t *hwm)
{
    int rc = 0;
    pthread_mutex_lock(&init_lk);
    if (zf_disp.users > 0)
        rc = core_hwm_matches(hwm);
    if (zf_disp.users == 0) {
        pthread_mutex_lock(&zf_disp.lk);
        rc = slots_init();
        if (rc == 0 && zf_disp.heap == NULL) {
            zf_disp.heap = calloc(ZLINK_DISPATCHER_CAPACITY + 1, sizeof *zf_disp.heap);
            if (zf_disp.heap == NULL)
                rc = ZLINK_FW_INTERNAL_FAILURE;
        }
        pthread_mutex_unlock(&zf_disp.lk);
        if (rc == 0) {
            zf_disp.ctx = zlink_ctx_new();
            zf_disp.poller = zlink_poller_new();
            zf_disp.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
            if (zf_disp.ctx == NULL || zf_disp.poller == NULL || zf_disp.wake_fd < 0 ||
                zlink_ctx_set(zf_disp.ctx, ZLINK_IO_THREADS, 1) != ZLINK_CONFIG_OK ||
                zlink_poller_add_fd(zf_disp.poller, zf_disp.wake_fd, NULL, ZLINK_POLLIN) != 0)
                rc = ZLINK_FW_INTERNAL_FAILURE;
            if (rc == 0)
                rc = core_hwm_apply(hwm);
            zf_disp.stop = false;
            if (rc == 0 && pthread_create(&zf_disp.thread, NULL, disp_main, NULL) != 0)
                rc = ZLINK_FW_INTERNAL_FAILURE;
            if (rc != 0) {
                if (zf_disp.poller != NULL)
                    zlink_poller_destroy(&zf_disp.poller);
                if (zf_disp.wake_fd >= 0)
                    close(zf_disp.wake_fd);
                zf_disp.wake_fd = -1;
                if (zf_disp.ctx != NULL)
                    zlink_ctx_term(zf_disp.ctx);
                zf_disp.ctx = NULL;
            }
        }
    }
    if (rc == 0) {
        zf_disp.users++;
        *ctx = zf_disp.ctx;
    }
    pthread_mutex_unlock(&init_lk);
    return rc;
}

void zf_disp_release(void)
{
    pthread_mutex_lock(&init_lk);
    if (zf_disp.users > 0 && --zf_disp.users == 0) {
        pthread_mutex_lock(&zf_disp.lk);
        zf_disp.stop = true;
        pthread_mutex_unlock(&zf_disp.lk);
        zf_disp_wake();
        pthread_join(zf_disp.thread, NULL);
        zlink_poller_destroy(&zf_disp.poller);
        close(zf_disp.wake_fd);
        zf_disp.wake_fd = -1;
        zlink_ctx_term(zf_disp.ctx);
        zf_disp.ctx = NULL;
    }
    pthread_mutex_unlock(&init_lk);
}

static int command(int what, zf_sock_t *s)
{
    zf_cmd_t cmd = {.what = what, .sock = s};
    pthread_mutex_lock(&zf_disp.lk);
    if (zf_disp.cmd_tail != NULL)
        zf_disp.cmd_tail->next = &cmd;
    else
        zf_disp.cmd_head = &cmd;
    zf_disp.cmd_tail = &cmd;
    pthread_mutex_unlock(&zf_disp.lk);
    zf_disp_wake();
    pthread_mutex_lock(&zf_disp.lk);
    while (!cmd.done)
        pthread_cond_wait(&zf_disp.waiters, &zf_disp.lk);
    pthread_mutex_unlock(&zf_disp.lk);
    return cmd.result;
}

int zf_disp_watch(zf_sock_t *s)
{
    return command(CMD_WATCH, s) == 0 ? 0 : ZLINK_FW_INTERNAL_FAILURE;
}

void zf_disp_unwatch(zf_sock_t *s)
{
    (void)command(CMD_UNWATCH, s);
}
