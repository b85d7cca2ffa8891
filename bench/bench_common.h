/*
 * bench_common.h — what the two halves of core_vs_libzmq share.
 *
 * Design notes
 * ------------
 * core_vs_libzmq runs one pattern on ZLink, on libzmq and (where it has an
 * equivalent) on nng in the same process and compares them. Each library
 * half (bench_zlink.c, bench_zmq.c, bench_nng.c) exports a bench_lib_t: a
 * throughput run and a latency run for one bench_case_t. The halves measure
 * the same way (see doc/performance.md):
 *
 *   - two application threads (sender/receiver, or client/server), started
 *     with bench_run_threads() after the main thread has created, bound and
 *     connected the sockets;
 *   - fresh contexts and sockets for every run, 1 I/O thread per context,
 *     one context per side (one shared context for inproc, which needs it;
 *     nng has no contexts: its sockets share its own task threads);
 *   - CLOCK_MONOTONIC timestamps (bench_now_ns).
 *
 * Hang protection: a watchdog thread (bench_watchdog_start) looks at three
 * progress counters every 250 ms: one bumped by the main thread at each phase
 * change (bench_phase) and one per worker thread, stored after every message
 * (bench_progress_set). If none of them moves for BENCH_STALL_NS it prints an
 * ERROR line for the current case and ends the process with exit code 3.
 * Retry loops (waiting for a route or a subscription) do not count as
 * progress; they give up on their own after BENCH_STALL_NS and report an
 * ordinary error.
 *
 * Threads: everything here is safe to call from any thread except
 * bench_watch_case() and bench_phase(), which only the main thread calls.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef enum bench_pattern {
    BENCH_PAIR = 0,
    BENCH_DEALER_ROUTER,
    BENCH_ROUTER_ROUTER,
    BENCH_PUB_SUB,
    BENCH_PATTERN_COUNT
} bench_pattern_t;

typedef enum bench_transport {
    BENCH_INPROC = 0,
    BENCH_IPC,
    BENCH_TCP,
    BENCH_TRANSPORT_COUNT
} bench_transport_t;

/* One measurement to make with one library. */
typedef struct bench_case {
    const char *lib;             /* "zlink", "libzmq" or "nng" */
    bench_pattern_t pattern;
    bench_transport_t transport;
    size_t size;                 /* payload bytes of every measured message */
    uint64_t count;              /* throughput: messages to send (>= 2) */
    uint32_t rtt_warmup;         /* latency: unrecorded round trips first */
    uint32_t rtt_count;          /* latency: recorded round trips */
    int print_settings;          /* nonzero: print a SETTINGS line (first rep) */
    const unsigned char *payload; /* size bytes: every message's content */
    uint64_t zlink_hwm;          /* zlink SNDHWM = RCVHWM in bytes; 0: its default */
    int zlink_spin_us;           /* zlink's ZLINK_SPIN_US on every context (0: off) */
    int zlink_io_spin_us;        /* zlink's ZLINK_IO_SPIN_US on every context (0: off) */
} bench_case_t;

/* The low-latency window core_vs_libzmq gives zlink's waiters unless
 * --no-spin or --spin-us says otherwise; its I/O threads get none unless
 * --io-spin-us asks (on 2 cores a polling I/O thread slows the round trip;
 * doc/performance.md). */
#define BENCH_SPIN_US_DFLT 50

/* From this size on, zlink and libzmq send the payload by reference (the
 * zero-copy path: zlink_msg_init_data / zmq_msg_init_data borrowing
 * c->payload, which outlives the run's context), so that a large message
 * costs the transport's work and not the sender's copy of it; below it,
 * each message gets a copy, as an application building messages would.
 * nng always copies (nng_send). */
#define BENCH_ZERO_COPY_MIN ((size_t)64 * 1024)

