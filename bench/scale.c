/*
 * scale.c — many DEALER connections to one ROUTER, ZLink against libzmq
 * (//bench:scale, issue 11).
 *
 *   scale [--conns 1,100,1000,5000] [--procs P] [--duration-ms D] [--size S]
 *         [--reps R] [--libs zlink,libzmq] [--queue-records Q]
 *
 * For each connection count N, each repetition and each library (the
 * libraries interleaved, so drift of the machine hits both alike), one
 * case: a ROUTER in one process, N DEALERs spread over min(P, N) client
 * processes (default P = 4), all over tcp on 127.0.0.1. Every socket keeps
 * its library's default HWMs (ZLink 4,096,000 bytes, 32,000 records of
 * 64 B; libzmq 1,000 messages), or with --queue-records Q both hold Q
 * records of S bytes. It reports
 *   throughput   records of S bytes (default 64) the ROUTER received in a
 *                window, per second, while every DEALER sends as fast as
 *                DONTWAIT sends let it; the window lasts D ms (default
 *                2,000) and until 50 records per connection came on
 *                average, at most 20 s (window_ms in the REP line);
 *   fairness     the smallest over the largest per-connection count in
 *                that window (1 = every connection got the same share);
 *                the REP line splits it: the worst min/max among the
 *                connections of one client process (fairness_in_proc) and
 *                min/max of the processes' mean shares
 *                (fairness_across_procs, how the processes were scheduled);
 *   receive CPU  the ROUTER's receiving thread's CPU time in that window
 *                per record received (its own work, not the I/O thread's);
 *   idle memory  the ROUTER process's RSS growth from before the first
 *                connection to all N connected and idle, per connection;
 *   send cost    ns per zlink_send_rid / zmq_send(rid frame + payload) from
 *                the ROUTER to peers picked at random by routing id, 200
 *                per peer (Q / 2 when that is fewer; at most 200,000), so
 *                no pipe reaches its HWM:
 *                the cost of finding the route and queueing the record.
 *                A hash lookup does not grow with N (core/src/sock/pipe.c
 *                zl_socket_route). Timed by the clock (send_ns) and by the
 *                sending thread's CPU time (send_cpu_ns), which leaves out
 *                the time the thread waited for a core on a loaded machine;
 *   hot send     the same (CPU time), aimed at the first min(N, 100) peers
 *                only (200 each): the lookups still search N routes, but
 *                only 100 pipes' memory is touched, so hot send at N
 *                against send at 100 tells the lookup from the memory.
 *
 * Output: one comma-separated record per line:
 *   HEADER,...
 *   REP,<lib>,<conns>,<rep>,throughput=<msgs/s>,fairness=<min/max>,
 *       idle_bytes_per_conn=<b>,send_ns=<ns>,send_cpu_ns=<ns>,
 *       send_hot_cpu_ns=<ns>,recv_cpu_ns=<ns>,window_ms=<ms>,
 *       dealer_full=<DONTWAIT sends refused or skipped in the window>,
 *       fairness_in_proc=<min/max>,fairness_across_procs=<min/max>
 *   RESULT,<lib>,<conns>,throughput_msgs_per_s|fairness_min_max|
 *       idle_bytes_per_conn|router_send_ns|router_send_cpu_ns|
 *       router_send_hot_cpu_ns|router_recv_cpu_ns,<median>
 *   RATIO,scale,<conns>,throughput|idle_bytes_per_conn|router_send_ns|
 *       router_send_cpu_ns|router_send_hot_cpu_ns|router_recv_cpu_ns,
 *       zlink_vs_libzmq,
 *       <zlink / libzmq>
 *   RATIO,scale,router_send_growth,<lib>,<send_ns at the last count /
 *       at the first count of at least 100> (with one peer every send
 *       finds its pipe awake; from 100 peers on nearly every send wakes
 *       another pipe, so only the lookup can grow)
 *   RATIO,scale,router_send_cpu_growth|router_send_hot_cpu_growth,<lib>,
 *       <the same for the CPU times>
 *   ERROR,<lib>,<conns>,<what failed>
 * Exit status: 0, 1 when a case failed, 2 for bad usage.
 *
 * Design notes
 * ------------
 * One program, three roles; the driver (no role argument) re-executes its
 * own binary for the others (bench/procs.h) and talks to them through
 * their standard streams, one line per message:
 *
 *   router   binds a ROUTER (LINGER 0, RCVTIMEO 100 ms; libzmq:
 *            ROUTER_MANDATORY 1) on tcp://127.0.0.1 and prints
 *            "READY,port=<p>"; receives until each of the N DEALERs (routing
 *            ids "d0".."d<N-1>") said hello, prints
 *            "CONNECTED,rss0=<bytes>,rss1=<bytes>", waits for "GO", counts
 *            records per connection for the window and prints
 *            "TRAFFIC,received=<n>,min=<n>,max=<n>,window_ms=<ms>,
 *            cpu_ns=<receiving CPU ns per record>,in_proc=<min/max>,
 *            across_procs=<min/max>", waits
 *            for "SEND" (the clients have stopped), times the sends by
 *            routing id and prints "SEND,sends=<n>,ns=<ns per send>,
 *            cpu_ns=<ns>,hot_sends=<n>,hot_ns=<ns>,hot_cpu_ns=<ns>", then
 *            "DONE", and stays until stdin's end of file.
 *   clients  K DEALERs "d<F>".."d<F+K-1>" in one context; each connects and
 *            sends a hello (blocking, SNDTIMEO 20 s); prints "CONNECTED";
 *            after "GO" sends S-byte records round-robin over its DEALERs
 *            with DONTWAIT (a full pipe is skipped, not waited for; a ZLink
 *            DEALER that was refused is skipped until it took the WRITABLE
 *            record its refusal's wait token gives, scale_zlink.c) until
 *            "STOP" (stdin is looked at every millisecond), prints
 *            "SENT,ok=<n>,full=<n>" and stays until stdin's end of file
 *            (it never reads what the ROUTER sends it).
 *   driver   GO to the router, then to the clients; after the router's
 *            TRAFFIC line STOP to the clients, after their SENT lines SEND
 *            to the router. Every wait on a child is bounded.
 *
 * Each side has one context with one I/O thread, as in core_vs_libzmq; a
 * client context takes up to SC_MAX_PER_PROC sockets (libzmq's default
 * MAX_SOCKETS is 1,023, ZLink's 4,095: both are raised). RLIMIT_NOFILE is
 * raised to its hard limit in every role.
 *
 * Threads: one per process (plus each library's I/O thread). No locks.
 */
