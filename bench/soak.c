/*
 * soak.c — the soak test of issue 11 (//bench:soak): request/reply and
 * one-way traffic between processes through the framework while peers are
 * killed with SIGKILL and restarted at random.
 *
 *   soak [--minutes M] [--seconds S] [--clients C] [--window W]
 *        [--oneway-per-ms K] [--seed X]
 *
 * It checks, and prints as RESULT lines:
 *   - every call a stable client started completed exactly once (a reply,
 *     a timeout, or the connection's loss; a second completion of a call
 *     is counted as a duplicate, a call never completed as lost);
 *   - every reply carries the payload of its own request;
 *   - no one-way record was handled twice, across every incarnation of
 *     every server;
 *   - the stable server's and the stable clients' open file descriptors
 *     and RSS return to their baseline once the churn stops (fds exactly;
 *     RSS within SOAK_RSS_SLACK of it; under AddressSanitizer RSS is not
 *     judged, see SOAK_JUDGE_RSS).
 * Exit status 0 when all hold, 1 when one does not or a role failed, 2 for
 * bad usage.
 *
 * Design notes
 * ------------
 * One program, three roles; the driver re-executes its own binary for the
 * others (bench/procs.h) and talks to them over their standard streams:
 *
 *   server  a Host with one ClientServer server channel on a fixed port
 *           (chosen by the driver, so a restarted server is found again),
 *           a REQUEST handler "echo" answering the payload, and a SEND
 *           handler "oneway" that queues "OW,<client>,<seq>" lines; the main
 *           thread prints them every 20 ms, answers "STAT" with
 *           "STAT,fds=<n>,rss=<bytes>" and shuts the host down at stdin's
 *           end of file. Prints "READY" once serving.
 *   client  a Host with a ClientServer client channel to each server; for
 *           each channel W requests in flight (timeout 400 ms), each
 *           completion starting the slot's next one; K one-way sends per
 *           millisecond paced by the main thread (at most 64 in flight).
 *           "STAT" as above; "STOP" stops starting calls, waits for those in
 *           flight (bounded) and prints "DONE,..." with its counts.
 *   driver  starts the stable server S0 and the churned server S1, C stable
 *           clients (never killed) and two churned clients, lets traffic
 *           run, takes the baseline (STAT of S0 and the stable clients),
 *           then for the soak's duration kills one of S1 and the churned
 *           clients at random every 100..1,000 ms and restarts it after
 *           0..300 ms. Then it restarts what is down, lets the connections
 *           settle, stops the clients, takes STAT again and compares. It
 *           reads every child's stdout all along (poll over all pipes),
 *           counting the one-way lines in a hash set.
 *
 * A churned client's own counts die with it; what the soak asserts of it
 * is what the servers see (no duplicate one-way, fds and RSS of S0 back to
 * baseline after thousands of its connections came and went).
 *
 * Threads and locks. Server: handlers on framework threads append to the
 * line buffer under sv_lock; the main thread swaps it out under the lock
 * and writes outside it. Client: cl_state_t.lock guards the slots and the
 * counts (completion dispatcher and main thread); it is never held across
 * a framework call. Driver: one thread.
 */
#include "procs.h"
#include "rr_common.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "zlink.h"

const char *bp_name = "soak";

#define SOAK_CHANNELS 2           /* S0 (stable) and S1 (churned) */
#define SOAK_MAX_CLIENTS 8
#define SOAK_CHURN_CLIENTS 2
#define SOAK_MAX_WINDOW 256
#define SOAK_OW_MAX_INFLIGHT 64
#define SOAK_REQUEST_MS 400
#define SOAK_SEND_MS 400
#define SOAK_STALL_NS (20ull * 1000 * 1000 * 1000)
#define SOAK_RSS_SLACK (8ull << 20) /* bytes an RSS may stay above baseline */
#define SOAK_CT "application/octet-stream"

/* Under AddressSanitizer freed memory waits in its quarantine and the
 * shadow grows, so RSS says nothing about leaks: it is printed, not
 * judged, and LeakSanitizer's check at every process's exit (a non-zero
 * status) judges instead. */
#if defined(__SANITIZE_ADDRESS__)
#define SOAK_JUDGE_RSS 0
#else
#define SOAK_JUDGE_RSS 1
#endif

static const char *fw_name(int r)
{
    const char *n = zlink_result_name(r);
    return n ? n : "?";
}

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

static void print_stat(void)
{
    printf("STAT,fds=%d,rss=%llu\n", count_fds(), (unsigned long long)bp_proc_status("VmRSS"));
    fflush(stdout);
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)v;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

/* ----------------------------------------------------------------- server */

