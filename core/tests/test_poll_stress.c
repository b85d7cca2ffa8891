/*
 * test_poll_stress.c — "no lost wake-up" (seed 004 §3) by repetition: one
 * thread waits, another makes exactly one source ready, many thousand
 * times, with the edge landing at every point of the waiter's cycle
 * (before it scans, between its scan and its sleep, while it sleeps).
 * A lost wake-up shows as a wait that runs into its (long) timeout and
 * returns 0 instead of the event, so every repetition asserts the event.
 *
 *   test_poller_wait_socket_edges   zlink_poller_wait on an inproc PAIR,
 *                                   another thread sends one record
 *   test_poller_wait_tcp_edges      the same over tcp (the edge comes from
 *                                   an I/O thread), fewer repetitions
 *   test_poller_wait_mixed_edges    the poller also holds an idle FD, so
 *                                   it sleeps in ppoll and the socket's
 *                                   edge must come through the eventfd
 *   test_poll_fd_edges              zlink_poll on a pipe, another thread
 *                                   writes one byte
 *
 * The sender waits until the waiter announces the repetition, then varies
 * its delay (none, a short spin, a yield, a spin long enough for the
 * waiter to fall asleep) so the edge lands anywhere.
 */
#include "zlink.h"
#include "zltest.h"
#include "zltest_zlink.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

#define REPS 10000
#define TCP_REPS 2000
/* Long enough that only a lost wake-up can reach it. */
#define WAIT_MS ZT_MS(10000)

struct edge_src {
    void *sock;             /* sends a record, or */
    int wfd;                /* writes a byte */
    int reps;
    _Atomic int announced;  /* the repetition the waiter is about to wait for */
    pthread_t th;
};

/* A short, varying delay before the edge. */
static void jitter(int rep)
{
    switch (rep % 4) {
    case 1: {
        volatile int spin = (rep * 7919) % 2000;
        while (spin > 0)
            spin--;
        break;
    }
    case 2:
        sched_yield();
        break;
    case 3: {
        /* Long enough (tens of microseconds) for the waiter to be asleep. */
        volatile int spin = 5000 + (rep * 7919) % 50000;
        while (spin > 0)
            spin--;
        break;
    }
    default:
        break;
    }
}

static void *edge_main(void *arg)
{
    struct edge_src *e = arg;
    for (int rep = 1; rep <= e->reps; rep++) {
        while (atomic_load(&e->announced) < rep)
            sched_yield();
        jitter(rep);
        if (e->sock != NULL) {
            ZT_EQ_INT(zlt_send_str(e->sock, "x", 0), ZLINK_SUBMIT_OK);
        } else {
            char c = 'x';
            ZT_EQ_INT(write(e->wfd, &c, 1), 1);
        }
    }
    return NULL;
}

static void edge_start(struct edge_src *e)
{
    atomic_store(&e->announced, 0);
    ZT_EQ_INT(pthread_create(&e->th, NULL, edge_main, e), 0);
}

static void pair_link(void *ctx, const char *tr, void **a, void **b)
{
    *a = zlt_sock(ctx, ZLINK_PAIR);
    *b = zlt_sock(ctx, ZLINK_PAIR);
    zlt_link(*a, *b, tr);
    zlt_send_ok(*a, "hi");
    zlt_expect_str(*b, "hi");
}

/* The waiter side shared by the poller cases: reps waits on p, each must
 * return exactly b's POLLIN, then the record is taken. */
static void poller_wait_loop(void *p, void *b, struct edge_src *e)
{
    zlink_poller_event_t ev[4];
    int64_t t0 = zt_now_ms();
    for (int rep = 1; rep <= e->reps; rep++) {
        atomic_store(&e->announced, rep);
        zlink_config_result_t err = ZLINK_CONFIG_OK;
        int n = zlink_poller_wait(p, ev, 4, WAIT_MS, &err);
        if (n != 1 || ev[0].socket != b || ev[0].events != ZLINK_POLLIN)
            ZT_FAIL("repetition %d: wait returned %d (result %d, errno %d), events %d: "
                    "lost wake-up?",
                    rep, n, (int)err, zlink_errno(), n > 0 ? ev[0].events : 0);
        char buf[8];
        ZT_EQ_INT(zlt_recv_str(b, buf, sizeof buf, ZLINK_DONTWAIT), ZLINK_RECV_OK);
    }
    printf("# %d edges in %lld ms\n", e->reps, (long long)(zt_now_ms() - t0));
}

static void run_poller_case(const char *tr, int reps, bool with_idle_fd)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, tr, &a, &b);
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    void *p = zlink_poller_new();
    ZT_CHECK(p != NULL);
    ZT_EQ_INT(zlink_poller_add(p, b, NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    if (with_idle_fd)
        ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    struct edge_src e = {.sock = a, .wfd = -1, .reps = reps};
    edge_start(&e);
    poller_wait_loop(p, b, &e);
    ZT_EQ_INT(pthread_join(e.th, NULL), 0);
    ZT_EQ_INT(zlink_poller_destroy(&p), ZLINK_CLOSE_OK);
    close(fds[0]);
    close(fds[1]);
    zlt_finish(ctx, a, b);
}

static void test_poller_wait_socket_edges(void)
{
    run_poller_case("inproc", REPS, false);
}

static void test_poller_wait_tcp_edges(void)
{
    run_poller_case("tcp", TCP_REPS, false);
}

static void test_poller_wait_mixed_edges(void)
{
    run_poller_case("inproc", REPS, true);
}

static void test_poll_fd_edges(void)
{
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    struct edge_src e = {.sock = NULL, .wfd = fds[1], .reps = REPS};
    edge_start(&e);
    int64_t t0 = zt_now_ms();
    for (int rep = 1; rep <= REPS; rep++) {
        zlink_pollitem_t item;
        memset(&item, 0, sizeof item);
        item.fd = fds[0];
        item.events = ZLINK_POLLIN;
        atomic_store(&e.announced, rep);
        zlink_config_result_t err = ZLINK_CONFIG_OK;
        int n = zlink_poll(&item, 1, WAIT_MS, &err);
        if (n != 1 || item.revents != ZLINK_POLLIN)
            ZT_FAIL("repetition %d: zlink_poll returned %d (result %d), revents %d", rep, n,
                    (int)err, item.revents);
        char c;
        ZT_EQ_INT(read(fds[0], &c, 1), 1);
    }
    printf("# %d edges in %lld ms\n", REPS, (long long)(zt_now_ms() - t0));
    ZT_EQ_INT(pthread_join(e.th, NULL), 0);
    close(fds[0]);
    close(fds[1]);
}

static const zt_case_t cases[] = {
    ZT_CASE(test_poller_wait_socket_edges),
    ZT_CASE(test_poller_wait_tcp_edges),
    ZT_CASE(test_poller_wait_mixed_edges),
    ZT_CASE(test_poll_fd_edges),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
