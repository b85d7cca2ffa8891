/*
 * host.c — the Host: configuration, lifecycle, the ingress thread, RouteMesh
 * peers (hello / admit / update / liveness, select-one), handler gates and
 * the worker pool (framework-contract.md §2, seed 000 §5).
 *
 * Design notes
 * ------------
 * A host is PREPARING until zlink_host_start: options, channels, mesh
 * nodes and handlers are set then, under host->lk. Start creates one Core
 * socket per CS channel and per mesh node in the process-wide Core context
 * (dispatch.c), hands each socket's completion queue to the dispatcher and
 * starts the host's threads:
 *  - INGRESS (ingress_main) owns the host's poller: POLLIN on each ROUTER,
 *    POLLROUTE on mesh ROUTERs, an eventfd for messages from other threads.
 *    It takes a job permit before each receive (seed 001 §3; the limit M
 *    comes from the job-queue options) and, at the limit, stops receiving:
 *    a socket with a record waiting joins the FIFO of waiting sources, and
 *    freed permits go to the oldest one; only a waiting socket stops being
 *    polled for input. Each socket gives at most 64 records, 1 MiB or 2 ms
 *    per rotation, and the next rotation starts after the socket where the
 *    last one stopped. A record is decoded (wire.c); control commands are
 *    answered here; a data record becomes a turn on its handler's gate;
 *    anything malformed never reaches a handler.
 *    It also owns every mesh peer: routes, hello, probes, deadlines.
 *  - WORKERS run turns: a gate with waiting turns and no open turn sits in
 *    the run queue; a worker opens the gate's next turn, releases its permit
 *    just before the handler's first instruction and calls the handler. The
 *    gate stays closed until zlink_turn_end, so an async handler keeps it.
 * Lock: host->lk guards topology, peers, gates, the run queue and permits;
 * it is never held across a Core call that can wait or a handler.
 */
#include "fw.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define INGRESS_BATCH 64
/* How long a shutdown lets records accepted for sending leave (ms). */
#define FLUSH_MIN_MS 100
#define FLUSH_MAX_MS 500

static void host_destroy_obj(zf_obj_t *o);

zf_host_t *zf_host_get(zlink_host_t *h)
{
    return (zf_host_t *)zf_handle_get(h, ZF_KIND_HOST);
}

int zf_host_serving(zf_host_t *h)
{
    int st = atomic_load(&h->state);
    if (st == ZLINK_HOST_SERVING)
        return 0;
    if (st == ZLINK_HOST_PREPARING || st == ZLINK_HOST_FAILED)
        return ZLINK_FW_INVALID_OPERATION;
    return ZLINK_FW_SHUTTING_DOWN;
}

void zf_host_wake(zf_host_t *h)
{
    uint64_t one = 1;
    if (h->wake_fd > 0 && write(h->wake_fd, &one, sizeof one) < 0) {
        /* saturated: a wake-up is pending anyway */
    }
}

void zf_host_post(zf_host_t *h, zf_hmsg_t *m)
{
    pthread_mutex_lock(&h->lk);
    m->next = NULL;
    if (h->msg_tail != NULL)
        h->msg_tail->next = m;
    else
        h->msg_head = m;
    h->msg_tail = m;
    pthread_mutex_unlock(&h->lk);
    zf_host_wake(h);
}

zf_sock_t *zf_host_find_sock(zf_host_t *h, int role, const char *name)
{
    for (zf_sock_t *s = h->socks; s != NULL; s = s->next)
        if (s->role == role && strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

static zf_sock_t *find_named(zf_host_t *h, const char *name)
{
    for (zf_sock_t *s = h->socks; s != NULL; s = s->next)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

int64_t zf_sock_send_timeout(zf_sock_t *s)
{
    int64_t v = atomic_load_explicit(&s->send_timeout, memory_order_relaxed);
    return v > 0 ? v : atomic_load_explicit(&s->host->send_timeout, memory_order_relaxed);
}

int64_t zf_sock_request_timeout(zf_sock_t *s)
{
    int64_t v = atomic_load_explicit(&s->request_timeout, memory_order_relaxed);
    return v > 0 ? v : atomic_load_explicit(&s->host->request_timeout, memory_order_relaxed);
}

/* floor(quota / period) of the cgroup CPU limit (at least 1), or 0 when
 * there is none or it cannot be read: cgroup v2's cpu.max, else v1's
 * cfs_quota_us / cfs_period_us. */
static long cgroup_cpus(void)
{
    long long quota = -1, period = 0;
    FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
    if (f != NULL) {
        char q[32];
        if (fscanf(f, "%31s %lld", q, &period) == 2 && strcmp(q, "max") != 0)
            quota = atoll(q);
        fclose(f);
    } else {
        f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "r");
        if (f != NULL) {
            if (fscanf(f, "%lld", &quota) != 1)
                quota = -1;
            fclose(f);
        }
        f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "r");
        if (f != NULL) {
            if (fscanf(f, "%lld", &period) != 1)
                period = 0;
            fclose(f);
        }
    }
    if (quota <= 0 || period <= 0)
        return 0;
    long long n = quota / period;
    return n < 1 ? 1 : (long)n;
}

/* P (framework-contract.md §2.1): the smallest known positive count of
 * online CPUs, the affinity set and the cgroup CPU quota; 1 if none is
 * known. */
static uint64_t effective_processors(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        long a = CPU_COUNT(&set);
        if (a > 0 && (n <= 0 || a < n))
            n = a;
    }
    long q = cgroup_cpus();
    if (q > 0 && (n <= 0 || q < n))
        n = q;
    return n > 0 ? (uint64_t)n : 1;
}

static const uint64_t jobs_per_processor[] = {32, 64, 128, 256}; /* by profile */

/* Under h->lk: P and M as they are configured now. M may exceed the
 * range (a huge P override): start refuses it. */
static uint64_t jq_procs(const zf_host_t *h)
{
    return h->procs_override != 0 ? h->procs_override : effective_processors();
}

static uint64_t jq_max(const zf_host_t *h, uint64_t procs)
{
    return h->jq_manual_max != 0 ? h->jq_manual_max : jobs_per_processor[h->jq_profile] * procs;
}

/* --------------------------------------------------------------- create */

ZLINK_EXPORT zlink_host_t *zlink_host_new(const char *name, zlink_fw_result_t *result)
{
    if (!zf_name_ok(name, 64)) {
        if (result != NULL)
            *result = ZLINK_FW_INVALID_ARGUMENT;
        return NULL;
    }
    zf_host_t *h = calloc(1, sizeof *h);
    if (h == NULL) {
        if (result != NULL)
            *result = ZLINK_FW_INTERNAL_FAILURE;
        return NULL;
    }
    atomic_init(&h->obj.refs, 0);
    h->obj.kind = ZF_KIND_HOST;
    h->obj.destroy = host_destroy_obj;
    snprintf(h->name, sizeof h->name, "%s", name);
    pthread_mutex_init(&h->lk, NULL);
    pthread_mutex_init(&h->shutdown_lk, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->cv, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&h->state, ZLINK_HOST_PREPARING);
    h->request_timeout = ZLINK_DEFAULT_REQUEST_TIMEOUT;
    h->send_timeout = ZLINK_DEFAULT_SEND_TIMEOUT;
    h->shutdown_timeout = ZLINK_DEFAULT_SHUTDOWN_TIMEOUT;
    h->handler_threads = 2;
    h->jq_profile = ZLINK_JOB_QUEUE_BALANCED;
    h->pause_pct = 80;
    h->resume_pct = 60;
    h->procs = effective_processors();
    h->max_jobs = jq_max(h, h->procs); /* Balanced x P (seed 001) */
    h->core_hwm.profile = -1;          /* the Core's own default */
    pthread_mutex_init(&h->flow_lk, NULL);
    h->wake_fd = -1;
    if (zf_handle_add(&h->obj) == NULL) {
        pthread_mutex_destroy(&h->lk);
        pthread_mutex_destroy(&h->flow_lk);
        pthread_mutex_destroy(&h->shutdown_lk);
        pthread_cond_destroy(&h->cv);
        free(h);
        if (result != NULL)
            *result = ZLINK_FW_INTERNAL_FAILURE;
        return NULL;
    }
    if (result != NULL)
        *result = ZLINK_FW_OK;
    return (zlink_host_t *)h->obj.handle;
}

static void free_mesh(zf_mesh_t *m)
{
    if (m == NULL)
        return;
    zf_peer_t *p = m->peers;
    while (p != NULL) {
        zf_peer_t *n = p->next;
        free(p->members);
        free(p);
        p = n;
    }
    for (size_t i = 0; i < m->nclients; i++)
        free(m->clients[i]);
    free(m->clients);
    free(m->members);
    free(m);
}

static void host_destroy_obj(zf_obj_t *o)
{
    zf_host_t *h = (zf_host_t *)o;
    zf_sock_t *s = h->socks;
    while (s != NULL) {
        zf_sock_t *n = s->next;
        free_mesh(s->mesh);
        free(s->more_endpoints);
        free(s);
        s = n;
    }
    zf_handler_t *hd = h->handlers;
    while (hd != NULL) {
        zf_handler_t *n = hd->next;
        free(hd);
        hd = n;
    }
    zf_gate_t *g = h->gates;
    while (g != NULL) {
        zf_gate_t *n = g->next;
        free(g);
        g = n;
    }
    zf_hmsg_t *m = h->msg_head;
    while (m != NULL) {
        zf_hmsg_t *n = m->next;
        zlink_multipart_close(m->parts, m->nparts);
        free(m);
        m = n;
    }
    free(h->workers);
    free(h->thread_args);
    pthread_mutex_destroy(&h->lk);
    pthread_mutex_destroy(&h->flow_lk);
    pthread_mutex_destroy(&h->shutdown_lk);
    pthread_cond_destroy(&h->cv);
    free(h);
}

/* Enters a PREPARING host for configuration (host->lk held on success). */
static int prepare_enter(zlink_host_t *host, zf_host_t **out)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    pthread_mutex_lock(&h->lk);
    if (atomic_load(&h->state) != ZLINK_HOST_PREPARING) {
        pthread_mutex_unlock(&h->lk);
        zf_obj_unref(&h->obj);
        return ZLINK_FW_INVALID_OPERATION;
    }
    *out = h;
    return 0;
}

static void prepare_leave(zf_host_t *h)
{
    pthread_mutex_unlock(&h->lk);
    zf_obj_unref(&h->obj);
}

/* -------------------------------------------------------------- options */

/* Under h->lk, PREPARING: one job-queue option, checked alone (the
 * pause/resume order is checked at start, when both are final). */
static int set_jq_option(zf_host_t *h, int option, int64_t value)
{
    switch (option) {
    case ZLINK_HOST_OPT_MAX_QUEUED_JOBS:
        if (value < 1 || value > INT32_MAX)
            return ZLINK_FW_INVALID_ARGUMENT;
        h->jq_manual_max = (uint64_t)value;
        break;
    case ZLINK_HOST_OPT_JOB_QUEUE_PROFILE:
        if (value < ZLINK_JOB_QUEUE_COMPACT || value > ZLINK_JOB_QUEUE_THROUGHPUT)
            return ZLINK_FW_INVALID_ARGUMENT;
        h->jq_profile = (int)value;
        break;
    case ZLINK_HOST_OPT_PAUSE_PERCENT:
        if (value < 1 || value > 100)
            return ZLINK_FW_INVALID_ARGUMENT;
        h->pause_pct = (int)value;
        break;
    case ZLINK_HOST_OPT_RESUME_PERCENT:
        if (value < 0 || value > 99)
            return ZLINK_FW_INVALID_ARGUMENT;
        h->resume_pct = (int)value;
        break;
    default: /* EFFECTIVE_PROCESSORS */
        if (value < 0 || value > 65536)
            return ZLINK_FW_INVALID_ARGUMENT;
        h->procs_override = (uint64_t)value;
        break;
    }
    h->procs = jq_procs(h);
    h->max_jobs = jq_max(h, h->procs);
    return ZLINK_FW_OK;
}

/* Under h->lk, PREPARING: one Core HWM option (seed 001 §2), kept as given
 * for start to pass on; the machine's memory bound is checked at start. */
static int set_core_hwm_option(zf_host_t *h, int option, int64_t value)
{
    if (option == ZLINK_HOST_OPT_CORE_HWM_PROFILE) {
        if (value < -1 || value > ZLINK_PROFILE_THROUGHPUT)
            return ZLINK_FW_INVALID_ARGUMENT;
        h->core_hwm.profile = (int)value;
        return ZLINK_FW_OK;
    }
    if (value < 0)
        return ZLINK_FW_INVALID_ARGUMENT;
    if (option == ZLINK_HOST_OPT_CORE_BUDGET_BYTES)
        h->core_hwm.budget = (uint64_t)value;
    else
        h->core_hwm.memory_limit = (uint64_t)value;
    return ZLINK_FW_OK;
}

ZLINK_EXPORT zlink_fw_result_t zlink_host_set_option(zlink_host_t *host, int option,
                                                     int64_t value)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    int rc = ZLINK_FW_OK;
    pthread_mutex_lock(&h->lk);
    switch (option) {
    case ZLINK_HOST_OPT_DEFAULT_REQUEST_TIMEOUT:
    case ZLINK_HOST_OPT_DEFAULT_SEND_TIMEOUT:
    case ZLINK_HOST_OPT_SHUTDOWN_TIMEOUT: {
        int ms;
        rc = zf_timeout_ms(value, &ms);
        if (rc == 0) {
            value = ZLINK_MS(ms); /* the effective value: whole ms, rounded up */
            if (option == ZLINK_HOST_OPT_DEFAULT_REQUEST_TIMEOUT)
                h->request_timeout = value;
            else if (option == ZLINK_HOST_OPT_DEFAULT_SEND_TIMEOUT)
                h->send_timeout = value;
            else
                h->shutdown_timeout = value;
        }
        break;
    }
    case ZLINK_HOST_OPT_HANDLER_THREADS:
        if (atomic_load(&h->state) != ZLINK_HOST_PREPARING)
            rc = ZLINK_FW_INVALID_OPERATION;
        else if (value < 1 || value > 64)
            rc = ZLINK_FW_INVALID_ARGUMENT;
        else
            h->handler_threads = (int)value;
        break;
    case ZLINK_HOST_OPT_MAX_QUEUED_JOBS:
    case ZLINK_HOST_OPT_JOB_QUEUE_PROFILE:
    case ZLINK_HOST_OPT_PAUSE_PERCENT:
    case ZLINK_HOST_OPT_RESUME_PERCENT:
    case ZLINK_HOST_OPT_EFFECTIVE_PROCESSORS:
        if (atomic_load(&h->state) != ZLINK_HOST_PREPARING)
            rc = ZLINK_FW_INVALID_OPERATION;
        else
            rc = set_jq_option(h, option, value);
        break;
    case ZLINK_HOST_OPT_CORE_HWM_PROFILE:
    case ZLINK_HOST_OPT_CORE_BUDGET_BYTES:
    case ZLINK_HOST_OPT_CORE_MEMORY_LIMIT_BYTES:
        if (atomic_load(&h->state) != ZLINK_HOST_PREPARING)
            rc = ZLINK_FW_INVALID_OPERATION;
        else
            rc = set_core_hwm_option(h, option, value);
        break;
    case ZLINK_HOST_OPT_ADMISSION_WAITERS:
        rc = ZLINK_FW_INVALID_OPERATION; /* read-only */
        break;
    default:
        rc = ZLINK_FW_INVALID_ARGUMENT;
        break;
    }
    pthread_mutex_unlock(&h->lk);
    zf_obj_unref(&h->obj);
    return rc;
}

