/*
 * procs.c — child processes for the multi-process benchmarks; see procs.h.
 */
#include "procs.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rr_common.h"

/* Every child the driver started and has not reaped. Driver thread only. */
static bp_child_t children[BP_MAX_CHILDREN];

bp_child_t *bp_spawn(const char *role, char *const args[])
{
    bp_child_t *c = NULL;
    for (size_t i = 0; i < sizeof children / sizeof children[0]; i++)
        if (children[i].pid == 0) {
            c = &children[i];
            break;
        }
    if (!c) {
        fprintf(stderr, "%s: too many children\n", bp_name);
        return NULL;
    }
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        return NULL;
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        return NULL;
    }
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)bp_name;
    argv[n++] = (char *)role;
    for (int i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    pid_t parent = getpid();
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s: fork: %s\n", bp_name, strerror(errno));
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        return NULL;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127); /* the driver died before the signal was armed */
        dup2(in[0], STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        execv("/proc/self/exe", argv);
        printf("ERROR,exec: %s\n", strerror(errno));
        fflush(stdout);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    c->pid = pid;
    c->in_fd = in[1];
    c->out_fd = out[0];
    c->len = 0;
    return c;
}

int bp_reap(bp_child_t *c, int kill_it)
{
    if (c->pid == 0)
        return -1;
    if (c->in_fd >= 0)
        close(c->in_fd);
    if (kill_it)
        kill(c->pid, SIGKILL);
    int st = 0;
    while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR) {
    }
    close(c->out_fd);
    c->pid = 0;
    c->in_fd = c->out_fd = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* Prints the ERROR lines an ended child left unread (its last words). */
static void relay_errors(bp_child_t *c)
{
    for (;;) {
        char *nl;
        while ((nl = memchr(c->buf, '\n', c->len)) != NULL) {
            size_t n = (size_t)(nl - c->buf);
            if (n >= 6 && memcmp(c->buf, "ERROR,", 6) == 0)
                fprintf(stderr, "%s: child %d: %.*s\n", bp_name, (int)c->pid, (int)n, c->buf);
            memmove(c->buf, nl + 1, c->len - n - 1);
            c->len -= n + 1;
        }
        if (c->len == sizeof c->buf)
            c->len = 0;
        ssize_t got = read(c->out_fd, c->buf + c->len, sizeof c->buf - c->len);
        if (got <= 0)
            return; /* the writer is gone: end of file, nothing blocks */
        c->len += (size_t)got;
    }
}

void bp_reap_all(void)
{
    for (size_t i = 0; i < sizeof children / sizeof children[0]; i++) {
        pid_t pid = children[i].pid;
        int st;
        /* A child that already ended says how, so a failed case names its
         * cause; bp_reap then only closes its pipes (its waitpid finds the
         * child reaped already). */
        int ended = pid != 0 && waitpid(pid, &st, WNOHANG) == pid;
        if (ended) {
            relay_errors(&children[i]);
            if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
                fprintf(stderr, "%s: child %d exited with status %d\n", bp_name, (int)pid,
                        WEXITSTATUS(st));
            else if (WIFSIGNALED(st))
                fprintf(stderr, "%s: child %d killed by signal %d\n", bp_name, (int)pid,
                        WTERMSIG(st));
        }
        bp_reap(&children[i], !ended);
    }
}

int bp_finish(bp_child_t *c, const char *who, uint64_t bound_ns)
{
    close(c->in_fd);
    c->in_fd = -1;
    uint64_t end = rr_now_ns() + bound_ns;
    char sink[512];
    for (;;) {
        uint64_t now = rr_now_ns();
        if (now >= end) {
            fprintf(stderr, "%s: %s did not exit; killed\n", bp_name, who);
            bp_reap(c, 1);
            return -1;
        }
        struct pollfd p = {c->out_fd, POLLIN, 0};
        int rc = poll(&p, 1, (int)((end - now) / 1000000) + 1);
        if (rc < 0 && errno != EINTR)
            break;
        if (rc <= 0)
            continue;
        ssize_t got = read(c->out_fd, sink, sizeof sink);
        if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
            break;
    }
    int rc = bp_reap(c, 0);
    if (rc != 0)
        fprintf(stderr, "%s: %s exited with status %d\n", bp_name, who, rc);
    return rc == 0 ? 0 : -1;
}