#include "procs.h"
#include "rr_common.h"
#include "scale_libs.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

const char *bp_name = "scale";

#define SC_MAX_CONNS 20000
#define SC_MAX_PROCS 64
#define SC_MAX_REPS 21
#define SC_MAX_COUNTS 16
#define SC_SENDS_PER_PEER 200
#define SC_MAX_SENDS 200000
#define SC_STALL_NS (30ull * 1000 * 1000 * 1000)
/* The traffic window lasts D ms and until the ROUTER received this many
 * records per connection on average, up to SC_MAX_WINDOW_MS (whichever
 * ends last): a min/max share among 5,000 connections means little when
 * each got a handful. */
#define SC_RECORDS_PER_CONN 50
#define SC_MAX_WINDOW_MS 20000
/* The second send phase: the same lookups among N routes, aimed at this
 * many peers only (so only their pipes' memory is touched). */
#define SC_HOT_PEERS 100
/* A client looks at its stdin (for STOP) at most this often. */
#define SC_CHECK_NS (1000ull * 1000)

static const sc_lib_t *lib_named(const char *name)
{
    if (strcmp(name, "zlink") == 0)
        return &sc_lib_zlink;
    if (strcmp(name, "libzmq") == 0)
        return &sc_lib_zmq;
    return NULL;
}

/* ----------------------------------------------------------------- roles */

typedef struct sc_role_opts {
    const sc_lib_t *lib;
    long conns, first, count, size, duration_ms, port, procs, qrecs;
} sc_role_opts_t;

static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* Waits for a line equal to word on stdin. 0, or -1 at end of file. */
static int wait_word(const char *word)
{
    char line[BP_LINE];
    int got;
    while ((got = bp_stdin_line(line, sizeof line, -1)) > 0 && strcmp(line, word) != 0) {
    }
    return got > 0 ? 0 : -1;
}

