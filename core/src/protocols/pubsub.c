/*
 * pubsub.c — PUB and SUB with prefix subscriptions.
 *
 * SUB keeps its subscription set and sends each change upstream as a
 * SUBSCRIBE or CANCEL frame (body = the prefix); a new pipe receives the
 * whole set when it attaches. PUB keeps each pipe's set (counted, so two
 * subscribes need two cancels) and sends a record only to pipes with a
 * matching prefix; SUB filters again locally, so records published before
 * a cancel reached the PUB are still dropped.
 *
 * NODROP 0 (default): a pipe without room loses its copy and publish
 * succeeds. NODROP 1: if any matching pipe lacks room, nothing is sent and
 * the publisher waits (NONE) or gets EAGAIN (DONTWAIT).
 *
 * INVERT_MATCHING 1 turns both filters around: a PUB sends a record to
 * the subscribers whose set does NOT match its topic, a SUB keeps only the
 * records that match none of its prefixes (set it on both ends).
 * Options: the rows at the end (sockopt.h). Runs under s->lk.
 */
#include "proto_tables.h"
#include "sock/sockopt.h"

#include <stdlib.h>

typedef struct topic {
    unsigned char *data;
    size_t len;
    uint32_t count;
} topic_t;

typedef struct topic_set {
    topic_t *v;
    size_t n, cap;
} topic_set_t;

static topic_t *set_find(topic_set_t *ts, const void *data, size_t len)
{
    for (size_t i = 0; i < ts->n; i++)
        if (ts->v[i].len == len && memcmp(ts->v[i].data, data, len) == 0)
            return &ts->v[i];
    return NULL;
}

/* Adds one reference; returns 1 if the topic is new, 0 if counted, -1 OOM. */
static int set_add(topic_set_t *ts, const void *data, size_t len)
{
    topic_t *t = set_find(ts, data, len);
    if (t != NULL) {
        t->count++;
        return 0;
    }
    if (ts->n == ts->cap) {
        size_t cap = ts->cap ? ts->cap * 2 : 4;
        topic_t *v = realloc(ts->v, cap * sizeof *v);
        if (v == NULL)
            return -1;
        ts->v = v;
        ts->cap = cap;
    }
    unsigned char *copy = malloc(len ? len : 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, data, len);
    ts->v[ts->n++] = (topic_t){copy, len, 1};
    return 1;
}

/* Drops one reference; returns 1 if the topic went away, 0 if still
 * counted, -1 if unknown. */
static int set_remove(topic_set_t *ts, const void *data, size_t len)
{
    topic_t *t = set_find(ts, data, len);
    if (t == NULL)
        return -1;
    if (--t->count > 0)
        return 0;
    free(t->data);
    *t = ts->v[--ts->n];
    return 1;
}

static bool set_matches(const topic_set_t *ts, const void *data, size_t len)
{
    for (size_t i = 0; i < ts->n; i++)
        if (ts->v[i].len <= len && memcmp(ts->v[i].data, data, ts->v[i].len) == 0)
            return true;
    return false;
}

static void set_free(topic_set_t *ts)
{
    for (size_t i = 0; i < ts->n; i++)
        free(ts->v[i].data);
    free(ts->v);
    memset(ts, 0, sizeof *ts);
}

/* ----------------------------------------------------------------- PUB */

static int pub_attach(zl_socket_t *s, zl_pipe_t *p)
{
    ZL_UNUSED(s);
    p->proto = calloc(1, sizeof(topic_set_t));
    return p->proto == NULL ? ENOMEM : 0;
}

static void pub_detach(zl_socket_t *s, zl_pipe_t *p)
{
    ZL_UNUSED(s);
    if (p->proto != NULL)
        set_free(p->proto);
}

static void pub_control(zl_socket_t *s, zl_pipe_t *p, const zl_frame_t *f)
{
    ZL_UNUSED(s);
    topic_set_t *ts = p->proto;
    zlink_msg_t *m = (zlink_msg_t *)&f->msg;
    if (ts == NULL)
        return;
    if (f->flags & ZMP_F_SUBSCRIBE)
        (void)set_add(ts, zl_msg_data(m), zl_msg_size(m));
    else if (f->flags & ZMP_F_CANCEL)
        (void)set_remove(ts, zl_msg_data(m), zl_msg_size(m));
}

