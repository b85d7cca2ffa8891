/*
 * test_spin.c — the low-latency mode (context options ZLINK_SPIN_US and
 * ZLINK_IO_SPIN_US, zlink.h): blocked receivers and senders, and the I/O
 * threads, poll for a bounded window before they sleep. Every case sets
 * both options to the same window. Through the public API only:
 *
 *  - traffic is intact with the mode on: ping-pong and a sender held at
 *    its HWM lose, duplicate and reorder nothing, on every transport;
 *  - a receive timeout still ends a spinning wait on time;
 *  - the option can be changed while the context's threads run;
 *  - adaptive: a receiver whose peer went quiet stops spinning (its CPU
 *    time over many empty waits stays far below waits x window), and an
 *    idle context with a live tcp link uses almost no CPU.
 *
 * The CPU bounds are loose on purpose (a tenth of what spinning on every
 * wait would use): they tell the adaptive rule from "always spin", not
 * this machine's speed.
 */
#include "zltest_zlink.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static const char *g_tr;
static void *g_ctx;

static void case_begin(const char *tr, int spin_us)
{
    g_tr = tr;
    g_ctx = zlt_round_begin(tr);
    ZT_EQ_INT(zlink_ctx_set(g_ctx, ZLINK_SPIN_US, spin_us), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_ctx_get(g_ctx, ZLINK_SPIN_US, NULL), spin_us);
    ZT_EQ_INT(zlink_ctx_set(g_ctx, ZLINK_IO_SPIN_US, spin_us), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_ctx_get(g_ctx, ZLINK_IO_SPIN_US, NULL), spin_us);
}

static void case_end(void)
{
    zlt_round_end();
    g_ctx = NULL;
}

static void make_pair(void **a, void **b)
{
    *a = zlt_socket_linger0(g_ctx, ZLINK_PAIR);
    *b = zlt_socket_linger0(g_ctx, ZLINK_PAIR);
    zlt_link(*b, *a, g_tr);
    zlt_send_ok(*b, "ping");
    zlt_expect_strs(*a, "ping");
}

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void send_num(void *s, unsigned v)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%u", v);
    zlt_send_ok(s, buf);
}

static void expect_num(void *s, unsigned v)
{
    char want[16];
    snprintf(want, sizeof want, "%u", v);
    zlt_expect_str(s, want);
}

/* ------------------------------------------------------------ ping-pong */

#define ROUNDS 2000

typedef struct echo_arg {
    void *s;
    unsigned n;
} echo_arg_t;

static void *echo_main(void *arg)
{
    echo_arg_t *e = arg;
    for (unsigned i = 0; i < e->n; i++) {
        expect_num(e->s, i);
        send_num(e->s, i);
    }
    return NULL;
}

/* Every round trip answers the request it follows, in order, with both
 * sides blocked in receives that spin. */
static void test_ping_pong_intact(const char *tr)
{
    case_begin(tr, 200);
    void *a, *b;
    make_pair(&a, &b);
    echo_arg_t e = {a, ROUNDS};
    pthread_t t;
    ZT_EQ_INT(pthread_create(&t, NULL, echo_main, &e), 0);
    for (unsigned i = 0; i < ROUNDS; i++) {
        send_num(b, i);
        expect_num(b, i);
    }
    ZT_EQ_INT(pthread_join(t, NULL), 0);
    zlt_expect_no_data(a);
    zlt_expect_no_data(b);
    case_end();
}

/* ---------------------------------------------------- sender at its HWM */

#define FLOOD 5000

static void *drain_main(void *arg)
{
    echo_arg_t *e = arg;
    for (unsigned i = 0; i < e->n; i++)
        expect_num(e->s, i);
    return NULL;
}

/* A sender held at a small HWM waits (spinning) for room again and again;
 * every record arrives once and in order. */
static void test_blocked_sender_intact(const char *tr)
{
    case_begin(tr, 200);
    void *a, *b;
    make_pair(&a, &b);
    zlt_set_u64(b, ZLINK_SNDHWM, 256);
    zlt_set_u64(a, ZLINK_RCVHWM, 256);
    echo_arg_t e = {a, FLOOD};
    pthread_t t;
    ZT_EQ_INT(pthread_create(&t, NULL, drain_main, &e), 0);
    for (unsigned i = 0; i < FLOOD; i++)
        send_num(b, i);
    ZT_EQ_INT(pthread_join(t, NULL), 0);
    zlt_expect_no_data(a);
    case_end();
}

/* ---------------------------------------------------------- timeouts */

/* A receive with a 30 ms timeout and a 10 ms window still gives NO_DATA
 * after its timeout, not after the window and not much later. */
