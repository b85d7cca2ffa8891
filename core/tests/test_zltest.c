/*
 * test_zltest.c — the test runner of zltest.h, tested through what a test
 * binary prints and returns.
 *
 * Design notes
 *  - The same binary plays two parts. Started with ZT_SELFTEST_INNER=<mode>
 *    in its environment it is an "inner" test file whose cases pass, fail,
 *    crash, hang or leak on purpose (the tables below). Otherwise it is the
 *    real test: each case starts the inner part (fork, execv of
 *    /proc/self/exe), collects everything it writes (stdout and stderr, one
 *    pipe), waits for it and checks the lines and the exit status the
 *    runner promises: one line per case in table order, a failure that
 *    hides no other case, the reason on the FAIL line, the summary, the
 *    filter and --list, the watchdog, ZT_CASE_TP stamping, ZT_RUN and
 *    roles.
 *  - The inner cases' deliberate failures only ever appear in the captured
 *    output, never in this test's own verdict.
 */
#include "zltest.h"

#include <pthread.h>
#include <stdbool.h>

/* ================================================= the inner test file */

static void pass_a(void)
{
    printf("# pass_a ran\n");
}

static void fail_check(void)
{
    ZT_EQ_INT(1 + 1, 3);
    printf("# after the failed check\n"); /* must never print */
}

static void killed(void)
{
    raise(SIGKILL);
}

static void early_exit(void)
{
    exit(0);
}

static void *fail_on_thread(void *arg)
{
    (void)arg;
    ZT_FAIL("failed on thread %d", 2);
    return NULL;
}

static void thread_fail(void)
{
    pthread_t t;
    ZT_EQ_INT(pthread_create(&t, NULL, fail_on_thread, NULL), 0);
    pthread_join(t, NULL);
}

static void pass_b(void)
{
    printf("# pass_b ran\n");
}

/* Two cases share a static: the second passes only when the first's write
 * did not reach it, i.e. when each case has its own process. */
static int shared_counter;

static void isolation_set(void)
{
    shared_counter = 41;
}

static void isolation_check(void)
{
    ZT_EQ_INT(shared_counter, 0);
}

static void stamped(const char *tr)
{
    printf("# stamped got %s\n", tr);
    ZT_CHECK(strcmp(tr, "tcp") != 0);
}

/* Leaks on purpose: under AddressSanitizer the leak check at the case
 * process's exit fails the case after it returned. */
static void *leaked;

static void leaks(void)
{
    leaked = malloc(100);
    ZT_CHECK(leaked != NULL);
    leaked = NULL;
}

static void hang(void)
{
    for (;;)
        pause();
}

static const zt_case_t inner_cases[] = {
    ZT_CASE(pass_a),        ZT_CASE(fail_check),      ZT_CASE(killed),
    ZT_CASE(early_exit),    ZT_CASE(thread_fail),     ZT_CASE(pass_b),
    ZT_CASE(isolation_set), ZT_CASE(isolation_check), ZT_CASE_TP(stamped),
    ZT_CASE(leaks),
};

static const zt_case_t hang_cases[] = {
    ZT_CASE(hang),
    ZT_CASE(pass_b),
};

static const zt_case_t dup_cases[] = {
    ZT_CASE(pass_a),
    ZT_CASE(pass_a),
};

/* The inner part: ZT_SELFTEST_INNER says which table (or the ZT_RUN
 * spelling) to run. */
static int inner_main(const char *mode, int argc, char **argv)
{
    if (strcmp(mode, "main") == 0)
        return zt_main(argc, argv, inner_cases, ZT_NCASES(inner_cases));
    if (strcmp(mode, "hang") == 0)
        return zt_main(argc, argv, hang_cases, ZT_NCASES(hang_cases));
    if (strcmp(mode, "dup") == 0)
        return zt_main(argc, argv, dup_cases, ZT_NCASES(dup_cases));
    if (strcmp(mode, "legacy") == 0) {
        ZT_RUN(pass_a);
        ZT_RUN(fail_check);
        ZT_RUN(pass_b);
        return zt_done();
    }
    fprintf(stderr, "unknown inner mode %s\n", mode);
    return 99;
}