/* Whether p's subscriber gets a record of this topic: its set matches (or,
 * with INVERT_MATCHING, does not). */
static bool pub_wants(const zl_socket_t *s, zl_pipe_t *p, zl_frame_t *topic)
{
    if (!p->attached || p->ended || p->proto == NULL)
        return false;
    bool match = set_matches(p->proto, zl_msg_data(&topic->msg), zl_msg_size(&topic->msg));
    return match != (s->opts.invert_matching != 0);
}

static int pub_send(zl_socket_t *s, const zlink_routing_id_t *rid, zl_frame_t *frames, size_t n)
{
    ZL_UNUSED(rid);
    uint64_t charge = 0;
    for (size_t i = 0; i < n; i++)
        charge += zl_frame_charge(&frames[i]);
    if (s->opts.pub_nodrop) {
        /* All or nothing: every matching pipe must have room, and memory
         * for the record. Both only grow while we hold s->lk (no other
         * publisher can fill the queues or use their spare chunks). */
        bool room = true;
        ZL_FOREACH_PIPE(s, p) {
            if (pub_wants(s, p, &frames[0]) && !zl_q_has_room(p->out, charge))
                room = false;
        }
        if (!room)
            return EAGAIN;
        ZL_FOREACH_PIPE(s, p) {
            if (pub_wants(s, p, &frames[0]) && zl_q_reserve(p->out, n) != 0)
                return ENOMEM;
        }
    }
    zl_frame_t copy[8];
    zl_frame_t *c = n <= 8 ? copy : malloc(n * sizeof *c);
    if (c == NULL)
        return ENOMEM;
    ZL_FOREACH_PIPE(s, p) {
        if (!pub_wants(s, p, &frames[0]))
            continue;
        for (size_t i = 0; i < n; i++) {
            c[i] = frames[i];
            zl_msg_share(&c[i].msg, &frames[i].msg);
        }
        if (zl_pipe_push(p, c, n, false) != 0) {
            /* NODROP 0: this subscriber loses its copy (no room, or no
             * memory for its queue to grow: a fanout cannot be undone for
             * the subscribers that already have theirs). NODROP 1 cannot
             * get here: room and memory were made sure of above. */
            for (size_t i = 0; i < n; i++)
                zl_msg_release(&c[i].msg);
        }
    }
    if (c != copy)
        free(c);
    for (size_t i = 0; i < n; i++) {
        zl_msg_release(&frames[i].msg);
        zl_msg_init_empty(&frames[i].msg);
    }
    return 0;
}



/* ----------------------------------------------------------------- SUB */

static void sub_init(zl_socket_t *s)
{
    ZL_UNUSED(s);
}

static void sub_fini(zl_socket_t *s)
{
    set_free(s->proto);
}

static int sub_attach(zl_socket_t *s, zl_pipe_t *p)
{
    /* A publisher that missed one subscription would never send that
     * topic: without memory for all of them the pipe is refused (ENOMEM),
     * and a reconnect tries again with the whole set. */
    topic_set_t *ts = s->proto;
    for (size_t i = 0; i < ts->n; i++)
        if (zl_pipe_send_control(p, ZMP_F_SUBSCRIBE, ts->v[i].data, ts->v[i].len) == ENOMEM)
            return ENOMEM;
    return 0;
}

static bool sub_accept(zl_socket_t *s, zl_pipe_t *p, zl_frame_t *frames, size_t n)
{
    ZL_UNUSED(p);
    ZL_UNUSED(n);
    bool match = set_matches(s->proto, zl_msg_data(&frames[0].msg), zl_msg_size(&frames[0].msg));
    return match != (s->opts.invert_matching != 0);
}

int zl_sub_subscription(zl_socket_t *s, const char *topic, bool add)
{
    size_t len = strlen(topic);
    zl_mutex_lock(&s->lk);
    topic_set_t *ts = s->proto;
    int rc = 0;
    /* Every publisher is told, or none is and the set stays as it was
     * (ENOMEM): a retry then does the whole change again. */
    if (add) {
        if (set_find(ts, topic, len) == NULL) {
            if (set_add(ts, topic, len) < 0)
                rc = ENOMEM;
            else if (zl_socket_broadcast_control(s, ZMP_F_SUBSCRIBE, topic, len) != 0) {
                (void)set_remove(ts, topic, len);
                rc = ENOMEM;
            }
        }
    } else {
        if (set_find(ts, topic, len) == NULL) {
            rc = ENOENT;
        } else if (zl_socket_broadcast_control(s, ZMP_F_CANCEL, topic, len) != 0) {
            rc = ENOMEM;
        } else {
            set_find(ts, topic, len)->count = 1;
            (void)set_remove(ts, topic, len);
        }
    }
    zl_mutex_unlock(&s->lk);
    return rc;
}

