/*
 * framework_driver.c — the framework request/reply benchmark
 * (//bench:framework, doc/performance.md "Framework request/reply").
 *
 *   framework --language L [--quick] [--only core|grpc|framework|L]
 *             [--reps R] [--duration-ms D] [--warmup-ms W]
 *             [--core-bin P] [--grpc-bin P] [--framework-bin P] [--binding-bin P]
 *             [--core-spin-us S]
 *
 * Design notes
 * ------------
 * One invocation measures 64-byte request/reply over tcp on 127.0.0.1 for
 * three implementations, each at 1 and at 1,000 calls in flight:
 *   core       the raw Core: DEALER zlink_request + completion records
 *              against ROUTER zlink_router_recv + zlink_reply (rr_core.c)
 *   grpc       gRPC C++ generic async API, raw byte buffers (rr_grpc.cc)
 *   framework  the ZLink framework: Host + ClientServer channel, calls
 *              with a completion callback (rr_framework.c), through the C ABI
 *   L          with --language L other than c: the same framework program
 *              written with the L binding (framework_L beside this binary,
 *              or --binding-bin), server and client both in L; the ratio
 *              RATIO,request_reply,L_vs_c compares its throughput at 1,000
 *              in flight with the C program's
 * Each implementation is a separate program; for every run the driver
 * starts its server process, reads "READY,port=<p>" from it, starts its
 * client process with the port, reads the client's SAMPLE line, then closes
 * the server's stdin and waits for it to exit (rr_common.h describes the
 * protocol). Nothing is shared between runs: fresh processes every time.
 *
 * Order and statistics: R repetitions; in each, every implementation runs
 * at 1 then at 1,000 in flight, and the order of the implementations
 * rotates by one per repetition (core grpc framework, grpc framework core,
 * ...) so slow drift of the machine hits all of them alike. RESULT lines
 * give the median over the repetitions of throughput, of p50 and of p99.
 *
 * Failure is never silent: a program that is missing (the framework's
 * binary cannot be linked until the runtime lands), does not start, does
 * not answer within its bound, or reports ERROR gives a FAIL line naming
 * the implementation, the in-flight count and the cause, and the exit
 * status 1. Every wait on a child is bounded (poll on its stdout pipe with
 * a deadline); a child past its bound is killed with SIGKILL.
 *
 * --core-spin-us S gives the core implementation's contexts (client and
 * server) the low-latency window ZLINK_SPIN_US = S through the environment
 * variable ZLINK_RR_CORE_SPIN_US, which rr_core.c reads; default 0.
 *
 * Threads: one. The driver owns every child it starts and reaps each one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPS 51
#define SIZE_BYTES 64
#define OUT_CAP 8192

enum { IMPL_CORE = 0, IMPL_GRPC, IMPL_FRAMEWORK, IMPL_BINDING, IMPL_COUNT };
/* The binding's entries are filled from --language (set_binding). */
static const char *impl_names[IMPL_COUNT] = {"core", "grpc", "framework", "binding"};
static const char *impl_programs[IMPL_COUNT] = {"framework_core", "framework_grpc",
                                                "framework_zlink", NULL};
static const char *impl_targets[IMPL_COUNT] = {
    "//bench:framework_core", "//bench:framework_grpc", "//bench:framework_zlink", NULL};

/* The languages with a binding, and the program and target of each. */
static const char *const binding_langs[] = {"cpp", "java", "dotnet", "node"};
#define N_BINDINGS (sizeof binding_langs / sizeof binding_langs[0])

static void set_binding(const char *lang)
{
    static char program[64], target[96];
    snprintf(program, sizeof program, "framework_%s", lang);
    snprintf(target, sizeof target, "//bench:framework_%s", lang);
    impl_names[IMPL_BINDING] = lang;
    impl_programs[IMPL_BINDING] = program;
    impl_targets[IMPL_BINDING] = target;
}

static const unsigned inflights[] = {1, 1000};
#define N_INFLIGHT (sizeof inflights / sizeof inflights[0])

