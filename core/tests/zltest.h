/*
 * zltest.h — ZLink's in-tree test framework, header only.
 *
 * Design notes
 *  - One dialect. A test file lists its cases in one table and hands it to
 *    the runner:
 *
 *        static const zt_case_t cases[] = {
 *            ZT_CASE(round_trip),        // void round_trip(void)
 *            ZT_CASE_TP(both_ways),      // void both_ways(const char *tr)
 *        };
 *        int main(int argc, char **argv)
 *        {
 *            return zt_main(argc, argv, cases, ZT_NCASES(cases));
 *        }
 *
 *    ZT_CASE_TP is the one way to stamp a case per transport: the runner
 *    runs it once for each of "inproc", "tcp" and "ipc", as the cases
 *    "both_ways[inproc]", "both_ways[tcp]" and "both_ways[ipc]".
 *  - Each case runs in its own process, forked from the runner (which never
 *    starts a thread or a ZLink context), so a failed check, a crash, a
 *    sanitizer report, a leak or a hang ends that case only, and no case
 *    inherits another's state. The runner prints one line per case,
 *    "ok   name (N ms)" or "FAIL name (N ms): reason", then the summary
 *    "N passed, N failed", and exits 1 when any case failed (2 for a usage
 *    error or a filter that selects nothing). The failing process writes
 *    its first failure ("file:line: what") into a page shared with the
 *    runner; the full report (values, sanitizer output) is on stderr above
 *    the FAIL line.
 *  - Selection: "--list" prints the case names; NAME arguments, or else
 *    the environment's ZT_FILTER (words separated by spaces or commas), or
 *    else Bazel's --test_filter (TESTBRIDGE_TEST_ONLY), select the cases
 *    whose name contains a word, or matches it as a glob when the word has
 *    '*' or '?'. "--no-fork" (or ZT_NOFORK=1) runs the cases in the runner
 *    process itself, for a debugger: there the first failure ends the run.
 *  - Checks (ZT_CHECK, ZT_EQ_*, ZT_FAIL ...) never abort(): they print
 *    file:line and the values, then end the process they run in with
 *    exit(1). Checks may run on any thread of a case.
 *  - Watchdog: each case must finish within ZT_CASE_SECONDS (60) times the
 *    environment's ZT_TIMEOUT_MULT (default 1; --config=asan sets 3, tsan 5).
 *    When Bazel says how long the whole target may take (TEST_TIMEOUT), the
 *    watchdog fires a little earlier than Bazel would kill the process, so a
 *    hang is always reported with the name of the case that hung; a case
 *    that would start after that point is reported failed without running.
 *    The case process's SIGALRM handler reports and kills the children it
 *    started; should it not run, the runner kills the case process itself a
 *    second later.
 *  - Processes inside a case: zt_spawn(fn, arg) forks a child that runs
 *    fn(arg) and exits with its return value; zt_wait(pid) returns that
 *    exit status (128 + n when the child died of signal n). fork() copies
 *    only the calling thread: spawn before the case starts ZLink contexts
 *    or other threads. When a fresh process is needed instead (a peer with
 *    its own context), zt_spawn_self(role, arg) re-executes this same test
 *    binary through /proc/self/exe with "--zt-role ROLE ARG"; the file's
 *    main() passes a role table to zt_main_roles(), which dispatches to the
 *    role's function (zt_role() remains for a main() that dispatches
 *    itself).
 *  - ZT_RUN(fn) and zt_done() are the older spelling, kept so that a main()
 *    written as a list of ZT_RUN lines still builds: ZT_RUN runs fn as the
 *    next case through the same runner (own process, one line, ZT_FILTER
 *    applies) and zt_done() prints the summary and returns the exit status.
 *  - Threads: the state below is per process and is not locked; the runner
 *    and the spawn/wait helpers are for a case's main thread only.
 *
 * Needs POSIX: .bazelrc compiles everything with -D_GNU_SOURCE.
 * See doc/testing.md for how to write and run tests.
 */
#ifndef ZLTEST_H
#define ZLTEST_H

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ZT_CASE_SECONDS 60
#define ZT_MAX_CHILDREN 64
#define ZT_NAME_MAX 160
#define ZT_REASON_MAX 400

/* ------------------------------------------------------------------ state */

/* What the process running a case tells the runner; a MAP_SHARED page, so
 * it survives the case process's death. */
struct zt__report {
    volatile int completed; /* the case function returned */
    int claimed;            /* a failure is writing reason (first one wins) */
    char reason[ZT_REASON_MAX];
};

