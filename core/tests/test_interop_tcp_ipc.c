/*
 * test_interop_tcp_ipc.c — real multi-process traffic over tcp and ipc,
 * through the public API only (zlink.h).
 *
 * The test binary re-executes itself (zt_spawn_self) as a child process
 * with its own context; parent and child exchange multipart records both
 * ways and check contents, part counts and order; the parent checks the
 * child's exit status. Cases:
 *   - PAIR <-> PAIR over tcp and ipc (parent binds, child connects);
 *   - PAIR over ipc with the roles swapped: the parent connects before the
 *     child has bound, so the connect must keep retrying;
 *   - ROUTER (parent) <-> two DEALER children at once over tcp and ipc, one
 *     with a routing id it set itself, one with the default id; replies go
 *     by routing id and must reach exactly their dealer.
 *
 * Record shapes (both directions): record i has 1 + i % 5 parts; part 0 is
 * a text header "<dir>:<name>:<i>", the others have sizes from
 * {0, 1, 29, 30, 1000, 65536, 1 MiB} filled with a pattern of (i, part,
 * byte index) so a misplaced or truncated part is detected.
 */
#include "zltest_zlink.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RECORDS 24
#define MAXP 8

static const size_t k_sizes[7] = {0, 1, 29, 30, 1000, 65536, 1u << 20};

static int timeo_ms(void)
{
    return (int)(10000 * zt_timeout_mult());
}

static unsigned char pattern(int dir, int i, int part, size_t k)
{
    return (unsigned char)(dir * 101 + i * 13 + part * 7 + (int)(k % 251));
}

static size_t part_size(int i, int part)
{
    return k_sizes[(size_t)(i + part) % 7];
}

static int nparts(int i)
{
    return 1 + i % 5;
}

/* Builds record i of direction dir ("p2c", "c2p", ...) for name. */
static int build_record(zlink_msg_t *parts, const char *dir, const char *name, int i)
{
    char hdr[96];
    int len = snprintf(hdr, sizeof hdr, "%s:%s:%d", dir, name, i);
    int n = nparts(i);
    ZT_EQ_INT(zlink_msg_init_size(&parts[0], (size_t)len), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&parts[0]), hdr, (size_t)len);
    for (int p = 1; p < n; p++) {
        size_t size = part_size(i, p);
        ZT_EQ_INT(zlink_msg_init_size(&parts[p], size), ZLINK_CONFIG_OK);
        unsigned char *d = zlink_msg_data(&parts[p]);
        for (size_t k = 0; k < size; k++)
            d[k] = pattern(dir[0], i, p, k);
    }
    return n;
}

/* Checks that parts[0..count) is record i of dir for name. */
static void check_record(zlink_msg_t *parts, size_t count, const char *dir, const char *name,
                         int i)
{
    char hdr[96];
    int len = snprintf(hdr, sizeof hdr, "%s:%s:%d", dir, name, i);
    size_t hlen = zlink_msg_size(&parts[0]);
    if (hlen != (size_t)len || memcmp(zlink_msg_data(&parts[0]), hdr, hlen) != 0)
        ZT_FAIL("expected record \"%s\", got header \"%.*s\"", hdr, (int)hlen,
                (const char *)zlink_msg_data(&parts[0]));
    if (count != (size_t)nparts(i))
        ZT_FAIL("record \"%s\": %zu parts, expected %d", hdr, count, nparts(i));
    for (int p = 1; p < nparts(i); p++) {
        size_t size = part_size(i, p);
        if (zlink_msg_size(&parts[p]) != size)
            ZT_FAIL("record \"%s\" part %d: %zu bytes, expected %zu", hdr, p,
                    zlink_msg_size(&parts[p]), size);
        const unsigned char *d = zlink_msg_data(&parts[p]);
        for (size_t k = 0; k < size; k++)
            if (d[k] != pattern(dir[0], i, p, k))
                ZT_FAIL("record \"%s\" part %d byte %zu differs", hdr, p, k);
    }
}

