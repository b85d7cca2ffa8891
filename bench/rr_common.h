/*
 * rr_common.h — what the request/reply benchmark's server and client
 * programs share (bench/rr_core.c, bench/rr_grpc.cc, bench/rr_framework.c).
 *
 * Design notes
 * ------------
 * The driver (bench/framework_driver.c) measures each implementation with
 * two processes it starts itself, and talks to them through their standard
 * streams only. Every program speaks the same small protocol:
 *
 *   <prog> server
 *       binds a listener on 127.0.0.1 (any free port), then prints
 *       "READY,port=<p>" on stdout and serves until its stdin reaches end
 *       of file (the driver closes the pipe), then shuts down cleanly and
 *       exits 0.
 *   <prog> client --port P --inflight N --size S --warmup-ms W --duration-ms D
 *       connects to 127.0.0.1:P and keeps N requests of S bytes in flight.
 *       The measuring window is fixed before the first call (the gRPC
 *       client connects its channel first; ZLink connects inside W):
 *       [start + W, start + W + D). A call that completes inside it counts
 *       for throughput, and its latency (completion time minus start time,
 *       in microseconds) is a sample. No new call starts after the window;
 *       the client waits for the calls still in flight, then prints
 *       "INFO,version=<v>" and
 *       "SAMPLE,calls=<n>,window_s=<s>,throughput=<x>,p50_us=<y>,p99_us=<z>"
 *       and exits 0.
 *   Either side, on failure: one "ERROR,<what>" line on stdout, exit 1.
 *
 * Nothing here owns a thread or a lock; every function is for one thread
 * at a time (rr_samples_t belongs to whoever records into it). The header
 * is plain C and also compiles as C++ (rr_grpc.cc).
 */
#ifndef RR_COMMON_H
#define RR_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rr_mode { RR_SERVER = 1, RR_CLIENT = 2 } rr_mode_t;

typedef struct rr_args {
    rr_mode_t mode;
    int port;              /* client: the server's port */
    unsigned inflight;     /* client: calls kept in flight, 1..RR_MAX_INFLIGHT */
    size_t size;           /* client: request payload bytes, 1..RR_MAX_SIZE */
    uint64_t warmup_ns;    /* client: unrecorded time before the window */
    uint64_t duration_ns;  /* client: the measuring window */
} rr_args_t;

#define RR_MAX_INFLIGHT 100000u
#define RR_MAX_SIZE (1u << 20)

/* How long a client waits for the calls still in flight after its window,
 * and how long either side waits for a single event before it calls the
 * run stalled: a failure bound, never a pacing delay. */
#define RR_STALL_NS (20ull * 1000 * 1000 * 1000)

/* Parses argv as described above. Returns 0 with *out filled, or prints
 * "ERROR,usage: ..." and returns -1. */
int rr_parse_args(int argc, char **argv, rr_args_t *out);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t rr_now_ns(void);

/* Prints "ERROR,<message>" on stdout (flushed). */
void rr_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "READY,port=<port>" on stdout (flushed). */
void rr_ready(int port);

/* Blocks the calling thread until stdin reaches end of file (or fails).
 * Servers call it on their main thread to know when to stop. */
void rr_wait_stdin_eof(void);

/* A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0,
 * read back, closed), or -1 with errno set. For servers whose listener
 * cannot report the port it was given; another process may take the port
 * in between, so the caller must handle a failed bind. */
int rr_pick_free_port(void);

/* ---- latency samples ---- */

typedef struct rr_samples {
    double *us;     /* malloc'ed; n values in microseconds */
    size_t n;
    size_t cap;
    int out_of_memory; /* a sample was lost: the run must fail */
} rr_samples_t;

/* Reserves room for expected samples up front (may be 0). 0, or -1 on
 * ENOMEM (s stays usable and empty). */
int rr_samples_init(rr_samples_t *s, size_t expected);
/* Appends one sample, growing the buffer when full; on ENOMEM the sample
 * is dropped and s->out_of_memory set. Cheap enough for the hot loop. */
void rr_samples_add(rr_samples_t *s, double us);
void rr_samples_free(rr_samples_t *s);

/* Sorts s and prints the INFO and SAMPLE lines for calls completions over
 * window_ns. Returns 0, or prints an ERROR line and returns -1 when there is
 * no sample or a sample was lost. */
int rr_report(const char *version, uint64_t calls, uint64_t window_ns, rr_samples_t *s);

#ifdef __cplusplus
}
#endif

#endif /* RR_COMMON_H */