/* A library half. Each call returns 0 on success; on failure it has already
 * printed an ERROR line and returns -1. Both create and destroy everything
 * they use. rtt_us has room for c->rtt_count samples (microseconds, in the
 * order measured). */
typedef struct bench_lib {
    const char *name;
    void (*version)(char *buf, size_t cap);
    /* Whether the library has an equivalent of pattern p (NULL: all). */
    int (*supports)(bench_pattern_t p);
    int (*throughput)(const bench_case_t *c, double *msgs_per_s);
    int (*latency)(const bench_case_t *c, double *rtt_us);
} bench_lib_t;

extern const bench_lib_t bench_lib_zlink;
extern const bench_lib_t bench_lib_zmq;
extern const bench_lib_t bench_lib_nng;

/* Topic of measured pub_sub messages, and of the warm-up messages that are
 * published until the subscription is known to be in place. */
#define BENCH_TOPIC_DATA "t"
#define BENCH_TOPIC_WARMUP "w"

/* The routing id the connecting ROUTER of router_router gives itself, so the
 * binding ROUTER can address it. */
#define BENCH_PEER_RID "bench-peer"

/* No progress for this long is a failure (10 s). */
#define BENCH_STALL_NS (10ull * 1000 * 1000 * 1000)

/* Pause between retries while waiting for a route or a subscription. */
#define BENCH_RETRY_SLEEP_US 200

const char *bench_pattern_name(bench_pattern_t p);
const char *bench_transport_name(bench_transport_t t);
/* 0 and *out set when name is known; -1 otherwise. */
int bench_pattern_parse(const char *name, bench_pattern_t *out);
int bench_transport_parse(const char *name, bench_transport_t *out);

uint64_t bench_now_ns(void);
void bench_sleep_us(unsigned us);

/* Writes a fresh bind endpoint for transport t into buf: a unique inproc
 * name, a unique ipc path under /tmp, or tcp://127.0.0.1:<tcp_any_port>
 * where tcp_any_port is the library's spelling of "any port" ("*" or "0"). */
void bench_endpoint(bench_transport_t t, const char *tcp_any_port, char *buf, size_t cap);
/* Removes the file behind an ipc:// endpoint (no-op for other endpoints). */
void bench_endpoint_cleanup(const char *endpoint);

/* Prints "ERROR,<lib>,<pattern>,<transport>,<size>,<message>". */
void bench_error(const bench_case_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- progress and watchdog ---- */

/* One counter per cache line, so the threads never share a line. */
typedef struct bench_progress {
    _Alignas(64) atomic_uint_fast64_t value;
} bench_progress_t;

/* Index 0 and 1: the two worker threads of a run. */
extern bench_progress_t bench_worker_progress[2];

/* Called by worker thread `worker` (0 or 1) after each message; cheap: a
 * relaxed store to a cache line only that thread writes. */
static inline void bench_progress_set(int worker, uint64_t value)
{
    atomic_store_explicit(&bench_worker_progress[worker].value, value,
                          memory_order_relaxed);
}

void bench_watchdog_start(void);
/* The case an ERROR from the watchdog names; c must outlive its use. */
void bench_watch_case(const bench_case_t *c);
/* Main thread: names the current phase and counts as progress. */
void bench_phase(const char *phase);

/* ---- threads ---- */

typedef void *(*bench_thread_fn)(void *arg);
/* Runs a(aa) and b(ba) on two new threads and joins both. Returns 0, or -1
 * if a thread could not be started (a then has already been joined). */
int bench_run_threads(bench_thread_fn a, void *aa, bench_thread_fn b, void *ba);

/* ---- statistics ---- */

void bench_sort(double *v, size_t n);
/* Median of v[0..n) (sorts v); NaN for n == 0. */
double bench_median(double *v, size_t n);
/* Nearest-rank percentile (0 < p <= 100) of sorted[0..n). */
double bench_percentile(const double *sorted, size_t n, double p);

#endif /* BENCH_COMMON_H */