typedef struct options {
    const char *language;
    int has_binding;           /* --language names a binding (not c) */
    int quick;
    const char *only_name;     /* --only's value */
    int only;                  /* -1: all */
    int reps;
    long duration_ms;
    long warmup_ms;
    const char *bin[IMPL_COUNT];
} options_t;

typedef struct series {
    int failed;                /* a FAIL line was printed */
    int done;
    double thr[MAX_REPS], p50[MAX_REPS], p99[MAX_REPS];
} series_t;

typedef struct sample {
    double throughput, p50, p99;
    char version[64];
} sample_t;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: framework --language L [--quick] [--only core|grpc|framework|L]\n"
            "                 [--reps R] [--duration-ms D] [--warmup-ms W]\n"
            "                 [--core-bin PATH] [--grpc-bin PATH] [--framework-bin PATH]\n"
            "                 [--binding-bin PATH] [--core-spin-us S]\n"
            "  --language L   the framework binding to measure beside the C one: c, cpp,\n"
            "                 java, dotnet or node\n"
            "  --quick        smoke run: 1 repetition of 300 ms after 100 ms of warm-up\n"
            "  --only I       measure one implementation\n"
            "  R, D, W        repetitions (default 3), measuring window per run (2000 ms),\n"
            "                 unrecorded warm-up per run (500 ms)\n"
            "  --*-bin        the programs to run (default: beside this binary)\n"
            "  --core-spin-us the core programs' ZLINK_SPIN_US (0..10000, default 0)\n");
}

/* ------------------------------------------------------------------ arguments */

static int parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s)
        return -1;
    errno = 0;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* The directory of this executable, for the default program paths. */
static void self_dir(char *buf, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n <= 0) {
        snprintf(buf, cap, ".");
        return;
    }
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = '\0';
}

static int parse_args(int argc, char **argv, options_t *o, char *dir, size_t dircap)
{
    memset(o, 0, sizeof *o);
    o->language = "c";
    o->only = -1;
    o->reps = -1;
    o->duration_ms = -1;
    o->warmup_ms = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--quick") == 0) {
            o->quick = 1;
            continue;
        } else if (!v) {
            fprintf(stderr, "framework: %s needs a value\n", a);
            return -1;
        } else if (strcmp(a, "--language") == 0) {
            o->language = v;
        } else if (strcmp(a, "--only") == 0) {
            o->only_name = v;
        } else if (strcmp(a, "--reps") == 0) {
            if (parse_long(v, 1, MAX_REPS, &n) != 0) {
                fprintf(stderr, "framework: --reps %s: expected 1..%d\n", v, MAX_REPS);
                return -1;
            }
            o->reps = (int)n;
        } else if (strcmp(a, "--duration-ms") == 0 || strcmp(a, "--warmup-ms") == 0) {
            int is_duration = a[2] == 'd';
            if (parse_long(v, is_duration ? 1 : 0, 600000, &n) != 0) {
                fprintf(stderr, "framework: %s %s: expected %d..600000\n", a, v,
                        is_duration ? 1 : 0);
                return -1;
            }
            if (is_duration)
                o->duration_ms = n;
            else
                o->warmup_ms = n;
        } else if (strcmp(a, "--core-bin") == 0) {
            o->bin[IMPL_CORE] = v;
        } else if (strcmp(a, "--grpc-bin") == 0) {
            o->bin[IMPL_GRPC] = v;
        } else if (strcmp(a, "--framework-bin") == 0) {
            o->bin[IMPL_FRAMEWORK] = v;
        } else if (strcmp(a, "--binding-bin") == 0) {
            o->bin[IMPL_BINDING] = v;
        } else if (strcmp(a, "--core-spin-us") == 0) {
            if (parse_long(v, 0, 10000, &n) != 0) {
                fprintf(stderr, "framework: --core-spin-us %s: expected 0..10000\n", v);
                return -1;
            }
            setenv("ZLINK_RR_CORE_SPIN_US", v, 1); /* inherited by the core programs */
        } else {
            fprintf(stderr, "framework: unknown option %s\n", a);
            return -1;
        }
        i++;
    }
    o->has_binding = 0;
    if (strcmp(o->language, "c") != 0) {
        for (size_t k = 0; k < N_BINDINGS; k++)
            if (strcmp(o->language, binding_langs[k]) == 0)
                o->has_binding = 1;
        if (!o->has_binding) {
            fprintf(stderr, "framework: unknown --language %s (c, cpp, java, dotnet, node)\n",
                    o->language);
            return -1;
        }
        set_binding(o->language);
    }
    if (o->only_name) {
        for (int k = 0; k < IMPL_COUNT; k++)
            if ((k != IMPL_BINDING || o->has_binding) && strcmp(o->only_name, impl_names[k]) == 0)
                o->only = k;
        if (o->only < 0) {
            fprintf(stderr, "framework: --only %s: expected core, grpc, framework%s%s\n",
                    o->only_name, o->has_binding ? " or " : "",
                    o->has_binding ? o->language : "");
            return -1;
        }
    }
    if (o->reps < 0)
        o->reps = o->quick ? 1 : 3;
    if (o->duration_ms < 0)
        o->duration_ms = o->quick ? 300 : 2000;
    if (o->warmup_ms < 0)
        o->warmup_ms = o->quick ? 100 : 500;
    self_dir(dir, dircap);
    return 0;
}