struct zt__state {
    int initialised;
    int in_child;                 /* set in processes made by zt_spawn(_self) */
    int in_case;                  /* set in the process running one case */
    const char *current;          /* name of the running case */
    char current_buf[ZT_NAME_MAX];
    int cases_passed;
    int cases_failed;
    int cases_unselected;
    int no_fork;                  /* --no-fork / ZT_NOFORK: cases run here */
    int filter_from_argv;         /* zt_main saw NAME arguments */
    char **filters;               /* selection words, NULL-terminated, or NULL */
    double mult;                  /* ZT_TIMEOUT_MULT */
    unsigned armed_secs;          /* the watchdog's limit for this case */
    int64_t case_start_ms;
    time_t deadline;              /* whole-process limit from TEST_TIMEOUT, or 0 */
    struct zt__report *report;    /* shared with case processes, or NULL */
    volatile pid_t case_pid;      /* runner: the case process it waits for */
    volatile sig_atomic_t case_killed; /* runner: the fallback killed it */
    pid_t children[ZT_MAX_CHILDREN];
};

static inline struct zt__state *zt__st(void)
{
    static struct zt__state st;
    return &st;
}

/* Async-signal-safe write of a NUL-terminated string to stderr. */
static inline void zt__say(const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(2, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static inline void zt__kill_children(void)
{
    struct zt__state *st = zt__st();
    for (int i = 0; i < ZT_MAX_CHILDREN; i++) {
        if (st->children[i] > 0) {
            kill(st->children[i], SIGKILL);
            st->children[i] = 0;
        }
    }
}

/* In the process running a case: keeps the first failure's text for the
 * runner's FAIL line, on one line. Async-signal-safe (the watchdog uses
 * it); later failures, from other threads, are dropped. */
static inline void zt__set_reason(const char *text)
{
    struct zt__state *st = zt__st();
    struct zt__report *r = st->report;
    size_t n = 0;
    if (!st->in_case || st->in_child || r == NULL ||
        __atomic_exchange_n(&r->claimed, 1, __ATOMIC_SEQ_CST) != 0)
        return;
    for (const char *p = text; *p != '\0' && n + 1 < sizeof r->reason; p++) {
        char ch = (*p == '\n' || *p == '\t') ? ' ' : *p;
        if (ch == ' ' && n > 0 && r->reason[n - 1] == ' ')
            continue; /* a multi-line report folds into one line */
        r->reason[n++] = ch;
    }
    while (n > 0 && r->reason[n - 1] == ' ')
        n--;
    r->reason[n] = '\0';
}

/* Writes the decimal form of v into buf (async-signal-safe). */
static inline const char *zt__utoa(unsigned v, char buf[12])
{
    char *p = buf + 11;
    *p = '\0';
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return p;
}

static inline void zt__on_alarm(int sig)
{
    struct zt__state *st = zt__st();
    const char *name = st->current ? st->current : "(no case)";
    char num[12];
    (void)sig;
    if (!st->in_case && !st->in_child && st->case_pid > 0) {
        /* The runner: the case process outlived its own watchdog. */
        st->case_killed = 1;
        kill(st->case_pid, SIGKILL);
        return;
    }
    zt__say("zltest: watchdog: '");
    zt__say(name);
    zt__say(st->in_child ? "' hung in a child process\n" : "' hung\n");
    if (st->in_case && !st->in_child) {
        char reason[64] = "timed out after ";
        strcat(reason, zt__utoa(st->armed_secs, num));
        strcat(reason, " s (watchdog)");
        zt__set_reason(reason);
    } else if (!st->in_child) {
        zt__say("FAIL ");
        zt__say(name);
        zt__say(": timed out\n");
    }
    zt__kill_children();
    _exit(1);
}

static inline void zt__init(void)
{
    struct zt__state *st = zt__st();
    const char *env;
    struct sigaction sa;

    if (st->initialised)
        return;
    st->initialised = 1;
    setvbuf(stdout, NULL, _IOLBF, 0);

    st->mult = 1.0;
    env = getenv("ZT_TIMEOUT_MULT");
    if (env != NULL && atof(env) > 0)
        st->mult = atof(env);

    /* Bazel kills the test after TEST_TIMEOUT seconds; report first. */
    env = getenv("TEST_TIMEOUT");
    if (env != NULL && atoi(env) > 0) {
        int total = atoi(env);
        int margin = total / 20 > 2 ? total / 20 : 2;
        st->deadline = time(NULL) + total - margin;
    }

    env = getenv("ZT_NOFORK");
    if (env != NULL && env[0] != '\0' && strcmp(env, "0") != 0)
        st->no_fork = 1;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = zt__on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
}

/* The watchdog's limit for one case: ZT_CASE_SECONDS * mult, but never
 * past the whole-process deadline (at least 1 s). */
static inline unsigned zt__case_secs(void)
{
    struct zt__state *st = zt__st();
    double secs = ZT_CASE_SECONDS * st->mult;
    if (st->deadline != 0) {
        double left = difftime(st->deadline, time(NULL));
        if (left < secs)
            secs = left;
    }
    return secs < 1 ? 1u : (unsigned)secs;
}

/* Arms the watchdog for the case (or child) running in this process. */
static inline void zt__arm(void)
{
    struct zt__state *st = zt__st();
    st->armed_secs = zt__case_secs();
    alarm(st->armed_secs);
}

/* ---------------------------------------------------------------- failure */

static inline int64_t zt_now_ms(void);

/* Reports a failed check and ends the process it runs in (see the design
 * notes): the full text goes to stderr; its first ZT_REASON_MAX bytes
 * become the runner's FAIL reason. */
static inline void zt__vfail(const char *file, int line, const char *fmt, va_list ap)
{
    struct zt__state *st = zt__st();
    const char *name = st->current ? st->current : "(no case)";
    char what[ZT_REASON_MAX];
    va_list again;
    int at;

    va_copy(again, ap);
    at = snprintf(what, sizeof what, "%s:%d: ", file, line);
    if (at < 0 || (size_t)at >= sizeof what)
        at = 0;
    vsnprintf(what + at, sizeof what - (size_t)at, fmt, again);
    va_end(again);

    fflush(stdout);
    fprintf(stderr, "%s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    if (st->in_child) {
        fprintf(stderr, "zltest: child %ld of '%s' failed\n", (long)getpid(), name);
    } else if (st->in_case) {
        zt__set_reason(what);
    } else if (st->current != NULL) {
        /* --no-fork: the first failure ends the run. */
        fflush(stderr);
        printf("FAIL %s (%lld ms): %s\n", name,
               (long long)(zt_now_ms() - st->case_start_ms), what);
    }
    fflush(NULL);
    zt__kill_children();
    exit(1);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4), noreturn))
