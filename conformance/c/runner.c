/*
 * runner.c — the C conformance runner (doc/conformance.md).
 *
 *   c_runner [-v] MANIFEST [CASE-ID ...]   runs every case of the manifest,
 *                                          or the ones named, in manifest order
 *   c_runner --check MANIFEST              checks the manifest and that this
 *                                          runner implements exactly its cases
 *   c_runner --list MANIFEST               prints the manifest's case ids
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
#include "json.h"

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

/* ---------------------------------------------------------------- manifest */

typedef struct entry {
    const char *id;
    const cj_value_t *params;
} entry_t;

typedef struct manifest {
    cj_value_t *root;
    entry_t *cases;
    size_t n;
} manifest_t;

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf == NULL)
            break;
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *grown = realloc(buf, cap * 2);
        if (grown == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    bool bad = ferror(f) != 0;
    fclose(f);
    if (buf == NULL || bad) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void report_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("ERROR ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

/* An id is two or more capital letters, '-', two or more digits. */
static bool id_well_formed(const char *id)
{
    size_t i = 0;
    while (id[i] >= 'A' && id[i] <= 'Z')
        i++;
    if (i < 2 || id[i] != '-')
        return false;
    size_t d = ++i;
    while (id[i] >= '0' && id[i] <= '9')
        i++;
    return i - d >= 2 && id[i] == '\0';
}

static bool nonempty_string(const cj_value_t *v)
{
    return v != NULL && v->kind == CJ_STRING && v->str[0] != '\0';
}

/* The optional "later" member of case c: the parts of the contract case
 * that need a later phase of the project, as a non-empty array of
 * {"part": text, "needs": text} objects (both non-empty, nothing else).
 * The runner implements the rest of the case; the parts are listed so a
 * reader of the manifest sees what the case does not cover yet. Returns the
 * number of problems, each reported as an ERROR line. */
static int later_check(const char *path, const cj_value_t *c, const char *id)
{
    const cj_value_t *later = cj_get(c, "later");
    if (later == NULL)
        return 0;
    if (later->kind != CJ_ARRAY || later->n == 0) {
        report_error("%s line %d: case %s: \"later\" must be a non-empty array", path,
                     later->line, id);
        return 1;
    }
    int problems = 0;
    for (size_t i = 0; i < later->n; i++) {
        const cj_value_t *e = &later->items[i];
        bool ok = e->kind == CJ_OBJECT && e->n == 2 && nonempty_string(cj_get(e, "part")) &&
                  nonempty_string(cj_get(e, "needs"));
        if (!ok) {
            report_error("%s line %d: case %s: \"later\" entry %zu needs exactly a non-empty "
                         "\"part\" and \"needs\"",
                         path, e->line, id, i + 1);
            problems++;
        }
    }
    return problems;
}

/* Loads and checks the manifest: {"cases": [{"id", "title", "seed",
 * "params" [, "later"]}, ...]} plus an optional top-level "about" string.
 * Reports every problem as an ERROR line; returns the number of problems. */
static int manifest_load(const char *path, manifest_t *m)
{
    memset(m, 0, sizeof *m);
    char *text = read_file(path);
    if (text == NULL) {
        report_error("%s: cannot read: %s", path, strerror(errno));
        return 1;
    }
    char err[256];
    m->root = cj_parse(text, err, sizeof err);
    free(text);
    if (m->root == NULL) {
        report_error("%s: %s", path, err);
        return 1;
    }
    int problems = 0;
    const cj_value_t *root = m->root;
    const cj_value_t *cases = cj_get(root, "cases");
    if (root->kind != CJ_OBJECT || cases == NULL || cases->kind != CJ_ARRAY) {
        report_error("%s: the top level must be an object with a \"cases\" array", path);
        return 1;
    }
    for (size_t i = 0; i < root->n; i++) {
        if (strcmp(root->keys[i], "cases") != 0 && strcmp(root->keys[i], "about") != 0) {
            report_error("%s: unknown top-level member \"%s\"", path, root->keys[i]);
            problems++;
        }
    }
    m->cases = calloc(cases->n + 1, sizeof *m->cases);
    if (m->cases == NULL) {
        report_error("out of memory");
        return 1;
    }
    for (size_t i = 0; i < cases->n; i++) {
        const cj_value_t *c = &cases->items[i];
        if (c->kind != CJ_OBJECT) {
            report_error("%s line %d: case %zu is not an object", path, c->line, i + 1);
            problems++;
            continue;
        }
        const cj_value_t *id = cj_get(c, "id");
        const cj_value_t *params = cj_get(c, "params");
        if (!nonempty_string(id) || !id_well_formed(id->str)) {
            report_error("%s line %d: case %zu has no id of the form XX-00", path, c->line, i + 1);
            problems++;
            continue;
        }
        if (!nonempty_string(cj_get(c, "title")) || !nonempty_string(cj_get(c, "seed"))) {
            report_error("%s line %d: case %s needs a non-empty \"title\" and \"seed\"", path,
                         c->line, id->str);
            problems++;
        }
        if (params == NULL || params->kind != CJ_OBJECT) {
            report_error("%s line %d: case %s needs a \"params\" object", path, c->line, id->str);
            problems++;
        }
        problems += later_check(path, c, id->str);
        for (size_t k = 0; k < c->n; k++) {
            const char *key = c->keys[k];
            if (strcmp(key, "id") != 0 && strcmp(key, "title") != 0 && strcmp(key, "seed") != 0 &&
                strcmp(key, "params") != 0 && strcmp(key, "later") != 0) {
                report_error("%s line %d: case %s has an unknown member \"%s\"", path, c->line,
                             id->str, key);
                problems++;
            }
        }
        for (size_t k = 0; k < m->n; k++) {
            if (strcmp(m->cases[k].id, id->str) == 0) {
                report_error("%s line %d: duplicate case id %s", path, c->line, id->str);
                problems++;
            }
        }
        m->cases[m->n].id = id->str;
        m->cases[m->n].params = params;
        m->n++;
    }
    if (m->n == 0 && problems == 0) {
        report_error("%s: the manifest lists no case", path);
        problems++;
    }
    return problems;
}

static void manifest_free(manifest_t *m)
{
    cj_free(m->root);
    free(m->cases);
    memset(m, 0, sizeof *m);
}

static const entry_t *manifest_find(const manifest_t *m, const char *id)
{
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->cases[i].id, id) == 0)
            return &m->cases[i];
    }
    return NULL;
}

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
static int registry_check(const manifest_t *m)
{
    int problems = 0;
    for (size_t i = 0; i < conf_impl_count; i++) {
        if (manifest_find(m, conf_impls[i].id) == NULL) {
            report_error("case %s is implemented by the C runner but not in the manifest",
                         conf_impls[i].id);
            problems++;
        }
        for (size_t k = 0; k < i; k++) {
            if (strcmp(conf_impls[k].id, conf_impls[i].id) == 0) {
                report_error("case %s is registered twice in the C runner", conf_impls[i].id);
                problems++;
            }
        }
    }
    return problems;
}

