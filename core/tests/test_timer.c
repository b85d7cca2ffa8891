/*
 * test_timer.c — generic timers through the public API: core-contract §8
 * "07-utilities" items 7-12, plus the receive rules ZLink chose where the
 * contract is silent (doc/decisions.md "Poller and timers").
 *
 *   07-7   test_new_returns_handle
 *   07-8   test_start_zero_interval_is_einval
 *   07-9   test_repeat_stops_after_count, test_repeat_zero_runs_until_stopped
 *   07-10  test_count_starts_at_one_per_start, test_stopped_and_drained_is_no_data
 *   07-11  test_no_fires_after_stop
 *   07-12  test_destroy_nulls_pointer
 *
 * Timers polled through a poller are in test_poller.c. Timing checks only
 * assert lower bounds that the monotonic clock guarantees (a fire never
 * comes early), or counts that cannot depend on scheduling.
 */
#include "zlink.h"
#include "zltest.h"

#include <pthread.h>
#include <stdatomic.h>

#define MS 1000000ull /* nanoseconds */

static void *timer_new(void)
{
    void *t = zlink_timer_new();
    ZT_CHECK(t != NULL);
    return t;
}

static void timer_destroy(void *t)
{
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    ZT_CHECK(t == NULL);
}

static uint64_t recv_count(void *t, int flags)
{
    uint64_t count = 0;
    ZT_EQ_INT(zlink_timer_recv(t, &count, (zlink_recv_flags_t)flags), ZLINK_RECV_OK);
    ZT_CHECK(count >= 1);
    return count;
}

static void expect_no_data(void *t, int flags)
{
    uint64_t count = 777;
    ZT_EQ_INT(zlink_timer_recv(t, &count, (zlink_recv_flags_t)flags), ZLINK_RECV_NO_DATA);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    ZT_EQ_U64(count, 777); /* untouched */
}

/* 07-7: a new timer is a handle; the ENOMEM path cannot be provoked. */
static void test_new_returns_handle(void)
{
    void *a = timer_new();
    void *b = timer_new();
    ZT_CHECK(a != b);
    /* A new timer is stopped: nothing to receive, and NONE does not block. */
    expect_no_data(a, ZLINK_RECV_FLAGS_DONTWAIT);
    expect_no_data(a, ZLINK_RECV_FLAGS_NONE);
    timer_destroy(a);
    timer_destroy(b);
}