#endif
static inline void zt__fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    zt__vfail(file, line, fmt, ap);
    va_end(ap);
    exit(1); /* not reached */
}

static inline void zt__eq_mem(const char *file, int line, const char *ea, const char *eb,
                              const void *a, const void *b, size_t n)
{
    const unsigned char *pa = (const unsigned char *)a;
    const unsigned char *pb = (const unsigned char *)b;
    char da[3 * 16 + 1], db[3 * 16 + 1];
    size_t at, end, i;

    if (n == 0 || (a != NULL && b != NULL && memcmp(a, b, n) == 0))
        return;
    if (a == NULL || b == NULL)
        zt__fail(file, line, "ZT_EQ_MEM(%s, %s, %zu): %s is NULL", ea, eb, n,
                 a == NULL ? ea : eb);
    for (at = 0; pa[at] == pb[at]; at++) {
    }
    end = at + 16 < n ? at + 16 : n;
    da[0] = db[0] = '\0';
    for (i = at; i < end; i++) {
        snprintf(da + 3 * (i - at), 4, "%02x ", pa[i]);
        snprintf(db + 3 * (i - at), 4, "%02x ", pb[i]);
    }
    zt__fail(file, line,
             "ZT_EQ_MEM(%s, %s, %zu) failed at byte %zu:\n  %s: %s\n  %s: %s", ea, eb, n,
             at, ea, da, eb, db);
}

/* ----------------------------------------------------------------- checks */

/* Fails the case with a printf-style message. */
#define ZT_FAIL(...) zt__fail(__FILE__, __LINE__, __VA_ARGS__)