ZLINK_EXPORT zlink_fw_result_t zlink_host_get_option(zlink_host_t *host, int option,
                                                     int64_t *value)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    int rc = ZLINK_FW_OK;
    int64_t v = 0;
    pthread_mutex_lock(&h->lk);
    switch (option) {
    case ZLINK_HOST_OPT_DEFAULT_REQUEST_TIMEOUT:
        v = h->request_timeout;
        break;
    case ZLINK_HOST_OPT_DEFAULT_SEND_TIMEOUT:
        v = h->send_timeout;
        break;
    case ZLINK_HOST_OPT_SHUTDOWN_TIMEOUT:
        v = h->shutdown_timeout;
        break;
    case ZLINK_HOST_OPT_ADMISSION_WAITERS:
        v = ZLINK_ADMISSION_WAITERS;
        break;
    case ZLINK_HOST_OPT_MAX_QUEUED_JOBS:
        v = (int64_t)h->max_jobs;
        break;
    case ZLINK_HOST_OPT_HANDLER_THREADS:
        v = h->handler_threads;
        break;
    case ZLINK_HOST_OPT_JOB_QUEUE_PROFILE:
        v = h->jq_profile;
        break;
    case ZLINK_HOST_OPT_PAUSE_PERCENT:
        v = h->pause_pct;
        break;
    case ZLINK_HOST_OPT_RESUME_PERCENT:
        v = h->resume_pct;
        break;
    case ZLINK_HOST_OPT_EFFECTIVE_PROCESSORS:
        v = (int64_t)h->procs;
        break;
    case ZLINK_HOST_OPT_CORE_HWM_PROFILE:
        v = h->core_hwm.profile;
        break;
    case ZLINK_HOST_OPT_CORE_BUDGET_BYTES:
        v = (int64_t)h->core_hwm.budget;
        break;
    case ZLINK_HOST_OPT_CORE_MEMORY_LIMIT_BYTES:
        v = (int64_t)h->core_hwm.memory_limit;
        break;
    default:
        rc = ZLINK_FW_INVALID_ARGUMENT;
        break;
    }
    pthread_mutex_unlock(&h->lk);
    zf_obj_unref(&h->obj);
    if (rc == 0) {
        if (value == NULL)
            return ZLINK_FW_INVALID_ARGUMENT;
        *value = v;
    }
    return rc;
}

/* Socket-level options, shared by channels and mesh nodes. */
static int sock_set_option(zf_sock_t *s, int option, int64_t value)
{
    switch (option) {
    case ZLINK_NODE_OPT_SEND_TIMEOUT: {
        int ms, rc = zf_timeout_ms(value, &ms);
        if (rc == 0)
            s->send_timeout = ZLINK_MS(ms);
        return rc;
    }
    case ZLINK_NODE_OPT_REQUEST_TIMEOUT: {
        if (s->role != ZF_SOCK_MESH)
            return ZLINK_FW_INVALID_OPERATION;
        int ms, rc = zf_timeout_ms(value, &ms);
        if (rc == 0)
            s->request_timeout = ZLINK_MS(ms);
        return rc;
    }
    case ZLINK_NODE_OPT_SNDHWM:
    case ZLINK_NODE_OPT_RCVHWM: {
        if (value < 0)
            return ZLINK_FW_INVALID_ARGUMENT;
        if (atomic_load(&s->host->state) != ZLINK_HOST_PREPARING)
            return ZLINK_FW_INVALID_OPERATION;
        int i = option == ZLINK_NODE_OPT_SNDHWM ? 0 : 1;
        if (i == 0)
            s->sndhwm = (uint64_t)value;
        else
            s->rcvhwm = (uint64_t)value;
        s->hwm_set[i] = true;
        return 0;
    }
    default:
        return ZLINK_FW_INVALID_ARGUMENT;
    }
}

static int sock_get_option(zf_sock_t *s, int option, int64_t *value)
{
    switch (option) {
    case ZLINK_NODE_OPT_SEND_TIMEOUT:
        *value = zf_sock_send_timeout(s);
        return 0;
    case ZLINK_NODE_OPT_REQUEST_TIMEOUT:
        *value = zf_sock_request_timeout(s);
        return 0;
    case ZLINK_NODE_OPT_SNDHWM:
        *value = s->hwm_set[0] ? (int64_t)s->sndhwm : (int64_t)ZLINK_HWM_DFLT;
        return 0;
    case ZLINK_NODE_OPT_RCVHWM:
        *value = s->hwm_set[1] ? (int64_t)s->rcvhwm : (int64_t)ZLINK_HWM_DFLT;
        return 0;
    default:
        return ZLINK_FW_INVALID_ARGUMENT;
    }
}

static int named_option(zlink_host_t *host, const char *name, int mesh, int option,
                        int64_t *value, bool set)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    if (!zf_name_ok(name, ZF_NAME_MAX) || (!set && value == NULL)) {
        zf_obj_unref(&h->obj);
        return ZLINK_FW_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&h->lk);
    zf_sock_t *s = find_named(h, name);
    int rc;
    if (s == NULL || (mesh != (s->role == ZF_SOCK_MESH)))
        rc = ZLINK_FW_NOT_FOUND;
    else
        rc = set ? sock_set_option(s, option, *value) : sock_get_option(s, option, value);
    pthread_mutex_unlock(&h->lk);
    zf_obj_unref(&h->obj);
    return rc;
}

ZLINK_EXPORT zlink_fw_result_t zlink_channel_set_option(zlink_host_t *host, const char *channel,
                                                        int option, int64_t value)
{
    return named_option(host, channel, 0, option, &value, true);
}

ZLINK_EXPORT zlink_fw_result_t zlink_channel_get_option(zlink_host_t *host, const char *channel,
                                                        int option, int64_t *value)
{
    return named_option(host, channel, 0, option, value, false);
}

ZLINK_EXPORT zlink_fw_result_t zlink_mesh_set_option(zlink_host_t *host, const char *mesh,
                                                     int option, int64_t value)
{
    return named_option(host, mesh, 1, option, &value, true);
}

ZLINK_EXPORT zlink_fw_result_t zlink_mesh_get_option(zlink_host_t *host, const char *mesh,
                                                     int option, int64_t *value)
{
    return named_option(host, mesh, 1, option, value, false);
}

/* ------------------------------------------------------------- topology */

static bool endpoint_ok(const char *ep)
{
    return ep != NULL && strnlen(ep, 256) > 0 && strnlen(ep, 256) < 256;
}

/* Names are one namespace per host: a channel and a mesh cannot share one. */
static int add_sock(zf_host_t *h, int role, const char *name, const char *endpoint,
                    zf_sock_t **out)
{
    if (!zf_name_ok(name, ZF_NAME_MAX))
        return ZLINK_FW_INVALID_ARGUMENT;
    if (endpoint != NULL && !endpoint_ok(endpoint))
        return ZLINK_FW_INVALID_ARGUMENT;
    if (find_named(h, name) != NULL)
        return ZLINK_FW_ALREADY_EXISTS;
    zf_sock_t *s = calloc(1, sizeof *s);
    if (s == NULL)
        return ZLINK_FW_INTERNAL_FAILURE;
    s->host = h;
    s->role = role;
    snprintf(s->name, sizeof s->name, "%s", name);
    if (endpoint != NULL)
        snprintf(s->endpoint, sizeof s->endpoint, "%s", endpoint);
    zf_sock_t **tail = &h->socks;
    while (*tail != NULL)
        tail = &(*tail)->next;
    *tail = s;
    *out = s;
    return 0;
}

ZLINK_EXPORT zlink_fw_result_t zlink_host_add_cs_server(zlink_host_t *host, const char *channel,
                                                        const char *endpoint)
{
    zf_host_t *h;
    int rc = prepare_enter(host, &h);
    if (rc != 0)
        return rc;
    zf_sock_t *s;
    rc = endpoint == NULL ? ZLINK_FW_INVALID_ARGUMENT
                          : add_sock(h, ZF_SOCK_CS_SERVER, channel, endpoint, &s);
    prepare_leave(h);
    return rc;
}

ZLINK_EXPORT zlink_fw_result_t zlink_host_add_cs_client(zlink_host_t *host, const char *channel,
                                                        const char *endpoint)
{
    zf_host_t *h;
    int rc = prepare_enter(host, &h);
    if (rc != 0)
        return rc;
    zf_sock_t *s = zf_name_ok(channel, ZF_NAME_MAX)
                       ? zf_host_find_sock(h, ZF_SOCK_CS_CLIENT, channel)
                       : NULL;
    if (!endpoint_ok(endpoint)) {
        rc = ZLINK_FW_INVALID_ARGUMENT;
    } else if (s != NULL) {
        /* Another server of the same channel: the DEALER connects to all
         * and the Core picks among the ready ones. */
        char(*v)[256] = realloc(s->more_endpoints, (s->nmore + 1) * sizeof *v);
        if (v == NULL) {
            rc = ZLINK_FW_INTERNAL_FAILURE;
        } else {
            s->more_endpoints = v;
            snprintf(v[s->nmore++], 256, "%s", endpoint);
        }
    } else {
        rc = add_sock(h, ZF_SOCK_CS_CLIENT, channel, endpoint, &s);
    }
    prepare_leave(h);
    return rc;
}

static bool rid_ok(const void *rid, size_t n)
{
    return rid != NULL && n >= 1 && n <= 255;
}

ZLINK_EXPORT zlink_fw_result_t zlink_host_add_mesh_node(zlink_host_t *host, const char *mesh,
                                                        const void *rid, size_t rid_size,
                                                        const char *listen_endpoint)
{
    zf_host_t *h;
    int rc = prepare_enter(host, &h);
    if (rc != 0)
        return rc;
    zf_sock_t *s = NULL;
    zf_mesh_t *m = NULL;
    if (!rid_ok(rid, rid_size)) {
        rc = ZLINK_FW_INVALID_ARGUMENT;
    } else if ((m = calloc(1, sizeof *m)) == NULL) {
        rc = ZLINK_FW_INTERNAL_FAILURE;
    } else {
        rc = add_sock(h, ZF_SOCK_MESH, mesh, listen_endpoint, &s);
    }
    if (rc == 0) {
        m->sock = s;
        snprintf(m->name, sizeof m->name, "%s", mesh);
        m->rid.size = (uint8_t)rid_size;
        memcpy(m->rid.data, rid, rid_size);
        m->rng = (uint64_t)zf_now_ns() | 1;
        m->lifecycle = ((uint64_t)zf_now_ns() << 1) | 1;
        s->mesh = m;
    } else {
        free(m);
    }
    prepare_leave(h);
    return rc;
}

static zf_mesh_t *find_mesh(zf_host_t *h, const char *mesh)
{
    zf_sock_t *s = zf_host_find_sock(h, ZF_SOCK_MESH, mesh);
    return s != NULL ? s->mesh : NULL;
}

static zf_peer_t *find_peer(zf_mesh_t *m, const zlink_routing_id_t *rid)
{
    for (zf_peer_t *p = m->peers; p != NULL; p = p->next)
        if (p->rid.size == rid->size && memcmp(p->rid.data, rid->data, rid->size) == 0)
            return p;
    return NULL;
}

static zf_peer_t *add_peer(zf_mesh_t *m, const zlink_routing_id_t *rid)
{
    zf_peer_t *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->mesh = m;
    p->rid = *rid;
    p->next = m->peers;
    m->peers = p;
    return p;
}

ZLINK_EXPORT zlink_fw_result_t zlink_mesh_connect(zlink_host_t *host, const char *mesh,
                                                  const char *endpoint, const void *peer_rid,
                                                  size_t peer_rid_size)
{
    zf_host_t *h;
    int rc = prepare_enter(host, &h);
    if (rc != 0)
        return rc;
    zf_mesh_t *m = zf_name_ok(mesh, ZF_NAME_MAX) ? find_mesh(h, mesh) : NULL;
    zlink_routing_id_t rid = {0};
    if (!endpoint_ok(endpoint) || !rid_ok(peer_rid, peer_rid_size)) {
        rc = ZLINK_FW_INVALID_ARGUMENT;
    } else if (m == NULL) {
        rc = ZLINK_FW_NOT_FOUND;
    } else {
        rid.size = (uint8_t)peer_rid_size;
        memcpy(rid.data, peer_rid, peer_rid_size);
        if (find_peer(m, &rid) != NULL ||
            (rid.size == m->rid.size && memcmp(rid.data, m->rid.data, rid.size) == 0)) {
            rc = ZLINK_FW_ALREADY_EXISTS;
        } else {
            zf_peer_t *p = add_peer(m, &rid);
            if (p == NULL) {
                rc = ZLINK_FW_INTERNAL_FAILURE;
            } else {
                p->manual = true;
                snprintf(p->endpoint, sizeof p->endpoint, "%s", endpoint);
            }
        }
    }
    prepare_leave(h);
    return rc;
}

static zf_member_t *find_member(zf_member_t *v, size_t n, const char *channel)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].channel, channel) == 0)
            return &v[i];
    return NULL;
}

static bool mesh_has_client(zf_mesh_t *m, const char *channel)
{
    for (size_t i = 0; i < m->nclients; i++)
        if (strcmp(m->clients[i], channel) == 0)
            return true;
    return false;
}

