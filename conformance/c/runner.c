/*
 * runner.c — the C conformance runner (doc/conformance.md).
 *
 *   c_runner [-v] MANIFEST [CASE-ID ...]   runs every case of the manifest,
 *                                          or the ones named, in manifest order
 *   c_runner --check MANIFEST              checks the manifest and that this
 *                                          runner implements exactly its cases
 *   c_runner --list MANIFEST               prints the manifest's case ids
 *   c_runner --verify LANG MANIFEST OUTPUT holds the CASE lines another
 *                                          language's runner printed (OUTPUT)
 *                                          against the manifest (verify.c);
 *                                          run.sh and matrix.sh use it
 *
 * Output (stdout), one line per case, in manifest order:
 *   CASE <id> pass <elapsed>
 *   CASE <id> fail <what failed>
 *   CASE <id> missing <why>
 * and "ERROR <text>" for a manifest or registry problem. A summary and the
 * output of failed cases (every case with -v) go to stderr.
 *
 * Exit status: 0 when every case run passed; 1 when a case failed or is
 * missing; 2 for a usage or manifest error, a duplicate id, or a case this
 * runner implements that the manifest does not list.
 *
 * Each case runs in a fresh process: this binary again (/proc/self/exe)
 * with "--run-case ID MANIFEST", its stdout and stderr in a pipe. The case
 * passes when that process prints its completion line and exits 0 within
 * CASE_SECONDS x ZT_TIMEOUT_MULT; anything else (a failed check, a crash, a
 * sanitizer report, a leak, a hang) fails it. The parent never starts a
 * thread or a ZLink context.
 */
#include "conf.h"
#include "manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CASE_SECONDS 60
#define OUTPUT_CAP (1u << 20)
#define DETAIL_CAP 240
#define DONE_MARK "conformance: case completed: "

enum { EXIT_OK = 0, EXIT_CASES = 1, EXIT_USAGE = 2 };

/* ---------------------------------------------------------------- registry */

static const conf_impl_t *impl_find(const char *id)
{
    for (size_t i = 0; i < conf_impl_count; i++) {
        if (strcmp(conf_impls[i].id, id) == 0)
            return &conf_impls[i];
    }
    return NULL;
}

/* The registry against the manifest: a case this runner implements that
 * the manifest lacks, or implemented twice, is an ERROR line. */
static int registry_check(const conf_manifest_t *m)
{
    int problems = 0;
    for (size_t i = 0; i < conf_impl_count; i++) {
        if (conf_manifest_find(m, conf_impls[i].id) == NULL) {
            conf_report_error("case %s is implemented by the C runner but not in the manifest",
                         conf_impls[i].id);
            problems++;
        }
        for (size_t k = 0; k < i; k++) {
            if (strcmp(conf_impls[k].id, conf_impls[i].id) == 0) {
                conf_report_error("case %s is registered twice in the C runner", conf_impls[i].id);
                problems++;
            }
        }
    }
    return problems;
}

/* ------------------------------------------------------ one case, child */