/* ------------------------------------------------------ one case, child */

static int run_case_here(const char *id, const char *path)
{
    manifest_t m;
    /* The parent checked the manifest; ERROR lines here would be repeats. */
    if (manifest_load(path, &m) != 0)
        return EXIT_USAGE;
    const entry_t *e = manifest_find(&m, id);
    const conf_impl_t *impl = impl_find(id);
    if (e == NULL || impl == NULL) {
        fprintf(stderr, "%s: not in the manifest or not implemented\n", id);
        manifest_free(&m);
        return EXIT_USAGE;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    impl->run(e->params);
    printf(DONE_MARK "%s\n", id);
    fflush(stdout);
    manifest_free(&m);
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
                    "       c_runner --list MANIFEST\n");
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--run-case") == 0)
        return run_case_here(argv[2], argv[3]);

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

    manifest_t m;
    if (manifest_load(path, &m) != 0) {
        manifest_free(&m);
        return EXIT_USAGE;
    }
    if (list) {
        for (size_t k = 0; k < m.n; k++)
            printf("%s\n", m.cases[k].id);
        manifest_free(&m);
        return EXIT_OK;
    }
    int problems = registry_check(&m);

    /* The cases to run: the ones named, or all, in manifest order. */
    for (int k = i; k < argc; k++) {
        if (manifest_find(&m, argv[k]) == NULL) {
            report_error("case %s is not in the manifest", argv[k]);
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
    manifest_free(&m);
    if (problems > 0)
        return EXIT_USAGE;
    return fail + missing > 0 ? EXIT_CASES : EXIT_OK;
}