ZLINK_EXPORT zlink_fw_result_t zlink_mesh_add_channel_client(zlink_host_t *host,
                                                             const char *mesh,
                                                             const char *channel)
{
    zf_host_t *h;
    int rc = prepare_enter(host, &h);
    if (rc != 0)
        return rc;
    zf_mesh_t *m = zf_name_ok(mesh, ZF_NAME_MAX) ? find_mesh(h, mesh) : NULL;
    if (!zf_name_ok(channel, ZF_NAME_MAX)) {
        rc = ZLINK_FW_INVALID_ARGUMENT;
    } else if (m == NULL) {
        rc = ZLINK_FW_NOT_FOUND;
    } else if (mesh_has_client(m, channel)) {
        rc = ZLINK_FW_ALREADY_EXISTS;
    } else if (find_named(h, channel) != NULL) {
        rc = ZLINK_FW_ALREADY_EXISTS; /* a CS channel or a mesh has that name */
    } else {
        for (zf_sock_t *s = h->socks; s != NULL && rc == 0; s = s->next)
            if (s->mesh != NULL && s->mesh != m && mesh_has_client(s->mesh, channel))
                rc = ZLINK_FW_ALREADY_EXISTS; /* one send path per ChannelName */
        char **v = rc == 0 ? realloc(m->clients, (m->nclients + 1) * sizeof *v) : NULL;
        char *d = rc == 0 ? malloc(strlen(channel) + 1) : NULL;
        if (rc == 0 && (v == NULL || d == NULL)) {
            if (v != NULL)
                m->clients = v;
            free(d);
            rc = ZLINK_FW_INTERNAL_FAILURE;
        } else if (rc == 0) {
            strcpy(d, channel);
            m->clients = v;
            m->clients[m->nclients++] = d;
        }
    }
    prepare_leave(h);
    return rc;
}

ZLINK_EXPORT zlink_fw_result_t zlink_mesh_add_channel_server(zlink_host_t *host,
                                                             const char *mesh,
                                                             const char *channel, int weight)
{
    zf_host_t *h;
    int rc = prepare_enter(host, &h);
    if (rc != 0)
        return rc;
    zf_mesh_t *m = zf_name_ok(mesh, ZF_NAME_MAX) ? find_mesh(h, mesh) : NULL;
    if (!zf_name_ok(channel, ZF_NAME_MAX) || weight < ZLINK_WEIGHT_MIN ||
        weight > ZLINK_WEIGHT_MAX) {
        rc = ZLINK_FW_INVALID_ARGUMENT;
    } else if (m == NULL) {
        rc = ZLINK_FW_NOT_FOUND;
    } else if (find_member(m->members, m->nmembers, channel) != NULL ||
               find_named(h, channel) != NULL) {
        rc = ZLINK_FW_ALREADY_EXISTS;
    } else {
        zf_member_t *v = realloc(m->members, (m->nmembers + 1) * sizeof *v);
        if (v == NULL) {
            rc = ZLINK_FW_INTERNAL_FAILURE;
        } else {
            m->members = v;
            snprintf(v[m->nmembers].channel, sizeof v->channel, "%s", channel);
            v[m->nmembers].weight = weight;
            m->nmembers++;
        }
    }
    prepare_leave(h);
    return rc;
}

ZLINK_EXPORT zlink_fw_result_t zlink_mesh_set_weight(zlink_host_t *host, const char *mesh,
                                                     const char *channel, int weight)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    int rc = 0;
    pthread_mutex_lock(&h->lk);
    zf_mesh_t *m = zf_name_ok(mesh, ZF_NAME_MAX) ? find_mesh(h, mesh) : NULL;
    zf_member_t *mb = NULL;
    if (!zf_name_ok(channel, ZF_NAME_MAX) || weight < ZLINK_WEIGHT_MIN ||
        weight > ZLINK_WEIGHT_MAX)
        rc = ZLINK_FW_INVALID_ARGUMENT;
    else if (m == NULL || (mb = find_member(m->members, m->nmembers, channel)) == NULL)
        rc = ZLINK_FW_NOT_FOUND;
    else if (mb->weight != weight) {
        mb->weight = weight;
        m->members_dirty = true;
    }
    pthread_mutex_unlock(&h->lk);
    if (rc == 0)
        zf_host_wake(h);
    zf_obj_unref(&h->obj);
    return rc;
}

ZLINK_EXPORT zlink_fw_result_t zlink_host_endpoint(zlink_host_t *host, const char *name,
                                                   char *buf, size_t size)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    int rc = 0;
    pthread_mutex_lock(&h->lk);
    zf_sock_t *s = zf_name_ok(name, ZF_NAME_MAX) ? find_named(h, name) : NULL;
    if (buf == NULL || size == 0)
        rc = ZLINK_FW_INVALID_ARGUMENT;
    else if (s == NULL || s->role == ZF_SOCK_CS_CLIENT || s->endpoint[0] == '\0')
        rc = ZLINK_FW_NOT_FOUND;
    else if (s->s == NULL || atomic_load(&h->state) != ZLINK_HOST_SERVING)
        rc = ZLINK_FW_INVALID_OPERATION;
    else {
        size_t n = size;
        if (zlink_getsockopt(s->s, ZLINK_LAST_ENDPOINT, buf, &n) != ZLINK_CONFIG_OK)
            rc = ZLINK_FW_INVALID_ARGUMENT;
    }
    pthread_mutex_unlock(&h->lk);
    zf_obj_unref(&h->obj);
    return rc;
}

ZLINK_EXPORT int zlink_mesh_ready_peers(zlink_host_t *host, const char *mesh,
                                        zlink_fw_result_t *result)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL) {
        if (result != NULL)
            *result = ZLINK_FW_INVALID_HANDLE;
        return -1;
    }
    int n = -1;
    pthread_mutex_lock(&h->lk);
    zf_mesh_t *m = zf_name_ok(mesh, ZF_NAME_MAX) ? find_mesh(h, mesh) : NULL;
    if (m != NULL) {
        n = 0;
        for (zf_peer_t *p = m->peers; p != NULL; p = p->next)
            n += p->ready;
    }
    pthread_mutex_unlock(&h->lk);
    zf_obj_unref(&h->obj);
    if (result != NULL)
        *result = n < 0 ? ZLINK_FW_NOT_FOUND : ZLINK_FW_OK;
    return n;
}

/* ------------------------------------------------------------- handlers */

static zf_gate_t *gate_for(zf_host_t *h, int owner, const char *name)
{
    for (zf_gate_t *g = h->gates; g != NULL; g = g->next)
        if (g->owner == owner && strcmp(g->name, name) == 0)
            return g;
    zf_gate_t *g = calloc(1, sizeof *g);
    if (g == NULL)
        return NULL;
    g->owner = owner;
    snprintf(g->name, sizeof g->name, "%s", name);
    g->next = h->gates;
    h->gates = g;
    return g;
}

static zf_handler_t *find_handler(zf_host_t *h, int owner, const char *owner_name, size_t on,
                                  int kind, const uint8_t *packet, size_t pn)
{
    for (zf_handler_t *x = h->handlers; x != NULL; x = x->next)
        if (x->owner == owner && x->kind == kind && strlen(x->owner_name) == on &&
            memcmp(x->owner_name, owner_name, on) == 0 && strlen(x->packet) == pn &&
            memcmp(x->packet, packet, pn) == 0)
            return x;
    return NULL;
}

ZLINK_EXPORT zlink_fw_result_t zlink_host_add_handler_ex(zlink_host_t *host,
                                                         zlink_owner_kind_t owner,
                                                         const char *owner_name,
                                                         zlink_message_kind_t kind,
                                                         const char *packet,
                                                         zlink_handler_fn fn, void *user,
                                                         uint32_t flags)
{
    zf_host_t *h;
    int rc = prepare_enter(host, &h);
    if (rc != 0)
        return rc;
    if ((owner != ZLINK_OWNER_CHANNEL && owner != ZLINK_OWNER_NODE) ||
        (kind != ZLINK_MESSAGE_SEND && kind != ZLINK_MESSAGE_REQUEST) ||
        !zf_name_ok(owner_name, ZF_NAME_MAX) || !zf_name_ok(packet, ZF_NAME_MAX) ||
        fn == NULL || (flags & ~(uint32_t)ZLINK_HANDLER_HANDOFF) != 0) {
        prepare_leave(h);
        return ZLINK_FW_INVALID_ARGUMENT;
    }
    if (find_handler(h, owner, owner_name, strlen(owner_name), kind, (const uint8_t *)packet,
                     strlen(packet)) != NULL) {
        prepare_leave(h);
        return ZLINK_FW_ALREADY_EXISTS;
    }
    zf_handler_t *x = calloc(1, sizeof *x);
    zf_gate_t *g = x != NULL ? gate_for(h, owner, owner_name) : NULL;
    if (g == NULL) {
        free(x);
        prepare_leave(h);
        return ZLINK_FW_INTERNAL_FAILURE;
    }
    x->owner = owner;
    snprintf(x->owner_name, sizeof x->owner_name, "%s", owner_name);
    x->kind = kind;
    snprintf(x->packet, sizeof x->packet, "%s", packet);
    x->fn = fn;
    x->user = user;
    x->handoff = (flags & ZLINK_HANDLER_HANDOFF) != 0;
    x->gate = g;
    x->next = h->handlers;
    h->handlers = x;
    prepare_leave(h);
    return ZLINK_FW_OK;
}

ZLINK_EXPORT zlink_fw_result_t zlink_host_add_handler(zlink_host_t *host,
                                                      zlink_owner_kind_t owner,
                                                      const char *owner_name,
                                                      zlink_message_kind_t kind,
                                                      const char *packet, zlink_handler_fn fn,
                                                      void *user)
{
    return zlink_host_add_handler_ex(host, owner, owner_name, kind, packet, fn, user, 0);
}

/* Start-time checks of handlers against the topology: a channel handler
 * needs a CS server channel or a mesh server membership of that name, a
 * node handler a mesh node. */
static int check_handlers(zf_host_t *h)
{
    for (zf_handler_t *x = h->handlers; x != NULL; x = x->next) {
        if (x->owner == ZLINK_OWNER_NODE) {
            if (find_mesh(h, x->owner_name) == NULL)
                return ZLINK_FW_NOT_CONFIGURED;
            continue;
        }
        if (zf_host_find_sock(h, ZF_SOCK_CS_SERVER, x->owner_name) != NULL)
            continue;
        bool found = false;
        for (zf_sock_t *s = h->socks; s != NULL && !found; s = s->next)
            if (s->mesh != NULL &&
                find_member(s->mesh->members, s->mesh->nmembers, x->owner_name) != NULL)
                found = true;
        if (!found)
            return ZLINK_FW_NOT_CONFIGURED;
    }
    return 0;
}

/* ---------------------------------------------------------------- gates */

/* Under h->lk: puts g in the run queue if it has a turn and none is open;
 * wakes an idle host thread for it unless quiet (the ingress leader, which
 * decides after its batch who runs what). */
static void gate_enqueue(zf_host_t *h, zf_gate_t *g, bool quiet)
{
    if (g->busy || g->in_runq || g->head == NULL)
        return;
    g->in_runq = true;
    g->next_run = NULL;
    if (h->run_tail != NULL)
        h->run_tail->next_run = g;
    else
        h->run_head = g;
    h->run_tail = g;
    if (!quiet && h->idle > 0)
        pthread_cond_signal(&h->cv);
}

static void gate_schedule(zf_host_t *h, zf_gate_t *g)
{
    gate_enqueue(h, g, false);
}

/* Under h->lk (ingress leader): queues turn t on its gate. */
static void gate_push(zf_host_t *h, zf_turn_t *t)
{
    zf_gate_t *g = t->gate;
    t->next = NULL;
    if (g->tail != NULL)
        g->tail->next = t;
    else
        g->head = t;
    g->tail = t;
    t->seq = ++g->accepted_seq;
    t->bytes = 0;
    for (size_t i = 0; i < t->nparts; i++)
        t->bytes += zlink_msg_size(&t->parts[i]);
    g->queued++;
    g->queued_bytes += t->bytes;
    h->turns_queued++;
    gate_enqueue(h, g, true);
}

/* Under h->lk: the next runnable gate, or NULL. */
static zf_gate_t *runq_pop(zf_host_t *h)
{
    while (h->run_head != NULL) {
        zf_gate_t *g = h->run_head;
        h->run_head = g->next_run;
        if (h->run_head == NULL)
            h->run_tail = NULL;
        g->in_runq = false;
        if (!g->busy && g->head != NULL)
            return g;
        /* stale: another thread went on with g */
    }
    return NULL;
}

/* The turn a worker is running on this thread, and whether it ended
 * before its handler returned (then the worker goes on with the same gate
 * itself: no run-queue round trip, no wake-up of another thread). */
static _Thread_local zf_turn_t *tl_running;
static _Thread_local bool tl_ended_inline;

static void run_gate(zf_host_t *h, zf_gate_t *g);

/* Under h->lk, g's turn just ended on a thread that runs no turn: whether
 * this thread opens g's next turn itself. Only for a handoff handler
 * (its function just hands the turn to the binding's executor), so the
 * thread that ended the turn - typically that executor - gets the next one
 * without a host thread's wake-up in between. */
static bool handoff_here(const zf_host_t *h, const zf_gate_t *g)
{
    return tl_running == NULL && !g->busy && !g->in_runq && g->head != NULL && !h->stop &&
           g->head->handler->handoff;
}

/* A turn ended (turn.c, any thread): its gate opens for the next turn. */
void zf_gate_turn_ended(zf_host_t *h, zf_turn_t *t)
{
    zf_gate_t *g = t->gate;
    pthread_mutex_lock(&h->lk);
    g->busy = false;
    g->running--;
    g->running_bytes -= t->bytes;
    g->handled++;
    if (h->turns_running > 0)
        h->turns_running--;
    if (t == tl_running)
        tl_ended_inline = true;
    else if (handoff_here(h, g))
        run_gate(h, g); /* returns with h->lk held, as it took it */
    else
        gate_schedule(h, g);
    bool draining = h->stop_waits;
    pthread_mutex_unlock(&h->lk);
    if (draining) {
        /* shutdown waits on the dispatcher's condition for turns to end */
        pthread_mutex_lock(&zf_disp.lk);
        pthread_cond_broadcast(&zf_disp.waiters);
        pthread_mutex_unlock(&zf_disp.lk);
    }
}

