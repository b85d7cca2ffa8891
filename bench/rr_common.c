/*
 * rr_common.c — argument parsing, clock, stream protocol lines, the free
 * port helper and latency statistics of the request/reply benchmark's
 * server and client programs. See rr_common.h.
 */
#include "rr_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

uint64_t rr_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void rr_error(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* The driver splits on commas only up to the message: keep it on one line. */
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    printf("ERROR,%s\n", msg);
    fflush(stdout);
}

void rr_ready(int port)
{
    printf("READY,port=%d\n", port);
    fflush(stdout);
}

void rr_wait_stdin_eof(void)
{
    char buf[256];
    for (;;) {
        ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
        if (n == 0)
            return;
        if (n < 0 && errno != EINTR)
            return;
    }
}

int rr_pick_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    int saved = errno;
    close(fd);
    errno = saved;
    return port;
}

/* ------------------------------------------------------------- arguments */

static void usage_error(const char *what)
{
    rr_error("usage: %s; expected 'server' or 'client --port P --inflight N --size S "
             "--warmup-ms W --duration-ms D'",
             what);
}

/* Parses a decimal in [lo, hi] into *out; -1 for anything else. */
static int parse_u64(const char *text, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!text || !*text)
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || text[0] == '-' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int rr_parse_args(int argc, char **argv, rr_args_t *out)
{
    memset(out, 0, sizeof *out);
    if (argc < 2) {
        usage_error("no mode");
        return -1;
    }
    if (strcmp(argv[1], "server") == 0) {
        if (argc != 2) {
            usage_error("server takes no options");
            return -1;
        }
        out->mode = RR_SERVER;
        return 0;
    }
    if (strcmp(argv[1], "client") != 0) {
        usage_error("unknown mode");
        return -1;
    }
    out->mode = RR_CLIENT;
    uint64_t port = 0, inflight = 0, size = 0, warmup = 0, duration = 0;
    int seen = 0;
    for (int i = 2; i < argc; i += 2) {
        const char *name = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        int rc;
        if (strcmp(name, "--port") == 0)
            rc = parse_u64(value, 1, 65535, &port), seen |= 1;
        else if (strcmp(name, "--inflight") == 0)
            rc = parse_u64(value, 1, RR_MAX_INFLIGHT, &inflight), seen |= 2;
        else if (strcmp(name, "--size") == 0)
            rc = parse_u64(value, 1, RR_MAX_SIZE, &size), seen |= 4;
        else if (strcmp(name, "--warmup-ms") == 0)
            rc = parse_u64(value, 0, 600000, &warmup), seen |= 8;
        else if (strcmp(name, "--duration-ms") == 0)
            rc = parse_u64(value, 1, 600000, &duration), seen |= 16;
        else
            rc = -1;
        if (rc != 0) {
            usage_error(value ? "bad or unknown option" : "option without a value");
            return -1;
        }
    }
    if (seen != 31) {
        usage_error("client needs all five options");
        return -1;
    }
    out->port = (int)port;
    out->inflight = (unsigned)inflight;
    out->size = (size_t)size;
    out->warmup_ns = warmup * 1000000ull;
    out->duration_ns = duration * 1000000ull;
    return 0;
}

/* ------------------------------------------------------------- samples */

int rr_samples_init(rr_samples_t *s, size_t expected)
{
    memset(s, 0, sizeof *s);
    if (expected == 0)
        return 0;
    s->us = malloc(expected * sizeof *s->us);
    if (!s->us)
        return -1;
    s->cap = expected;
    return 0;
}

void rr_samples_add(rr_samples_t *s, double us)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 65536;
        double *grown = realloc(s->us, cap * sizeof *grown);
        if (!grown) {
            s->out_of_memory = 1;
            return;
        }
        s->us = grown;
        s->cap = cap;
    }
    s->us[s->n++] = us;
}

void rr_samples_free(rr_samples_t *s)
{
    free(s->us);
    memset(s, 0, sizeof *s);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest sample with at least p % of them at or below. */
static double percentile(const double *sorted, size_t n, double p)
{
    size_t rank = (size_t)((p / 100.0) * (double)n + 0.999999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

int rr_report(const char *version, uint64_t calls, uint64_t window_ns, rr_samples_t *s)
{
    if (s->out_of_memory) {
        rr_error("out of memory while recording latency samples");
        return -1;
    }
    if (s->n == 0 || calls == 0 || window_ns == 0) {
        rr_error("no call completed inside the measuring window");
        return -1;
    }
    qsort(s->us, s->n, sizeof *s->us, cmp_double);
    double seconds = (double)window_ns / 1e9;
    printf("INFO,version=%s\n", version);
    printf("SAMPLE,calls=%llu,window_s=%.3f,throughput=%.1f,p50_us=%.2f,p99_us=%.2f\n",
           (unsigned long long)calls, seconds, (double)calls / seconds,
           percentile(s->us, s->n, 50.0), percentile(s->us, s->n, 99.0));
    fflush(stdout);
    return 0;
}