#define ZT_CHECK(cond)                                                  \
    do {                                                                \
        if (!(cond))                                                    \
            zt__fail(__FILE__, __LINE__, "ZT_CHECK(%s) failed", #cond); \
    } while (0)

/* Integers of any signedness up to 64 bits; each side is evaluated once. */
#define ZT_EQ_INT(a, b)                                                                 \
    do {                                                                                \
        long long zt_a_ = (long long)(a), zt_b_ = (long long)(b);                       \
        if (zt_a_ != zt_b_)                                                             \
            zt__fail(__FILE__, __LINE__, "ZT_EQ_INT(%s, %s) failed: %lld != %lld", #a, \
                     #b, zt_a_, zt_b_);                                                 \
    } while (0)

#define ZT_EQ_U64(a, b)                                                                  \
    do {                                                                                 \
        uint64_t zt_a_ = (uint64_t)(a), zt_b_ = (uint64_t)(b);                           \
        if (zt_a_ != zt_b_)                                                              \
            zt__fail(__FILE__, __LINE__,                                                 \
                     "ZT_EQ_U64(%s, %s) failed: %" PRIu64 " (0x%" PRIx64 ") != %" PRIu64 \
                     " (0x%" PRIx64 ")",                                                 \
                     #a, #b, zt_a_, zt_a_, zt_b_, zt_b_);                                \
    } while (0)

/* NUL-terminated strings; NULL equals only NULL. */
#define ZT_EQ_STR(a, b)                                                                   \
    do {                                                                                  \
        const char *zt_a_ = (a), *zt_b_ = (b);                                            \
        if ((zt_a_ == NULL || zt_b_ == NULL) ? zt_a_ != zt_b_ : strcmp(zt_a_, zt_b_) != 0) \
            zt__fail(__FILE__, __LINE__, "ZT_EQ_STR(%s, %s) failed: %s%s%s != %s%s%s", #a, \
                     #b, zt_a_ ? "\"" : "", zt_a_ ? zt_a_ : "NULL", zt_a_ ? "\"" : "",     \
                     zt_b_ ? "\"" : "", zt_b_ ? zt_b_ : "NULL", zt_b_ ? "\"" : "");       \
    } while (0)

/* n bytes at a and b; prints the first difference and up to 16 bytes. */
#define ZT_EQ_MEM(a, b, n) zt__eq_mem(__FILE__, __LINE__, #a, #b, (a), (b), (size_t)(n))

/* Polls cond every millisecond until it holds; fails after timeout_ms
 * (scaled by ZT_TIMEOUT_MULT). For effects that happen on other threads. */
#define ZT_EVENTUALLY(cond, timeout_ms)                                                \
    do {                                                                               \
        int64_t zt_end_ = zt_now_ms() + (int64_t)((timeout_ms) * zt_timeout_mult());   \
        while (!(cond)) {                                                              \
            if (zt_now_ms() > zt_end_)                                                 \
                zt__fail(__FILE__, __LINE__, "ZT_EVENTUALLY(%s) still false after %d ms", \
                         #cond, (int)(timeout_ms));                                    \
            zt_sleep_ms(1);                                                            \
        }                                                                              \
    } while (0)

/* ---------------------------------------------------------------- helpers */

static inline double zt_timeout_mult(void)
{
    zt__init();
    return zt__st()->mult;
}

static inline int64_t zt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void zt_sleep_ms(int ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ms scaled by ZT_TIMEOUT_MULT, as an int: for timeouts handed to the code
 * under test (SNDTIMEO, poll()) that must stretch under the sanitizers. */
#define ZT_MS(ms) ((int)((ms) * zt_timeout_mult()))

/* ------------------------------------------- "a thread is blocked" (Linux) */

/* The calling thread's kernel id, for zt_wait_blocked(). */
static inline long zt_gettid(void)
{
    return (long)syscall(SYS_gettid);
}

/* Waits until thread tid sleeps in the kernel in a wait (a futex wait, as
 * used by condition variables and wake words, or a poll): how a call that
 * blocks inside a library looks from outside when its API cannot tell.
 * Returns 1 once seen. Returns 0 when /proc cannot tell within 2 s; the
 * caller then goes on without the guarantee, so the check only ever makes
 * a case stricter, never flaky. */
static inline int zt_wait_blocked(long tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", tid);
    int64_t end = zt_now_ms() + 2000;
    while (zt_now_ms() < end) {
        FILE *f = fopen(path, "r");
        if (f == NULL)
            return 0;
        long nr = -1;
        unsigned long a0 = 0, op = 0;
        int got = fscanf(f, "%ld %lx %lx", &nr, &a0, &op);
        fclose(f);
        if (got == 3 && nr == SYS_futex &&
            ((op & 0x7F) == 0 /* FUTEX_WAIT */ || (op & 0x7F) == 9 /* FUTEX_WAIT_BITSET */))
            return 1;
#ifdef SYS_poll
        if (got >= 1 && nr == SYS_poll)
            return 1;
#endif
        if (got >= 1 && (nr == SYS_ppoll || nr == SYS_epoll_pwait))
            return 1;
        sched_yield();
    }
    return 0;
}

/* Writes "ipc:///tmp/zlt-<pid>-<tag>" into buf: short enough for a unix
 * socket path (Bazel's TEST_TMPDIR often is not) and unique per process. */
static inline const char *zt_ipc_endpoint(char *buf, size_t size, const char *tag)
{
    int n = snprintf(buf, size, "ipc:///tmp/zlt-%ld-%s", (long)getpid(), tag);
    if (n < 0 || (size_t)n >= size)
        zt__fail(__FILE__, __LINE__, "zt_ipc_endpoint: buffer of %zu too small", size);
    return buf;
}

/* -------------------------------------------------------------- processes */

static inline void zt__remember_child(pid_t pid)
{
    for (int i = 0; i < ZT_MAX_CHILDREN; i++) {
        if (zt__st()->children[i] == 0) {
            zt__st()->children[i] = pid;
            return;
        }
    }
    kill(pid, SIGKILL);
    zt__fail(__FILE__, __LINE__, "zltest: more than %d live children", ZT_MAX_CHILDREN);
}

/* Forks a child that runs fn(arg) and exits with its return value (0 means
 * success; a failed check in the child exits 1). The child has its own
 * watchdog. Call from the main thread, before any other thread exists.
 * Returns the child's pid; failing to fork fails the case. */
static inline pid_t zt_spawn(int (*fn)(void *arg), void *arg)
{
    pid_t pid;
    zt__init();
    fflush(NULL); /* or the child would print the parent's buffered output */
    pid = fork();
    if (pid < 0)
        zt__fail(__FILE__, __LINE__, "zt_spawn: fork: %s", strerror(errno));
    if (pid == 0) {
        struct zt__state *st = zt__st();
        int code;
        st->in_child = 1;
        memset(st->children, 0, sizeof st->children);
        zt__arm();
        code = fn(arg);
        fflush(NULL);
        exit(code);
    }
    zt__remember_child(pid);
    return pid;
}

/* Starts this test binary again as a new process (execv of /proc/self/exe)
 * with argv = { "zltest-child", "--zt-role", role, arg, NULL } (arg may be
 * NULL). Its main() plays the role: zt_main_roles() dispatches it (or
 * main() asks zt_role() itself). Returns the pid. */
static inline pid_t zt_spawn_self(const char *role, const char *arg)
{
    pid_t pid;
    zt__init();
    fflush(NULL);
    pid = fork();
    if (pid < 0)
        zt__fail(__FILE__, __LINE__, "zt_spawn_self: fork: %s", strerror(errno));
    if (pid == 0) {
        char *argv[5];
        argv[0] = (char *)"zltest-child";
        argv[1] = (char *)"--zt-role";
        argv[2] = (char *)role;
        argv[3] = (char *)arg;
        argv[4] = NULL;
        execv("/proc/self/exe", argv);
        fprintf(stderr, "zt_spawn_self: execv(/proc/self/exe): %s\n", strerror(errno));
        _exit(127);
    }
    zt__remember_child(pid);
    return pid;
}

/* In main(): the role given to zt_spawn_self, or NULL in the original test
 * process. A process started with a role arms its own watchdog; its extra
 * argument is argv[3] (may be NULL). */
static inline const char *zt_role(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--zt-role") == 0) {
        zt__init();
        zt__st()->in_child = 1;
        zt__st()->current = argv[2];
        zt__arm();
        return argv[2];
    }
    return NULL;
}

/* Waits for a child of zt_spawn / zt_spawn_self. Returns its exit status,
 * or 128 + n when signal n killed it. Blocks; the watchdog still applies. */
static inline int zt_wait(pid_t pid)
{
    int status = 0;
    pid_t r;
    do {
        r = waitpid(pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    if (r < 0)
        zt__fail(__FILE__, __LINE__, "zt_wait(%ld): %s", (long)pid, strerror(errno));
    for (int i = 0; i < ZT_MAX_CHILDREN; i++) {
        if (zt__st()->children[i] == pid)
            zt__st()->children[i] = 0;
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 255;
}

/* ----------------------------------------------------------------- runner */

/* One row of a file's case table: a plain case (fn) or a case stamped per
 * transport (fn_tp, run once for each of zt__transport(0..2)). */
typedef struct zt_case {
    const char *name;
    void (*fn)(void);
    void (*fn_tp)(const char *transport);
} zt_case_t;

/* A case void fn(void). */
#define ZT_CASE(fn) {#fn, fn, NULL}
/* A case void fn(const char *transport), run as "fn[inproc]", "fn[tcp]"
 * and "fn[ipc]": the one way to stamp a case per transport. */
#define ZT_CASE_TP(fn) {#fn, NULL, fn}
/* The number of rows of a case (or role) table. */
#define ZT_NCASES(table) (sizeof(table) / sizeof((table)[0]))

/* A role a process started by zt_spawn_self(name, arg) plays: main()
 * returns fn(arg) (arg may be NULL) instead of running the cases. */
typedef struct zt_role {
    const char *name;
    int (*fn)(const char *arg);
} zt_role_t;

#define ZT_ROLE(name, fn) {name, fn}

#define ZT_NTRANSPORTS 3

/* The transports ZT_CASE_TP stamps, in the order they run. */
static inline const char *zt__transport(int i)
{
    static const char *const names[ZT_NTRANSPORTS] = {"inproc", "tcp", "ipc"};
    return names[i];
}

/* Whether name matches pattern, a glob over the whole name where '*' is
 * any run of characters and '?' any one character (nothing else is
 * special, so "x[tcp]" is literal). */
static inline int zt__glob(const char *pattern, const char *name)
{
    const char *star = NULL, *resume = NULL;
    while (*name != '\0') {
        if (*pattern == '*') {
            star = pattern++;
            resume = name;
        } else if (*pattern == '?' || *pattern == *name) {
            pattern++;
            name++;
        } else if (star != NULL) {
            pattern = star + 1;
            name = ++resume;
        } else {
            return 0;
        }
    }
    while (*pattern == '*')
        pattern++;
    return *pattern == '\0';
}

/* A selection word: a glob when it has '*' or '?', else a substring. */
static inline int zt__word_matches(const char *word, const char *name)
{
    if (strpbrk(word, "*?") != NULL)
        return zt__glob(word, name);
    return strstr(name, word) != NULL;
}

/* Called once, when zt_main got no NAME arguments (or by the first
 * ZT_RUN): the selection words of ZT_FILTER, else TESTBRIDGE_TEST_ONLY
 * (Bazel's --test_filter). The copy lives as long as the process. */
static inline void zt__filters_from_env(void)
{
    struct zt__state *st = zt__st();
    const char *env = getenv("ZT_FILTER");
    char *copy, *word, *save = NULL;
    size_t n = 0;

    if (st->filters != NULL || st->filter_from_argv)
        return;
    if (env == NULL || env[0] == '\0')
        env = getenv("TESTBRIDGE_TEST_ONLY");
    if (env == NULL || env[0] == '\0')
        return;
    copy = strdup(env);
    st->filters = (char **)calloc(strlen(env) / 2 + 2, sizeof *st->filters);
    if (copy == NULL || st->filters == NULL) {
        fprintf(stderr, "zltest: out of memory reading the filter\n");
        exit(2);
    }
    for (word = strtok_r(copy, " ,\t", &save); word != NULL; word = strtok_r(NULL, " ,\t", &save))
        st->filters[n++] = word;
    st->filters[n] = NULL;
}

/* Whether the case called name is selected (every case, without words). */
static inline int zt__selected(const char *name)
{
    char **word = zt__st()->filters;
    if (word == NULL || word[0] == NULL)
        return 1;
    for (; *word != NULL; word++) {
        if (zt__word_matches(*word, name))
            return 1;
    }
    return 0;
}

/* The name a case runs under: "name", or "name[transport]". */
static inline void zt__case_name(char *buf, size_t cap, const char *name, const char *tr)
{
    if (tr != NULL)
        snprintf(buf, cap, "%s[%s]", name, tr);
    else
        snprintf(buf, cap, "%s", name);
}

static inline void zt__call_case(void (*fn)(void), void (*fn_tp)(const char *), const char *tr)
{
    if (fn != NULL)
        fn();
    else
        fn_tp(tr);
}

/* --no-fork: runs the case in this process; a failure ends the process
 * (zt__vfail prints the FAIL line). */
static inline void zt__run_here(const char *name, void (*fn)(void),
                                void (*fn_tp)(const char *), const char *tr)
{
    struct zt__state *st = zt__st();
    snprintf(st->current_buf, sizeof st->current_buf, "%s", name);
    st->current = st->current_buf;
    st->case_start_ms = zt_now_ms();
    zt__arm();
    zt__call_case(fn, fn_tp, tr);
    alarm(0);
    printf("ok   %s (%lld ms)\n", name, (long long)(zt_now_ms() - st->case_start_ms));
    st->cases_passed++;
    st->current = NULL;
}

/* Runs the case in a child process and prints its line. Called by the
 * runner only (no thread, no ZLink state); blocks until the child is gone
 * (its watchdog, or the fallback alarm here one second later, bounds it). */
static inline void zt__run_forked(const char *name, void (*fn)(void),
                                  void (*fn_tp)(const char *), const char *tr)
{
    struct zt__state *st = zt__st();
    char why[ZT_REASON_MAX + 96];
    siginfo_t info;
    int status = 0;
    pid_t pid;

    if (st->report == NULL) {
        void *page = mmap(NULL, sizeof *st->report, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED) {
            printf("FAIL %s (0 ms): not run: mmap: %s\n", name, strerror(errno));
            st->cases_failed++;
            return;
        }
        st->report = (struct zt__report *)page;
    }
    memset(st->report, 0, sizeof *st->report);
    unsigned secs = zt__case_secs();
    fflush(NULL); /* or the child would print the runner's buffered output */
    int64_t start = zt_now_ms();
    pid = fork();
    if (pid < 0) {
        printf("FAIL %s (0 ms): not run: fork: %s\n", name, strerror(errno));
        st->cases_failed++;
        return;
    }
    if (pid == 0) {
        st->in_case = 1;
        snprintf(st->current_buf, sizeof st->current_buf, "%s", name);
        st->current = st->current_buf;
        st->case_start_ms = start;
        memset(st->children, 0, sizeof st->children);
        zt__arm();
        zt__call_case(fn, fn_tp, tr);
        alarm(0);
        fflush(NULL);
        st->report->completed = 1;
        exit(0); /* atexit handlers (a leak check) may still fail it */
    }

    st->case_killed = 0;
    st->case_pid = pid;
    alarm(secs + 1);
    /* WNOWAIT keeps the child's pid reserved until the alarm is off, so
     * the fallback can never signal a recycled pid. */
    while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
    }
    alarm(0);
    st->case_pid = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    long long ms = (long long)(zt_now_ms() - start);

    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && st->report->completed) {
        printf("ok   %s (%lld ms)\n", name, ms);
        st->cases_passed++;
        return;
    }
    if (st->case_killed)
        snprintf(why, sizeof why, "killed by the runner: no result %u s after it started",
                 secs + 1);
    else if (st->report->claimed && st->report->reason[0] != '\0')
        snprintf(why, sizeof why, "%s", st->report->reason);
    else if (WIFSIGNALED(status))
        snprintf(why, sizeof why, "killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status) && st->report->completed)
        snprintf(why, sizeof why,
                 "exit status %d after the case returned (a leak or sanitizer report above?)",
                 WEXITSTATUS(status));
    else if (WIFEXITED(status))
        snprintf(why, sizeof why, "exit status %d before the case returned (see above)",
                 WEXITSTATUS(status));
    else
        snprintf(why, sizeof why, "wait status %#x", (unsigned)status);
    fflush(stderr);
    printf("FAIL %s (%lld ms): %s\n", name, ms, why);
    st->cases_failed++;
}

/* Runs one case (one transport of a stamped case) if it is selected and
 * counts it. Called from main() through zt_main or ZT_RUN. */
static inline void zt__run_case(const char *base, void (*fn)(void),
                                void (*fn_tp)(const char *), const char *tr)
{
    struct zt__state *st = zt__st();
    char name[ZT_NAME_MAX];

    zt__init();
    zt__filters_from_env();
    zt__case_name(name, sizeof name, base, tr);
    if (!zt__selected(name)) {
        st->cases_unselected++;
        return;
    }
    if (st->deadline != 0 && difftime(st->deadline, time(NULL)) < 1) {
        printf("FAIL %s (0 ms): not run: the target's time limit (TEST_TIMEOUT) is used up\n",
               name);
        st->cases_failed++;
        return;
    }
    if (st->no_fork)
        zt__run_here(name, fn, fn_tp, tr);
    else
        zt__run_forked(name, fn, fn_tp, tr);
}

/* The older spelling: runs fn as the next case, now (see the notes). */
#define ZT_RUN(fn) zt__run_case(#fn, fn, NULL, NULL)

/* Ends main(): prints "N passed, N failed" (and how many cases the filter
 * left out) and returns the exit status: 0, or 1 when a case failed. */
static inline int zt_done(void)
{
    struct zt__state *st = zt__st();
    printf("%d passed, %d failed", st->cases_passed, st->cases_failed);
    if (st->cases_unselected > 0)
        printf(", %d not selected", st->cases_unselected);
    printf("\n");
    fflush(NULL);
    return st->cases_failed > 0 ? 1 : 0;
}

/* Checks a case table: every row has a name and exactly one function, and
 * no two rows share a name. Prints what is wrong; returns 0 when fine. */
static inline int zt__check_table(const zt_case_t *cases, size_t ncases)
{
    int bad = 0;
    for (size_t i = 0; i < ncases; i++) {
        if (cases[i].name == NULL || (cases[i].fn == NULL) == (cases[i].fn_tp == NULL)) {
            fprintf(stderr, "zltest: case table row %zu is malformed\n", i);
            bad = 1;
            continue;
        }
        for (size_t j = 0; j < i; j++) {
            if (cases[j].name != NULL && strcmp(cases[j].name, cases[i].name) == 0) {
                fprintf(stderr, "zltest: case '%s' is listed twice\n", cases[i].name);
                bad = 1;
            }
        }
    }
    return bad;
}

static inline void zt__usage(FILE *to, const char *argv0)
{
    fprintf(to,
            "usage: %s [--list] [--no-fork] [NAME ...]\n"
            "  NAME      run the cases whose name contains NAME (a glob when it has * or ?)\n"
            "  --list    print the case names (those NAME selects) and exit\n"
            "  --no-fork run the cases in this process; the first failure ends the run\n"
            "environment: ZT_FILTER (names, when no NAME is given), ZT_NOFORK=1,\n"
            "  ZT_TIMEOUT_MULT (scales every timeout)\n",
            argv0);
}

/* main() of a test file with roles: a process started by zt_spawn_self
 * plays its role; otherwise the selected cases run in table order, each in
 * its own process. Returns main's exit status: 0 when every selected case
 * passed, 1 when one failed, 2 for a usage error, a bad table or a filter
 * that selects nothing, 100 for an unknown role. */
static inline int zt_main_roles(int argc, char **argv, const zt_case_t *cases, size_t ncases,
                                const zt_role_t *roles, size_t nroles)
{
    struct zt__state *st = zt__st();
    const char *argv0 = argc > 0 ? argv[0] : "test";
    int list = 0;
    size_t nwords = 0, selected = 0;
    char name[ZT_NAME_MAX];

    if (argc >= 3 && strcmp(argv[1], "--zt-role") == 0) {
        for (size_t i = 0; i < nroles; i++) {
            if (strcmp(roles[i].name, argv[2]) == 0) {
                (void)zt_role(argc, argv);
                return roles[i].fn(argc > 3 ? argv[3] : NULL);
            }
        }
        fprintf(stderr, "zltest: unknown role '%s'\n", argv[2]);
        return 100;
    }

    zt__init();
    char **words = (char **)calloc((size_t)(argc > 0 ? argc : 1), sizeof *words);
    if (words == NULL) {
        fprintf(stderr, "zltest: out of memory\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0) {
            list = 1;
        } else if (strcmp(argv[i], "--no-fork") == 0) {
            st->no_fork = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            zt__usage(stdout, argv0);
            free(words);
            return 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "zltest: unknown option '%s'\n", argv[i]);
            zt__usage(stderr, argv0);
            free(words);
            return 2;
        } else {
            words[nwords++] = argv[i];
        }
    }
    if (nwords > 0) {
        st->filters = words; /* NULL-terminated by calloc; lives until exit */
        st->filter_from_argv = 1;
    } else {
        free(words);
        zt__filters_from_env();
    }
    if (zt__check_table(cases, ncases) != 0)
        return 2;

    for (size_t i = 0; i < ncases; i++) {
        for (int t = 0; t < (cases[i].fn_tp != NULL ? ZT_NTRANSPORTS : 1); t++) {
            zt__case_name(name, sizeof name, cases[i].name,
                          cases[i].fn_tp != NULL ? zt__transport(t) : NULL);
            if (!zt__selected(name))
                continue;
            selected++;
            if (list)
                printf("%s\n", name);
        }
    }
    if (list)
        return 0;
    if (selected == 0) {
        fprintf(stderr, "zltest: no case matches the filter\n");
        return 2;
    }
    for (size_t i = 0; i < ncases; i++) {
        if (cases[i].fn != NULL) {
            zt__run_case(cases[i].name, cases[i].fn, NULL, NULL);
            continue;
        }
        for (int t = 0; t < ZT_NTRANSPORTS; t++)
            zt__run_case(cases[i].name, NULL, cases[i].fn_tp, zt__transport(t));
    }
    return zt_done();
}

/* main() of a test file without roles. */
static inline int zt_main(int argc, char **argv, const zt_case_t *cases, size_t ncases)
{
    return zt_main_roles(argc, argv, cases, ncases, NULL, 0);
}

#endif /* ZLTEST_H */