static void wait_eof(void)
{
    char line[BP_LINE];
    while (bp_stdin_line(line, sizeof line, -1) >= 0) {
    }
}

/* The index of routing id "d<i>" below n, or -1. */
static long rid_index(const char *rid, long n)
{
    if (rid[0] != 'd' || rid[1] < '0' || rid[1] > '9')
        return -1;
    char *end;
    long i = strtol(rid + 1, &end, 10);
    return *end == '\0' && i < n ? i : -1;
}

/* This thread's CPU time in ns (not the time it waited for a core). */
static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* count sends by routing id to peers "d0".."d<peers-1>" picked at random
 * (xorshift; the names made before the clock starts). ns per send of the
 * clock and of this thread's CPU (*cpu_ns), or -1 after a message. */
static double timed_sends(const sc_lib_t *L, void *r, long peers, long count,
                          const void *payload, size_t size, double *cpu_ns)
{
    char (*rids)[SC_RID_CAP] = malloc((size_t)count * SC_RID_CAP);
    if (rids == NULL) {
        rr_error("router: out of memory");
        return -1;
    }
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (long k = 0; k < count; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        snprintf(rids[k], SC_RID_CAP, "d%u", (unsigned)(x % (uint64_t)peers));
    }
    uint64_t t0 = rr_now_ns(), c0 = thread_cpu_ns();
    for (long k = 0; k < count; k++) {
        int rc = L->router_send(r, rids[k], payload, size);
        if (rc != 0) {
            if (rc > 0)
                rr_error("router: no room for send %ld (below every HWM)", k);
            free(rids);
            return -1;
        }
    }
    uint64_t t1 = rr_now_ns(), c1 = thread_cpu_ns();
    free(rids);
    *cpu_ns = (double)(c1 - c0) / (double)count;
    return (double)(t1 - t0) / (double)count;
}