/* ------------------------------------------------------------ pressure
 *
 * Seed 001 §6. The state moves under h->lk, at the permit count's change:
 * RUNNING -> PAUSED when permits in use reach pause_count, PAUSED ->
 * RUNNING when they fall to resume_count, kept in between. Applying it to
 * the Core sockets is a Core call, made with no host lock held by
 * pressure_apply, which any thread runs after it dropped h->lk. */

/* Under h->lk: after a change of permits_in_use. */
static void pressure_check_locked(zf_host_t *h)
{
    uint64_t n = h->permits_in_use;
    if (n > h->peak_permits)
        h->peak_permits = n;
    int st = h->pressure;
    if (st == ZLINK_PRESSURE_RUNNING && n >= h->pause_count)
        st = ZLINK_PRESSURE_PAUSED;
    else if (st == ZLINK_PRESSURE_PAUSED && n <= h->resume_count)
        st = ZLINK_PRESSURE_RUNNING;
    if (st == h->pressure)
        return;
    int64_t now = zf_now_ns();
    if (st == ZLINK_PRESSURE_PAUSED) {
        h->paused_since = now;
        h->m_trans_paused++;
    } else {
        h->cum_pause_ns += now - h->paused_since;
        h->paused_since = 0;
        h->m_trans_running++;
    }
    h->pressure = st;
    atomic_fetch_add(&h->flow_seq, 1);
}

static bool flow_socket(const zf_sock_t *s)
{
    /* Requests reach this host only here (seed 001 §6): never a CS client
     * DEALER, whose input is only the replies it waits for. */
    return s->s != NULL && (s->role == ZF_SOCK_MESH || s->role == ZF_SOCK_CS_SERVER);
}

/* No host lock held: brings the receive-flow state of the host's
 * supported sockets to the newest pressure state. One applier at a time;
 * it reads state and sequence together and loops until it applied the
 * newest, so a stale transition never overwrites a newer one, and a state
 * the sockets already have is not applied again. Nothing once the sockets
 * started closing. */
static void pressure_apply(zf_host_t *h)
{
    if (atomic_load(&h->flow_seq) == atomic_load(&h->flow_applied))
        return;
    pthread_mutex_lock(&h->flow_lk);
    while (!h->flow_closed) {
        pthread_mutex_lock(&h->lk);
        uint64_t seq = atomic_load(&h->flow_seq);
        int st = h->pressure;
        pthread_mutex_unlock(&h->lk);
        if (seq == atomic_load(&h->flow_applied))
            break;
        if (st != h->flow_state_applied) {
            zlink_receive_flow_state_t fs =
                st == ZLINK_PRESSURE_PAUSED ? ZLINK_RECEIVE_FLOW_PAUSED : ZLINK_RECEIVE_FLOW_RUNNING;
            for (zf_sock_t *s = h->socks; s != NULL; s = s->next)
                if (flow_socket(s) && zlink_socket_set_receive_flow_state(s->s, fs) != ZLINK_CONFIG_OK)
                    atomic_fetch_add(&h->m_flow_failures, 1);
            h->flow_state_applied = st;
        }
        atomic_store(&h->flow_applied, seq);
    }
    pthread_mutex_unlock(&h->flow_lk);
}

/* Under h->lk: one permit for the next receive (seed 001 §3). The
 * pressure state looks at it once the receive brought a record
 * (pressure_check_locked after it): a reservation that found nothing and
 * went straight back must not move the state across a threshold. */
static void permit_take_locked(zf_host_t *h)
{
    h->permits_in_use++;
}

void zf_host_permit_release(zf_host_t *h)
{
    if (h->permits_in_use > 0)
        h->permits_in_use--;
    pressure_check_locked(h);
    if (h->ingress_waits_permit) {
        h->ingress_waits_permit = false; /* the ingress serves its FIFO now */
        zf_host_wake(h);
    }
}

/* Under h->lk: opens g's next turn (g not busy, has a turn). */
static zf_turn_t *open_turn(zf_host_t *h, zf_gate_t *g)
{
    zf_turn_t *t = g->head;
    g->head = t->next;
    if (g->head == NULL)
        g->tail = NULL;
    g->busy = true;
    /* The record's reservation moves from queued to running here, in this
     * one lock hold. */
    g->queued--;
    g->queued_bytes -= t->bytes;
    g->running++;
    g->running_bytes += t->bytes;
    h->turns_queued--;
    h->turns_running++;
    /* The permit goes just before the handler's first instruction
     * (seed 001 §3). */
    zf_host_permit_release(h);
    return t;
}

/* Consecutive turns one worker runs on one gate before it lets the run
 * queue decide again (fairness when handler threads are few). */
#define GATE_RUN_MAX 64

/* Under h->lk: runs g's turns on this thread, one after the other while
 * each ends before its handler returns (up to GATE_RUN_MAX). */
static void run_gate(zf_host_t *h, zf_gate_t *g)
{
    zf_turn_t *t = open_turn(h, g);
    for (int run = 1;; run++) {
        tl_running = t;
        tl_ended_inline = false;
        pthread_mutex_unlock(&h->lk);
        pressure_apply(h); /* the permit left just now (no-op unless it moved) */
        zf_turn_run(t);
        pthread_mutex_lock(&h->lk);
        tl_running = NULL;
        if (!tl_ended_inline)
            return; /* the turn stays open (async): its end schedules g */
        /* The ingress may have queued g meanwhile (its turn ended before
         * this thread took the lock): then the run queue has it. */
        if (g->busy || g->in_runq || g->head == NULL || h->stop || run == GATE_RUN_MAX) {
            gate_schedule(h, g);
            return;
        }
        t = open_turn(h, g);
    }
}

/* ------------------------------------------------------------ mesh peers */

/* Builds HELLO / ADMIT / UPDATE (cmd) of mesh m into parts. Under host->lk.
 * UPDATE carries the node's state: a draining host says so, and peers stop
 * picking it (select-one takes non-draining members only). */
static int encode_node_info(zf_mesh_t *m, int cmd, zlink_msg_t *parts, size_t *n)
{
    zf_rec_t r;
    memset(&r, 0, sizeof r);
    r.command = (uint8_t)cmd;
    r.mesh.p = (const uint8_t *)m->name;
    r.mesh.n = strlen(m->name);
    r.rid.p = m->rid.data;
    r.rid.n = m->rid.size;
    r.capability.p = (const uint8_t *)ZF_CAPABILITY;
    r.capability.n = strlen(ZF_CAPABILITY);
    r.lifecycle = m->lifecycle;
    size_t count = m->nmembers;
    size_t cap = count * (ZF_NAME_MAX + 3) + 1, len = 0;
    uint8_t *chans = malloc(cap);
    if (chans == NULL)
        return ENOMEM;
    for (size_t i = 0; i < count; i++)
        (void)zf_wire_channel_put(chans, cap, &len, m->members[i].channel,
                                  (uint16_t)m->members[i].weight);
    r.channel_count = (uint16_t)count;
    r.channels.p = chans;
    r.channels.n = len;
    if (cmd == ZF_CMD_UPDATE) {
        r.seq = ++m->update_seq;
        r.node_state = m->sock->host->stop_waits ? ZF_NODE_DRAINING : ZF_NODE_SERVING;
    }
    int rc = zf_wire_encode(&r, parts, 3, n);
    free(chans);
    return rc;
}

/* Replaces p's memberships from a decoded HELLO / ADMIT / UPDATE. */
static void set_members(zf_peer_t *p, const zf_rec_t *r)
{
    zf_member_t *v = r->channel_count > 0 ? calloc(r->channel_count, sizeof *v) : NULL;
    if (r->channel_count > 0 && v == NULL)
        return; /* keeps the old view; the next update corrects it */
    size_t pos = 0, i = 0;
    zf_bytes_t name;
    uint16_t w;
    while (i < r->channel_count && zf_wire_channel_next(r, &pos, &name, &w)) {
        memcpy(v[i].channel, name.p, name.n); /* names are 1..255 bytes */
        v[i].channel[name.n] = '\0';
        v[i].weight = w;
        i++;
    }
    free(p->members);
    p->members = v;
    p->nmembers = i;
}

static void send_hello(zf_host_t *h, zf_peer_t *p)
{
    zlink_msg_t parts[3];
    size_t n;
    if (encode_node_info(p->mesh, ZF_CMD_HELLO, parts, &n) != 0)
        return;
    zlink_completion_id_t id;
    void *uctx = (void *)((uintptr_t)p | ZF_UCTX_HELLO);
    p->hello_pending = zlink_request(p->mesh->sock->s, &p->rid, parts, n,
                                     ZLINK_SEND_FLAGS_DONTWAIT,
                                     (uint32_t)(ZLINK_LIVENESS_PROBE_INTERVAL / 1000000), uctx,
                                     &id) == ZLINK_SUBMIT_OK;
    p->next_probe = zf_now_ns() + ZLINK_LIVENESS_PROBE_INTERVAL;
    (void)h;
}

static void send_probe(zf_peer_t *p)
{
    zf_rec_t r;
    memset(&r, 0, sizeof r);
    r.command = ZF_CMD_PROBE;
    r.nonce = ++p->nonce;
    zlink_msg_t parts[3];
    size_t n;
    if (zf_wire_encode(&r, parts, 3, &n) != 0)
        return;
    zlink_completion_id_t id;
    void *uctx = (void *)((uintptr_t)p | ZF_UCTX_PROBE);
    p->probe_pending = zlink_request(p->mesh->sock->s, &p->rid, parts, n,
                                     ZLINK_SEND_FLAGS_DONTWAIT,
                                     (uint32_t)(ZLINK_LIVENESS_DEADLINE / 1000000), uctx,
                                     &id) == ZLINK_SUBMIT_OK;
}

static void announce_update(zf_mesh_t *m)
{
    for (zf_peer_t *p = m->peers; p != NULL; p = p->next) {
        if (!p->ready)
            continue;
        zlink_msg_t parts[3];
        size_t n;
        uint64_t seq = m->update_seq;
        if (encode_node_info(m, ZF_CMD_UPDATE, parts, &n) != 0)
            return;
        m->update_seq = seq; /* one sequence number per announcement */
        zlink_completion_id_t tok;
        (void)zlink_send_rid(m->sock->s, &p->rid, parts, n, ZLINK_SEND_FLAGS_DONTWAIT, NULL,
                             &tok);
    }
    m->update_seq++;
}

/* Ingress, under h->lk: the mesh ROUTER's routes changed. */
static void routes_changed(zf_host_t *h, zf_sock_t *s)
{
    zf_mesh_t *m = s->mesh;
    zlink_router_route_t rows[64];
    zlink_router_route_t *v = rows;
    size_t cap = 64, count = 0;
    int rc = zlink_router_routes_snapshot(s->s, v, cap, &count);
    while (rc == ZLINK_CONFIG_BUFFER_TOO_SMALL) {
        if (v != rows)
            free(v);
        cap = count + 16;
        v = malloc(cap * sizeof *v);
        if (v == NULL)
            return;
        rc = zlink_router_routes_snapshot(s->s, v, cap, &count);
    }
    if (rc != ZLINK_CONFIG_OK) {
        if (v != rows)
            free(v);
        return;
    }
    for (zf_peer_t *p = m->peers; p != NULL; p = p->next) {
        bool found = false;
        for (size_t i = 0; i < count && !found; i++)
            found = v[i].rid.size == p->rid.size &&
                    memcmp(v[i].rid.data, p->rid.data, p->rid.size) == 0;
        if (found && !p->routed) {
            p->routed = true;
            if (p->manual)
                send_hello(h, p);
        } else if (!found && p->routed) {
            p->routed = false;
            p->ready = false;
            p->hello_pending = false;
            p->probe_pending = false;
        }
    }
    if (v != rows)
        free(v);
}

/* Ingress, under h->lk: probes, liveness deadlines, hello retries. */
static void mesh_tick(zf_host_t *h, int64_t now)
{
    for (zf_sock_t *s = h->socks; s != NULL; s = s->next) {
        zf_mesh_t *m = s->mesh;
        if (m == NULL)
            continue;
        if (m->members_dirty) {
            m->members_dirty = false;
            announce_update(m);
        }
        for (zf_peer_t *p = m->peers; p != NULL; p = p->next) {
            if (!p->routed)
                continue;
            if (p->ready && now - p->last_seen > ZLINK_LIVENESS_DEADLINE) {
                p->ready = false; /* silent for the whole deadline */
                p->probe_pending = false;
            }
            if (now < p->next_probe)
                continue;
            p->next_probe = now + ZLINK_LIVENESS_PROBE_INTERVAL;
            if (p->ready && !p->probe_pending)
                send_probe(p);
            else if (!p->ready && p->manual && !p->hello_pending)
                send_hello(h, p);
        }
    }
}

static void handle_hmsg(zf_hmsg_t *msg)
{
    zf_peer_t *p = msg->peer;
    int64_t now = zf_now_ns();
    zf_rec_t r;
    bool ok = msg->result == ZLINK_REQUEST_OK &&
              zf_wire_decode(msg->parts, msg->nparts, &r) == 0;
    if (msg->what == ZF_HMSG_HELLO_DONE) {
        p->hello_pending = false;
        if (ok && r.command == ZF_CMD_ADMIT && p->routed &&
            r.rid.n == p->rid.size && memcmp(r.rid.p, p->rid.data, r.rid.n) == 0) {
            set_members(p, &r);
            p->draining = false;
            p->lifecycle = r.lifecycle;
            p->ready = true;
            p->last_seen = now;
            p->next_probe = now + ZLINK_LIVENESS_PROBE_INTERVAL;
        }
        /* REJECT or no answer: the next tick says hello again. */
    } else {
        p->probe_pending = false;
        if (ok && r.command == ZF_CMD_ACK)
            p->last_seen = now;
    }
}

/* ---------------------------------------------------- ingress records */

/* Answers a control request (HELLO, PROBE) with parts (consumed). */
static void control_reply(zf_sock_t *s, const zlink_routing_id_t *rid, uint64_t token,
                          zlink_msg_t *parts, size_t n)
{
    zlink_completion_id_t tok;
    (void)zlink_reply_submit(s->s, rid, token, 0, parts, n, ZLINK_SEND_FLAGS_DONTWAIT, NULL,
                             &tok);
}