static pthread_mutex_t sv_lock = PTHREAD_MUTEX_INITIALIZER;
static char *sv_buf;
static size_t sv_len, sv_cap;
static int sv_oom;

static void on_echo(zlink_turn_t *turn, void *user)
{
    (void)user;
    size_t n = 0;
    const void *p = zlink_turn_payload(turn, &n);
    zlink_fw_result_t r = zlink_turn_respond(turn, "echo", SOAK_CT, p, n);
    if (r == ZLINK_FW_INVALID_ARGUMENT || r == ZLINK_FW_INVALID_OPERATION)
        zlink_turn_end(turn, 1, "echo failed");
}

/* Payload: client id (8 bytes BE), sequence (8 bytes BE). */
static void on_oneway(zlink_turn_t *turn, void *user)
{
    (void)user;
    size_t n = 0;
    const unsigned char *p = zlink_turn_payload(turn, &n);
    char line[64];
    int k = n == 16 ? snprintf(line, sizeof line, "OW,%llu,%llu\n",
                               (unsigned long long)get_u64(p), (unsigned long long)get_u64(p + 8))
                    : snprintf(line, sizeof line, "OWBAD,%zu\n", n);
    pthread_mutex_lock(&sv_lock);
    if (sv_len + (size_t)k > sv_cap) {
        size_t cap = sv_cap ? sv_cap * 2 : 1 << 16;
        char *b = realloc(sv_buf, cap);
        if (b == NULL) {
            sv_oom = 1;
            pthread_mutex_unlock(&sv_lock);
            zlink_turn_end(turn, 0, NULL);
            return;
        }
        sv_buf = b;
        sv_cap = cap;
    }
    memcpy(sv_buf + sv_len, line, (size_t)k);
    sv_len += (size_t)k;
    pthread_mutex_unlock(&sv_lock);
    zlink_turn_end(turn, 0, NULL);
}

static void sv_flush(void)
{
    pthread_mutex_lock(&sv_lock);
    char *b = sv_buf;
    size_t n = sv_len;
    int oom = sv_oom;
    sv_buf = NULL;
    sv_len = sv_cap = 0;
    sv_oom = 0;
    pthread_mutex_unlock(&sv_lock);
    if (n > 0)
        fwrite(b, 1, n, stdout);
    if (oom)
        printf("ERROR,server: out of memory for one-way lines\n");
    fflush(stdout);
    free(b);
}

static int run_server(int port, const char *channel)
{
    zlink_fw_result_t r = 0;
    zlink_host_t *h = zlink_host_new("soak-server", &r);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
    if (h != NULL)
        r = zlink_host_add_cs_server(h, channel, ep);
    if (h != NULL && r == 0)
        r = zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, channel, ZLINK_MESSAGE_REQUEST, "echo",
                                   on_echo, NULL);
    if (h != NULL && r == 0)
        r = zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, channel, ZLINK_MESSAGE_SEND, "oneway",
                                   on_oneway, NULL);
    if (h != NULL && r == 0)
        r = zlink_host_start(h);
    if (h == NULL || r != 0) {
        rr_error("server on port %d: %s", port, fw_name(r));
        if (h != NULL)
            zlink_host_destroy(h);
        return 1;
    }
    printf("READY\n");
    fflush(stdout);
    char line[BP_LINE];
    for (;;) {
        int got = bp_stdin_line(line, sizeof line, 20);
        sv_flush();
        if (got < 0)
            break;
        if (got > 0 && strcmp(line, "STAT") == 0)
            print_stat();
    }
    int status = zlink_host_shutdown(h, ZLINK_MS(2000)) == 0 ? 0 : 1;
    zlink_host_destroy(h);
    sv_flush();
    return status;
}

/* ----------------------------------------------------------------- client */

typedef struct cl_state cl_state_t;

typedef struct cl_slot {
    cl_state_t *cl;
    int channel;       /* request slots: index into the channel names */
    int busy;          /* a started call of this slot has not completed */
    uint64_t seq;      /* the payload's sequence of the call in flight */
} cl_slot_t;

struct cl_state {
    pthread_mutex_t lock;
    pthread_cond_t idle;
    zlink_host_t *host;
    uint64_t id;
    int running;
    int window;
    cl_slot_t req[SOAK_CHANNELS][SOAK_MAX_WINDOW];
    cl_slot_t ow[SOAK_OW_MAX_INFLIGHT];
    int inflight;
    uint64_t next_seq;
    uint64_t started, completed, dup, ok, timeout, unavailable, shutting, other, refused,
        wrong_reply, ow_started, ow_ok, ow_failed;
    int first_other; /* the result of the first outcome counted as other */
    char first_shutting[96]; /* message/remote code of the first SHUTTING_DOWN */
};

