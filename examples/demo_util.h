/*
 * demo_util.h — small helpers the demo programs share (public API only):
 * a monotonic clock, readable outcome names, a latency summary and the
 * "run until told to stop" wait of the server processes.
 *
 * Everything here is static inline: each demo program is one .c file and
 * this header is their only shared code.
 *
 * Stopping a server: demo_block_stop_signals() must run first in main,
 * before any host exists, so that every thread the runtime starts inherits
 * a mask with SIGTERM, SIGINT and SIGHUP blocked. demo_wait_for_stop() then
 * takes those signals synchronously through a signalfd, on the main thread
 * only, together with end-of-file on stdin. The run script holds each
 * server's stdin open and closes it to stop the server; if the script dies,
 * its end of the pipe closes too and no server is left behind.
 */
#ifndef DEMO_UTIL_H
#define DEMO_UTIL_H

#include <zlink.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

static inline int64_t demo_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A condition variable whose timed waits use CLOCK_MONOTONIC. */
static inline void demo_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}

/* The CLOCK_MONOTONIC instant ms from now, for pthread_cond_timedwait on
 * a condition variable made by demo_cond_init. */
static inline struct timespec demo_deadline(int64_t ms)
{
    int64_t at = demo_now_ns() + ZLINK_MS(ms);
    struct timespec ts = {(time_t)(at / 1000000000), (long)(at % 1000000000)};
    return ts;
}

/* The name a person reads for a framework result: "OK", the error kind's
 * name ("DeadlineExceeded"), "cancelled", or the result's own name for the
 * results that are not kinds (INVALID_ARGUMENT, INVALID_HANDLE). */
static inline const char *demo_outcome_name(int result)
{
    if (result == ZLINK_FW_OK)
        return "OK";
    if (ZLINK_FW_IS_KIND(result))
        return zlink_error_kind_name(ZLINK_FW_KIND_OF(result));
    if (result == ZLINK_FW_CANCELLED)
        return "cancelled";
    return zlink_result_name(result);
}

/* Prints "what: <result name>" to stderr and exits 1. For set-up steps
 * whose failure leaves nothing to show. */
static inline void demo_die(const char *prog, const char *what, int result)
{
    fprintf(stderr, "%s: %s: %s (%d)\n", prog, what, zlink_result_name(result), result);
    exit(1);
}

/* A started or finished call's outcome, zeroed with its size set. */
static inline zlink_outcome_t demo_outcome(void)
{
    zlink_outcome_t o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    return o;
}

static inline int demo_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of n samples, nearest rank; sorts v in place. */
static inline int64_t demo_quantile(int64_t *v, size_t n, double q)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof v[0], demo_cmp_i64);
    size_t rank = (size_t)(q * (double)n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return v[rank - 1];
}

/* Blocks the stop signals in the calling thread; call before any host or
 * thread exists. Returns a signalfd that receives them (-1 on failure). */
static inline int demo_block_stop_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
        return -1;
    /* A closed reader must show as EPIPE, never kill the process. */
    signal(SIGPIPE, SIG_IGN);
    return signalfd(-1, &set, SFD_CLOEXEC);
}

/* Blocks the main thread until a stop signal arrives on sigfd or stdin
 * reaches end of file (whatever is read from stdin is ignored). Returns a
 * word for the log: "stdin closed", "SIGTERM"... */
static inline const char *demo_wait_for_stop(int sigfd)
{
    int stdin_open = 1;
    for (;;) {
        struct pollfd p[2] = {{sigfd, POLLIN, 0}, {0, POLLIN, 0}};
        int n = poll(p, stdin_open ? 2 : 1, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return "poll failed";
        }
        if (p[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sigfd, &si, sizeof si) == (ssize_t)sizeof si)
                return si.ssi_signo == SIGTERM ? "SIGTERM"
                       : si.ssi_signo == SIGINT ? "SIGINT"
                                                : "SIGHUP";
        }
        if (stdin_open && (p[1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) {
            char buf[256];
            ssize_t got = read(0, buf, sizeof buf);
            if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
                return "stdin closed";
        }
    }
}

#endif