static void send_record(void *s, const char *dir, const char *name, int i)
{
    zlink_msg_t parts[MAXP];
    int n = build_record(parts, dir, name, i);
    zlink_submit_result_t r = zlink_send(s, parts, (size_t)n, ZLINK_SEND_FLAGS_NONE, NULL, NULL);
    if (r != ZLINK_SUBMIT_OK)
        ZT_FAIL("send %s:%s:%d: result %d errno %d", dir, name, i, (int)r, zlink_errno());
    zlink_multipart_close(parts, (size_t)n);
}

static void recv_record(void *s, const char *dir, const char *name, int i)
{
    zlink_msg_t parts[MAXP];
    size_t count = 0;
    zlink_recv_result_t r = zlink_recv(s, NULL, parts, MAXP, &count, ZLINK_RECV_FLAGS_NONE);
    if (r != ZLINK_RECV_OK)
        ZT_FAIL("waiting for %s:%s:%d: result %d errno %d", dir, name, i, (int)r,
                zlink_errno());
    check_record(parts, count, dir, name, i);
    zlink_multipart_close(parts, count);
}

/* A socket with send and receive timeouts of timeo_ms(). */
static void *new_socket(void *ctx, int type)
{
    void *s = zlt_socket(ctx, type);
    zlt_set_int(s, ZLINK_SNDTIMEO, timeo_ms());
    zlt_set_int(s, ZLINK_RCVTIMEO, timeo_ms());
    return s;
}

/* ===================================================== child processes */

/* PAIR peer: receives RECORDS records, sends RECORDS back, then waits for
 * "done" so the parent has everything before this process closes. */
static int child_pair_exchange(void *s)
{
    for (int i = 0; i < RECORDS; i++)
        recv_record(s, "p2c", "pair", i);
    for (int i = 0; i < RECORDS; i++)
        send_record(s, "c2p", "pair", i);
    zlt_expect_str(s, "done");
    ZT_EQ_INT(zlt_send_str(s, "bye", 0), ZLINK_SUBMIT_OK);
    return 0;
}

/* PAIR peer process: connects to ep, or binds it (ipc) when binds. */
static int role_pair(const char *ep, bool binds)
{
    void *ctx = zlt_ctx_new();
    void *s = new_socket(ctx, ZLINK_PAIR);
    if (binds) {
        unlink(ep + strlen("ipc://"));
        zlt_bind_at(s, ep);
    } else {
        zlt_connect(s, ep);
    }
    int rc = child_pair_exchange(s);
    zlt_finish(ctx, s);
    return rc;
}

/* DEALER: arg is "<named|default>|<endpoint>". Sends RECORDS records, then
 * expects the ROUTER's RECORDS replies in order, then says "bye". */
