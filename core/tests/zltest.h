/*
 * zltest.h — ZLink's in-tree test framework, header only.
 *
 * Design notes
 *  - One test file = one Bazel cc_test = one process. A file's main() runs
 *    its cases in order with ZT_RUN(fn); each case prints "ok - fn". The
 *    first failed check prints file:line, the values it compared and
 *    "not ok - fn", then ends the whole process with exit(1). No abort(), so
 *    no core dumps and sanitizer reports stay readable; later cases of the
 *    same file do not run.
 *  - Watchdog: each case must finish within ZT_CASE_SECONDS (60) times the
 *    environment's ZT_TIMEOUT_MULT (default 1; --config=asan sets 3, tsan 5).
 *    When Bazel says how long the whole target may take (TEST_TIMEOUT), the
 *    watchdog fires a little earlier than Bazel would kill the process, so a
 *    hang is always reported with the name of the case that hung. The
 *    handler also kills the children this process started.
 *  - Processes: zt_spawn(fn, arg) forks a child that runs fn(arg) and exits
 *    with its return value; zt_wait(pid) returns that exit status (128 + n
 *    when the child died of signal n). fork() copies only the calling thread:
 *    spawn before the parent starts ZLink contexts or other threads. When a
 *    fresh process is needed instead (for example, a peer with its own
 *    context), zt_spawn_self(role, arg) re-executes this same test binary
 *    through /proc/self/exe; main() calls zt_role(argc, argv) first and
 *    dispatches on the role it returns (NULL in the original process).
 *  - Threads: checks may run on any thread; a failure on any thread ends the
 *    process. The state below is per process and is not locked: ZT_RUN and
 *    the spawn/wait helpers are for the main thread only.
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
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ZT_CASE_SECONDS 60
#define ZT_MAX_CHILDREN 64

/* ------------------------------------------------------------------ state */

struct zt__state {
    int initialised;
    int in_child;                 /* set in processes made by zt_spawn */
    const char *current;          /* name of the running case */
    int cases_passed;
    double mult;                  /* ZT_TIMEOUT_MULT */
    time_t deadline;              /* whole-process limit from TEST_TIMEOUT, or 0 */
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

static inline void zt__on_alarm(int sig)
{
    const char *name = zt__st()->current ? zt__st()->current : "(no case)";
    (void)sig;
    zt__say("zltest: watchdog: '");
    zt__say(name);
    zt__say(zt__st()->in_child ? "' hung in a child process\n" : "' hung\n");
    if (!zt__st()->in_child) {
        zt__say("not ok - ");
        zt__say(name);
        zt__say(" (timeout)\n");
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

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = zt__on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
}

/* Arms the watchdog for one case: ZT_CASE_SECONDS * mult, but never past
 * the whole-process deadline. */
static inline void zt__arm(void)
{
    struct zt__state *st = zt__st();
    double secs = ZT_CASE_SECONDS * st->mult;
    if (st->deadline != 0) {
        double left = difftime(st->deadline, time(NULL));
        if (left < secs)
            secs = left;
    }
    alarm(secs < 1 ? 1u : (unsigned)secs);
}

/* ---------------------------------------------------------------- failure */

static inline void zt__vfail(const char *file, int line, const char *fmt, va_list ap)
{
    struct zt__state *st = zt__st();
    const char *name = st->current ? st->current : "(no case)";

    fflush(stdout);
    fprintf(stderr, "%s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    if (st->in_child) {
        fprintf(stderr, "zltest: child %ld of '%s' failed\n", (long)getpid(), name);
    } else {
        fflush(stderr);
        printf("not ok - %s\n", name);
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

/* ------------------------------------------------------------------ cases */

/* Runs fn as the next case: arms the watchdog, prints "ok - fn" when fn
 * returns. A failed check inside ends the process (see above). */
#define ZT_RUN(fn) zt__run(#fn, fn)

static inline void zt__run(const char *name, void (*fn)(void))
{
    struct zt__state *st = zt__st();
    zt__init();
    st->current = name;
    zt__arm();
    fn();
    alarm(0);
    printf("ok - %s\n", name);
    st->cases_passed++;
    st->current = NULL;
}

/* Ends main(): returns the exit status (0) after a summary line. */
static inline int zt_done(void)
{
    printf("# %d case%s passed\n", zt__st()->cases_passed,
           zt__st()->cases_passed == 1 ? "" : "s");
    fflush(NULL);
    return 0;
}

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
 * NULL). Its main() sees the role through zt_role(). Returns the pid. */
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

#endif /* ZLTEST_H */