/* ------------------------------------------------------------------ children */

typedef struct child {
    pid_t pid;
    int in_fd;     /* the child's stdin (write end), or -1 */
    int out_fd;    /* the child's stdout (read end), or -1 */
    char out[OUT_CAP];
    size_t out_len;
    int eof;
} child_t;

/* Starts path with argv; its stdout (and, when want_stdin, its stdin) are
 * pipes to us, stderr is ours. 0, or -1 with a message in err. */
static int child_start(child_t *c, const char *path, char *const argv[], int want_stdin,
                       char *err, size_t errcap)
{
    memset(c, 0, sizeof *c);
    c->in_fd = c->out_fd = -1;
    int out[2], in[2] = {-1, -1};
    if (pipe2(out, O_CLOEXEC) != 0) {
        snprintf(err, errcap, "pipe: %s", strerror(errno));
        return -1;
    }
    if (want_stdin && pipe2(in, O_CLOEXEC) != 0) {
        snprintf(err, errcap, "pipe: %s", strerror(errno));
        close(out[0]);
        close(out[1]);
        return -1;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errcap, "fork: %s", strerror(errno));
        close(out[0]);
        close(out[1]);
        if (want_stdin) {
            close(in[0]);
            close(in[1]);
        }
        return -1;
    }
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        if (want_stdin)
            dup2(in[0], STDIN_FILENO);
        else {
            int null = open("/dev/null", O_RDONLY);
            if (null >= 0)
                dup2(null, STDIN_FILENO);
        }
        execv(path, argv);
        printf("ERROR,exec %s: %s\n", path, strerror(errno));
        fflush(stdout);
        _exit(127);
    }
    close(out[1]);
    if (want_stdin)
        close(in[0]);
    c->pid = pid;
    c->out_fd = out[0];
    c->in_fd = want_stdin ? in[1] : -1;
    return 0;
}

/* Reads what the child wrote until a line starting with want appears
 * (want NULL: until end of file) or deadline passes. Returns 0 when found
 * (or at EOF for want NULL), 1 at EOF without it, -1 on timeout. */
static int child_read(child_t *c, const char *want, uint64_t deadline)
{
    for (;;) {
        if (want) {
            for (char *line = c->out; line && line < c->out + c->out_len;) {
                char *nl = memchr(line, '\n', (size_t)(c->out + c->out_len - line));
                if (!nl)
                    break;
                if (strncmp(line, want, strlen(want)) == 0)
                    return 0;
                line = nl + 1;
            }
        }
        if (c->eof)
            return want ? 1 : 0;
        uint64_t now = now_ns();
        if (now >= deadline)
            return -1;
        uint64_t left_ms = (deadline - now) / 1000000 + 1;
        struct pollfd p = {c->out_fd, POLLIN, 0};
        int rc = poll(&p, 1, left_ms > INT_MAX ? INT_MAX : (int)left_ms);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            continue; /* timeout: the check above ends it */
        char buf[1024];
        ssize_t n = read(c->out_fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            c->eof = 1;
            continue;
        }
        /* Keep the first OUT_CAP - 1 bytes; the protocol lines are short. */
        size_t room = sizeof c->out - 1 - c->out_len;
        size_t take = (size_t)n < room ? (size_t)n : room;
        memcpy(c->out + c->out_len, buf, take);
        c->out_len += take;
        c->out[c->out_len] = '\0';
    }
}