static int run_case_here(const char *id, const char *path)
{
    conf_manifest_t m;
    /* The parent checked the manifest; ERROR lines here would be repeats. */
    if (conf_manifest_load(path, &m) != 0) {
        conf_manifest_free(&m);
        return EXIT_USAGE;
    }
    const conf_entry_t *e = conf_manifest_find(&m, id);
    const conf_impl_t *impl = impl_find(id);
    if (e == NULL || impl == NULL) {
        fprintf(stderr, "%s: not in the manifest or not implemented\n", id);
        conf_manifest_free(&m);
        return EXIT_USAGE;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    impl->run(e->params);
    printf(DONE_MARK "%s\n", id);
    fflush(stdout);
    conf_manifest_free(&m);
    return EXIT_OK;
}

/* ----------------------------------------------------- one case, parent */

typedef struct outcome {
    bool pass;
    char detail[DETAIL_CAP];
    char *output; /* everything the case printed */
    size_t len;
} outcome_t;

static double timeout_mult(void)
{
    const char *env = getenv("ZT_TIMEOUT_MULT");
    double v = env != NULL ? atof(env) : 0;
    return v > 0 ? v : 1.0;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Copies line (up to its end) into the detail, one line, bounded. */
static void set_detail(outcome_t *o, const char *prefix, const char *line)
{
    size_t n = 0;
    while (line != NULL && line[n] != '\0' && line[n] != '\n')
        n++;
    if (line == NULL || n == 0)
        snprintf(o->detail, sizeof o->detail, "%s", prefix);
    else
        snprintf(o->detail, sizeof o->detail, "%s: %.*s", prefix, (int)n, line);
}

/* Whether the line [l, end) contains needle. */
static bool line_has(const char *l, const char *end, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = l; p + n <= end; p++) {
        if (memcmp(p, needle, n) == 0)
            return true;
    }
    return false;
}

/* Whether the line [l, end) starts like a zltest failure: "file:123: ". */
static bool zltest_line(const char *l, const char *end)
{
    const char *colon = memchr(l, ':', (size_t)(end - l));
    if (colon == NULL || colon == l)
        return false;
    const char *d = colon + 1;
    while (d < end && *d >= '0' && *d <= '9')
        d++;
    return d > colon + 1 && d + 1 < end && d[0] == ':' && d[1] == ' ';
}

/* The line that best says why a case failed: a zltest check, else a
 * sanitizer's report, else the last line (not zltest's "not ok"). */
static const char *failure_line(const char *out)
{
    const char *last = NULL, *sanitizer = NULL;
    for (const char *l = out; *l != '\0';) {
        const char *nl = strchr(l, '\n');
        const char *end = nl != NULL ? nl : l + strlen(l);
        bool report = line_has(l, end, "Sanitizer") || line_has(l, end, "runtime error");
        if (!report && zltest_line(l, end))
            return l;
        if (report && sanitizer == NULL)
            sanitizer = l;
        if (end > l && strncmp(l, "not ok", 6) != 0)
            last = l;
        l = nl != NULL ? nl + 1 : end;
    }
    return sanitizer != NULL ? sanitizer : last;
}

static void run_case_child(const char *id, const char *path, outcome_t *o)
{
    memset(o, 0, sizeof *o);
    int fds[2];
    if (pipe(fds) != 0) {
        set_detail(o, "runner: pipe failed", strerror(errno));
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        set_detail(o, "runner: fork failed", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        char *argv[] = {(char *)"conformance-c-case", (char *)"--run-case", (char *)id,
                        (char *)path, NULL};
        execv("/proc/self/exe", argv);
        fprintf(stderr, "execv(/proc/self/exe): %s\n", strerror(errno));
        _exit(127);
    }
    close(fds[1]);

    int64_t start = now_ms();
    int64_t deadline = start + (int64_t)(CASE_SECONDS * 1000 * timeout_mult());
    bool timed_out = false;
    size_t cap = 4096;
    o->output = malloc(cap);
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0 && !timed_out) {
            timed_out = true;
            kill(pid, SIGKILL);
        }
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int rc = poll(&pfd, 1, timed_out ? -1 : (int)(left > 1000 ? 1000 : left));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc == 0)
            continue;
        char buf[4096];
        ssize_t got = read(fds[0], buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (o->output != NULL && o->len + (size_t)got + 1 > cap && cap < OUTPUT_CAP) {
            while (cap < o->len + (size_t)got + 1 && cap < OUTPUT_CAP)
                cap *= 2;
            char *grown = realloc(o->output, cap);
            if (grown == NULL)
                free(o->output);
            o->output = grown;
        }
        if (o->output != NULL && o->len + (size_t)got + 1 <= cap) {
            memcpy(o->output + o->len, buf, (size_t)got);
            o->len += (size_t)got;
        }
    }
    close(fds[0]);
    if (o->output != NULL)
        o->output[o->len] = '\0';
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    int64_t elapsed = now_ms() - start;

    char done[128];
    snprintf(done, sizeof done, DONE_MARK "%s\n", id);
    bool completed = o->output != NULL && strstr(o->output, done) != NULL;
    const char *why = o->output != NULL ? failure_line(o->output) : NULL;
    char prefix[96];
    if (timed_out) {
        snprintf(prefix, sizeof prefix, "timed out after %lld ms", (long long)elapsed);
        set_detail(o, prefix, why);
    } else if (WIFSIGNALED(status)) {
        snprintf(prefix, sizeof prefix, "killed by signal %d", WTERMSIG(status));
        set_detail(o, prefix, why);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(prefix, sizeof prefix, "exit %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        set_detail(o, prefix, why);
    } else if (!completed) {
        set_detail(o, "ended without completing the case", why);
    } else {
        o->pass = true;
        snprintf(o->detail, sizeof o->detail, "%lld ms", (long long)elapsed);
    }
}

static void echo_output(const char *id, const outcome_t *o)
{
    if (o->output == NULL || o->len == 0)
        return;
    fprintf(stderr, "---- output of %s\n", id);
    for (const char *l = o->output; *l != '\0';) {
        const char *nl = strchr(l, '\n');
        int n = nl != NULL ? (int)(nl - l) : (int)strlen(l);
        fprintf(stderr, "  | %.*s\n", n, l);
        l = nl != NULL ? nl + 1 : l + n;
    }
}

/* -------------------------------------------------------------------- main */

static int usage(void)
{
    fprintf(stderr, "usage: c_runner [-v] MANIFEST [CASE-ID ...]\n"
                    "       c_runner --check MANIFEST\n"
                    "       c_runner --list MANIFEST\n"
                    "       c_runner --verify LANG MANIFEST OUTPUT\n");
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--run-case") == 0)
        return run_case_here(argv[2], argv[3]);
    if (argc >= 2 && strcmp(argv[1], "--verify") == 0) {
        if (argc != 5)
            return usage();
        return conf_verify(argv[2], argv[3], argv[4]);
    }

    bool verbose = false, check = false, list = false;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "-v") == 0)
            verbose = true;
        else if (strcmp(argv[i], "--check") == 0)
            check = true;
        else if (strcmp(argv[i], "--list") == 0)
            list = true;
        else
            return usage();
    }
    if (i >= argc || (check && list) || ((check || list) && argc - i != 1))
        return usage();
    const char *path = argv[i++];
    setvbuf(stdout, NULL, _IOLBF, 0);

    conf_manifest_t m;
    if (conf_manifest_load(path, &m) != 0) {
        conf_manifest_free(&m);
        return EXIT_USAGE;
    }
    if (list) {
        for (size_t k = 0; k < m.n; k++)
            printf("%s\n", m.cases[k].id);
        conf_manifest_free(&m);
        return EXIT_OK;
    }
    int problems = registry_check(&m);

    /* The cases to run: the ones named, or all, in manifest order. */
    for (int k = i; k < argc; k++) {
        if (conf_manifest_find(&m, argv[k]) == NULL) {
            conf_report_error("case %s is not in the manifest", argv[k]);
            problems++;
        }
    }
    unsigned pass = 0, fail = 0, missing = 0;
    for (size_t k = 0; k < m.n; k++) {
        const char *id = m.cases[k].id;
        bool wanted = i == argc;
        for (int a = i; a < argc && !wanted; a++)
            wanted = strcmp(argv[a], id) == 0;
        if (!wanted)
            continue;
        if (impl_find(id) == NULL) {
            printf("CASE %s missing not implemented by the C runner\n", id);
            missing++;
            continue;
        }
        if (check)
            continue;
        outcome_t o;
        run_case_child(id, path, &o);
        printf("CASE %s %s %s\n", id, o.pass ? "pass" : "fail", o.detail);
        if (!o.pass || verbose)
            echo_output(id, &o);
        free(o.output);
        if (o.pass)
            pass++;
        else
            fail++;
    }
    if (check)
        fprintf(stderr,
                "conformance (c): %zu cases in %s, %zu implemented, %u missing, %d "
                "error(s)\n",
                m.n, path, m.n - missing, missing, problems);
    else
        fprintf(stderr, "conformance (c): %u pass, %u fail, %u missing, %d error(s)\n", pass, fail,
                missing, problems);
    conf_manifest_free(&m);
    if (problems > 0)
        return EXIT_USAGE;
    return fail + missing > 0 ? EXIT_CASES : EXIT_OK;
}