/* 07-8 */
static void test_start_zero_interval_is_einval(void)
{
    void *t = timer_new();
    ZT_EQ_INT(zlink_timer_start(t, 0, 0), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_timer_start(t, 0, 5), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    /* The argument is checked before the handle. */
    ZT_EQ_INT(zlink_timer_start(NULL, 0, 0), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_timer_start(NULL, 1, 0), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_timer_stop(NULL), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    /* A refused start leaves the timer stopped. */
    expect_no_data(t, ZLINK_RECV_FLAGS_NONE);
    timer_destroy(t);
}

/* 07-9 (repeat > 0): exactly repeat fires, then the timer stops by itself. */
static void test_repeat_stops_after_count(void)
{
    void *t = timer_new();
    ZT_EQ_INT(zlink_timer_start(t, 1 * MS, 3), ZLINK_CONFIG_OK);
    zt_sleep_ms(30);
    ZT_EQ_U64(recv_count(t, ZLINK_RECV_FLAGS_DONTWAIT), 3);
    expect_no_data(t, ZLINK_RECV_FLAGS_DONTWAIT);
    /* Finished: a blocking receive does not wait for fires that never come. */
    int64_t t0 = zt_now_ms();
    expect_no_data(t, ZLINK_RECV_FLAGS_NONE);
    ZT_CHECK(zt_now_ms() - t0 < 1000);

    /* Received one at a time, the counts still add up to repeat. */
    ZT_EQ_INT(zlink_timer_start(t, 5 * MS, 2), ZLINK_CONFIG_OK);
    uint64_t total = recv_count(t, ZLINK_RECV_FLAGS_NONE);
    if (total < 2)
        total += recv_count(t, ZLINK_RECV_FLAGS_NONE);
    ZT_EQ_U64(total, 2);
    expect_no_data(t, ZLINK_RECV_FLAGS_NONE);
    timer_destroy(t);
}

/* 07-9 (repeat 0): fires keep coming until stop. */
static void test_repeat_zero_runs_until_stopped(void)
{
    void *t = timer_new();
    ZT_EQ_INT(zlink_timer_start(t, 1 * MS, 0), ZLINK_CONFIG_OK);
    zt_sleep_ms(20);
    ZT_CHECK(recv_count(t, ZLINK_RECV_FLAGS_DONTWAIT) >= 20);
    zt_sleep_ms(5);
    ZT_CHECK(recv_count(t, ZLINK_RECV_FLAGS_DONTWAIT) >= 5);
    for (int i = 0; i < 3; i++)
        recv_count(t, ZLINK_RECV_FLAGS_NONE); /* always another one */
    ZT_EQ_INT(zlink_timer_stop(t), ZLINK_CONFIG_OK);
    timer_destroy(t);
}

/* 07-10: the count is the number of fires since the last receive, starting
 * from 1 on every start; a restart drops what the previous run left. */
static void test_count_starts_at_one_per_start(void)
{
    void *t = timer_new();
    for (int run = 0; run < 3; run++) {
        ZT_EQ_INT(zlink_timer_start(t, 10 * MS, 1), ZLINK_CONFIG_OK);
        ZT_EQ_U64(recv_count(t, ZLINK_RECV_FLAGS_NONE), 1);
    }
    /* Fires accumulate between receives. */
    ZT_EQ_INT(zlink_timer_start(t, 1 * MS, 0), ZLINK_CONFIG_OK);
    zt_sleep_ms(10);
    ZT_CHECK(recv_count(t, ZLINK_RECV_FLAGS_DONTWAIT) >= 10);
    /* A restart with a long interval: the unreceived fires are gone. */
    zt_sleep_ms(5);
    ZT_EQ_INT(zlink_timer_start(t, 3600000 * MS, 0), ZLINK_CONFIG_OK);
    expect_no_data(t, ZLINK_RECV_FLAGS_DONTWAIT);
    ZT_EQ_INT(zlink_timer_stop(t), ZLINK_CONFIG_OK);
    timer_destroy(t);
}

/* 07-10: stopped and drained gives NO_DATA (DONTWAIT and NONE alike). */
static void test_stopped_and_drained_is_no_data(void)
{
    void *t = timer_new();
    ZT_EQ_INT(zlink_timer_start(t, 1 * MS, 0), ZLINK_CONFIG_OK);
    zt_sleep_ms(5);
    ZT_EQ_INT(zlink_timer_stop(t), ZLINK_CONFIG_OK);
    /* Fires that happened before the stop are still there ... */
    ZT_CHECK(recv_count(t, ZLINK_RECV_FLAGS_NONE) >= 5);
    /* ... and then nothing, at once. */
    expect_no_data(t, ZLINK_RECV_FLAGS_DONTWAIT);
    int64_t t0 = zt_now_ms();
    expect_no_data(t, ZLINK_RECV_FLAGS_NONE);
    ZT_CHECK(zt_now_ms() - t0 < 1000);
    /* Stopping again is harmless. */
    ZT_EQ_INT(zlink_timer_stop(t), ZLINK_CONFIG_OK);
    expect_no_data(t, ZLINK_RECV_FLAGS_DONTWAIT);
    timer_destroy(t);
}

/* 07-11 */
static void test_no_fires_after_stop(void)
{
    void *t = timer_new();
    ZT_EQ_INT(zlink_timer_start(t, 1 * MS, 0), ZLINK_CONFIG_OK);
    zt_sleep_ms(3);
    ZT_EQ_INT(zlink_timer_stop(t), ZLINK_CONFIG_OK);
    uint64_t before = recv_count(t, ZLINK_RECV_FLAGS_DONTWAIT);
    ZT_CHECK(before >= 3);
    zt_sleep_ms(20);
    expect_no_data(t, ZLINK_RECV_FLAGS_DONTWAIT);
    /* Stopped before its first fire: nothing ever comes. */
    ZT_EQ_INT(zlink_timer_start(t, 10 * MS, 0), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_timer_stop(t), ZLINK_CONFIG_OK);
    zt_sleep_ms(30);
    expect_no_data(t, ZLINK_RECV_FLAGS_DONTWAIT);
    timer_destroy(t);
}

/* 07-12 */
static void test_destroy_nulls_pointer(void)
{
    void *t = timer_new();
    ZT_EQ_INT(zlink_timer_start(t, 1 * MS, 0), ZLINK_CONFIG_OK); /* running is fine */
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    ZT_CHECK(t == NULL);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_timer_destroy(NULL), ZLINK_CLOSE_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    /* A handle that is not a timer. */
    uint64_t junk[8] = {0};
    void *not_timer = junk;
    ZT_EQ_INT(zlink_timer_destroy(&not_timer), ZLINK_CLOSE_INVALID_HANDLE);
    ZT_CHECK(not_timer == junk);
}

/* zlink_timer_recv(NONE) sleeps until the next fire, never earlier. */
static void test_blocking_recv_waits_for_fire(void)
{
    void *t = timer_new();
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlink_timer_start(t, 50 * MS, 1), ZLINK_CONFIG_OK);
    ZT_EQ_U64(recv_count(t, ZLINK_RECV_FLAGS_NONE), 1);
    ZT_CHECK(zt_now_ms() - t0 >= 50);
    timer_destroy(t);
}

struct blocked_recv {
    void *timer;
    _Atomic long tid;
    zlink_recv_result_t result;
    int err;
};

static void *blocked_recv_main(void *arg)
{
    struct blocked_recv *b = arg;
    uint64_t count = 0;
    atomic_store(&b->tid, zt_gettid());
    b->result = zlink_timer_recv(b->timer, &count, ZLINK_RECV_FLAGS_NONE);
    b->err = zlink_errno();
    return NULL;
}

/* A stop (or a restart) from another thread ends a blocked receive. */
static void test_stop_wakes_blocked_recv(void)
{
    void *t = timer_new();
    for (int round = 0; round < 2; round++) {
        ZT_EQ_INT(zlink_timer_start(t, 3600000 * MS, 0), ZLINK_CONFIG_OK);
        struct blocked_recv b = {.timer = t};
        pthread_t th;
        ZT_EQ_INT(pthread_create(&th, NULL, blocked_recv_main, &b), 0);
        ZT_EVENTUALLY(atomic_load(&b.tid) != 0, 2000);
        zt_wait_blocked(atomic_load(&b.tid));
        int64_t t0 = zt_now_ms();
        if (round == 0) {
            ZT_EQ_INT(zlink_timer_stop(t), ZLINK_CONFIG_OK);
        } else {
            /* A restart with a short interval: the receive gets its fire. */
            ZT_EQ_INT(zlink_timer_start(t, 1 * MS, 1), ZLINK_CONFIG_OK);
        }
        ZT_EQ_INT(pthread_join(th, NULL), 0);
        ZT_CHECK(zt_now_ms() - t0 < ZT_MS(5000));
        if (round == 0) {
            ZT_EQ_INT(b.result, ZLINK_RECV_NO_DATA);
            ZT_EQ_INT(b.err, EAGAIN);
        } else {
            ZT_EQ_INT(b.result, ZLINK_RECV_OK);
        }
    }
    timer_destroy(t);
}

static void test_recv_argument_errors(void)
{
    void *t = timer_new();
    uint64_t count = 0;
    ZT_EQ_INT(zlink_timer_start(t, 1 * MS, 1), ZLINK_CONFIG_OK);
    zt_sleep_ms(3);
    ZT_EQ_INT(zlink_timer_recv(t, NULL, ZLINK_RECV_FLAGS_DONTWAIT), ZLINK_RECV_INVALID_STATE);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_timer_recv(t, &count, (zlink_recv_flags_t)7), ZLINK_RECV_INVALID_STATE);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_timer_recv(NULL, &count, ZLINK_RECV_FLAGS_DONTWAIT),
              ZLINK_RECV_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    /* A refused receive consumed nothing. */
    ZT_EQ_U64(recv_count(t, ZLINK_RECV_FLAGS_DONTWAIT), 1);
    timer_destroy(t);
}

static const zt_case_t cases[] = {
    ZT_CASE(test_new_returns_handle),
    ZT_CASE(test_start_zero_interval_is_einval),
    ZT_CASE(test_repeat_stops_after_count),
    ZT_CASE(test_repeat_zero_runs_until_stopped),
    ZT_CASE(test_count_starts_at_one_per_start),
    ZT_CASE(test_stopped_and_drained_is_no_data),
    ZT_CASE(test_no_fires_after_stop),
    ZT_CASE(test_destroy_nulls_pointer),
    ZT_CASE(test_blocking_recv_waits_for_fire),
    ZT_CASE(test_stop_wakes_blocked_recv),
    ZT_CASE(test_recv_argument_errors),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