/* The text after prefix on the child's first line starting with prefix,
 * up to the end of that line, into buf; NULL when there is none. */
static const char *child_line(const child_t *c, const char *prefix, char *buf, size_t cap)
{
    size_t plen = strlen(prefix);
    for (const char *line = c->out; line < c->out + c->out_len;) {
        const char *nl = memchr(line, '\n', (size_t)(c->out + c->out_len - line));
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (len >= plen && strncmp(line, prefix, plen) == 0) {
            size_t n = len - plen < cap - 1 ? len - plen : cap - 1;
            memcpy(buf, line + plen, n);
            buf[n] = '\0';
            return buf;
        }
        if (!nl)
            break;
        line = nl + 1;
    }
    return NULL;
}

/* Ends the child: closes its stdin (a server's cue to stop), waits for its
 * stdout to close until deadline, SIGKILLs it past that, reaps it. Returns
 * its exit status, 128 + signal, or -1 when it had to be killed. */
static int child_finish(child_t *c, uint64_t deadline)
{
    if (c->in_fd >= 0) {
        close(c->in_fd);
        c->in_fd = -1;
    }
    int killed = 0;
    if (c->out_fd >= 0) {
        if (child_read(c, NULL, deadline) < 0) {
            kill(c->pid, SIGKILL);
            killed = 1;
        }
        close(c->out_fd);
        c->out_fd = -1;
    }
    int st = 0;
    while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (killed)
        return -1;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

/* ------------------------------------------------------------------ one run */

/* Describes why a child did not deliver: its ERROR line if any, else how
 * it ended. */
static void child_failure(const child_t *c, const char *role, const char *what, int status,
                          char *err, size_t cap)
{
    char line[512];
    if (child_line(c, "ERROR,", line, sizeof line))
        snprintf(err, cap, "%s: %s", role, line);
    else if (status == -1)
        snprintf(err, cap, "%s: %s; killed after its time bound", role, what);
    else
        snprintf(err, cap, "%s: %s; exit status %d", role, what, status);
}

/* One measurement: server + client of impl at inflight. 0 with *out set,
 * or -1 with the cause in err. */
static int run_once(const options_t *o, int impl, unsigned inflight, sample_t *out, char *err,
                    size_t errcap)
{
    const char *path = o->bin[impl];
    uint64_t start = now_ns();
    const uint64_t second = 1000000000ull;

    child_t server;
    char *server_argv[] = {(char *)path, "server", NULL};
    if (child_start(&server, path, server_argv, 1, err, errcap) != 0)
        return -1;
    int rc = child_read(&server, "READY,port=", start + 20 * second);
    char text[64];
    long port = 0;
    if (rc != 0 || !child_line(&server, "READY,port=", text, sizeof text) ||
        parse_long(text, 1, 65535, &port) != 0) {
        int status = child_finish(&server, now_ns() + 5 * second);
        child_failure(&server, "server", rc < 0 ? "no READY line in 20 s" : "no READY line",
                      status, err, errcap);
        return -1;
    }

    char port_s[16], inflight_s[16], size_s[16], warmup_s[24], duration_s[24];
    snprintf(port_s, sizeof port_s, "%ld", port);
    snprintf(inflight_s, sizeof inflight_s, "%u", inflight);
    snprintf(size_s, sizeof size_s, "%d", SIZE_BYTES);
    snprintf(warmup_s, sizeof warmup_s, "%ld", o->warmup_ms);
    snprintf(duration_s, sizeof duration_s, "%ld", o->duration_ms);
    char *client_argv[] = {(char *)path, "client", "--port", port_s, "--inflight", inflight_s,
                           "--size", size_s, "--warmup-ms", warmup_s, "--duration-ms",
                           duration_s, NULL};
    child_t client;
    int result = -1;
    if (child_start(&client, path, client_argv, 0, err, errcap) != 0) {
        child_finish(&server, now_ns() + 10 * second);
        return -1;
    }
    /* Bound: warm-up + window + the client's own drain bound (20 s) + 20 s. */
    uint64_t bound = now_ns() + (uint64_t)(o->warmup_ms + o->duration_ms) * 1000000ull +
                     40 * second;
    int crc = child_finish(&client, bound);
    char line[512];
    if (crc == 0 && child_line(&client, "SAMPLE,", line, sizeof line)) {
        const char *t = strstr(line, "throughput=");
        const char *p50 = strstr(line, "p50_us=");
        const char *p99 = strstr(line, "p99_us=");
        if (t && p50 && p99) {
            out->throughput = strtod(t + strlen("throughput="), NULL);
            out->p50 = strtod(p50 + strlen("p50_us="), NULL);
            out->p99 = strtod(p99 + strlen("p99_us="), NULL);
            if (!child_line(&client, "INFO,version=", out->version, sizeof out->version))
                snprintf(out->version, sizeof out->version, "?");
            result = 0;
        } else {
            snprintf(err, errcap, "client: malformed SAMPLE line: %s", line);
        }
    } else {
        child_failure(&client, "client", "no SAMPLE line", crc, err, errcap);
    }
    int src = child_finish(&server, now_ns() + 10 * second);
    if (result == 0 && src != 0) {
        child_failure(&server, "server", "did not stop cleanly", src, err, errcap);
        result = -1;
    }
    return result;
}

/* ------------------------------------------------------------------ output */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double s[MAX_REPS];
    memcpy(s, v, (size_t)n * sizeof *v);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
}