static void on_hello(zf_sock_t *s, const zlink_routing_id_t *rid, uint64_t token,
                     const zf_rec_t *r)
{
    zf_mesh_t *m = s->mesh;
    zlink_msg_t parts[3];
    size_t n;
    bool same_mesh = r->mesh.n == strlen(m->name) && memcmp(r->mesh.p, m->name, r->mesh.n) == 0;
    bool same_rid = r->rid.n == rid->size && memcmp(r->rid.p, rid->data, rid->size) == 0;
    if (!same_mesh || !same_rid) {
        zf_rec_t rej;
        memset(&rej, 0, sizeof rej);
        rej.command = ZF_CMD_REJECT;
        rej.terminal = ZF_TR_REJECTED;
        const char *why = !same_mesh ? "mesh name differs" : "routing id differs";
        rej.message.p = (const uint8_t *)why;
        rej.message.n = strlen(why);
        if (zf_wire_encode(&rej, parts, 3, &n) == 0)
            control_reply(s, rid, token, parts, n);
        return;
    }
    zf_peer_t *p = find_peer(m, rid);
    if (p == NULL)
        p = add_peer(m, rid);
    if (p == NULL) {
        (void)zlink_reply_submit(s->s, rid, token, ENOMEM, NULL, 0, ZLINK_SEND_FLAGS_DONTWAIT,
                                 NULL, NULL);
        return;
    }
    set_members(p, r);
    p->draining = false;
    p->lifecycle = r->lifecycle;
    p->routed = true;
    p->ready = true;
    p->last_seen = zf_now_ns();
    p->next_probe = p->last_seen + ZLINK_LIVENESS_PROBE_INTERVAL;
    if (encode_node_info(m, ZF_CMD_ADMIT, parts, &n) == 0)
        control_reply(s, rid, token, parts, n);
}

static void drop_record(zf_host_t *h, atomic_llong *metric)
{
    (void)h;
    atomic_fetch_add(metric, 1);
}

/* Ingress, h->lk held: one received record (parts[0..n), owned here). The
 * permit taken for its receive is released here unless a turn takes it. */
static void on_record(zf_host_t *h, zf_sock_t *s, const zlink_routing_id_t *rid,
                      uint64_t token, zlink_msg_t *parts, size_t n)
{
    zf_rec_t r;
    bool turn_made = false;
    if (zf_wire_decode(parts, n, &r) != 0) {
        atomic_fetch_add(&h->m_protocol_errors, 1);
        if (token != 0)
            (void)zlink_reply_submit(s->s, rid, token, EPROTO, NULL, 0,
                                     ZLINK_SEND_FLAGS_DONTWAIT, NULL, NULL);
        else
            drop_record(h, &h->m_dropped_decode);
        goto done;
    }
    bool is_req = r.command == ZF_CMD_NODE_REQUEST || r.command == ZF_CMD_CHANNEL_REQUEST ||
                  r.command == ZF_CMD_HELLO || r.command == ZF_CMD_PROBE;
    if (is_req != (token != 0)) {
        /* a request sent as DATA or a one-way sent as a request */
        atomic_fetch_add(&h->m_protocol_errors, 1);
        if (token != 0)
            (void)zlink_reply_submit(s->s, rid, token, EPROTO, NULL, 0,
                                     ZLINK_SEND_FLAGS_DONTWAIT, NULL, NULL);
        else
            drop_record(h, &h->m_dropped_decode);
        goto done;
    }
    zf_peer_t *peer = s->mesh != NULL ? find_peer(s->mesh, rid) : NULL;
    if (peer != NULL)
        peer->last_seen = zf_now_ns();
    switch (r.command) {
    case ZF_CMD_HELLO:
        if (s->mesh != NULL)
            on_hello(s, rid, token, &r);
        goto done;
    case ZF_CMD_PROBE: {
        zf_rec_t ack;
        memset(&ack, 0, sizeof ack);
        ack.command = ZF_CMD_ACK;
        ack.nonce = r.nonce;
        zlink_msg_t out[3];
        size_t on;
        if (zf_wire_encode(&ack, out, 3, &on) == 0)
            control_reply(s, rid, token, out, on);
        goto done;
    }
    case ZF_CMD_UPDATE:
        if (peer != NULL && peer->ready && r.seq > peer->update_seq) {
            peer->update_seq = r.seq;
            peer->draining = r.node_state == ZF_NODE_DRAINING;
            set_members(peer, &r);
        }
        goto done;
    case ZF_CMD_NODE_SEND:
    case ZF_CMD_NODE_REQUEST:
    case ZF_CMD_CHANNEL_SEND:
    case ZF_CMD_CHANNEL_REQUEST:
        break;
    default:
        /* ADMIT, REJECT, ACK, REPLY come back as Core replies, never here. */
        atomic_fetch_add(&h->m_protocol_errors, 1);
        drop_record(h, &h->m_dropped_decode);
        goto done;
    }
    if (s->mesh != NULL && (peer == NULL || !peer->ready)) {
        /* Data from a node that never said hello is not admitted. */
        if (token != 0)
            zf_reply_error_raw(s, rid, token, &r, ZF_TR_REJECTED, "peer not admitted");
        else
            drop_record(h, &h->m_dropped_decode);
        goto done;
    }
    bool node = r.command == ZF_CMD_NODE_SEND || r.command == ZF_CMD_NODE_REQUEST;
    int kind = token != 0 ? ZLINK_MESSAGE_REQUEST : ZLINK_MESSAGE_SEND;
    zf_handler_t *x = NULL;
    if (node) {
        if (s->mesh != NULL)
            x = find_handler(h, ZLINK_OWNER_NODE, s->mesh->name, strlen(s->mesh->name), kind,
                             r.packet.p, r.packet.n);
    } else {
        bool served = s->role == ZF_SOCK_CS_SERVER
                          ? r.channel.n == strlen(s->name) &&
                                memcmp(r.channel.p, s->name, r.channel.n) == 0
                          : true;
        if (served)
            x = find_handler(h, ZLINK_OWNER_CHANNEL, (const char *)r.channel.p, r.channel.n,
                             kind, r.packet.p, r.packet.n);
    }
    if (h->draining) {
        if (token != 0)
            zf_reply_error_raw(s, rid, token, &r, ZF_TR_TERMINATED, "the host is shutting down");
        else
            drop_record(h, &h->m_dropped_shutdown);
        goto done;
    }
    if (x == NULL) {
        if (token != 0)
            zf_reply_error_raw(s, rid, token, &r, ZF_TR_NOT_FOUND, "no handler for the packet");
        else
            drop_record(h, &h->m_dropped_no_handler);
        goto done;
    }
    zf_turn_t *t = zf_zalloc(sizeof *t);
    if (t == NULL) {
        if (token != 0)
            zf_reply_error_raw(s, rid, token, &r, ZF_TR_INTERNAL_ERROR, "out of memory");
        goto done;
    }
    if (zf_turn_init(t, h, x, s, rid, token, parts, n, &r) != 0) {
        free(t);
        if (token != 0)
            zf_reply_error_raw(s, rid, token, &r, ZF_TR_INTERNAL_ERROR, "out of memory");
        goto done;
    }
    gate_push(h, t);
    turn_made = true; /* the turn owns the parts and the permit */
done:
    if (!turn_made) {
        zlink_multipart_close(parts, n);
        zf_host_permit_release(h);
    }
}

/* Under h->lk: s has a record and no permit: it joins the FIFO of
 * waiting sources (once; seed 001 §3: one waiter per source). */
static void source_wait(zf_host_t *h, zf_sock_t *s)
{
    h->ingress_waits_permit = true;
    if (s->src_waiting)
        return;
    s->src_waiting = true;
    s->src_wait_since = zf_now_ns();
    s->src_next = NULL;
    if (h->src_tail != NULL)
        h->src_tail->src_next = s;
    else
        h->src_head = s;
    h->src_tail = s;
    h->nsrc_waiting++;
    h->m_capacity_waits++;
}

/* Under h->lk: the oldest waiting source, out of the FIFO, or NULL. */
static zf_sock_t *source_next(zf_host_t *h)
{
    zf_sock_t *s = h->src_head;
    if (s == NULL)
        return NULL;
    h->src_head = s->src_next;
    if (h->src_head == NULL)
        h->src_tail = NULL;
    s->src_next = NULL;
    s->src_waiting = false;
    h->nsrc_waiting--;
    h->m_capacity_wait_ns += zf_now_ns() - s->src_wait_since;
    return s;
}

/* Receive bounds per socket per rotation (seed 001 §4): the count is the
 * seed's; the byte and time bounds are ours. Whichever is hit first ends
 * the socket's turn; the level-triggered poller brings the rest next. */
#define RX_BYTES_MAX (1u << 20)
#define RX_TIME_NS 2000000

/* Ingress: receives up to a bounded batch from s, one permit per receive
 * (seed 001 §3, §4). Returns false when it stopped for lack of permits (s
 * then waits in the source FIFO). Called with h->lk held; drops it around
 * each Core call. */
static bool receive_batch(zf_host_t *h, zf_sock_t *s)
{
    uint64_t bytes = 0;
    int64_t until = zf_now_ns() + RX_TIME_NS;
    for (int i = 0; i < INGRESS_BATCH && bytes < RX_BYTES_MAX; i++) {
        if (i > 0 && (i & 7) == 0 && zf_now_ns() >= until)
            break;
        if (h->permits_in_use >= h->max_jobs) {
            /* A capacity waiter is a source with a record and no permit:
             * look (without receiving) whether one is there. */
            pthread_mutex_unlock(&h->lk);
            zlink_pollitem_t it = {s->s, 0, ZLINK_POLLIN, 0};
            bool input = zlink_poll(&it, 1, 0, NULL) > 0 && (it.revents & ZLINK_POLLIN);
            pthread_mutex_lock(&h->lk);
            if (!input)
                return true;
            if (h->permits_in_use < h->max_jobs)
                continue; /* a permit came back meanwhile */
            source_wait(h, s);
            return false;
        }
        permit_take_locked(h); /* before the receive (seed 001 §3) */
        pthread_mutex_unlock(&h->lk);
        pressure_apply(h);
        zlink_msg_t small[3];
        zlink_msg_t *parts = small;
        size_t count = 0;
        const zlink_routing_id_t *rid = NULL;
        zlink_reply_token_t token = 0;
        zlink_recv_result_t rc =
            zlink_router_recv(s->s, &rid, &token, parts, 3, &count, ZLINK_RECV_FLAGS_DONTWAIT);
        if (rc == ZLINK_RECV_BUFFER_TOO_SMALL && count > 3) {
            /* Too many frames for any framework record: take it whole to
             * drop it (count is what the Core already holds). */
            parts = calloc(count, sizeof *parts);
            if (parts != NULL)
                rc = zlink_router_recv(s->s, &rid, &token, parts, count, &count,
                                       ZLINK_RECV_FLAGS_DONTWAIT);
        }
        zlink_routing_id_t src = {0};
        if (rc == ZLINK_RECV_OK && rid != NULL)
            src = *rid;
        pthread_mutex_lock(&h->lk);
        if (rc != ZLINK_RECV_OK) {
            if (parts != small)
                free(parts);
            zf_host_permit_release(h);
            return true;
        }
        pressure_check_locked(h); /* the reservation holds a record now */
        for (size_t k = 0; k < count; k++)
            bytes += zlink_msg_size(&parts[k]);
        if (parts != small) {
            zlink_multipart_close(parts, count);
            free(parts);
            atomic_fetch_add(&h->m_protocol_errors, 1);
            if (token != 0) {
                pthread_mutex_unlock(&h->lk);
                (void)zlink_reply_submit(s->s, &src, token, EPROTO, NULL, 0,
                                         ZLINK_SEND_FLAGS_DONTWAIT, NULL, NULL);
                pthread_mutex_lock(&h->lk);
            } else {
                drop_record(h, &h->m_dropped_decode);
            }
            zf_host_permit_release(h);
            continue;
        }
        on_record(h, s, &src, token, parts, count);
    }
    return true;
}

/* Ingress leader, h->lk not held: POLLIN on each receiving socket unless
 * it waits in the permit FIFO, which serves it (polling it while no permit
 * is free would only wake the ingress again and again). A socket that does
 * not wait keeps POLLIN, so a record it gets while others wait makes it
 * join the FIFO behind them (seed 001 §3). Only the leader writes
 * src_waiting and rx_pollin, so it reads them here without the lock. */
static void sync_pollin(zf_host_t *h)
{
    for (zf_sock_t *s = h->socks; s != NULL; s = s->next) {
        if (s->rx_index < 0 || s->rx_pollin == !s->src_waiting)
            continue;
        bool on = !s->src_waiting;
        short ev = (on ? ZLINK_POLLIN : 0) | (s->mesh != NULL ? ZLINK_POLLROUTE : 0);
        if (zlink_poller_modify(h->poller, s->s, ev) == ZLINK_CONFIG_OK)
            s->rx_pollin = on;
    }
}

/* Under h->lk, by the ingress leader only: one step of the ingress:
 * control messages, the liveness tick, one poll, the records it found.
 * Drops the lock around the poll and the Core receives. */
static void ingress_step(zf_host_t *h)
{
    zlink_poller_event_t ev[16];
    while (h->msg_head != NULL) {
        zf_hmsg_t *m = h->msg_head;
        h->msg_head = m->next;
        if (h->msg_head == NULL)
            h->msg_tail = NULL;
        handle_hmsg(m);
        zlink_multipart_close(m->parts, m->nparts);
        free(m);
    }
    mesh_tick(h, zf_now_ns());
    /* Sources that waited for a permit go first, oldest first; one that
     * runs out again goes back to the tail (seed 001 §3). */
    while (h->src_head != NULL && h->permits_in_use < h->max_jobs && !h->stop) {
        zf_sock_t *s = source_next(h);
        receive_batch(h, s);
        h->rx_cursor = s->rx_index;
    }
    h->ingress_waits_permit = h->src_head != NULL;
    pthread_mutex_unlock(&h->lk);
    pressure_apply(h);
    sync_pollin(h);
    int n = zlink_poller_wait(h->poller, ev, 16, 1000, NULL);
    pthread_mutex_lock(&h->lk);
    zf_sock_t *ready[16];
    int nready = 0;
    for (int i = 0; i < n && !h->stop; i++) {
        if (ev[i].source_kind == ZLINK_POLLER_SOURCE_FD) {
            uint64_t v;
            if (read(h->wake_fd, &v, sizeof v) < 0) {
                /* nothing pending */
            }
            continue;
        }
        zf_sock_t *s = ev[i].user_data;
        if (ev[i].events & ZLINK_POLLROUTE)
            routes_changed(h, s);
        if (ev[i].events & ZLINK_POLLIN)
            ready[nready++] = s;
    }
    /* The rotation starts right after the socket where the last one
     * stopped (seed 001 §4), whatever order the poller reported. The
     * walk counts from where this rotation began: rx_cursor moves with
     * each socket served, and counting from it would skip sockets. */
    int rotation_start = h->rx_cursor;
    for (int k = 1; k <= h->nrx && nready > 0 && !h->stop; k++) {
        int want_index = (rotation_start + k) % h->nrx;
        for (int i = 0; i < nready; i++) {
            if (ready[i]->rx_index != want_index)
                continue;
            zf_sock_t *s = ready[i];
            ready[i] = ready[--nready];
            h->rx_cursor = want_index;
            /* Out of permits, the rest still get their turn: each finds
             * no permit, sees its record and joins the FIFO in order. */
            (void)receive_batch(h, s);
            break;
        }
    }
}