/* ======================================================== the real test */

#define OUT_CAP 65536

typedef struct run {
    char out[OUT_CAP]; /* everything the inner part wrote, NUL-terminated */
    int status;        /* its exit status (zt_wait) */
} run_t;

/* Runs the inner part in mode with args (NULL-terminated, may be NULL)
 * and, when filter is not NULL, ZT_FILTER=filter; mult, when not NULL,
 * replaces ZT_TIMEOUT_MULT. Blocks until it ends; fails the case when it
 * cannot be started. */
static void run_inner(run_t *r, const char *mode, const char *const *args, const char *filter,
                      const char *mult)
{
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    ZT_CHECK(pid >= 0);
    if (pid == 0) {
        char *argv[16];
        int n = 0;
        argv[n++] = (char *)"test_zltest-inner";
        for (int i = 0; args != NULL && args[i] != NULL && n < 15; i++)
            argv[n++] = (char *)args[i];
        argv[n] = NULL;
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        setenv("ZT_SELFTEST_INNER", mode, 1);
        unsetenv("TESTBRIDGE_TEST_ONLY");
        unsetenv("ZT_NOFORK");
        if (filter != NULL)
            setenv("ZT_FILTER", filter, 1);
        else
            unsetenv("ZT_FILTER");
        if (mult != NULL)
            setenv("ZT_TIMEOUT_MULT", mult, 1);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    zt__remember_child(pid); /* the watchdog kills it if this case hangs */
    close(fds[1]);
    size_t len = 0;
    for (;;) {
        ssize_t got = read(fds[0], r->out + len, OUT_CAP - 1 - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        len += (size_t)got;
        ZT_CHECK(len < OUT_CAP - 1); /* the inner part wrote far too much */
    }
    r->out[len] = '\0';
    close(fds[0]);
    r->status = zt_wait(pid);
}

/* The start of the first line of out that begins with prefix, or NULL. */
static const char *line_with(const char *out, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *l = out; *l != '\0';) {
        if (strncmp(l, prefix, n) == 0)
            return l;
        const char *nl = strchr(l, '\n');
        if (nl == NULL)
            break;
        l = nl + 1;
    }
    return NULL;
}

/* The number of lines of out that begin with prefix. */
static int lines_with(const char *out, const char *prefix)
{
    int count = 0;
    size_t n = strlen(prefix);
    for (const char *l = out; *l != '\0';) {
        if (strncmp(l, prefix, n) == 0)
            count++;
        const char *nl = strchr(l, '\n');
        if (nl == NULL)
            break;
        l = nl + 1;
    }
    return count;
}

/* Fails (at the caller's line) unless out has a line starting with prefix
 * and containing want (want may be NULL) after position after; returns it. */
#define EXPECT_LINE(r, prefix, want, after) \
    expect_line(__FILE__, __LINE__, (r), (prefix), (want), (after))

static const char *expect_line(const char *file, int line, const run_t *r, const char *prefix,
                               const char *want, const char *after)
{
    const char *from = after != NULL ? after : r->out;
    const char *l = line_with(from, prefix);
    if (l == NULL)
        zt__fail(file, line, "no line \"%s...\" in the output:\n%s", prefix, r->out);
    if (want != NULL) {
        const char *end = strchr(l, '\n');
        size_t n = end != NULL ? (size_t)(end - l) : strlen(l);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf - 1 ? n : sizeof buf - 1), l);
        if (strstr(buf, want) == NULL)
            zt__fail(file, line, "line \"%s\" lacks \"%s\"", buf, want);
    }
    return l + 1;
}