static int topic_cmp(const void *a, const void *b)
{
    const topic_t *x = *(const topic_t *const *)a, *y = *(const topic_t *const *)b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->data, y->data, n);
    if (c != 0)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* The index-th subscription in byte order: 0, ENOENT, ENOBUFS (*len =
 * needed, nothing written) or ENOMEM. */
int zl_sub_subscription_at(zl_socket_t *s, size_t index, char *buf, size_t *len)
{
    zl_mutex_lock(&s->lk);
    topic_set_t *ts = s->proto;
    int rc = 0;
    if (index >= ts->n) {
        rc = ENOENT;
    } else {
        const topic_t **order = malloc(ts->n * sizeof *order);
        if (order == NULL) {
            rc = ENOMEM;
        } else {
            for (size_t i = 0; i < ts->n; i++)
                order[i] = &ts->v[i];
            qsort(order, ts->n, sizeof *order, topic_cmp);
            const topic_t *t = order[index];
            if (t->len > *len)
                rc = ENOBUFS;
            else if (t->len > 0)
                memcpy(buf, t->data, t->len);
            *len = t->len;
            free(order);
        }
    }
    zl_mutex_unlock(&s->lk);
    return rc;
}

/* SUB_TOPICS_COUNT: the SUB's own subscriptions. Under s->lk. */
static int sub_topics_count(zl_socket_t *s, int *out)
{
    *out = (int)((topic_set_t *)s->proto)->n;
    return 0;
}

/* PUB_TOPICS_COUNT: distinct topics over every attached subscriber (after
 * applying the inproc subscriptions queued so far). Under s->lk. */
static int pub_topics_count(zl_socket_t *s, int *out)
{
    zl_socket_apply_controls(s);
    topic_set_t all = {0};
    int rc = 0;
    ZL_FOREACH_PIPE(s, p) {
        topic_set_t *ts = p->proto;
        if (!p->attached || ts == NULL)
            continue;
        for (size_t i = 0; i < ts->n && rc == 0; i++)
            if (set_add(&all, ts->v[i].data, ts->v[i].len) < 0)
                rc = ENOMEM;
    }
    *out = (int)all.n;
    set_free(&all);
    return rc;
}

/* The options PUB and SUB own. CONFLATE has only the shared row (0 is
 * accepted, 1 is NOT_SUPPORTED): this version does not conflate. */
static const zl_sockopt_t pub_options[] = {
    ZL_OPT_ROW_BOOL(ZLINK_PUB_NODROP, 0, pub_nodrop),
    ZL_OPT_ROW_BOOL(ZLINK_INVERT_MATCHING, 0, invert_matching),
    {.id = ZLINK_PUB_TOPICS_COUNT, .type = ZL_OPT_INT, .flags = ZL_OPT_READONLY,
     .field = ZL_OPT_NO_FIELD, .get_int = pub_topics_count},
};

static const zl_sockopt_t sub_options[] = {
    ZL_OPT_ROW_BOOL(ZLINK_INVERT_MATCHING, 0, invert_matching),
    {.id = ZLINK_SUB_TOPICS_COUNT, .type = ZL_OPT_INT, .flags = ZL_OPT_READONLY,
     .field = ZL_OPT_NO_FIELD, .get_int = sub_topics_count},
};

const zl_proto_ops_t zl_pub_ops = {
    .type = ZLINK_PUB,
    .attach = pub_attach,
    .detach = pub_detach,
    .control = pub_control,
    .send = pub_send,
    .options = pub_options,
    .noptions = sizeof pub_options / sizeof pub_options[0],
};

const zl_proto_ops_t zl_sub_ops = {
    .type = ZLINK_SUB,
    .proto_size = sizeof(topic_set_t),
    .init = sub_init,
    .fini = sub_fini,
    .attach = sub_attach,
    .accept = sub_accept,
    .options = sub_options,
    .noptions = sizeof sub_options / sizeof sub_options[0],
};