int bp_expect_line(bp_child_t *c, const char *who, const char *prefix, char *line, size_t cap,
                   uint64_t deadline, const char *relay)
{
    size_t pl = strlen(prefix);
    for (;;) {
        char *nl;
        while ((nl = memchr(c->buf, '\n', c->len)) != NULL) {
            size_t n = (size_t)(nl - c->buf);
            size_t k = n < cap - 1 ? n : cap - 1;
            memcpy(line, c->buf, k);
            line[k] = '\0';
            memmove(c->buf, nl + 1, c->len - n - 1);
            c->len -= n + 1;
            if (strncmp(line, prefix, pl) == 0)
                return 0;
            if (strncmp(line, "ERROR,", 6) == 0) {
                fprintf(stderr, "%s: %s: %s\n", bp_name, who, line);
                return -1;
            }
            if (relay != NULL && strncmp(line, relay, strlen(relay)) == 0)
                printf("%s\n", line);
        }
        if (c->len == sizeof c->buf)
            c->len = 0;
        uint64_t now = rr_now_ns();
        if (now >= deadline) {
            fprintf(stderr, "%s: %s: no %s line in time\n", bp_name, who, prefix);
            return -1;
        }
        struct pollfd p = {c->out_fd, POLLIN, 0};
        int rc = poll(&p, 1, (int)((deadline - now) / 1000000) + 1);
        if (rc < 0 && errno != EINTR)
            return -1;
        if (rc <= 0)
            continue;
        ssize_t got = read(c->out_fd, c->buf + c->len, sizeof c->buf - c->len);
        if (got == 0) {
            fprintf(stderr, "%s: %s: exited before its %s line\n", bp_name, who, prefix);
            return -1;
        }
        if (got > 0)
            c->len += (size_t)got;
    }
}

int bp_say(bp_child_t *c, const char *text)
{
    size_t n = strlen(text);
    ssize_t put = write(c->in_fd, text, n);
    if (put == (ssize_t)n)
        return 0;
    fprintf(stderr, "%s: child %d: write: %s\n", bp_name, (int)c->pid,
            put < 0 ? strerror(errno) : "short");
    return -1;
}

double bp_field(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, ",%s=", key);
    const char *p = strstr(line, pat);
    return p ? strtod(p + strlen(pat), NULL) : 0;
}


int bp_stdin_line(char *buf, size_t cap, int timeout_ms)
{
    static char pend[BP_LINE];
    static size_t plen;
    for (;;) {
        char *nl = memchr(pend, '\n', plen);
        if (nl) {
            size_t n = (size_t)(nl - pend);
            size_t c = n < cap - 1 ? n : cap - 1;
            memcpy(buf, pend, c);
            buf[c] = '\0';
            memmove(pend, nl + 1, plen - n - 1);
            plen -= n + 1;
            return 1;
        }
        if (plen == sizeof pend)
            plen = 0; /* an over-long line: dropped (the driver never sends one) */
        struct pollfd p = {STDIN_FILENO, POLLIN, 0};
        int rc = poll(&p, 1, timeout_ms);
        if (rc == 0)
            return 0;
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        ssize_t got = read(STDIN_FILENO, pend + plen, sizeof pend - plen);
        if (got <= 0) {
            if (got < 0 && errno == EINTR)
                continue;
            return -1;
        }
        plen += (size_t)got;
    }
}

uint64_t bp_proc_status(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    size_t kl = strlen(key);
    uint64_t v = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
            v = strtoull(line + kl + 1, NULL, 10) * 1024;
            break;
        }
    }
    fclose(f);
    return v;
}

int bp_parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}