static void test_timeout_ends_spinning_wait(const char *tr)
{
    case_begin(tr, ZLINK_SPIN_US_MAX);
    void *a, *b;
    make_pair(&a, &b);
    zlt_set_int(a, ZLINK_RCVTIMEO, 30);
    for (int i = 0; i < 3; i++) {
        int64_t t0 = mono_ns();
        char buf[32];
        zlink_recv_result_t r = zlt_recv_str(a, buf, sizeof buf, 0);
        int64_t waited = mono_ns() - t0;
        ZT_EQ_INT(r, ZLINK_RECV_NO_DATA);
        ZT_EQ_INT(zlink_errno(), EAGAIN);
        if (waited < 30 * 1000000LL)
            ZT_FAIL("the receive returned after %lld us, before its 30 ms timeout",
                    (long long)(waited / 1000));
    }
    /* The link still works after the timed-out waits. */
    zlt_send_ok(b, "after");
    zlt_expect_strs(a, "after");
    case_end();
}

/* ------------------------------------------------ changed while running */

/* The window can be set, changed and cleared while the I/O threads run;
 * traffic crosses each setting. */
static void test_set_while_running(const char *tr)
{
    case_begin(tr, 0);
    void *a, *b;
    make_pair(&a, &b);
    const int settings[] = {50, 0, ZLINK_SPIN_US_MAX, 1, 0};
    for (size_t k = 0; k < sizeof settings / sizeof settings[0]; k++) {
        ZT_EQ_INT(zlink_ctx_set(g_ctx, ZLINK_SPIN_US, settings[k]), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_ctx_get(g_ctx, ZLINK_SPIN_US, NULL), settings[k]);
        ZT_EQ_INT(zlink_ctx_set(g_ctx, ZLINK_IO_SPIN_US, settings[k]), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_ctx_get(g_ctx, ZLINK_IO_SPIN_US, NULL), settings[k]);
        for (unsigned i = 0; i < 50; i++) {
            send_num(b, i);
            expect_num(a, i);
            send_num(a, i);
            expect_num(b, i);
        }
    }
    case_end();
}

/* ----------------------------------------------------------- adaptive */

#define EMPTY_WAITS 40
#define EMPTY_WAIT_MS 15

/* 40 empty waits of 15 ms with a 10 ms window: spinning through each
 * would take about 400 ms of this thread's CPU. The adaptive rule spins at
 * the first wait and then only on every eighth (5 more), about 60 ms. */
static void test_quiet_peer_stops_spinning(const char *tr)
{
    case_begin(tr, ZLINK_SPIN_US_MAX);
    void *a, *b;
    make_pair(&a, &b);
    zlt_set_int(a, ZLINK_RCVTIMEO, EMPTY_WAIT_MS);
    int64_t cpu0 = thread_cpu_ns();
    for (int i = 0; i < EMPTY_WAITS; i++) {
        char buf[32];
        ZT_EQ_INT(zlt_recv_str(a, buf, sizeof buf, 0), ZLINK_RECV_NO_DATA);
    }
    int64_t used_ms = (thread_cpu_ns() - cpu0) / 1000000;
    if (used_ms > 150)
        ZT_FAIL("%d empty waits used %lld ms of CPU: the receiver kept spinning", EMPTY_WAITS,
                (long long)used_ms);
    /* A peer that answers again makes the waits spin again: traffic flows. */
    zlt_set_int(a, ZLINK_RCVTIMEO, 2000);
    for (unsigned i = 0; i < 20; i++) {
        send_num(b, i);
        expect_num(a, i);
    }
    case_end();
}

/* With the longest window and a live link on the transport, the context
 * sits idle for 300 ms: its I/O threads and a receiver blocked for the
 * whole time use a small fraction of that in CPU. */
static void test_idle_context_sleeps(const char *tr)
{
    case_begin(tr, ZLINK_SPIN_US_MAX);
    void *a, *b;
    make_pair(&a, &b);
    zlt_set_int(a, ZLINK_RCVTIMEO, 300);
    int64_t cpu0 = process_cpu_ns();
    char buf[32];
    ZT_EQ_INT(zlt_recv_str(a, buf, sizeof buf, 0), ZLINK_RECV_NO_DATA);
    int64_t used_ms = (process_cpu_ns() - cpu0) / 1000000;
    if (used_ms > 60)
        ZT_FAIL("an idle context used %lld ms of CPU in 300 ms", (long long)used_ms);
    case_end();
}

/* ------------------------------------------------------------------ main */

static const zt_case_t cases[] = {
    ZT_CASE_TP(test_ping_pong_intact),
    ZT_CASE_TP(test_blocked_sender_intact),
    ZT_CASE_TP(test_timeout_ends_spinning_wait),
    ZT_CASE_TP(test_set_while_running),
    ZT_CASE_TP(test_quiet_peer_stops_spinning),
    ZT_CASE_TP(test_idle_context_sleeps),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