static void print_header(const options_t *o)
{
    char date[32] = "?";
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    printf("HEADER,request_reply,language=%s,transport=tcp,size=%d,inflight=1|1000,"
           "reps=%d,duration_ms=%ld,warmup_ms=%ld,order=rotating,statistic=median,"
           "nproc=%ld,date=%s,mode=%s\n",
           o->language, SIZE_BYTES, o->reps, o->duration_ms, o->warmup_ms,
           sysconf(_SC_NPROCESSORS_ONLN), date, o->quick ? "quick" : "full");
}

static void fail_line(int impl, unsigned inflight, const char *why)
{
    printf("FAIL,request_reply,%s,%u,%s\n", impl_names[impl], inflight, why);
    fflush(stdout);
}

/* RATIO,request_reply,<name>,<a/b>, only when both series completed. */
static void ratio(const char *name, const series_t *a, const series_t *b, int metric)
{
    if (a->failed || b->failed || a->done == 0 || b->done == 0)
        return;
    double x, y;
    if (metric == 0) {
        x = median(a->thr, a->done);
        y = median(b->thr, b->done);
    } else if (metric == 1) {
        x = median(a->p50, a->done);
        y = median(b->p50, b->done);
    } else {
        x = median(a->p99, a->done);
        y = median(b->p99, b->done);
    }
    printf("RATIO,request_reply,%s,%.3f\n", name, y > 0 ? x / y : NAN);
}