static int run_router(const sc_role_opts_t *o)
{
    const sc_lib_t *L = o->lib;
    long n = o->conns;
    uint64_t *per = calloc((size_t)n, sizeof *per);
    unsigned char *buf = malloc((size_t)o->size + 64), *payload = malloc((size_t)o->size);
    if (per == NULL || buf == NULL || payload == NULL) {
        rr_error("router: out of memory");
        return 1;
    }
    memset(payload, 'r', (size_t)o->size);
    void *ctx = L->ctx_new();
    if (ctx == NULL)
        return 1;
    int status = 1, port = 0;
    void *r = L->router(ctx, &port, o->qrecs, o->size);
    if (r == NULL)
        goto out_ctx;
    uint64_t rss0 = bp_proc_status("VmRSS");
    printf("READY,port=%d\n", port);
    fflush(stdout);

    /* Every DEALER's hello. */
    char rid[SC_RID_CAP];
    size_t got = 0;
    long hellos = 0;
    uint64_t deadline = rr_now_ns() + SC_STALL_NS + (uint64_t)n * 10000000ull;
    while (hellos < n) {
        int rc = L->router_recv(r, rid, buf, (size_t)o->size + 64, &got);
        if (rc < 0)
            goto out;
        if (rc == 0 && rr_now_ns() > deadline) {
            rr_error("router: %ld of %ld DEALERs said hello in time", hellos, n);
            goto out;
        }
        long i = rc > 0 ? rid_index(rid, n) : -1;
        if (i >= 0 && per[i] == 0) {
            per[i] = 1;
            hellos++;
        }
    }
    memset(per, 0, (size_t)n * sizeof *per);
    printf("CONNECTED,rss0=%llu,rss1=%llu\n", (unsigned long long)rss0,
           (unsigned long long)bp_proc_status("VmRSS"));
    fflush(stdout);
    if (wait_word("GO") != 0)
        goto out;

    /* The traffic window. */
    uint64_t start = rr_now_ns(), now = start, received = 0, cpu0 = thread_cpu_ns();
    uint64_t least = start + (uint64_t)o->duration_ms * 1000000ull;
    uint64_t most = start + (uint64_t)SC_MAX_WINDOW_MS * 1000000ull;
    uint64_t want = (uint64_t)n * SC_RECORDS_PER_CONN;
    while ((now = rr_now_ns()) < least || (received < want && now < most)) {
        int rc = L->router_recv(r, rid, buf, (size_t)o->size + 64, &got);
        if (rc < 0)
            goto out;
        long i = rc > 0 && got == (size_t)o->size ? rid_index(rid, n) : -1;
        if (i >= 0) {
            per[i]++;
            received++;
        }
    }
    uint64_t lo = per[0], hi = per[0];
    for (long i = 1; i < n; i++) {
        lo = per[i] < lo ? per[i] : lo;
        hi = per[i] > hi ? per[i] : hi;
    }
    double recv_cpu = received > 0 ? (double)(thread_cpu_ns() - cpu0) / (double)received : 0;
    /* The same shares split by client process (the driver gives process p
     * the contiguous ids it gives run_clients): the worst min/max inside one
     * process, which only the ROUTER's fair queue and the process's own
     * round-robin shape, and min/max of the processes' mean shares, which
     * is how the machine scheduled the processes. */
    long nprocs = o->procs < 1 ? 1 : (o->procs < n ? o->procs : n);
    double in_proc = 1, lo_mean = 0, hi_mean = 0;
    for (long p = 0, first = 0; p < nprocs; p++) {
        long count = n / nprocs + (p < n % nprocs ? 1 : 0);
        uint64_t plo = per[first], phi = per[first], sum = 0;
        for (long i = first; i < first + count; i++) {
            plo = per[i] < plo ? per[i] : plo;
            phi = per[i] > phi ? per[i] : phi;
            sum += per[i];
        }
        double f = phi > 0 ? (double)plo / (double)phi : 0, mean = (double)sum / (double)count;
        in_proc = f < in_proc ? f : in_proc;
        lo_mean = p == 0 || mean < lo_mean ? mean : lo_mean;
        hi_mean = p == 0 || mean > hi_mean ? mean : hi_mean;
        first += count;
    }
    printf("TRAFFIC,received=%llu,min=%llu,max=%llu,window_ms=%.1f,cpu_ns=%.1f,in_proc=%.3f,"
           "across_procs=%.3f\n",
           (unsigned long long)received, (unsigned long long)lo, (unsigned long long)hi,
           (double)(now - start) / 1e6, recv_cpu, in_proc, hi_mean > 0 ? lo_mean / hi_mean : 0);
    fflush(stdout);
    /* The clients stop first, so that no incoming traffic competes with
     * the timed sends. */
    if (wait_word("SEND") != 0)
        goto out;

    /* Sends by routing id to peers picked at random, timed: first among
     * all N, then among the first SC_HOT_PEERS only. */
    /* At most half of a --queue-records HWM per peer: no pipe may fill. */
    long per_peer = o->qrecs > 0 && o->qrecs / 2 < SC_SENDS_PER_PEER
                        ? (o->qrecs / 2 > 0 ? o->qrecs / 2 : 1)
                        : SC_SENDS_PER_PEER;
    long sends = n * per_peer < SC_MAX_SENDS ? n * per_peer : SC_MAX_SENDS;
    long hot = n < SC_HOT_PEERS ? n : SC_HOT_PEERS;
    long hot_sends = hot * per_peer < sends ? hot * per_peer : sends;
    double cpu_all = 0, cpu_hot = 0;
    double ns_all = timed_sends(L, r, n, sends, payload, (size_t)o->size, &cpu_all);
    double ns_hot = ns_all < 0 ? -1
                               : timed_sends(L, r, hot, hot_sends, payload, (size_t)o->size,
                                             &cpu_hot);
    if (ns_hot < 0)
        goto out;
    printf("SEND,sends=%ld,ns=%.1f,cpu_ns=%.1f,hot_sends=%ld,hot_ns=%.1f,hot_cpu_ns=%.1f\n"
           "DONE\n",
           sends, ns_all, cpu_all, hot_sends, ns_hot, cpu_hot);
    fflush(stdout);
    status = 0;
    wait_eof();
out:
    L->close(r);
out_ctx:
    L->ctx_term(ctx);
    free(per);
    free(buf);
    free(payload);
    return status;
}