static const char *const channel_names[SOAK_CHANNELS] = {"s0", "s1"};

static void on_request_done(zlink_call_t *call, const zlink_outcome_t *out, void *user);
static void on_oneway_done(zlink_call_t *call, const zlink_outcome_t *out, void *user);

/* Starts the next call of slot (a request slot when ow is 0). The slot is
 * marked busy before the start: its completion may run before the start
 * returns. Takes the lock itself; the caller must not hold it. */
static void cl_start(cl_slot_t *s, int ow)
{
    cl_state_t *cl = s->cl;
    unsigned char payload[16];
    pthread_mutex_lock(&cl->lock);
    if (!cl->running || s->busy) {
        pthread_mutex_unlock(&cl->lock);
        return;
    }
    s->busy = 1;
    s->seq = cl->next_seq++;
    cl->inflight++;
    pthread_mutex_unlock(&cl->lock);
    put_u64(payload, cl->id);
    put_u64(payload + 8, s->seq);
    zlink_fw_result_t rc = 0;
    zlink_call_t *call = ow ? zlink_call_send_to_channel(cl->host, channel_names[1], &rc)
                            : zlink_call_request_to_channel(cl->host, channel_names[s->channel], &rc);
    if (call != NULL) {
        rc = zlink_call_set_payload(call, ow ? "oneway" : "echo", SOAK_CT, payload, sizeof payload);
        if (rc == 0 && !ow)
            rc = zlink_call_set_timeout(call, ZLINK_MS(SOAK_REQUEST_MS));
        if (rc == 0)
            rc = zlink_call_start(call, ow ? on_oneway_done : on_request_done, s);
        zlink_call_release(call); /* the runtime keeps a started call alive */
    }
    if (call == NULL || rc != 0) {
        /* Refused: nothing was sent and no completion will come. */
        pthread_mutex_lock(&cl->lock);
        s->busy = 0;
        cl->refused++;
        if (--cl->inflight == 0)
            pthread_cond_broadcast(&cl->idle);
        pthread_mutex_unlock(&cl->lock);
        return;
    }
    pthread_mutex_lock(&cl->lock);
    cl->started++;
    if (ow)
        cl->ow_started++;
    pthread_mutex_unlock(&cl->lock);
}

/* Under cl->lock: the bookkeeping of one completion of s. 0, or -1 when s
 * had no call in flight (a second completion). */
static int cl_complete_locked(cl_state_t *cl, cl_slot_t *s)
{
    if (!s->busy) {
        cl->dup++;
        return -1;
    }
    s->busy = 0;
    cl->completed++;
    if (--cl->inflight == 0)
        pthread_cond_broadcast(&cl->idle);
    return 0;
}

static void on_request_done(zlink_call_t *call, const zlink_outcome_t *out, void *user)
{
    (void)call;
    cl_slot_t *s = user;
    cl_state_t *cl = s->cl;
    pthread_mutex_lock(&cl->lock);
    uint64_t seq = s->seq;
    if (cl_complete_locked(cl, s) == 0) {
        if (out->result == ZLINK_FW_OK) {
            cl->ok++;
            if (out->payload_size != 16 || get_u64(out->payload) != cl->id ||
                get_u64((const unsigned char *)out->payload + 8) != seq)
                cl->wrong_reply++;
        } else if (out->result == ZLINK_FW_DEADLINE_EXCEEDED) {
            cl->timeout++;
        } else if (out->result == ZLINK_FW_UNAVAILABLE) {
            cl->unavailable++;
        } else if (out->result == ZLINK_FW_SHUTTING_DOWN) {
            if (cl->shutting++ == 0)
                snprintf(cl->first_shutting, sizeof cl->first_shutting, "%s/%u",
                         out->message, out->remote_code);
        } else {
            if (cl->other++ == 0)
                cl->first_other = out->result;
        }
    }
    pthread_mutex_unlock(&cl->lock);
    cl_start(s, 0);
}

static void on_oneway_done(zlink_call_t *call, const zlink_outcome_t *out, void *user)
{
    (void)call;
    cl_slot_t *s = user;
    cl_state_t *cl = s->cl;
    pthread_mutex_lock(&cl->lock);
    if (cl_complete_locked(cl, s) == 0) {
        if (out->result == ZLINK_FW_OK)
            cl->ow_ok++;
        else
            cl->ow_failed++;
    }
    pthread_mutex_unlock(&cl->lock);
}