int main(int argc, char **argv)
{
    options_t o;
    char dir[PATH_MAX];
    if (parse_args(argc, argv, &o, dir, sizeof dir) != 0) {
        usage(stderr);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN); /* a child that died early must not kill us */

    static char paths[IMPL_COUNT][PATH_MAX + 64];
    int wanted[IMPL_COUNT];
    for (int k = 0; k < IMPL_COUNT; k++) {
        wanted[k] = (k != IMPL_BINDING || o.has_binding) && (o.only < 0 || o.only == k);
        if (!wanted[k] && k == IMPL_BINDING)
            continue;
        if (!o.bin[k]) {
            snprintf(paths[k], sizeof paths[k], "%s/%s", dir, impl_programs[k]);
            o.bin[k] = paths[k];
        }
    }
    print_header(&o);

    series_t series[IMPL_COUNT][N_INFLIGHT];
    memset(series, 0, sizeof series);
    char version[IMPL_COUNT][64];
    memset(version, 0, sizeof version);
    for (int k = 0; k < IMPL_COUNT; k++) {
        if (!wanted[k])
            continue;
        if (access(o.bin[k], X_OK) != 0) {
            char why[PATH_MAX + 256];
            snprintf(why, sizeof why, "program %s not built or not runnable (%s); build %s",
                     o.bin[k], strerror(errno), impl_targets[k]);
            for (size_t i = 0; i < N_INFLIGHT; i++) {
                fail_line(k, inflights[i], why);
                series[k][i].failed = 1;
            }
        }
    }

    for (int rep = 0; rep < o.reps; rep++) {
        for (int step = 0; step < IMPL_COUNT; step++) {
            int k = (step + rep) % IMPL_COUNT;
            if (!wanted[k])
                continue;
            for (size_t i = 0; i < N_INFLIGHT; i++) {
                series_t *s = &series[k][i];
                if (s->failed)
                    continue;
                sample_t smp;
                char err[1024] = "";
                if (run_once(&o, k, inflights[i], &smp, err, sizeof err) != 0) {
                    fail_line(k, inflights[i], err);
                    s->failed = 1;
                    continue;
                }
                snprintf(version[k], sizeof version[k], "%s", smp.version);
                s->thr[s->done] = smp.throughput;
                s->p50[s->done] = smp.p50;
                s->p99[s->done] = smp.p99;
                s->done++;
                printf("REP,request_reply,%s,%u,%d,throughput=%.0f,p50_us=%.2f,p99_us=%.2f\n",
                       impl_names[k], inflights[i], rep + 1, smp.throughput, smp.p50, smp.p99);
                fflush(stdout);
            }
        }
    }

    int any_failed = 0;
    for (int k = 0; k < IMPL_COUNT; k++) {
        if (!wanted[k])
            continue;
        if (version[k][0])
            printf("IMPL,%s,version=%s,program=%s\n", impl_names[k], version[k], o.bin[k]);
        for (size_t i = 0; i < N_INFLIGHT; i++) {
            series_t *s = &series[k][i];
            if (s->failed) {
                any_failed = 1;
                continue;
            }
            printf("RESULT,request_reply,%s,%u,throughput=%.0f,p50_us=%.2f,p99_us=%.2f\n",
                   impl_names[k], inflights[i], median(s->thr, s->done),
                   median(s->p50, s->done), median(s->p99, s->done));
        }
    }
    /* series index 0: 1 in flight, 1: 1,000 in flight. */
    const series_t *fw = series[IMPL_FRAMEWORK], *core = series[IMPL_CORE],
                   *grpc = series[IMPL_GRPC];
    if (o.has_binding) {
        char name[64];
        snprintf(name, sizeof name, "%s_vs_c", o.language);
        ratio(name, &series[IMPL_BINDING][1], &fw[1], 0);
        snprintf(name, sizeof name, "latency_p50_%s_vs_c_1", o.language);
        ratio(name, &series[IMPL_BINDING][0], &fw[0], 1);
    }
    ratio("framework_vs_core", &fw[1], &core[1], 0);
    ratio("framework_vs_grpc", &fw[1], &grpc[1], 0);
    ratio("latency_p50_framework_vs_grpc_1", &fw[0], &grpc[0], 1);
    ratio("latency_p99_framework_vs_grpc_1", &fw[0], &grpc[0], 2);
    ratio("core_vs_grpc", &core[1], &grpc[1], 0);
    ratio("latency_p50_core_vs_grpc_1", &core[0], &grpc[0], 1);
    ratio("latency_p99_core_vs_grpc_1", &core[0], &grpc[0], 2);
    fflush(stdout);
    return any_failed ? 1 : 0;
}