static int run_clients(const sc_role_opts_t *o)
{
    const sc_lib_t *L = o->lib;
    void **d = calloc((size_t)o->count, sizeof *d);
    unsigned char *payload = malloc((size_t)o->size);
    if (d == NULL || payload == NULL) {
        rr_error("clients: out of memory");
        return 1;
    }
    memset(payload, 'c', (size_t)o->size);
    void *ctx = L->ctx_new();
    if (ctx == NULL)
        return 1;
    int status = 1;
    long made = 0;
    for (; made < o->count; made++) {
        char rid[SC_RID_CAP];
        snprintf(rid, sizeof rid, "d%ld", o->first + made);
        if ((d[made] = L->dealer(ctx, rid, (int)o->port, o->qrecs, o->size)) == NULL)
            goto out;
    }
    for (long i = 0; i < o->count; i++)
        if (L->send(d[i], "h", 1, 0) != 0)
            goto out;
    printf("CONNECTED\n");
    fflush(stdout);
    if (wait_word("GO") != 0)
        goto out;
    /* Until the driver says STOP (the ROUTER's window is over), bounded. */
    uint64_t now = rr_now_ns(), next_check = now + SC_CHECK_NS, ok = 0, full = 0;
    uint64_t bound = now + ((uint64_t)o->duration_ms + SC_MAX_WINDOW_MS) * 1000000ull + SC_STALL_NS;
    char line[BP_LINE];
    for (;;) {
        if ((now = rr_now_ns()) >= next_check) {
            int got = bp_stdin_line(line, sizeof line, 0);
            if (got < 0 || now >= bound)
                goto out;
            if (got > 0 && strcmp(line, "STOP") == 0)
                break;
            next_check = now + SC_CHECK_NS;
        }
        for (long i = 0; i < o->count; i++) {
            int rc = L->send(d[i], payload, (size_t)o->size, 1);
            if (rc < 0)
                goto out;
            if (rc == 0)
                ok++;
            else
                full++;
        }
    }
    printf("SENT,ok=%llu,full=%llu\n", (unsigned long long)ok, (unsigned long long)full);
    fflush(stdout);
    status = 0;
    wait_eof();
out:
    for (long i = 0; i < made; i++)
        L->close(d[i]);
    L->ctx_term(ctx);
    free(d);
    free(payload);
    return status;
}

/* ----------------------------------------------------------------- driver */

typedef struct sc_opts {
    long counts[SC_MAX_COUNTS];
    int ncounts;
    long procs, duration_ms, size, qrecs;
    int reps;
    const sc_lib_t *libs[2];
    int nlibs;
} sc_opts_t;

typedef struct sc_rep {
    double thr, fair, idle, send_ns, send_cpu_ns, hot_cpu_ns, recv_cpu_ns, window_ms, full;
    double in_proc, across_procs;
} sc_rep_t;