static int run_client(uint64_t id, const int ports[SOAK_CHANNELS], int window, int ow_per_ms)
{
    static cl_state_t st;
    cl_state_t *cl = &st;
    pthread_mutex_init(&cl->lock, NULL);
    pthread_cond_init(&cl->idle, NULL);
    cl->id = id;
    cl->window = window;
    zlink_fw_result_t r = 0;
    cl->host = zlink_host_new("soak-client", &r);
    for (int c = 0; cl->host != NULL && r == 0 && c < SOAK_CHANNELS; c++) {
        char ep[64];
        snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", ports[c]);
        r = zlink_host_add_cs_client(cl->host, channel_names[c], ep);
    }
    if (cl->host != NULL && r == 0)
        r = zlink_host_set_option(cl->host, ZLINK_HOST_OPT_DEFAULT_SEND_TIMEOUT,
                                  ZLINK_MS(SOAK_SEND_MS));
    if (cl->host != NULL && r == 0)
        r = zlink_host_start(cl->host);
    if (cl->host == NULL || r != 0) {
        rr_error("client host: %s", fw_name(r));
        if (cl->host != NULL)
            zlink_host_destroy(cl->host);
        return 1;
    }
    cl->running = 1;
    for (int c = 0; c < SOAK_CHANNELS; c++)
        for (int i = 0; i < window; i++) {
            cl->req[c][i].cl = cl;
            cl->req[c][i].channel = c;
            cl_start(&cl->req[c][i], 0);
        }
    for (int i = 0; i < SOAK_OW_MAX_INFLIGHT; i++)
        cl->ow[i].cl = cl;
    printf("READY\n");
    fflush(stdout);

    char line[BP_LINE];
    int status = 1, next_ow = 0;
    for (;;) {
        int got = bp_stdin_line(line, sizeof line, 1);
        if (got < 0)
            goto out; /* the driver went away: no report */
        if (got > 0 && strcmp(line, "STAT") == 0)
            print_stat();
        if (got > 0 && strcmp(line, "STOP") == 0)
            break;
        /* Pacing: up to ow_per_ms one-way sends per tick, on free slots. */
        for (int k = 0, tries = 0; k < ow_per_ms && tries < SOAK_OW_MAX_INFLIGHT; tries++) {
            cl_slot_t *s = &cl->ow[next_ow];
            next_ow = (next_ow + 1) % SOAK_OW_MAX_INFLIGHT;
            pthread_mutex_lock(&cl->lock);
            int busy = s->busy;
            pthread_mutex_unlock(&cl->lock);
            if (!busy) {
                cl_start(s, 1);
                k++;
            }
        }
    }
    /* Stop: no new call; every call in flight completes within its timeout
     * (the bound is a failure bound). */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += SOAK_STALL_NS / 1000000000ull;
    pthread_mutex_lock(&cl->lock);
    cl->running = 0;
    int rc = 0;
    while (cl->inflight > 0 && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&cl->idle, &cl->lock, &until);
    printf("DONE,started=%llu,completed=%llu,lost=%d,dup=%llu,ok=%llu,timeout=%llu,"
           "unavailable=%llu,shutting_down=%llu,other=%llu,refused=%llu,wrong_reply=%llu,"
           "ow_started=%llu,ow_ok=%llu,ow_failed=%llu,first_other=%s,first_shutting=%s\n",
           (unsigned long long)cl->started, (unsigned long long)cl->completed, cl->inflight,
           (unsigned long long)cl->dup, (unsigned long long)cl->ok,
           (unsigned long long)cl->timeout, (unsigned long long)cl->unavailable,
           (unsigned long long)cl->shutting, (unsigned long long)cl->other,
           (unsigned long long)cl->refused, (unsigned long long)cl->wrong_reply,
           (unsigned long long)cl->ow_started, (unsigned long long)cl->ow_ok,
           (unsigned long long)cl->ow_failed, cl->other ? fw_name(cl->first_other) : "none",
           cl->shutting ? cl->first_shutting : "none");
    fflush(stdout);
    pthread_mutex_unlock(&cl->lock);
    status = 0;
    for (int got; (got = bp_stdin_line(line, sizeof line, -1)) >= 0;)
        if (got > 0 && strcmp(line, "STAT") == 0)
            print_stat();
out:
    if (zlink_host_shutdown(cl->host, ZLINK_MS(2000)) != 0)
        status = 1;
    zlink_host_destroy(cl->host);
    return status;
}

/* ----------------------------------------------------------------- driver */

/* The one-way records seen, as (client << 40 | seq) keys in an open
 * addressing table (0 is never a key: client ids start at 1). */
typedef struct ow_set {
    uint64_t *slots;
    size_t cap, count;
    uint64_t dup, bad;
} ow_set_t;