static int role_dealer_client(const char *arg)
{
    ZT_CHECK(arg != NULL);
    const char *bar = strchr(arg, '|');
    ZT_CHECK(bar != NULL);
    int named = strncmp(arg, "named", 5) == 0;
    const char *ep = bar + 1;
    char name[32];
    snprintf(name, sizeof name, "%s-%ld", named ? "named" : "default", (long)getpid());

    void *ctx = zlt_ctx_new();
    void *d = new_socket(ctx, ZLINK_DEALER);
    if (named)
        zlt_set_rid(d, name);
    zlt_connect(d, ep);
    for (int i = 0; i < RECORDS; i++)
        send_record(d, "d2r", name, i);
    for (int i = 0; i < RECORDS; i++)
        recv_record(d, "r2d", name, i);
    ZT_EQ_INT(zlt_send_str(d, "bye", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(d, "done");
    zlt_finish(ctx, d);
    return 0;
}

/* ============================================================ parent */

static void parent_pair_exchange(void *s, pid_t child)
{
    for (int i = 0; i < RECORDS; i++)
        send_record(s, "p2c", "pair", i);
    for (int i = 0; i < RECORDS; i++)
        recv_record(s, "c2p", "pair", i);
    ZT_EQ_INT(zlt_send_str(s, "done", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(s, "bye");
    int status = zt_wait(child);
    if (status != 0)
        ZT_FAIL("child process exited with status %d", status);
}

/* The parent binds a fresh endpoint of transport tr; a child connects. */
static void pair_parent_binds(const char *tr)
{
    void *ctx = zlt_ctx_new();
    void *s = new_socket(ctx, ZLINK_PAIR);
    char ep[256];
    zlt_bind(s, tr, ep, sizeof ep);
    pid_t child = zt_spawn_self("pair-client", ep);
    parent_pair_exchange(s, child);
    zlt_finish(ctx, s);
}

static void test_pair_tcp(void)
{
    pair_parent_binds("tcp");
}

static void test_pair_ipc(void)
{
    pair_parent_binds("ipc");
}

static void test_pair_ipc_connect_before_bind(void)
{
    char ep[128];
    zlt_ipc_endpoint(ep, sizeof ep, "interop-late-bind");
    void *ctx = zlt_ctx_new();
    void *s = new_socket(ctx, ZLINK_PAIR);
    /* Nothing listens yet: connect still succeeds and keeps retrying. */
    zlt_connect(s, ep);
    pid_t child = zt_spawn_self("pair-server", ep);
    parent_pair_exchange(s, child);
    zlt_finish(ctx, s);
}

/* One dealer's progress as the router sees it. */
struct dealer_view {
    char name[32];
    zlink_routing_id_t rid;
    int known;
    int next;   /* next record index expected from it */
    int bye;
};

/* The parent's ROUTER binds a fresh endpoint of transport tr. */
static void router_parent(const char *tr)
{
    void *ctx = zlt_ctx_new();
    void *r = new_socket(ctx, ZLINK_ROUTER);
    char ep[256], arg[300];
    zlt_bind(r, tr, ep, sizeof ep);
    snprintf(arg, sizeof arg, "named|%s", ep);
    pid_t named = zt_spawn_self("dealer-client", arg);
    snprintf(arg, sizeof arg, "default|%s", ep);
    pid_t dflt = zt_spawn_self("dealer-client", arg);

    struct dealer_view v[2];
    memset(v, 0, sizeof v);
    snprintf(v[0].name, sizeof v[0].name, "named-%ld", (long)named);
    snprintf(v[1].name, sizeof v[1].name, "default-%ld", (long)dflt);
    /* The named dealer's routing id is the name it set. */
    v[0].rid.size = (uint8_t)strlen(v[0].name);
    memcpy(v[0].rid.data, v[0].name, v[0].rid.size);

    /* Receive 2 * RECORDS records and two "bye"s; answer each record at
     * once, by the routing id it came with. */
    int byes = 0;
    while (byes < 2) {
        zlink_msg_t parts[MAXP];
        size_t count = 0;
        const zlink_routing_id_t *rid = NULL;
        zlink_reply_token_t tok = 1;
        zlink_recv_result_t rr =
            zlink_router_recv(r, &rid, &tok, parts, MAXP, &count, ZLINK_RECV_FLAGS_NONE);
        if (rr != ZLINK_RECV_OK)
            ZT_FAIL("router_recv: result %d errno %d (records so far: %d, %d)", (int)rr,
                    zlink_errno(), v[0].next, v[1].next);
        ZT_CHECK(rid != NULL && rid->size > 0);
        ZT_EQ_U64(tok, 0); /* DATA */
        const char *hdr = zlink_msg_data(&parts[0]);
        size_t hlen = zlink_msg_size(&parts[0]);
        struct dealer_view *from = NULL;
        for (int k = 0; k < 2; k++) {
            size_t nl = strlen(v[k].name);
            if (hlen > 4 + nl && memcmp(hdr + 4, v[k].name, nl) == 0 && hdr[4 + nl] == ':')
                from = &v[k];
        }
        if (count == 1 && hlen == 3 && memcmp(hdr, "bye", 3) == 0) {
            /* Which dealer said bye: the one whose routing id this is. */
            for (int k = 0; k < 2; k++)
                if (v[k].known && v[k].rid.size == rid->size &&
                    memcmp(v[k].rid.data, rid->data, rid->size) == 0)
                    from = &v[k];
            ZT_CHECK(from != NULL);
            ZT_EQ_INT(from->next, RECORDS); /* bye comes after every record */
            ZT_CHECK(!from->bye);
            from->bye = 1;
            byes++;
            zlink_multipart_close(parts, count);
            continue;
        }
        if (from == NULL)
            ZT_FAIL("record from an unknown dealer: \"%.*s\"", (int)hlen, hdr);
        if (from == &v[1] && !from->known) {
            from->rid = *rid; /* the default id: 16 bytes, UUIDv4 */
            ZT_EQ_INT(rid->size, 16);
            ZT_EQ_INT(rid->data[6] & 0xF0, 0x40);
        }
        from->known = 1;
        if (rid->size != from->rid.size || memcmp(rid->data, from->rid.data, rid->size) != 0)
            ZT_FAIL("dealer %s: routing id changed or wrong", from->name);
        check_record(parts, count, "d2r", from->name, from->next);
        zlink_multipart_close(parts, count);
        /* Reply to exactly that dealer. */
        zlink_msg_t out[MAXP];
        int n = build_record(out, "r2d", from->name, from->next);
        zlink_routing_id_t to = from->rid;
        zlink_submit_result_t sr =
            zlink_send_rid(r, &to, out, (size_t)n, ZLINK_SEND_FLAGS_NONE, NULL, NULL);
        if (sr != ZLINK_SUBMIT_OK)
            ZT_FAIL("send_rid to %s: result %d errno %d", from->name, (int)sr, zlink_errno());
        zlink_multipart_close(out, (size_t)n);
        from->next++;
    }
    for (int k = 0; k < 2; k++) {
        zlink_msg_t m;
        ZT_EQ_INT(zlink_msg_init_size(&m, 4), ZLINK_CONFIG_OK);
        memcpy(zlink_msg_data(&m), "done", 4);
        ZT_EQ_INT(zlink_send_rid(r, &v[k].rid, &m, 1, ZLINK_SEND_FLAGS_NONE, NULL, NULL),
                  ZLINK_SUBMIT_OK);
        ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    }
    int s1 = zt_wait(named), s2 = zt_wait(dflt);
    if (s1 != 0 || s2 != 0)
        ZT_FAIL("dealer processes exited with status %d (named) and %d (default)", s1, s2);
    zlt_finish(ctx, r);
}

static void test_router_dealers_tcp(void)
{
    router_parent("tcp");
}

static void test_router_dealers_ipc(void)
{
    router_parent("ipc");
}

/* The roles zt_spawn_self starts; each needs its endpoint argument. */
static int role_pair_client(const char *ep)
{
    ZT_CHECK(ep != NULL);
    return role_pair(ep, false);
}

static int role_pair_server(const char *ep)
{
    ZT_CHECK(ep != NULL);
    return role_pair(ep, true);
}

static const zt_case_t cases[] = {
    ZT_CASE(test_pair_tcp),
    ZT_CASE(test_pair_ipc),
    ZT_CASE(test_pair_ipc_connect_before_bind),
    ZT_CASE(test_router_dealers_tcp),
    ZT_CASE(test_router_dealers_ipc),
};

static const zt_role_t roles[] = {
    ZT_ROLE("pair-client", role_pair_client),
    ZT_ROLE("pair-server", role_pair_server),
    ZT_ROLE("dealer-client", role_dealer_client),
};

int main(int argc, char **argv)
{
    return zt_main_roles(argc, argv, cases, ZT_NCASES(cases), roles, ZT_NCASES(roles));
}