/* One case: a ROUTER and its clients for lib at n connections. */
static int one_case(const sc_opts_t *o, const sc_lib_t *L, long n, sc_rep_t *res)
{
    char a_n[24], a_size[24], a_dur[24], a_port[24], line[BP_LINE];
    snprintf(a_n, sizeof a_n, "%ld", n);
    snprintf(a_size, sizeof a_size, "%ld", o->size);
    snprintf(a_dur, sizeof a_dur, "%ld", o->duration_ms);
    char a_procs[24], a_q[24];
    snprintf(a_procs, sizeof a_procs, "%ld", o->procs);
    snprintf(a_q, sizeof a_q, "%ld", o->qrecs);
    char *rargs[] = {"--lib", (char *)L->name, "--conns", a_n, "--size", a_size,
                     "--duration-ms", a_dur, "--procs", a_procs, "--queue-records", a_q, NULL};
    bp_child_t *router = bp_spawn("router", rargs);
    if (router == NULL ||
        bp_expect_line(router, "router", "READY,port=", line, sizeof line,
                       rr_now_ns() + SC_STALL_NS, NULL) != 0)
        goto fail;
    snprintf(a_port, sizeof a_port, "%d", atoi(line + strlen("READY,port=")));

    long nprocs = n < o->procs ? n : o->procs;
    bp_child_t *clients[SC_MAX_PROCS];
    for (long p = 0, first = 0; p < nprocs; p++) {
        long count = n / nprocs + (p < n % nprocs ? 1 : 0);
        char a_first[24], a_count[24];
        snprintf(a_first, sizeof a_first, "%ld", first);
        snprintf(a_count, sizeof a_count, "%ld", count);
        char *cargs[] = {"--lib", (char *)L->name, "--port", a_port, "--first", a_first,
                         "--count", a_count, "--size", a_size, "--duration-ms", a_dur,
                         "--queue-records", a_q, NULL};
        if ((clients[p] = bp_spawn("clients", cargs)) == NULL)
            goto fail;
        first += count;
    }
    uint64_t bound = rr_now_ns() + SC_STALL_NS + (uint64_t)n * 10000000ull;
    for (long p = 0; p < nprocs; p++)
        if (bp_expect_line(clients[p], "clients", "CONNECTED", line, sizeof line, bound, NULL) != 0)
            goto fail;
    if (bp_expect_line(router, "router", "CONNECTED,", line, sizeof line, bound, NULL) != 0)
        goto fail;
    res->idle = (bp_field(line, "rss1") - bp_field(line, "rss0")) / (double)n;
    if (bp_say(router, "GO\n") != 0)
        goto fail;
    for (long p = 0; p < nprocs; p++)
        if (bp_say(clients[p], "GO\n") != 0)
            goto fail;
    bound = rr_now_ns() + ((uint64_t)o->duration_ms + SC_MAX_WINDOW_MS) * 1000000ull + SC_STALL_NS;
    if (bp_expect_line(router, "router", "TRAFFIC,", line, sizeof line, bound, NULL) != 0)
        goto fail;
    res->window_ms = bp_field(line, "window_ms");
    res->recv_cpu_ns = bp_field(line, "cpu_ns");
    res->thr = res->window_ms > 0 ? bp_field(line, "received") * 1000.0 / res->window_ms : 0;
    double hi = bp_field(line, "max");
    res->fair = hi > 0 ? bp_field(line, "min") / hi : 0;
    res->in_proc = bp_field(line, "in_proc");
    res->across_procs = bp_field(line, "across_procs");
    for (long p = 0; p < nprocs; p++)
        if (bp_say(clients[p], "STOP\n") != 0)
            goto fail;
    res->full = 0;
    for (long p = 0; p < nprocs; p++) {
        if (bp_expect_line(clients[p], "clients", "SENT,", line, sizeof line, bound, NULL) != 0)
            goto fail;
        res->full += bp_field(line, "full");
    }
    if (bp_say(router, "SEND\n") != 0 ||
        bp_expect_line(router, "router", "SEND,", line, sizeof line, bound, NULL) != 0)
        goto fail;
    res->send_ns = bp_field(line, "ns");
    res->send_cpu_ns = bp_field(line, "cpu_ns");
    res->hot_cpu_ns = bp_field(line, "hot_cpu_ns");
    if (bp_expect_line(router, "router", "DONE", line, sizeof line, bound, NULL) != 0)
        goto fail;
    int failed = 0;
    for (long p = 0; p < nprocs; p++)
        failed |= bp_finish(clients[p], "clients", SC_STALL_NS) != 0;
    failed |= bp_finish(router, "router", SC_STALL_NS) != 0;
    return failed ? -1 : 0;
fail:
    bp_reap_all();
    return -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int parse_opts(int argc, char **argv, sc_opts_t *o)
{
    memset(o, 0, sizeof *o);
    static const long dflt[] = {1, 100, 1000, 5000};
    for (int i = 0; i < 4; i++)
        o->counts[i] = dflt[i];
    o->ncounts = 4;
    o->procs = 4;
    o->duration_ms = 2000;
    o->size = 64;
    o->reps = 1;
    o->libs[0] = &sc_lib_zlink;
    o->libs[1] = &sc_lib_zmq;
    o->nlibs = 2;
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long x = 0;
        if (v == NULL)
            return -1;
        i++;
        if (strcmp(k, "--conns") == 0) {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", v);
            o->ncounts = 0;
            for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
                 t = strtok_r(NULL, ",", &save)) {
                if (o->ncounts == SC_MAX_COUNTS || bp_parse_long(t, 1, SC_MAX_CONNS, &x) != 0)
                    return -1;
                o->counts[o->ncounts++] = x;
            }
            if (o->ncounts == 0)
                return -1;
        } else if (strcmp(k, "--procs") == 0 && bp_parse_long(v, 1, SC_MAX_PROCS, &x) == 0) {
            o->procs = x;
        } else if (strcmp(k, "--duration-ms") == 0 && bp_parse_long(v, 100, 600000, &x) == 0) {
            o->duration_ms = x;
        } else if (strcmp(k, "--size") == 0 && bp_parse_long(v, 1, 1 << 20, &x) == 0) {
            o->size = x;
        } else if (strcmp(k, "--queue-records") == 0 &&
                   bp_parse_long(v, 0, 1000000, &x) == 0) {
            o->qrecs = x;
        } else if (strcmp(k, "--reps") == 0 && bp_parse_long(v, 1, SC_MAX_REPS, &x) == 0) {
            o->reps = (int)x;
        } else if (strcmp(k, "--libs") == 0) {
            char buf[64];
            snprintf(buf, sizeof buf, "%s", v);
            o->nlibs = 0;
            for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
                 t = strtok_r(NULL, ",", &save)) {
                const sc_lib_t *L = lib_named(t);
                if (L == NULL || o->nlibs == 2)
                    return -1;
                o->libs[o->nlibs++] = L;
            }
            if (o->nlibs == 0)
                return -1;
        } else {
            return -1;
        }
    }
    for (int c = 0; c < o->ncounts; c++)
        if ((o->counts[c] + o->procs - 1) / o->procs > SC_MAX_PER_PROC)
            return -1;
    return 0;
}