static int ow_add(ow_set_t *s, uint64_t key)
{
    if (s->count * 2 >= s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1 << 16;
        uint64_t *n = calloc(cap, sizeof *n);
        if (n == NULL)
            return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->slots[i] != 0) {
                size_t j = (size_t)(s->slots[i] * 0x9E3779B97F4A7C15ull) & (cap - 1);
                while (n[j] != 0)
                    j = (j + 1) & (cap - 1);
                n[j] = s->slots[i];
            }
        free(s->slots);
        s->slots = n;
        s->cap = cap;
    }
    size_t j = (size_t)(key * 0x9E3779B97F4A7C15ull) & (s->cap - 1);
    while (s->slots[j] != 0) {
        if (s->slots[j] == key) {
            s->dup++;
            return 0;
        }
        j = (j + 1) & (s->cap - 1);
    }
    s->slots[j] = key;
    s->count++;
    return 0;
}

typedef struct soak_proc {
    const char *role;     /* "server" or "client" */
    char *args[12];
    char argbuf[6][24];
    bp_child_t *child;    /* NULL while down */
    uint64_t restart_at;  /* while down: when to start it again */
    int churn;            /* killed and restarted at random */
    char stat[BP_LINE];   /* the last STAT line */
    char done[BP_LINE];   /* the DONE line (clients) */
    unsigned kills;
} soak_proc_t;

typedef struct soak_opts {
    long seconds, clients, window, ow_per_ms;
    unsigned long seed;
} soak_opts_t;

static ow_set_t g_ow;
static int g_failed;

/* Handles one line of p's stdout. */
static void on_line(soak_proc_t *p, const char *line)
{
    unsigned long long cid, seq;
    if (sscanf(line, "OW,%llu,%llu", &cid, &seq) == 2) {
        if (ow_add(&g_ow, cid << 40 | (seq & ((1ull << 40) - 1))) != 0) {
            fprintf(stderr, "soak: out of memory for the one-way set\n");
            g_failed = 1;
        }
    } else if (strncmp(line, "OWBAD,", 6) == 0) {
        g_ow.bad++;
    } else if (strncmp(line, "STAT,", 5) == 0) {
        snprintf(p->stat, sizeof p->stat, "%.*s", (int)sizeof p->stat - 1, line);
    } else if (strncmp(line, "DONE,", 5) == 0) {
        snprintf(p->done, sizeof p->done, "%.*s", (int)sizeof p->done - 1, line);
    } else if (strncmp(line, "ERROR,", 6) == 0) {
        fprintf(stderr, "soak: %s: %s\n", p->role, line);
        if (!p->churn)
            g_failed = 1;
    }
}