/* How long the leader may run a turn before an idle host thread takes
 * the ingress from it, and how often idle threads look. */
#define RESCUE_NS 1000000
#define IDLE_LOOK_NS 2000000

typedef struct host_arg {
    zf_host_t *h;
    int id; /* 1.. */
} host_arg_t;

/* Under h->lk, thread id holding the lead: serves the ingress and runs
 * the first turn each batch made runnable itself, without handing it to
 * another thread. Returns when the lead was taken over (the turn ran
 * longer than RESCUE_NS) or the host stops. */
static void lead(zf_host_t *h, int id)
{
    while (h->leader == id && !h->stop) {
        ingress_step(h);
        zf_gate_t *g = runq_pop(h);
        if (g == NULL)
            continue;
        if (h->run_head != NULL && h->idle > 0)
            pthread_cond_signal(&h->cv); /* other gates are runnable too */
        h->leader_in_turn = true;
        h->leader_turn_since = zf_now_ns();
        run_gate(h, g);
        if (h->leader != id)
            return; /* an idle thread took the ingress meanwhile */
        h->leader_in_turn = false;
    }
    if (h->leader == id)
        h->leader = 0;
}

/* A host thread. Exactly one thread at a time holds the ingress role
 * (h->leader). The leader runs the turns its batch made runnable itself:
 * a record reaches its handler with no thread hop and no wake-up of
 * another thread. Should a turn run long (a handler that blocks), an idle
 * thread takes the ingress over after RESCUE_NS, so control records,
 * permits and other gates never wait for a handler. Idle threads look
 * every IDLE_LOOK_NS; gates made runnable by other threads (an async turn
 * that ended) wake one at once. */
static void *host_main(void *arg)
{
    host_arg_t *ha = arg;
    zf_host_t *h = ha->h;
    int id = ha->id;
    pthread_setname_np(pthread_self(), "zf/host");
    zf_ctx_enter();
    pthread_mutex_lock(&h->lk);
    for (;;) {
        if (h->leader == 0 && !h->stop) {
            h->leader = id;
            lead(h, id);
            continue;
        }
        zf_gate_t *g = runq_pop(h);
        if (g != NULL) {
            run_gate(h, g);
            continue;
        }
        if (h->stop)
            break;
        if (h->leader_in_turn && zf_now_ns() - h->leader_turn_since > RESCUE_NS) {
            h->leader = id; /* the old leader becomes a follower */
            h->leader_in_turn = false;
            lead(h, id);
            continue;
        }
        /* One idle thread (the watcher) looks every IDLE_LOOK_NS for a
         * leader stuck in a turn; the others sleep until signalled. */
        h->idle++;
        if (h->watcher == 0 || h->watcher == id) {
            h->watcher = id;
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_nsec += IDLE_LOOK_NS;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&h->cv, &h->lk, &ts);
            h->watcher = 0; /* busy now, or about to look again */
        } else {
            pthread_cond_wait(&h->cv, &h->lk);
        }
        h->idle--;
    }
    pthread_mutex_unlock(&h->lk);
    zf_ctx_leave();
    return NULL;
}

/* -------------------------------------------------------------- start */

static int open_sock(zf_host_t *h, zf_sock_t *s)
{
    int type = s->role == ZF_SOCK_CS_CLIENT ? ZLINK_DEALER : ZLINK_ROUTER;
    s->s = zlink_socket(h->ctx, type);
    if (s->s == NULL)
        return ZLINK_FW_INTERNAL_FAILURE;
    int zero = 0;
    (void)zlink_setsockopt(s->s, ZLINK_LINGER, &zero, sizeof zero);
    if (s->hwm_set[0])
        (void)zlink_setsockopt(s->s, ZLINK_SNDHWM, &s->sndhwm, sizeof s->sndhwm);
    if (s->hwm_set[1])
        (void)zlink_setsockopt(s->s, ZLINK_RCVHWM, &s->rcvhwm, sizeof s->rcvhwm);
    if (s->role == ZF_SOCK_CS_SERVER) {
        /* MaxMessageSize of a ClientServer listener: 16 MiB. */
        int64_t max = 16 << 20;
        (void)zlink_setsockopt(s->s, ZLINK_MAXMSGSIZE, &max, sizeof max);
        if (zlink_bind(s->s, s->endpoint) != ZLINK_BIND_OK)
            return ZLINK_FW_UNAVAILABLE;
        return 0;
    }
    if (s->role == ZF_SOCK_CS_CLIENT) {
        if (zlink_connect(s->s, s->endpoint) != ZLINK_CONNECT_OK)
            return ZLINK_FW_INVALID_ARGUMENT;
        for (size_t i = 0; i < s->nmore; i++)
            if (zlink_connect(s->s, s->more_endpoints[i]) != ZLINK_CONNECT_OK)
                return ZLINK_FW_INVALID_ARGUMENT;
        return 0;
    }
    zf_mesh_t *m = s->mesh;
    if (zlink_set_routing_id(s->s, m->rid.data, m->rid.size) != ZLINK_CONFIG_OK)
        return ZLINK_FW_INVALID_ARGUMENT;
    if (s->endpoint[0] != '\0' && zlink_bind(s->s, s->endpoint) != ZLINK_BIND_OK)
        return ZLINK_FW_UNAVAILABLE;
    for (zf_peer_t *p = m->peers; p != NULL; p = p->next) {
        if (!p->manual)
            continue;
        if (zlink_setsockopt(s->s, ZLINK_CONNECT_ROUTING_ID, p->rid.data, p->rid.size) !=
                ZLINK_CONFIG_OK ||
            zlink_connect(s->s, p->endpoint) != ZLINK_CONNECT_OK)
            return ZLINK_FW_INVALID_ARGUMENT;
    }
    return 0;
}

/* Waits, at most until flush_until (absolute, monotonic ns; 0 = no wait),
 * for the records socket s accepted for sending to leave it: their callers
 * were told they were sent. Reads the Core's pending output through a
 * monitor: the byte charge, which also covers records the I/O thread has
 * taken from the queue but the kernel has not accepted yet (the record
 * count drops as soon as they are taken). What is still pending at the
 * bound is dropped by the close. */
static void flush_wait(zf_sock_t *s, int64_t flush_until)
{
    if (flush_until == 0)
        return;
    zlink_monitor_config_t cfg = {0, 0, 0};
    void *mon = zlink_socket_monitor_open(s->s, &cfg);
    if (mon == NULL)
        return;
    for (;;) {
        zlink_monitor_status_t st;
        memset(&st, 0, sizeof st);
        if (zlink_monitor_status(mon, &st) != ZLINK_CONFIG_OK ||
            !(st.detail_flags & ZLINK_MONITOR_STATUS_DETAIL_SND_PENDING_MSGS) ||
            (st.snd_pending_msgs == 0 && st.snd_pending_bytes == 0) ||
            zf_now_ns() >= flush_until)
            break;
        struct timespec ts = {0, 1000000}; /* the I/O thread writes them meanwhile */
        nanosleep(&ts, NULL);
    }
    (void)zlink_monitor_close(&mon);
}

/* Closes the host's sockets after letting their accepted output leave
 * until flush_until (0: at once, a start that failed). */
static void close_socks(zf_host_t *h, int64_t flush_until)
{
    for (zf_sock_t *s = h->socks; s != NULL; s = s->next) {
        if (s->s == NULL)
            continue;
        flush_wait(s, flush_until);
        /* The close gate refuses while another thread is inside a call on
         * the socket (a late reply started by an application thread, say).
         * Every framework call on it is DONTWAIT, so that call is about to
         * return: try again until it has. A socket left open would keep the
         * process's Core context from ever terminating. */
        while (zlink_close(s->s) == ZLINK_CLOSE_BUSY)
            sched_yield();
    }
}

static void stop_threads(zf_host_t *h)
{
    pthread_mutex_lock(&h->lk);
    h->stop = true;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->lk);
    zf_host_wake(h);
    for (int i = 0; i < h->nworkers; i++)
        pthread_join(h->workers[i], NULL);
    h->nworkers = 0;
}

/* Tears down what start built (start failure, end of shutdown). */
static void teardown(zf_host_t *h, bool watched, int64_t flush_until)
{
    stop_threads(h);
    /* Waiting sources end their wait (counted once) with the ingress. */
    pthread_mutex_lock(&h->lk);
    while (source_next(h) != NULL) {
    }
    h->ingress_waits_permit = false;
    pthread_mutex_unlock(&h->lk);
    /* Out of the pressure registry before anything closes (seed 001 §6). */
    pthread_mutex_lock(&h->flow_lk);
    h->flow_closed = true;
    pthread_mutex_unlock(&h->flow_lk);
    if (watched)
        for (zf_sock_t *s = h->socks; s != NULL; s = s->next)
            if (s->s != NULL)
                zf_disp_unwatch(s);
    close_socks(h, flush_until);
    if (h->poller != NULL)
        zlink_poller_destroy(&h->poller);
    if (h->wake_fd >= 0)
        close(h->wake_fd);
    h->wake_fd = -1;
    if (h->ctx != NULL)
        zf_disp_release();
    h->ctx = NULL;
}

/* Under h->lk: pause = ceil(m x pause% / 100), resume = floor(m x resume% /
 * 100) (seed 001 §6). */
static void thresholds(const zf_host_t *h, uint64_t m, uint64_t *pause, uint64_t *resume)
{
    *pause = (m * (uint64_t)h->pause_pct + 99) / 100;
    *resume = m * (uint64_t)h->resume_pct / 100;
}

/* Under h->lk, at start: the job queue's values together (seed 001 §2,
 * §6); fixes P, M and the two thresholds for the host's life. */
static int check_job_queue(zf_host_t *h)
{
    if (h->resume_pct >= h->pause_pct)
        return ZLINK_FW_INVALID_ARGUMENT;
    h->procs = jq_procs(h);
    uint64_t m = jq_max(h, h->procs);
    if (m < 1 || m > INT32_MAX)
        return ZLINK_FW_INVALID_ARGUMENT;
    h->max_jobs = m;
    thresholds(h, m, &h->pause_count, &h->resume_count);
    h->pressure = ZLINK_PRESSURE_RUNNING;
    h->flow_state_applied = ZLINK_PRESSURE_RUNNING; /* a new Core socket runs */
    return 0;
}

/* The machine's memory bound in bytes: physical memory, or the cgroup's
 * memory.max (v2) / memory.limit_in_bytes (v1) when smaller; 0 unknown. */
static uint64_t memory_hard_limit(void)
{
    uint64_t limit = 0;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0)
        limit = (uint64_t)pages * (uint64_t)page;
    const char *paths[] = {"/sys/fs/cgroup/memory.max",
                           "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        FILE *f = fopen(paths[i], "r");
        if (f == NULL)
            continue;
        unsigned long long v;
        if (fscanf(f, "%llu", &v) == 1 && v > 0 && (limit == 0 || v < limit))
            limit = v; /* "max" does not scan: no cgroup limit */
        fclose(f);
        break;
    }
    return limit;
}

/* Under h->lk, at start: a Core budget or memory limit above what the
 * machine has is a startup error (framework-contract.md §2.1). */
static int check_core_hwm(const zf_host_t *h)
{
    uint64_t hard = memory_hard_limit();
    if (hard != 0 && (h->core_hwm.budget > hard || h->core_hwm.memory_limit > hard))
        return ZLINK_FW_INVALID_ARGUMENT;
    return 0;
}

ZLINK_EXPORT zlink_fw_result_t zlink_host_start(zlink_host_t *host)
{
    zf_host_t *h;
    int rc = prepare_enter(host, &h);
    if (rc != 0)
        return rc;
    rc = check_handlers(h);
    if (rc == 0)
        rc = check_job_queue(h);
    if (rc == 0)
        rc = check_core_hwm(h);
    if (rc == 0)
        rc = zf_disp_acquire(&h->ctx, &h->core_hwm);
    if (rc == 0) {
        h->poller = zlink_poller_new();
        h->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (h->poller == NULL || h->wake_fd < 0 ||
            zlink_poller_add_fd(h->poller, h->wake_fd, NULL, ZLINK_POLLIN) != 0)
            rc = ZLINK_FW_INTERNAL_FAILURE;
    }
    for (zf_sock_t *s = h->socks; rc == 0 && s != NULL; s = s->next)
        rc = open_sock(h, s);
    bool watched = false;
    for (zf_sock_t *s = h->socks; rc == 0 && s != NULL; s = s->next) {
        /* A CS server's completion queue only ever holds WRITABLE edges of
         * replies that waited for room: it is watched from the first one
         * on (call.c), so incoming requests do not wake the dispatcher. */
        if (s->role != ZF_SOCK_CS_SERVER)
            rc = zf_disp_watch(s);
        watched = true;
        s->rx_index = -1;
        if (rc == 0 && s->role != ZF_SOCK_CS_CLIENT) {
            s->rx_index = h->nrx++;
            short ev = ZLINK_POLLIN | (s->mesh != NULL ? ZLINK_POLLROUTE : 0);
            if (zlink_poller_add(h->poller, s->s, s, ev) != ZLINK_CONFIG_OK)
                rc = ZLINK_FW_INTERNAL_FAILURE;
            s->rx_pollin = true;
        }
    }
    if (rc == 0) {
        h->workers = calloc((size_t)h->handler_threads + 1, sizeof *h->workers);
        h->thread_args = calloc((size_t)h->handler_threads + 1, sizeof(host_arg_t));
        if (h->workers == NULL || h->thread_args == NULL)
            rc = ZLINK_FW_INTERNAL_FAILURE;
    }
    atomic_store(&h->state, rc == 0 ? ZLINK_HOST_SERVING : ZLINK_HOST_FAILED);
    pthread_mutex_unlock(&h->lk);
    /* handler_threads run turns, plus one so that a thread can always
     * hold the ingress role while the others run handlers. */
    /* A host with only CS client channels receives nothing itself (its
     * replies come through the dispatcher): it needs no host thread. */
    bool receives = false;
    for (zf_sock_t *s = h->socks; s != NULL; s = s->next)
        receives |= s->role != ZF_SOCK_CS_CLIENT;
    for (int i = 0; rc == 0 && receives && i < h->handler_threads + 1; i++) {
        ((host_arg_t *)h->thread_args)[i].h = h;
        ((host_arg_t *)h->thread_args)[i].id = i + 1;
        if (pthread_create(&h->workers[i], NULL, host_main,
                           &((host_arg_t *)h->thread_args)[i]) != 0)
            rc = ZLINK_FW_INTERNAL_FAILURE;
        else
            h->nworkers++;
    }
    if (rc != 0) {
        atomic_store(&h->state, ZLINK_HOST_FAILED);
        teardown(h, watched, 0);
    }
    zf_obj_unref(&h->obj);
    return rc;
}