/* The per-case metrics, in sc_rep_t's order, and their names. */
#define SC_METRICS 7
static const char *const metric[SC_METRICS] = {
    "throughput_msgs_per_s",  "fairness_min_max",   "idle_bytes_per_conn",
    "router_send_ns",         "router_send_cpu_ns", "router_send_hot_cpu_ns",
    "router_recv_cpu_ns"};
static const char *const ratio_name[SC_METRICS] = {
    "throughput",     "fairness",           "idle_bytes_per_conn",
    "router_send_ns", "router_send_cpu_ns", "router_send_hot_cpu_ns",
    "router_recv_cpu_ns"};
static const char *const growth_name[3] = {"router_send_growth", "router_send_cpu_growth",
                                           "router_send_hot_cpu_growth"};

static int run_driver(const sc_opts_t *o)
{
    char zl[32], zm[32];
    sc_lib_zlink.version(zl, sizeof zl);
    sc_lib_zmq.version(zm, sizeof zm);
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    printf("HEADER,nproc=%ld,date=%s,zlink=%s,libzmq=%s,procs=%ld,duration_ms=%ld,size=%ld,"
           "reps=%d,queue_records=%ld\n",
           sysconf(_SC_NPROCESSORS_ONLN), date, zl, zm, o->procs, o->duration_ms, o->size,
           o->reps, o->qrecs);
    fflush(stdout);
    int failed = 0;
    /* Per library, the three send costs (clock, CPU, hot CPU). */
    double send_first[2][3] = {{0}}, send_last[2][3] = {{0}};
    /* The growth of the send cost is taken from the first count of at
     * least 100 peers: with one peer every send finds its pipe already
     * awake, from 100 on nearly every send wakes another pipe, whatever N. */
    int growth_base = 0;
    while (growth_base + 1 < o->ncounts && o->counts[growth_base] < 100)
        growth_base++;
    for (int c = 0; c < o->ncounts; c++) {
        long n = o->counts[c];
        sc_rep_t reps[2][SC_MAX_REPS];
        int done[2] = {0, 0}, bad[2] = {0, 0};
        for (int rep = 0; rep < o->reps; rep++) {
            for (int l = 0; l < o->nlibs; l++) {
                if (bad[l])
                    continue;
                sc_rep_t *r = &reps[l][done[l]];
                if (one_case(o, o->libs[l], n, r) != 0) {
                    printf("ERROR,%s,%ld,a role failed (see stderr)\n", o->libs[l]->name, n);
                    bad[l] = 1;
                    failed = 1;
                    continue;
                }
                done[l]++;
                printf("REP,%s,%ld,%d,throughput=%.0f,fairness=%.3f,idle_bytes_per_conn=%.0f,"
                       "send_ns=%.1f,send_cpu_ns=%.1f,send_hot_cpu_ns=%.1f,recv_cpu_ns=%.1f,"
                       "window_ms=%.0f,dealer_full=%.0f,fairness_in_proc=%.3f,"
                       "fairness_across_procs=%.3f\n",
                       o->libs[l]->name, n, rep + 1, r->thr, r->fair, r->idle, r->send_ns,
                       r->send_cpu_ns, r->hot_cpu_ns, r->recv_cpu_ns, r->window_ms, r->full,
                       r->in_proc, r->across_procs);
                fflush(stdout);
            }
        }
        double med[2][SC_METRICS];
        for (int l = 0; l < o->nlibs; l++) {
            if (bad[l])
                continue;
            double v[SC_METRICS][SC_MAX_REPS];
            for (int k = 0; k < done[l]; k++) {
                v[0][k] = reps[l][k].thr;
                v[1][k] = reps[l][k].fair;
                v[2][k] = reps[l][k].idle;
                v[3][k] = reps[l][k].send_ns;
                v[4][k] = reps[l][k].send_cpu_ns;
                v[5][k] = reps[l][k].hot_cpu_ns;
                v[6][k] = reps[l][k].recv_cpu_ns;
            }
            for (int m = 0; m < SC_METRICS; m++) {
                med[l][m] = median(v[m], done[l]);
                printf("RESULT,%s,%ld,%s,%.3f\n", o->libs[l]->name, n, metric[m], med[l][m]);
            }
            for (int m = 0; m < 3; m++) {
                if (c == growth_base)
                    send_first[l][m] = med[l][3 + m];
                send_last[l][m] = med[l][3 + m];
            }
        }
        if (o->nlibs == 2 && !bad[0] && !bad[1]) {
            /* Every metric but fairness (a share, not a cost). */
            for (int m = 0; m < SC_METRICS; m++)
                if (m != 1)
                    printf("RATIO,scale,%ld,%s,%s_vs_%s,%.3f\n", n, ratio_name[m],
                           o->libs[0]->name, o->libs[1]->name,
                           med[1][m] > 0 ? med[0][m] / med[1][m] : 0);
        }
        fflush(stdout);
    }
    if (!failed && growth_base + 1 < o->ncounts)
        for (int l = 0; l < o->nlibs; l++)
            for (int m = 0; m < 3; m++)
                printf("RATIO,scale,%s,%s,%.3f\n", growth_name[m], o->libs[l]->name,
                       send_first[l][m] > 0 ? send_last[l][m] / send_first[l][m] : 0);
    return failed;
}

