/*
 * bench_common.c — names, clocks, endpoints, errors, the watchdog and the
 * statistics shared by both library halves. See bench_common.h.
 */
#include "bench_common.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const pattern_names[BENCH_PATTERN_COUNT] = {
    "pair", "dealer_router", "router_router", "pub_sub"};
static const char *const transport_names[BENCH_TRANSPORT_COUNT] = {
    "inproc", "ipc", "tcp"};

const char *bench_pattern_name(bench_pattern_t p)
{
    return (unsigned)p < BENCH_PATTERN_COUNT ? pattern_names[p] : "?";
}

const char *bench_transport_name(bench_transport_t t)
{
    return (unsigned)t < BENCH_TRANSPORT_COUNT ? transport_names[t] : "?";
}

int bench_pattern_parse(const char *name, bench_pattern_t *out)
{
    for (int i = 0; i < BENCH_PATTERN_COUNT; i++) {
        if (strcmp(name, pattern_names[i]) == 0) {
            *out = (bench_pattern_t)i;
            return 0;
        }
    }
    return -1;
}

int bench_transport_parse(const char *name, bench_transport_t *out)
{
    for (int i = 0; i < BENCH_TRANSPORT_COUNT; i++) {
        if (strcmp(name, transport_names[i]) == 0) {
            *out = (bench_transport_t)i;
            return 0;
        }
    }
    return -1;
}

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void bench_sleep_us(unsigned us)
{
    struct timespec ts = {us / 1000000u, (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* ---------------------------------------------------------------- endpoints */

static atomic_uint endpoint_seq;

void bench_endpoint(bench_transport_t t, const char *tcp_any_port, char *buf, size_t cap)
{
    unsigned seq = atomic_fetch_add(&endpoint_seq, 1);
    switch (t) {
    case BENCH_INPROC:
        snprintf(buf, cap, "inproc://bench-%ld-%u", (long)getpid(), seq);
        break;
    case BENCH_IPC:
        snprintf(buf, cap, "ipc:///tmp/zlink-bench-%ld-%u.sock", (long)getpid(), seq);
        bench_endpoint_cleanup(buf); /* a stale file from an earlier crash */
        break;
    default:
        snprintf(buf, cap, "tcp://127.0.0.1:%s", tcp_any_port);
        break;
    }
}

void bench_endpoint_cleanup(const char *endpoint)
{
    if (strncmp(endpoint, "ipc://", 6) == 0)
        unlink(endpoint + 6);
}

/* ------------------------------------------------------------------- errors */

void bench_error(const bench_case_t *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* One line, one comma-separated record: no commas or newlines in msg. */
    for (char *p = msg; *p; p++) {
        if (*p == ',' || *p == '\n')
            *p = ';';
    }
    flockfile(stdout);
    printf("ERROR,%s,%s,%s,%zu,%s\n", c->lib, bench_pattern_name(c->pattern),
           bench_transport_name(c->transport), c->size, msg);
    fflush(stdout);
    funlockfile(stdout);
}

/* ----------------------------------------------------------------- watchdog */

bench_progress_t bench_worker_progress[2];
static bench_progress_t main_progress;
static _Atomic(const bench_case_t *) watched_case;
static _Atomic(const char *) watched_phase;

void bench_watch_case(const bench_case_t *c)
{
    atomic_store(&watched_case, c);
    atomic_fetch_add(&main_progress.value, 1);
}

void bench_phase(const char *phase)
{
    atomic_store(&watched_phase, phase);
    atomic_fetch_add(&main_progress.value, 1);
}

static void *watchdog_main(void *arg)
{
    (void)arg;
    uint64_t last[3] = {0, 0, 0};
    uint64_t last_change = bench_now_ns();
    for (;;) {
        bench_sleep_us(250 * 1000);
        uint64_t now[3] = {
            atomic_load_explicit(&main_progress.value, memory_order_relaxed),
            atomic_load_explicit(&bench_worker_progress[0].value, memory_order_relaxed),
            atomic_load_explicit(&bench_worker_progress[1].value, memory_order_relaxed)};
        uint64_t t = bench_now_ns();
        if (memcmp(now, last, sizeof now) != 0) {
            memcpy(last, now, sizeof now);
            last_change = t;
            continue;
        }
        if (t - last_change < BENCH_STALL_NS)
            continue;
        const bench_case_t *c = atomic_load(&watched_case);
        const char *phase = atomic_load(&watched_phase);
        if (c) {
            bench_error(c, "no progress for %llu s (phase %s; sender/client at %llu; "
                           "receiver/server at %llu)",
                        (unsigned long long)(BENCH_STALL_NS / 1000000000ull),
                        phase ? phase : "?", (unsigned long long)now[1],
                        (unsigned long long)now[2]);
        } else {
            printf("ERROR,-,-,-,-,no progress for %llu s (phase %s)\n",
                   (unsigned long long)(BENCH_STALL_NS / 1000000000ull),
                   phase ? phase : "?");
        }
        fflush(stdout);
        fflush(stderr);
        _exit(3);
    }
    return NULL;
}

void bench_watchdog_start(void)
{
    pthread_t tid;
    if (pthread_create(&tid, NULL, watchdog_main, NULL) != 0) {
        fprintf(stderr, "core_vs_libzmq: cannot start the watchdog thread\n");
        exit(2);
    }
    pthread_detach(tid);
}

/* ------------------------------------------------------------------ threads */

int bench_run_threads(bench_thread_fn a, void *aa, bench_thread_fn b, void *ba)
{
    pthread_t ta, tb;
    atomic_store(&bench_worker_progress[0].value, 0);
    atomic_store(&bench_worker_progress[1].value, 0);
    if (pthread_create(&ta, NULL, a, aa) != 0)
        return -1;
    if (pthread_create(&tb, NULL, b, ba) != 0) {
        pthread_join(ta, NULL);
        return -1;
    }
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    return 0;
}

/* --------------------------------------------------------------- statistics */

static int compare_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

void bench_sort(double *v, size_t n)
{
    qsort(v, n, sizeof *v, compare_double);
}

double bench_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    bench_sort(v, n);
    return (n % 2) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

double bench_percentile(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return NAN;
    size_t rank = (size_t)ceil(p / 100.0 * (double)n); /* 1-based */
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}