/* ----------------------------------------------------------- shutdown */

static bool drained(zf_host_t *h)
{
    pthread_mutex_lock(&zf_disp.lk);
    bool calls = h->pending == NULL && h->callbacks_queued == 0;
    pthread_mutex_unlock(&zf_disp.lk);
    pthread_mutex_lock(&h->lk);
    bool turns = h->turns_running == 0 && h->turns_queued == 0;
    pthread_mutex_unlock(&h->lk);
    return calls && turns;
}

/* Waits (bounded by deadline, an absolute monotonic time; 0 = none) until
 * pred(h) holds. Wakes on every call or turn event. */
static void wait_until(zf_host_t *h, bool (*pred)(zf_host_t *), int64_t deadline)
{
    while (!pred(h)) {
        int64_t now = zf_now_ns();
        if (deadline != 0 && now >= deadline)
            return;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t step = 20000000; /* re-check at least every 20 ms */
        if (deadline != 0 && deadline - now < step)
            step = deadline - now;
        ts.tv_nsec += step;
        ts.tv_sec += ts.tv_nsec / 1000000000;
        ts.tv_nsec %= 1000000000;
        pthread_mutex_lock(&zf_disp.lk);
        pthread_cond_timedwait(&zf_disp.waiters, &zf_disp.lk, &ts);
        pthread_mutex_unlock(&zf_disp.lk);
    }
}

static bool callbacks_done(zf_host_t *h)
{
    pthread_mutex_lock(&zf_disp.lk);
    bool done = h->callbacks_queued == 0 && h->pending == NULL;
    pthread_mutex_unlock(&zf_disp.lk);
    return done;
}

static bool turns_done(zf_host_t *h)
{
    pthread_mutex_lock(&h->lk);
    bool done = h->turns_running == 0;
    pthread_mutex_unlock(&h->lk);
    return done;
}

/* Queued turns that never started when the host stops: a request gets a
 * SHUTTING_DOWN answer, a one-way counts as dropped. */
static void drop_queued_turns(zf_host_t *h)
{
    pthread_mutex_lock(&h->lk);
    for (zf_gate_t *g = h->gates; g != NULL; g = g->next) {
        while (g->head != NULL) {
            zf_turn_t *t = g->head;
            g->head = t->next;
            g->queued--;
            g->queued_bytes -= t->bytes;
            h->turns_queued--;
            if (t->token != 0)
                zf_reply_error_raw(t->sock, &t->src, t->token, &t->rec, ZF_TR_TERMINATED,
                                   "the host shut down");
            else
                atomic_fetch_add(&h->m_dropped_shutdown, 1);
            zf_host_permit_release(h);
            zf_turn_discard(t);
        }
        g->tail = NULL;
        g->in_runq = false;
    }
    h->run_head = h->run_tail = NULL;
    pthread_mutex_unlock(&h->lk);
}


ZLINK_EXPORT zlink_fw_result_t zlink_host_shutdown(zlink_host_t *host, int64_t deadline)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    if (zf_ctx_active()) {
        zf_obj_unref(&h->obj);
        return ZLINK_FW_INVALID_OPERATION;
    }
    if (deadline != 0 && zf_timeout_ms(deadline, NULL) != 0) {
        zf_obj_unref(&h->obj);
        return ZLINK_FW_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&h->shutdown_lk);
    int st = atomic_load(&h->state);
    if (st != ZLINK_HOST_SERVING) {
        pthread_mutex_unlock(&h->shutdown_lk);
        zf_obj_unref(&h->obj);
        return st == ZLINK_HOST_STOPPED ? ZLINK_FW_OK : ZLINK_FW_INVALID_OPERATION;
    }
    int64_t t = deadline != 0 ? deadline : h->shutdown_timeout;
    int64_t end = zf_now_ns() + t;
    pthread_mutex_lock(&h->lk);
    h->stop_waits = true;
    /* Tell the mesh peers this node drains: they stop picking it. */
    for (zf_sock_t *s = h->socks; s != NULL; s = s->next)
        if (s->mesh != NULL)
            s->mesh->members_dirty = true;
    pthread_mutex_lock(&zf_disp.lk);
    h->draining = true;
    pthread_mutex_unlock(&zf_disp.lk);
    atomic_store(&h->state, ZLINK_HOST_DRAINING);
    pthread_mutex_unlock(&h->lk);
    zf_host_wake(h); /* the ingress sends the UPDATE */
    /* Accepted work drains until the deadline ... */
    wait_until(h, drained, end);
    /* ... then what is left completes as shutdown; accepted callbacks
     * still run, and running handlers finish. */
    zf_calls_shutdown(h);
    drop_queued_turns(h);
    pressure_apply(h);
    wait_until(h, callbacks_done, 0);
    wait_until(h, turns_done, 0);
    /* Replies started by the last handlers (a draining host still
     * answers) that are still waiting for room end now, before the
     * sockets close. A reply call may outlive its turn (built in the
     * handler, started later from any thread): from here on none is
     * accepted (zlink_call_start answers SHUTTING_DOWN), so this sweep
     * and the wait after it see every reply that got in, while the
     * sockets and the dispatcher still run. */
    pthread_mutex_lock(&zf_disp.lk);
    h->replies_closed = true;
    pthread_mutex_unlock(&zf_disp.lk);
    zf_calls_shutdown(h);
    wait_until(h, callbacks_done, 0);
    /* What was accepted for sending (replies, one-ways that completed at
     * send acceptance) may still leave: each socket's output gets the rest
     * of the deadline, at least FLUSH_MIN_MS and at most FLUSH_MAX_MS (a
     * peer that does not read must not hold the process for the whole
     * deadline: what it does not take in that time is dropped). The Core
     * sockets themselves keep LINGER 0. */
    int64_t now = zf_now_ns(), flush = end;
    if (flush < now + ZLINK_MS(FLUSH_MIN_MS))
        flush = now + ZLINK_MS(FLUSH_MIN_MS);
    if (flush > now + ZLINK_MS(FLUSH_MAX_MS))
        flush = now + ZLINK_MS(FLUSH_MAX_MS);
    teardown(h, true, flush);
    atomic_store(&h->state, ZLINK_HOST_STOPPED);
    pthread_mutex_unlock(&h->shutdown_lk);
    zf_obj_unref(&h->obj);
    return ZLINK_FW_OK;
}

ZLINK_EXPORT zlink_fw_result_t zlink_host_destroy(zlink_host_t *host)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    if (atomic_load(&h->state) == ZLINK_HOST_SERVING) {
        if (zf_ctx_active()) {
            zf_obj_unref(&h->obj);
            return ZLINK_FW_INVALID_OPERATION;
        }
        (void)zlink_host_shutdown(host, 0);
    }
    if (atomic_load(&h->state) == ZLINK_HOST_DRAINING) {
        zf_obj_unref(&h->obj);
        return ZLINK_FW_INVALID_OPERATION; /* another thread is shutting it down */
    }
    zf_handle_remove(&h->obj);
    zf_obj_unref(&h->obj);
    return ZLINK_FW_OK;
}

ZLINK_EXPORT int zlink_host_state(zlink_host_t *host)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL)
        return -1;
    int st = atomic_load(&h->state);
    zf_obj_unref(&h->obj);
    return st;
}

/* ------------------------------------------------------ status, metrics */

ZLINK_EXPORT zlink_fw_result_t zlink_host_status(zlink_host_t *host, zlink_host_status_t *st)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    /* A caller built against a later version may pass a larger struct: it
     * gets the fields this version knows and zeros after them. */
    if (st == NULL || st->struct_size < sizeof *st) {
        zf_obj_unref(&h->obj);
        return ZLINK_FW_INVALID_ARGUMENT;
    }
    uint32_t given = st->struct_size;
    memset(st, 0, given);
    st->struct_size = given;
    st->state = atomic_load(&h->state);
    st->is_ready = st->state == ZLINK_HOST_SERVING;
    pthread_mutex_lock(&h->lk);
    st->turns_running = h->turns_running;
    st->turns_queued = h->turns_queued;
    st->max_queued_jobs = h->max_jobs;
    st->permits_in_use = h->permits_in_use;
    pthread_mutex_unlock(&h->lk);
    pthread_mutex_lock(&zf_disp.lk);
    st->accepting_work = st->state == ZLINK_HOST_SERVING && !h->draining;
    st->requests_inflight = h->requests_inflight;
    st->oneway_waiting = h->oneway_waiting;
    st->admission_waiters_max = ZLINK_ADMISSION_WAITERS;
    st->dispatcher_in_use = zf_disp.in_use;
    st->dispatcher_capacity = ZLINK_DISPATCHER_CAPACITY;
    pthread_mutex_unlock(&zf_disp.lk);
    zf_obj_unref(&h->obj);
    return ZLINK_FW_OK;
}

/* Under h->lk: the capacity snapshot (zlink_host_capacity and the
 * zlink.host.application_job_queue.* series read the same numbers). */
static void capacity_locked(zf_host_t *h, zlink_host_capacity_t *c)
{
    int64_t now = zf_now_ns();
    c->profile = h->jq_profile;
    c->manual_max = h->jq_manual_max;
    c->pause_percent = (uint32_t)h->pause_pct;
    c->resume_percent = (uint32_t)h->resume_pct;
    c->effective_processors = h->procs;
    c->effective_max = h->max_jobs;
    if (atomic_load(&h->state) == ZLINK_HOST_PREPARING) {
        /* not fixed yet: what start would compute from the values now */
        thresholds(h, h->max_jobs, &c->pause_count, &c->resume_count);
    } else {
        c->pause_count = h->pause_count;
        c->resume_count = h->resume_count;
    }
    c->queued_jobs = h->turns_queued;
    c->permits_in_use = h->permits_in_use;
    c->reserved_supply_permits =
        h->permits_in_use > h->turns_queued ? h->permits_in_use - h->turns_queued : 0;
    c->peak_permits_in_use = h->peak_permits;
    c->pressure_state = h->pressure;
    c->current_pause_ns = h->pressure == ZLINK_PRESSURE_PAUSED ? now - h->paused_since : 0;
    c->cumulative_pause_ns = h->cum_pause_ns + c->current_pause_ns;
    c->transitions_paused = h->m_trans_paused;
    c->transitions_running = h->m_trans_running;
    c->capacity_waiters = h->nsrc_waiting;
    c->capacity_waits = h->m_capacity_waits;
    c->capacity_wait_ns = h->m_capacity_wait_ns;
    for (zf_sock_t *s = h->src_head; s != NULL; s = s->src_next)
        c->capacity_wait_ns += now - s->src_wait_since;
    c->flow_state_config_failures = (uint64_t)atomic_load(&h->m_flow_failures);
}

ZLINK_EXPORT zlink_fw_result_t zlink_host_capacity(zlink_host_t *host, zlink_host_capacity_t *c)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    if (c == NULL || c->struct_size < sizeof *c) {
        zf_obj_unref(&h->obj);
        return ZLINK_FW_INVALID_ARGUMENT;
    }
    uint32_t given = c->struct_size;
    memset(c, 0, given);
    c->struct_size = given;
    pthread_mutex_lock(&h->lk);
    capacity_locked(h, c);
    pthread_mutex_unlock(&h->lk);
    zf_obj_unref(&h->obj);
    return ZLINK_FW_OK;
}

ZLINK_EXPORT zlink_fw_result_t zlink_host_owner_status(zlink_host_t *host,
                                                       zlink_owner_kind_t owner,
                                                       const char *owner_name,
                                                       zlink_owner_status_t *st)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    if ((owner != ZLINK_OWNER_CHANNEL && owner != ZLINK_OWNER_NODE) || owner_name == NULL ||
        st == NULL || st->struct_size < sizeof *st) {
        zf_obj_unref(&h->obj);
        return ZLINK_FW_INVALID_ARGUMENT;
    }
    int rc = ZLINK_FW_NOT_FOUND;
    pthread_mutex_lock(&h->lk);
    for (zf_gate_t *g = h->gates; g != NULL; g = g->next) {
        if (g->owner != (int)owner || strcmp(g->name, owner_name) != 0)
            continue;
        uint32_t given = st->struct_size;
        memset(st, 0, given);
        st->struct_size = given;
        st->busy = g->busy;
        st->accepted_seq = g->accepted_seq;
        st->queued_records = g->queued;
        st->queued_bytes = g->queued_bytes;
        st->running_records = g->running;
        st->running_bytes = g->running_bytes;
        st->handled = g->handled;
        rc = ZLINK_FW_OK;
        break;
    }
    pthread_mutex_unlock(&h->lk);
    zf_obj_unref(&h->obj);
    return rc;
}

ZLINK_EXPORT zlink_fw_result_t zlink_host_reset_metrics(zlink_host_t *host)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    pthread_mutex_lock(&h->lk);
    h->peak_permits = h->permits_in_use;
    h->m_trans_paused = h->m_trans_running = 0;
    h->cum_pause_ns = 0; /* the current pause, if any, goes on counting */
    h->m_capacity_waits = 0;
    h->m_capacity_wait_ns = 0;
    int64_t now = zf_now_ns();
    for (zf_sock_t *s = h->src_head; s != NULL; s = s->src_next)
        s->src_wait_since = now; /* a wait in progress counts from now */
    pthread_mutex_unlock(&h->lk);
    atomic_store(&h->m_flow_failures, 0);
    atomic_llong *epoch[] = {&h->m_dropped_no_handler, &h->m_dropped_decode,
                             &h->m_dropped_shutdown,   &h->m_request_timeouts,
                             &h->m_sel_no_member,      &h->m_sel_not_ready,
                             &h->m_sel_draining,       &h->m_protocol_errors};
    for (size_t i = 0; i < sizeof epoch / sizeof epoch[0]; i++)
        atomic_store(epoch[i], 0);
    zf_obj_unref(&h->obj);
    return ZLINK_FW_OK;
}