static int parse_role(int argc, char **argv, sc_role_opts_t *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        long x = 0;
        if (strcmp(k, "--lib") == 0) {
            o->lib = lib_named(v);
            continue;
        }
        if (bp_parse_long(v, 0, 1L << 40, &x) != 0)
            return -1;
        if (strcmp(k, "--conns") == 0)
            o->conns = x;
        else if (strcmp(k, "--first") == 0)
            o->first = x;
        else if (strcmp(k, "--count") == 0)
            o->count = x;
        else if (strcmp(k, "--size") == 0)
            o->size = x;
        else if (strcmp(k, "--duration-ms") == 0)
            o->duration_ms = x;
        else if (strcmp(k, "--port") == 0)
            o->port = x;
        else if (strcmp(k, "--procs") == 0)
            o->procs = x;
        else if (strcmp(k, "--queue-records") == 0)
            o->qrecs = x;
        else
            return -1;
    }
    return o->lib != NULL && o->size > 0 && o->duration_ms > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 2 && (strcmp(argv[1], "router") == 0 || strcmp(argv[1], "clients") == 0)) {
        sc_role_opts_t ro;
        if (parse_role(argc, argv, &ro) != 0) {
            rr_error("usage: bad role arguments");
            return 2;
        }
        raise_fd_limit();
        if (argv[1][0] == 'r')
            return ro.conns > 0 ? run_router(&ro) : 2;
        return ro.count > 0 && ro.port > 0 ? run_clients(&ro) : 2;
    }
    sc_opts_t o;
    if (parse_opts(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: scale [--conns 1,100,1000,5000] [--procs P] [--duration-ms D] "
                        "[--size S] [--reps R] [--libs zlink,libzmq] [--queue-records Q]\n");
        return 2;
    }
    raise_fd_limit();
    int rc = run_driver(&o);
    bp_reap_all();
    return rc;
}