/* Reads whatever the running children have written, for up to ms. */
static void pump(soak_proc_t *procs, int n, int ms)
{
    uint64_t end = rr_now_ns() + (uint64_t)ms * 1000000ull;
    do {
        struct pollfd fds[SOAK_MAX_CLIENTS + SOAK_CHURN_CLIENTS + SOAK_CHANNELS];
        int map[SOAK_MAX_CLIENTS + SOAK_CHURN_CLIENTS + SOAK_CHANNELS], k = 0;
        for (int i = 0; i < n; i++)
            if (procs[i].child != NULL) {
                fds[k].fd = procs[i].child->out_fd;
                fds[k].events = POLLIN;
                map[k++] = i;
            }
        uint64_t now = rr_now_ns();
        int wait = now < end ? (int)((end - now) / 1000000) + 1 : 0;
        int rc = poll(fds, (nfds_t)k, wait);
        if (rc <= 0)
            continue;
        for (int j = 0; j < k; j++) {
            if (!(fds[j].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            soak_proc_t *p = &procs[map[j]];
            bp_child_t *c = p->child;
            ssize_t got = read(c->out_fd, c->buf + c->len, sizeof c->buf - c->len);
            if (got <= 0) {
                if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                    /* The driver reaps what it kills at once: an end of
                     * file here is a process that died by itself. */
                    int st = bp_reap(c, 1);
                    fprintf(stderr, "soak: a %s %s exited by itself (status %d)\n",
                            p->churn ? "churned" : "stable", p->role, st);
                    g_failed = 1;
                    p->child = NULL;
                    p->restart_at = rr_now_ns();
                }
                continue;
            }
            c->len += (size_t)got;
            char *nl;
            while ((nl = memchr(c->buf, '\n', c->len)) != NULL) {
                *nl = '\0';
                on_line(p, c->buf);
                size_t used = (size_t)(nl - c->buf) + 1;
                memmove(c->buf, nl + 1, c->len - used);
                c->len -= used;
            }
            if (c->len == sizeof c->buf)
                c->len = 0; /* an over-long line: dropped */
        }
    } while (rr_now_ns() < end);
}

static int start_proc(soak_proc_t *p)
{
    p->child = bp_spawn(p->role, p->args);
    p->stat[0] = p->done[0] = '\0';
    return p->child != NULL ? 0 : -1;
}

/* Asks every running stable process for STAT and waits for the answers. */
static int take_stats(soak_proc_t *procs, int n)
{
    for (int i = 0; i < n; i++) {
        procs[i].stat[0] = '\0';
        if (!procs[i].churn && procs[i].child != NULL && bp_say(procs[i].child, "STAT\n") != 0)
            return -1;
    }
    uint64_t end = rr_now_ns() + SOAK_STALL_NS;
    for (;;) {
        int missing = 0;
        for (int i = 0; i < n; i++)
            missing += !procs[i].churn && procs[i].stat[0] == '\0';
        if (missing == 0)
            return 0;
        if (rr_now_ns() > end)
            return -1;
        pump(procs, n, 20);
    }
}

static unsigned long rnd(unsigned long *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static int run_driver(const soak_opts_t *o)
{
    int ports[SOAK_CHANNELS];
    for (int c = 0; c < SOAK_CHANNELS; c++)
        if ((ports[c] = rr_pick_free_port()) < 0) {
            fprintf(stderr, "soak: no free port\n");
            return 1;
        }
    soak_proc_t procs[SOAK_CHANNELS + SOAK_MAX_CLIENTS + SOAK_CHURN_CLIENTS];
    memset(procs, 0, sizeof procs);
    int n = 0;
    for (int c = 0; c < SOAK_CHANNELS; c++, n++) {
        soak_proc_t *p = &procs[n];
        p->role = "server";
        p->churn = c == 1;
        snprintf(p->argbuf[0], sizeof p->argbuf[0], "%d", ports[c]);
        snprintf(p->argbuf[1], sizeof p->argbuf[1], "%s", channel_names[c]);
        char *a[] = {"--port", p->argbuf[0], "--channel", p->argbuf[1], NULL};
        memcpy(p->args, a, sizeof a);
    }
    for (long i = 0; i < o->clients + SOAK_CHURN_CLIENTS; i++, n++) {
        soak_proc_t *p = &procs[n];
        p->role = "client";
        p->churn = i >= o->clients;
        snprintf(p->argbuf[0], sizeof p->argbuf[0], "%ld", i + 1);
        snprintf(p->argbuf[1], sizeof p->argbuf[1], "%d", ports[0]);
        snprintf(p->argbuf[2], sizeof p->argbuf[2], "%d", ports[1]);
        snprintf(p->argbuf[3], sizeof p->argbuf[3], "%ld", o->window);
        snprintf(p->argbuf[4], sizeof p->argbuf[4], "%ld", o->ow_per_ms);
        char *a[] = {"--id", p->argbuf[0], "--port0", p->argbuf[1], "--port1", p->argbuf[2],
                     "--window", p->argbuf[3], "--oneway-per-ms", p->argbuf[4], NULL};
        memcpy(p->args, a, sizeof a);
    }
    /* A churned client restarts with a fresh id each time, so a one-way of
     * an earlier incarnation is never confused with a new one. */
    uint64_t next_id = (uint64_t)n + 1;
    char line[BP_LINE];
    for (int i = 0; i < n; i++) {
        if (start_proc(&procs[i]) != 0 ||
            bp_expect_line(procs[i].child, procs[i].role, "READY", line, sizeof line,
                           rr_now_ns() + SOAK_STALL_NS, NULL) != 0)
            return 1;
    }
    pump(procs, n, 2000); /* warm-up: every connection up, traffic flowing */
    if (take_stats(procs, n) != 0) {
        fprintf(stderr, "soak: no baseline STAT\n");
        return 1;
    }
    char base[SOAK_CHANNELS + SOAK_MAX_CLIENTS + SOAK_CHURN_CLIENTS][BP_LINE];
    for (int i = 0; i < n; i++)
        snprintf(base[i], sizeof base[i], "%s", procs[i].stat);

    unsigned long x = o->seed ? o->seed : 0x2545F4914F6CDD1Dul;
    uint64_t end = rr_now_ns() + (uint64_t)o->seconds * 1000000000ull, kills = 0, restarts = 0;
    uint64_t next_kill = rr_now_ns() + (100 + rnd(&x) % 900) * 1000000ull;
    while (rr_now_ns() < end && !g_failed) {
        pump(procs, n, 10);
        uint64_t now = rr_now_ns();
        for (int i = 0; i < n; i++) {
            soak_proc_t *p = &procs[i];
            if (p->child == NULL && now >= p->restart_at) {
                if (strcmp(p->role, "client") == 0)
                    snprintf(p->argbuf[0], sizeof p->argbuf[0], "%llu",
                             (unsigned long long)next_id++);
                if (start_proc(p) != 0)
                    return 1;
                restarts++;
            }
        }
        if (now >= next_kill) {
            int churned[SOAK_CHANNELS + SOAK_MAX_CLIENTS + SOAK_CHURN_CLIENTS], k = 0;
            for (int i = 0; i < n; i++)
                if (procs[i].churn && procs[i].child != NULL)
                    churned[k++] = i;
            if (k > 0) {
                soak_proc_t *p = &procs[churned[rnd(&x) % (unsigned long)k]];
                bp_reap(p->child, 1);
                p->child = NULL;
                p->kills++;
                p->restart_at = now + (rnd(&x) % 300) * 1000000ull;
                kills++;
            }
            next_kill = now + (100 + rnd(&x) % 900) * 1000000ull;
        }
    }
    /* Everything up again and settled. */
    for (int i = 0; i < n; i++)
        if (procs[i].child == NULL) {
            if (strcmp(procs[i].role, "client") == 0)
                snprintf(procs[i].argbuf[0], sizeof procs[i].argbuf[0], "%llu",
                         (unsigned long long)next_id++);
            if (start_proc(&procs[i]) != 0)
                return 1;
        }
    pump(procs, n, 3000);
    if (take_stats(procs, n) != 0) {
        fprintf(stderr, "soak: no final STAT\n");
        return 1;
    }
    for (int i = 0; i < n; i++)
        if (strcmp(procs[i].role, "client") == 0 && bp_say(procs[i].child, "STOP\n") != 0)
            return 1;
    uint64_t bound = rr_now_ns() + SOAK_STALL_NS;
    for (;;) {
        int missing = 0;
        for (int i = 0; i < n; i++)
            missing += strcmp(procs[i].role, "client") == 0 && !procs[i].churn &&
                       procs[i].done[0] == '\0';
        if (missing == 0 || rr_now_ns() > bound || g_failed)
            break;
        pump(procs, n, 20);
    }

    /* The verdicts. */
    int bad = g_failed;
    uint64_t calls = 0, completed = 0, dup = 0, lost = 0, wrong = 0, ok = 0, tmo = 0, unav = 0;
    for (int i = 0; i < n; i++) {
        soak_proc_t *p = &procs[i];
        if (p->churn || strcmp(p->role, "client") != 0)
            continue;
        if (p->done[0] == '\0') {
            fprintf(stderr, "soak: a stable client did not report\n");
            bad = 1;
            continue;
        }
        calls += (uint64_t)bp_field(p->done, "started");
        completed += (uint64_t)bp_field(p->done, "completed");
        dup += (uint64_t)bp_field(p->done, "dup");
        lost += (uint64_t)bp_field(p->done, "lost");
        wrong += (uint64_t)bp_field(p->done, "wrong_reply");
        ok += (uint64_t)bp_field(p->done, "ok");
        tmo += (uint64_t)bp_field(p->done, "timeout");
        unav += (uint64_t)bp_field(p->done, "unavailable");
        printf("CLIENT,%s\n", p->done + 5);
    }
    printf("RESULT,soak,seconds,%ld\nRESULT,soak,kills,%llu\nRESULT,soak,restarts,%llu\n",
           o->seconds, (unsigned long long)kills, (unsigned long long)restarts);
    printf("RESULT,soak,calls_started,%llu\nRESULT,soak,calls_completed,%llu\n"
           "RESULT,soak,calls_ok,%llu\nRESULT,soak,calls_timeout,%llu\n"
           "RESULT,soak,calls_unavailable,%llu\nRESULT,soak,completed_twice,%llu\n"
           "RESULT,soak,never_completed,%llu\nRESULT,soak,wrong_replies,%llu\n",
           (unsigned long long)calls, (unsigned long long)completed, (unsigned long long)ok,
           (unsigned long long)tmo, (unsigned long long)unav, (unsigned long long)dup,
           (unsigned long long)lost, (unsigned long long)wrong);
    printf("RESULT,soak,oneways_handled,%llu\nRESULT,soak,oneways_duplicated,%llu\n"
           "RESULT,soak,oneways_malformed,%llu\n",
           (unsigned long long)g_ow.count, (unsigned long long)g_ow.dup,
           (unsigned long long)g_ow.bad);
    /* Nothing answered, or nothing but what the churn explains (timeouts,
     * lost connections), would make the other verdicts empty. */
    uint64_t other = 0;
    for (int i = 0; i < n; i++)
        if (!procs[i].churn && strcmp(procs[i].role, "client") == 0)
            other += (uint64_t)bp_field(procs[i].done, "other");
    printf("RESULT,soak,calls_other,%llu\n", (unsigned long long)other);
    bad |= calls == 0 || calls != completed || dup != 0 || lost != 0 || wrong != 0 ||
           g_ow.dup != 0 || g_ow.bad != 0 || kills == 0 || ok == 0 || other != 0 ||
           g_ow.count == 0;
    for (int i = 0; i < n; i++) {
        soak_proc_t *p = &procs[i];
        if (p->churn)
            continue;
        double fd0 = bp_field(base[i], "fds"), fd1 = bp_field(p->stat, "fds");
        double rss0 = bp_field(base[i], "rss"), rss1 = bp_field(p->stat, "rss");
        const char *who = strcmp(p->role, "server") == 0 ? "server_s0" : "client";
        printf("RESULT,soak,%s_%d_fds,%.0f,baseline,%.0f\n", who, i, fd1, fd0);
        printf("RESULT,soak,%s_%d_rss_bytes,%.0f,baseline,%.0f\n", who, i, rss1, rss0);
        if (fd1 != fd0 || (SOAK_JUDGE_RSS && rss1 > rss0 + (double)SOAK_RSS_SLACK)) {
            fprintf(stderr, "soak: %s %d: fds %.0f (baseline %.0f), rss %.0f (baseline %.0f)\n",
                    who, i, fd1, fd0, rss1, rss0);
            bad = 1;
        }
    }
    printf("RESULT,soak,rss_judged,%d\n", SOAK_JUDGE_RSS);
    printf("RESULT,soak,verdict,%s\n", bad ? "FAIL" : "PASS");
    fflush(stdout);
    for (int i = 0; i < n; i++)
        if (procs[i].child != NULL && bp_finish(procs[i].child, procs[i].role, SOAK_STALL_NS) != 0 &&
            !procs[i].churn)
            bad = 1;
    free(g_ow.slots);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 2 && strcmp(argv[1], "server") == 0) {
        long port = 0;
        if (argc != 6 || strcmp(argv[2], "--port") != 0 || bp_parse_long(argv[3], 1, 65535, &port) ||
            strcmp(argv[4], "--channel") != 0)
            return 2;
        return run_server((int)port, argv[5]);
    }
    if (argc >= 2 && strcmp(argv[1], "client") == 0) {
        long id = 0, p0 = 0, p1 = 0, w = 0, k = 0;
        if (argc != 12 || bp_parse_long(argv[3], 1, 1L << 30, &id) ||
            bp_parse_long(argv[5], 1, 65535, &p0) || bp_parse_long(argv[7], 1, 65535, &p1) ||
            bp_parse_long(argv[9], 1, SOAK_MAX_WINDOW, &w) || bp_parse_long(argv[11], 0, 64, &k))
            return 2;
        int ports[SOAK_CHANNELS] = {(int)p0, (int)p1};
        return run_client((uint64_t)id, ports, (int)w, (int)k);
    }
    soak_opts_t o = {.seconds = 600, .clients = 2, .window = 16, .ow_per_ms = 1, .seed = 0};
    for (int i = 1; i < argc; i += 2) {
        long v = 0;
        const char *k = argv[i], *val = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(k, "--minutes") == 0 && bp_parse_long(val, 1, 24 * 60, &v) == 0)
            o.seconds = v * 60;
        else if (strcmp(k, "--seconds") == 0 && bp_parse_long(val, 1, 24 * 3600, &v) == 0)
            o.seconds = v;
        else if (strcmp(k, "--clients") == 0 && bp_parse_long(val, 1, SOAK_MAX_CLIENTS, &v) == 0)
            o.clients = v;
        else if (strcmp(k, "--window") == 0 && bp_parse_long(val, 1, SOAK_MAX_WINDOW, &v) == 0)
            o.window = v;
        else if (strcmp(k, "--oneway-per-ms") == 0 && bp_parse_long(val, 0, 64, &v) == 0)
            o.ow_per_ms = v;
        else if (strcmp(k, "--seed") == 0 && bp_parse_long(val, 1, 1L << 62, &v) == 0)
            o.seed = (unsigned long)v;
        else {
            fprintf(stderr, "usage: soak [--minutes M] [--seconds S] [--clients C] [--window W] "
                            "[--oneway-per-ms K] [--seed X]\n");
            return 2;
        }
    }
    printf("HEADER,seconds=%ld,clients=%ld,window=%ld,oneway_per_ms=%ld\n", o.seconds, o.clients,
           o.window, o.ow_per_ms);
    int rc = run_driver(&o);
    bp_reap_all();
    return rc;
}