#define JQ_PREFIX "zlink.host.application_job_queue."

/* The zlink.host.application_job_queue.* series (the prefix stripped):
 * 0 and *v, or NOT_FOUND. Durations in ns. */
static int jq_metric(zf_host_t *h, const char *name, const char *labels, int64_t *v)
{
    zlink_host_capacity_t c;
    memset(&c, 0, sizeof c);
    pthread_mutex_lock(&h->lk);
    capacity_locked(h, &c);
    pthread_mutex_unlock(&h->lk);
    bool none = labels[0] == '\0';
    if (strcmp(name, "limit") == 0 && none)
        *v = (int64_t)c.effective_max;
    else if (strcmp(name, "jobs") == 0 && strcmp(labels, "state=reserved") == 0)
        *v = (int64_t)c.reserved_supply_permits;
    else if (strcmp(name, "jobs") == 0 && strcmp(labels, "state=queued") == 0)
        *v = (int64_t)c.queued_jobs;
    else if (strcmp(name, "jobs") == 0 && strcmp(labels, "state=in_use") == 0)
        *v = (int64_t)c.permits_in_use;
    else if (strcmp(name, "jobs") == 0 && strcmp(labels, "state=peak") == 0)
        *v = (int64_t)c.peak_permits_in_use;
    else if (strcmp(name, "capacity_waiters") == 0 && none)
        *v = (int64_t)c.capacity_waiters;
    else if (strcmp(name, "capacity_waits") == 0 && none)
        *v = (int64_t)c.capacity_waits;
    else if (strcmp(name, "capacity_wait_duration") == 0 && none)
        *v = c.capacity_wait_ns;
    else if (strcmp(name, "pressure_state") == 0 && strcmp(labels, "state=running") == 0)
        *v = c.pressure_state == ZLINK_PRESSURE_RUNNING;
    else if (strcmp(name, "pressure_state") == 0 && strcmp(labels, "state=paused") == 0)
        *v = c.pressure_state == ZLINK_PRESSURE_PAUSED;
    else if (strcmp(name, "pressure_transitions") == 0 && strcmp(labels, "state=paused") == 0)
        *v = (int64_t)c.transitions_paused;
    else if (strcmp(name, "pressure_transitions") == 0 && strcmp(labels, "state=running") == 0)
        *v = (int64_t)c.transitions_running;
    else if (strcmp(name, "pause_duration") == 0 && strcmp(labels, "state=current") == 0)
        *v = c.current_pause_ns;
    else if (strcmp(name, "pause_duration") == 0 && strcmp(labels, "state=cumulative") == 0)
        *v = c.cumulative_pause_ns;
    else if (strcmp(name, "flow_state_config_failures") == 0 && none)
        *v = (int64_t)c.flow_state_config_failures;
    else
        return ZLINK_FW_NOT_FOUND;
    return 0;
}

#define CORE_HWM_PREFIX "zlink.host.core_hwm."

/* What zlink.host.core_hwm.* reads from the Core, summed over the host's
 * sockets (framework-contract.md §6): a read-only projection, never an
 * input to the pressure state. */
typedef struct core_hwm_view {
    uint64_t budget;            /* the context's ZLINK_CORE_BUDGET_BYTES */
    int profile;                /* the context's ZLINK_PROFILE */
    uint64_t hwm_send, hwm_receive;           /* SNDHWM / RCVHWM marks */
    uint64_t pending_send, pending_receive;   /* bytes the Core queues hold */
    uint64_t blocked_ppm;       /* the largest auto-HWM blocked ratio */
} core_hwm_view_t;

/* Called by zlink_host_metric with no lock held; takes h->flow_lk, which
 * the pressure applier and the socket close also take, so the sockets
 * stay open while it reads them. Each socket's state comes from a monitor
 * opened and closed here (events 0: it queues nothing); flush_wait, the
 * other user of a monitor, runs only after flow_closed. Blocks only on
 * the Core's socket locks. Before start and once the sockets close, the
 * socket sums are 0 and the profile is the one start would pass. */
static void core_hwm_read(zf_host_t *h, core_hwm_view_t *v)
{
    memset(v, 0, sizeof *v);
    pthread_mutex_lock(&h->lk);
    v->profile = h->core_hwm.profile >= 0 ? h->core_hwm.profile : ZLINK_PROFILE_BALANCED;
    v->budget = h->core_hwm.budget;
    pthread_mutex_unlock(&h->lk);
    pthread_mutex_lock(&h->flow_lk);
    if (atomic_load(&h->state) == ZLINK_HOST_PREPARING || h->flow_closed || h->ctx == NULL) {
        pthread_mutex_unlock(&h->flow_lk);
        return;
    }
    int p = zlink_ctx_get(h->ctx, ZLINK_PROFILE, NULL);
    if (p >= 0)
        v->profile = p;
    uint64_t budget = 0;
    size_t n = sizeof budget;
    if (zlink_ctx_get_data(h->ctx, ZLINK_CORE_BUDGET_BYTES, &budget, &n) == ZLINK_CONFIG_OK)
        v->budget = budget;
    for (zf_sock_t *s = h->socks; s != NULL; s = s->next) {
        if (s->s == NULL)
            continue;
        uint64_t hwm = 0;
        size_t len = sizeof hwm;
        if (zlink_getsockopt(s->s, ZLINK_SNDHWM, &hwm, &len) == ZLINK_CONFIG_OK)
            v->hwm_send += hwm;
        len = sizeof hwm;
        if (zlink_getsockopt(s->s, ZLINK_RCVHWM, &hwm, &len) == ZLINK_CONFIG_OK)
            v->hwm_receive += hwm;
        zlink_monitor_config_t cfg = {0, 0, 0};
        void *mon = zlink_socket_monitor_open(s->s, &cfg);
        if (mon == NULL)
            continue;
        zlink_monitor_status_t st;
        memset(&st, 0, sizeof st);
        if (zlink_monitor_status(mon, &st) == ZLINK_CONFIG_OK) {
            v->pending_send += st.snd_pending_bytes;
            v->pending_receive += st.rcv_pending_bytes;
            if ((st.detail_flags & ZLINK_MONITOR_STATUS_DETAIL_AUTO_HWM_BUDGET) &&
                st.auto_hwm_send_blocked_ratio_ppm > v->blocked_ppm)
                v->blocked_ppm = st.auto_hwm_send_blocked_ratio_ppm;
        }
        (void)zlink_monitor_close(&mon);
    }
    pthread_mutex_unlock(&h->flow_lk);
}

/* The zlink.host.core_hwm.* series (the prefix stripped): 0 and *v, or
 * NOT_FOUND. Bytes, except profile and blocked_ratio (ppm). */
static int core_hwm_metric(zf_host_t *h, const char *name, const char *labels, int64_t *v)
{
    bool none = labels[0] == '\0';
    bool send = strcmp(labels, "state=send") == 0;
    bool receive = strcmp(labels, "state=receive") == 0;
    bool known = (strcmp(name, "effective_budget") == 0 && none) ||
                 (strcmp(name, "profile") == 0 && none) ||
                 (strcmp(name, "blocked_ratio") == 0 && none) ||
                 (strcmp(name, "applied") == 0 && (none || send || receive)) ||
                 (strcmp(name, "accounted") == 0 && (send || receive)) ||
                 (strcmp(name, "completion_accounted") == 0 && (send || receive));
    if (!known)
        return ZLINK_FW_NOT_FOUND;
    core_hwm_view_t c;
    core_hwm_read(h, &c);
    if (strcmp(name, "effective_budget") == 0)
        *v = (int64_t)c.budget;
    else if (strcmp(name, "profile") == 0)
        *v = c.profile;
    else if (strcmp(name, "blocked_ratio") == 0)
        *v = (int64_t)c.blocked_ppm;
    else if (strcmp(name, "applied") == 0)
        *v = (int64_t)((send || none ? c.hwm_send : 0) + (receive || none ? c.hwm_receive : 0));
    else if (strcmp(name, "accounted") == 0)
        *v = (int64_t)(send ? c.pending_send : c.pending_receive);
    else
        *v = 0; /* completion_accounted: inside accounted in this Core */
    return 0;
}

ZLINK_EXPORT zlink_fw_result_t zlink_host_metric(zlink_host_t *host, const char *name,
                                                 const char *labels, int64_t *value)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    if (name == NULL || value == NULL) {
        zf_obj_unref(&h->obj);
        return ZLINK_FW_INVALID_ARGUMENT;
    }
    if (labels == NULL)
        labels = "";
    int rc = ZLINK_FW_OK;
    int64_t v = 0;
    if (strcmp(name, "zlink.mesh_node.requests.inflight") == 0 && labels[0] == '\0') {
        pthread_mutex_lock(&zf_disp.lk);
        v = (int64_t)h->requests_inflight;
        pthread_mutex_unlock(&zf_disp.lk);
    } else if (strcmp(name, "zlink.mesh_node.request.timeouts") == 0 && labels[0] == '\0') {
        v = atomic_load(&h->m_request_timeouts);
    } else if (strcmp(name, "zlink.mesh_node.messages.dropped") == 0) {
        if (strcmp(labels, "reason=no_handler") == 0)
            v = atomic_load(&h->m_dropped_no_handler);
        else if (strcmp(labels, "reason=decode_error") == 0)
            v = atomic_load(&h->m_dropped_decode);
        else if (strcmp(labels, "reason=shutdown") == 0)
            v = atomic_load(&h->m_dropped_shutdown);
        else if (strcmp(labels, "reason=backpressure") == 0 ||
                 strcmp(labels, "reason=stale_target") == 0)
            v = 0; /* this version never drops for these reasons */
        else
            rc = ZLINK_FW_NOT_FOUND;
    } else if (strcmp(name, "zlink.mesh_node.channel.selection_failures") == 0) {
        if (strcmp(labels, "reason=no_member") == 0)
            v = atomic_load(&h->m_sel_no_member);
        else if (strcmp(labels, "reason=not_ready") == 0)
            v = atomic_load(&h->m_sel_not_ready);
        else if (strcmp(labels, "reason=draining") == 0)
            v = atomic_load(&h->m_sel_draining);
        else
            rc = ZLINK_FW_NOT_FOUND;
    } else if (strncmp(name, JQ_PREFIX, sizeof JQ_PREFIX - 1) == 0) {
        rc = jq_metric(h, name + sizeof JQ_PREFIX - 1, labels, &v);
    } else if (strncmp(name, CORE_HWM_PREFIX, sizeof CORE_HWM_PREFIX - 1) == 0) {
        rc = core_hwm_metric(h, name + sizeof CORE_HWM_PREFIX - 1, labels, &v);
    } else if (strcmp(name, "zlink.host.protocol_errors") == 0 && labels[0] == '\0') {
        v = atomic_load(&h->m_protocol_errors);
    } else {
        rc = ZLINK_FW_NOT_FOUND;
    }
    zf_obj_unref(&h->obj);
    if (rc == 0)
        *value = v;
    return rc;
}

/* ------------------------------------------------------- mesh routing */

int zf_mesh_route(zf_host_t *h, zf_call_t *c, zf_sock_t **sock)
{
    bool node = c->kind == ZF_CALL_SEND_NODE || c->kind == ZF_CALL_REQUEST_NODE;
    if (node) {
        zf_mesh_t *m = find_mesh(h, c->target);
        if (m == NULL)
            return ZLINK_FW_NOT_FOUND; /* no such mesh */
        zf_peer_t *p = find_peer(m, &c->rid);
        if (p == NULL)
            return ZLINK_FW_NOT_FOUND;
        if (!p->ready)
            return ZLINK_FW_UNAVAILABLE; /* known, but no route now */
        *sock = m->sock;
        c->waitq = &p->waitq;
        return 0;
    }
    zf_mesh_t *m = NULL;
    for (zf_sock_t *s = h->socks; s != NULL && m == NULL; s = s->next)
        if (s->mesh != NULL && mesh_has_client(s->mesh, c->target))
            m = s->mesh;
    if (m == NULL)
        return ZLINK_FW_NOT_FOUND; /* unknown ChannelName */
    /* Eligible: a member with weight > 0 that is ready and not draining.
     * No member at all is NotFound; members, none ready, Unavailable (a
     * registered path without a ready pipe); ready ones that all drain,
     * NotFound (no eligible server). A peer that is gone counts as not
     * ready whatever it announced last, so a lost link is Unavailable. */
    uint64_t total = 0;
    bool any_member = false, any_ready = false;
    for (zf_peer_t *p = m->peers; p != NULL; p = p->next) {
        zf_member_t *mb = find_member(p->members, p->nmembers, c->target);
        if (mb == NULL || mb->weight == 0)
            continue;
        any_member = true;
        if (!p->ready)
            continue;
        any_ready = true;
        if (!p->draining)
            total += (uint64_t)mb->weight;
    }
    if (!any_member) {
        atomic_fetch_add(&h->m_sel_no_member, 1);
        return ZLINK_FW_NOT_FOUND; /* no eligible server */
    }
    if (!any_ready) {
        atomic_fetch_add(&h->m_sel_not_ready, 1);
        return ZLINK_FW_UNAVAILABLE;
    }
    if (total == 0) {
        atomic_fetch_add(&h->m_sel_draining, 1);
        return ZLINK_FW_NOT_FOUND; /* every ready member drains */
    }
    /* Weighted select-one among ready members (xorshift64). */
    m->rng ^= m->rng << 13;
    m->rng ^= m->rng >> 7;
    m->rng ^= m->rng << 17;
    uint64_t pick = m->rng % total;
    for (zf_peer_t *p = m->peers; p != NULL; p = p->next) {
        zf_member_t *mb = find_member(p->members, p->nmembers, c->target);
        if (mb == NULL || mb->weight == 0 || !p->ready || p->draining)
            continue;
        if (pick < (uint64_t)mb->weight) {
            c->rid = p->rid;
            *sock = m->sock;
            c->waitq = &p->waitq;
            return 0;
        }
        pick -= (uint64_t)mb->weight;
    }
    return ZLINK_FW_UNAVAILABLE;
}