/* Every case runs in table order, each with one line, and a failure in one
 * (a check, a kill, an early exit, a check on another thread) ends only
 * that case: the next one still runs, the failing one prints nothing after
 * its failed check, and the exit status is 1. */
static void a_failure_ends_only_its_case(void)
{
    static run_t r;
    run_inner(&r, "main", NULL, NULL, NULL);
    const char *at = EXPECT_LINE(&r, "ok   pass_a (", " ms)", NULL);
    at = EXPECT_LINE(&r, "FAIL fail_check (", "test_zltest.c:", at);
    at = EXPECT_LINE(&r, "FAIL killed (", "killed by signal 9", at);
    at = EXPECT_LINE(&r, "FAIL early_exit (", "exit status 0 before the case returned", at);
    at = EXPECT_LINE(&r, "FAIL thread_fail (", "failed on thread 2", at);
    at = EXPECT_LINE(&r, "ok   pass_b (", NULL, at);
    ZT_CHECK(line_with(r.out, "# after the failed check") == NULL);
    ZT_CHECK(line_with(r.out, "# pass_a ran") != NULL);
    ZT_CHECK(line_with(r.out, "# pass_b ran") != NULL);
    ZT_EQ_INT(r.status, 1);
}

/* The FAIL line carries the failed check's file:line, expression and
 * values; the full report is in the output above it. */
static void fail_line_says_why(void)
{
    static run_t r;
    run_inner(&r, "main", NULL, "fail_check", NULL);
    const char *fail = EXPECT_LINE(&r, "FAIL fail_check (", "ZT_EQ_INT(1 + 1, 3) failed: 2 != 3",
                                   NULL);
    const char *detail = line_with(r.out, __FILE__ ":");
    ZT_CHECK(detail != NULL && detail < fail);
    EXPECT_LINE(&r, "0 passed, 1 failed", ", 11 not selected", NULL);
    ZT_EQ_INT(r.status, 1);
}

/* Each case has its own process: a static written by one case is unset
 * in the next. */
static void cases_share_no_state(void)
{
    static run_t r;
    run_inner(&r, "main", NULL, "isolation_", NULL);
    EXPECT_LINE(&r, "ok   isolation_set (", NULL, NULL);
    EXPECT_LINE(&r, "ok   isolation_check (", NULL, NULL);
    EXPECT_LINE(&r, "2 passed, 0 failed, 10 not selected", NULL, NULL);
    ZT_EQ_INT(r.status, 0);
}

/* ZT_CASE_TP runs its function once per transport, in the order inproc,
 * tcp, ipc, under the names "fn[tr]", each a case of its own. */
static void stamping_runs_each_transport(void)
{
    static run_t r;
    run_inner(&r, "main", NULL, "stamped", NULL);
    const char *at = EXPECT_LINE(&r, "# stamped got inproc", NULL, NULL);
    at = EXPECT_LINE(&r, "ok   stamped[inproc] (", NULL, at);
    at = EXPECT_LINE(&r, "# stamped got tcp", NULL, at);
    at = EXPECT_LINE(&r, "FAIL stamped[tcp] (", "ZT_CHECK(strcmp(tr, \"tcp\") != 0) failed", at);
    at = EXPECT_LINE(&r, "# stamped got ipc", NULL, at);
    at = EXPECT_LINE(&r, "ok   stamped[ipc] (", NULL, at);
    EXPECT_LINE(&r, "2 passed, 1 failed, 9 not selected", NULL, at);
    ZT_EQ_INT(r.status, 1);
}

/* The summary counts every case; the process ends with it. */
static void summary_counts_all(void)
{
    static run_t r;
    run_inner(&r, "main", NULL, NULL, NULL);
#if defined(__SANITIZE_ADDRESS__)
    /* the leak check fails "leaks" after it returned */
    EXPECT_LINE(&r, "FAIL leaks (", "after the case returned", NULL);
    const char *summary = "6 passed, 6 failed\n";
#else
    EXPECT_LINE(&r, "ok   leaks (", NULL, NULL);
    const char *summary = "7 passed, 5 failed\n";
#endif
    ZT_EQ_INT(lines_with(r.out, "ok   ") + lines_with(r.out, "FAIL "), 12);
    size_t n = strlen(r.out), m = strlen(summary);
    ZT_CHECK(n >= m);
    ZT_EQ_STR(r.out + n - m, summary);
    ZT_EQ_INT(r.status, 1);
}

/* NAME arguments and ZT_FILTER select by substring, or by a glob with '*'
 * and '?' ('[' is literal); several words add up; --list prints the
 * selected names in table order and runs nothing. */
static void filter_and_list(void)
{
    static run_t r;
    const char *const by_arg[] = {"pass_", NULL};
    run_inner(&r, "main", by_arg, "fail_check", NULL); /* argv wins over ZT_FILTER */
    EXPECT_LINE(&r, "ok   pass_a (", NULL, NULL);
    EXPECT_LINE(&r, "ok   pass_b (", NULL, NULL);
    EXPECT_LINE(&r, "2 passed, 0 failed, 10 not selected", NULL, NULL);
    ZT_EQ_INT(r.status, 0);

    run_inner(&r, "main", NULL, "pass_? stamped[ipc]", NULL);
    EXPECT_LINE(&r, "ok   pass_a (", NULL, NULL);
    EXPECT_LINE(&r, "ok   pass_b (", NULL, NULL);
    EXPECT_LINE(&r, "ok   stamped[ipc] (", NULL, NULL);
    EXPECT_LINE(&r, "3 passed, 0 failed, 9 not selected", NULL, NULL);
    ZT_EQ_INT(r.status, 0);

    const char *const list[] = {"--list", "*ed*", NULL};
    run_inner(&r, "main", list, NULL, NULL);
    ZT_EQ_STR(r.out, "killed\nstamped[inproc]\nstamped[tcp]\nstamped[ipc]\n");
    ZT_EQ_INT(r.status, 0);

    const char *const all[] = {"--list", NULL};
    run_inner(&r, "main", all, NULL, NULL);
    ZT_EQ_STR(r.out, "pass_a\nfail_check\nkilled\nearly_exit\nthread_fail\npass_b\n"
                     "isolation_set\nisolation_check\nstamped[inproc]\nstamped[tcp]\n"
                     "stamped[ipc]\nleaks\n");
    ZT_EQ_INT(r.status, 0);
}

/* A filter that selects nothing, an unknown option and a table that
 * names a case twice are usage errors (exit 2), and run no case. */
static void usage_errors_exit_2(void)
{
    static run_t r;
    run_inner(&r, "main", NULL, "no_such_case", NULL);
    EXPECT_LINE(&r, "zltest: no case matches the filter", NULL, NULL);
    ZT_EQ_INT(lines_with(r.out, "ok   ") + lines_with(r.out, "FAIL "), 0);
    ZT_EQ_INT(r.status, 2);

    const char *const bad[] = {"--bogus", NULL};
    run_inner(&r, "main", bad, NULL, NULL);
    EXPECT_LINE(&r, "zltest: unknown option '--bogus'", NULL, NULL);
    ZT_EQ_INT(r.status, 2);

    run_inner(&r, "dup", NULL, NULL, NULL);
    EXPECT_LINE(&r, "zltest: case 'pass_a' is listed twice", NULL, NULL);
    ZT_EQ_INT(lines_with(r.out, "ok   "), 0);
    ZT_EQ_INT(r.status, 2);
}

/* A case that hangs is ended by the watchdog (ZT_CASE_SECONDS x
 * ZT_TIMEOUT_MULT, at least 1 s), reported with its name, and the next
 * case runs. */
static void watchdog_ends_a_hung_case(void)
{
    static run_t r;
    int64_t start = zt_now_ms();
    run_inner(&r, "hang", NULL, NULL, "0.01"); /* 0.6 s: rounded up to 1 s */
    EXPECT_LINE(&r, "zltest: watchdog: 'hang' hung", NULL, NULL);
    EXPECT_LINE(&r, "FAIL hang (", "timed out after 1 s (watchdog)", NULL);
    EXPECT_LINE(&r, "ok   pass_b (", NULL, NULL);
    EXPECT_LINE(&r, "1 passed, 1 failed", NULL, NULL);
    ZT_EQ_INT(r.status, 1);
    ZT_CHECK(zt_now_ms() - start >= 1000);
}

/* --no-fork runs the cases in the runner's process: the first failure
 * ends the run (for a debugger). */
static void no_fork_stops_at_first_failure(void)
{
    static run_t r;
    const char *const args[] = {"--no-fork", "pass_a", "fail_check", "pass_b", NULL};
    run_inner(&r, "main", args, NULL, NULL);
    EXPECT_LINE(&r, "ok   pass_a (", NULL, NULL);
    EXPECT_LINE(&r, "FAIL fail_check (", "failed: 2 != 3", NULL);
    ZT_CHECK(line_with(r.out, "ok   pass_b") == NULL);
    ZT_EQ_INT(r.status, 1);
}

/* The older ZT_RUN ... zt_done() main runs through the same runner: one
 * process per case, one line each, the summary, exit status 1. */
static void zt_run_is_the_same_runner(void)
{
    static run_t r;
    run_inner(&r, "legacy", NULL, NULL, NULL);
    const char *at = EXPECT_LINE(&r, "ok   pass_a (", NULL, NULL);
    at = EXPECT_LINE(&r, "FAIL fail_check (", "failed: 2 != 3", at);
    at = EXPECT_LINE(&r, "ok   pass_b (", NULL, at);
    EXPECT_LINE(&r, "2 passed, 1 failed", NULL, at);
    ZT_EQ_INT(r.status, 1);

    run_inner(&r, "legacy", NULL, "pass_b", NULL);
    EXPECT_LINE(&r, "ok   pass_b (", NULL, NULL);
    EXPECT_LINE(&r, "1 passed, 0 failed, 2 not selected", NULL, NULL);
    ZT_EQ_INT(r.status, 0);
}

static int role_echo(const char *arg)
{
    return arg != NULL && strcmp(arg, "x") == 0 ? 0 : 7;
}

/* zt_main_roles hands a process started by zt_spawn_self to its role with
 * the argument; an unknown role exits 100. */
static void roles_dispatch(void)
{
    ZT_EQ_INT(zt_wait(zt_spawn_self("echo", "x")), 0);
    ZT_EQ_INT(zt_wait(zt_spawn_self("echo", "y")), 7);
    ZT_EQ_INT(zt_wait(zt_spawn_self("echo", NULL)), 7);
    ZT_EQ_INT(zt_wait(zt_spawn_self("no-such-role", "x")), 100);
}

static const zt_case_t cases[] = {
    ZT_CASE(a_failure_ends_only_its_case),
    ZT_CASE(fail_line_says_why),
    ZT_CASE(cases_share_no_state),
    ZT_CASE(stamping_runs_each_transport),
    ZT_CASE(summary_counts_all),
    ZT_CASE(filter_and_list),
    ZT_CASE(usage_errors_exit_2),
    ZT_CASE(watchdog_ends_a_hung_case),
    ZT_CASE(no_fork_stops_at_first_failure),
    ZT_CASE(zt_run_is_the_same_runner),
    ZT_CASE(roles_dispatch),
};

static const zt_role_t roles[] = {
    ZT_ROLE("echo", role_echo),
};

int main(int argc, char **argv)
{
    const char *inner = getenv("ZT_SELFTEST_INNER");
    if (inner != NULL)
        return inner_main(inner, argc, argv);
    return zt_main_roles(argc, argv, cases, ZT_NCASES(cases), roles, ZT_NCASES(roles));
}
