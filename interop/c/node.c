/*
 * node.c — the C program of the interop suite (interop/README.md): one
 * process that plays one role of a cross-language run over tcp.
 *
 *   node serve-cs CHANNEL          a ClientServer server of CHANNEL
 *   node call-cs CHANNEL ENDPOINT N
 *                                  N requests to CHANNEL's server at ENDPOINT
 *   node ring MESH RID [ENDPOINT PEER_RID]...
 *                                  a RouteMesh node RID of MESH in a ring,
 *                                  connected to the peers named
 *
 * Design notes
 * ------------
 * Every language has a program with these roles, lines and packets; the
 * driver (interop/driver.py) starts them in separate processes and reads
 * their stdout. The lines are:
 *   READY <endpoint>      serve-cs and ring: serving, listening there
 *   REPLY <text>          call-cs: one per request, in order
 *   PEERS <n>             ring: n mesh peers are ready
 *   RING <text>           ring: the answer to a START, the path it took
 *   BYE                   after stdin's EOF: the host shut down
 * and the commands a ring node reads on stdin are
 *   NEXT <rid>            the next node of the ring (a peer of this node)
 *   WAIT <n>              print PEERS <n> once n peers are ready
 *   START <hops>          send interop.hop with <hops> to the next node
 * Packets: interop.echo (request; the reply is the payload followed by
 * "|c"), interop.hop (request; payload "<hops>;<path>": a node appends
 * ">RID" to the path and, while hops is above 0, asks the next node with
 * hops - 1 and answers with that node's answer; at 0 it answers the path).
 * Mesh peers are connected before the host starts (the ABI connects in
 * PREPARING only); a connection carries requests both ways, so the driver
 * makes the ring's links from later nodes to earlier ones (interop/README.md).
 * A hop is answered from the completion of the forwarded request, on the
 * dispatcher thread: the turn stays open meanwhile (zlink_turn_t may be
 * used from any thread until it ends).
 *
 * Threads: main reads stdin and runs the calls of call-cs (zlink_call_wait)
 * and START; handlers and completions run on the framework's threads.
 * Failures print "ERROR <what>" on stdout and exit 1.
 */
#include "zlink.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LANG "c"
#define TIMEOUT_MS 10000

static char next_rid[256];
static char mesh_name[256];
static zlink_host_t *host;

static void fail(const char *what, zlink_fw_result_t r)
{
    printf("ERROR %s: %s\n", what, zlink_result_name((int)r));
    fflush(stdout);
    exit(1);
}

static void check(const char *what, zlink_fw_result_t r)
{
    if (r != ZLINK_FW_OK)
        fail(what, r);
}

static void say(const char *fmt, const char *text)
{
    printf(fmt, text);
    fflush(stdout);
}

/* interop.echo: the payload and "|c". */
static void on_echo(zlink_turn_t *turn, void *user)
{
    (void)user;
    size_t size = 0;
    const char *data = zlink_turn_payload(turn, &size);
    char reply[512];
    int n = snprintf(reply, sizeof reply, "%.*s|" LANG, (int)(size < 400 ? size : 400),
                     data ? data : "");
    if (zlink_turn_respond(turn, "interop.echo", "text/plain", reply, (size_t)n) !=
        ZLINK_FW_OK)
        zlink_turn_end(turn, 1, "echo reply refused");
}

/* The forwarded hop finished: answer the turn waiting for it (user). */
static void on_forwarded(zlink_call_t *call, const zlink_outcome_t *out, void *user)
{
    zlink_turn_t *turn = user;
    if (out->result == ZLINK_FW_OK) {
        if (zlink_turn_respond(turn, "interop.hop", "text/plain", out->payload,
                               out->payload_size) != ZLINK_FW_OK)
            zlink_turn_end(turn, 1, "hop reply refused");
    } else {
        zlink_turn_end(turn, 1, zlink_result_name(out->result));
    }
    zlink_call_release(call);
}

/* Starts interop.hop with payload to the next node; fn(user) gets it. */
static zlink_fw_result_t forward(const char *payload, size_t size, zlink_completion_fn fn,
                                 void *user, zlink_call_t **out)
{
    zlink_fw_result_t r = ZLINK_FW_OK;
    zlink_call_t *call =
        zlink_call_request_to_node(host, mesh_name, next_rid, strlen(next_rid), &r);
    if (call == NULL)
        return r;
    if ((r = zlink_call_set_payload(call, "interop.hop", "text/plain", payload, size)) ||
        (r = zlink_call_set_timeout(call, ZLINK_MS(TIMEOUT_MS))) ||
        (fn != NULL && (r = zlink_call_start(call, fn, user)))) {
        zlink_call_release(call);
        return r;
    }
    *out = call;
    return ZLINK_FW_OK;
}

/* interop.hop: "<hops>;<path>" -> append ">RID", forward or answer. The
 * turn stays open while the forwarded request runs, and node-direct
 * handlers share one gate per node: a hop that came back to this node
 * before the turn ended would wait behind it (the driver sends one lap). */
static void on_hop(zlink_turn_t *turn, void *user)
{
    const char *rid = user;
    size_t size = 0;
    const char *data = zlink_turn_payload(turn, &size);
    char in[1024], next[1100];
    snprintf(in, sizeof in, "%.*s", (int)(size < 1000 ? size : 1000), data ? data : "");
    char *path = strchr(in, ';');
    long hops = strtol(in, NULL, 10);
    if (path == NULL || hops < 0) {
        zlink_turn_end(turn, 1, "malformed hop");
        return;
    }
    path++;
    if (hops == 0) {
        int n = snprintf(next, sizeof next, "%s>%s", path, rid);
        if (zlink_turn_respond(turn, "interop.hop", "text/plain", next, (size_t)n) !=
            ZLINK_FW_OK)
            zlink_turn_end(turn, 1, "hop reply refused");
        return;
    }
    int n = snprintf(next, sizeof next, "%ld;%s>%s", hops - 1, path, rid);
    zlink_call_t *call = NULL;
    zlink_fw_result_t r = forward(next, (size_t)n, on_forwarded, turn, &call);
    if (r != ZLINK_FW_OK)
        zlink_turn_end(turn, 1, zlink_result_name((int)r));
}

static void wait_stdin_eof(void)
{
    char line[64];
    while (fgets(line, sizeof line, stdin) != NULL) {
    }
}

static void bye(void)
{
    check("shutdown", zlink_host_shutdown(host, ZLINK_MS(5000)));
    zlink_host_destroy(host);
    say("%s\n", "BYE");
}

static void new_host(const char *name)
{
    zlink_fw_result_t r = ZLINK_FW_OK;
    host = zlink_host_new(name, &r);
    if (host == NULL)
        fail("host", r);
}

static int serve_cs(const char *channel)
{
    new_host("interop-c-server");
    check("server", zlink_host_add_cs_server(host, channel, "tcp://127.0.0.1:0"));
    check("handler", zlink_host_add_handler(host, ZLINK_OWNER_CHANNEL, channel,
                                            ZLINK_MESSAGE_REQUEST, "interop.echo", on_echo,
                                            NULL));
    check("start", zlink_host_start(host));
    char ep[256];
    check("endpoint", zlink_host_endpoint(host, channel, ep, sizeof ep));
    say("READY %s\n", ep);
    wait_stdin_eof();
    bye();
    return 0;
}

static int call_cs(const char *channel, const char *endpoint, int count)
{
    new_host("interop-c-client");
    check("client", zlink_host_add_cs_client(host, channel, endpoint));
    check("start", zlink_host_start(host));
    for (int i = 0; i < count; i++) {
        char payload[64];
        int n = snprintf(payload, sizeof payload, LANG "#%d", i);
        zlink_fw_result_t r = ZLINK_FW_OK;
        zlink_call_t *call = zlink_call_request_to_channel(host, channel, &r);
        if (call == NULL)
            fail("request", r);
        check("payload", zlink_call_set_payload(call, "interop.echo", "text/plain", payload,
                                                (size_t)n));
        check("timeout", zlink_call_set_timeout(call, ZLINK_MS(TIMEOUT_MS)));
        zlink_outcome_t out = {.struct_size = sizeof out};
        check("wait", zlink_call_wait(call, &out));
        if (out.result != ZLINK_FW_OK)
            fail("reply", out.result);
        printf("REPLY %.*s\n", (int)out.payload_size, (const char *)out.payload);
        fflush(stdout);
        zlink_call_release(call);
    }
    bye();
    return 0;
}

static int ring(const char *mesh, const char *rid, char **peers, int npeers)
{
    snprintf(mesh_name, sizeof mesh_name, "%s", mesh);
    new_host("interop-c-ring");
    check("node", zlink_host_add_mesh_node(host, mesh, rid, strlen(rid), "tcp://127.0.0.1:0"));
    for (int i = 0; i + 1 < npeers; i += 2)
        check("connect", zlink_mesh_connect(host, mesh, peers[i], peers[i + 1],
                                            strlen(peers[i + 1])));
    check("handler", zlink_host_add_handler(host, ZLINK_OWNER_NODE, mesh, ZLINK_MESSAGE_REQUEST,
                                            "interop.hop", on_hop, (void *)rid));
    check("start", zlink_host_start(host));
    char ep[256];
    check("endpoint", zlink_host_endpoint(host, mesh, ep, sizeof ep));
    say("READY %s\n", ep);
    char line[600];
    while (fgets(line, sizeof line, stdin) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        char b[256];
        int n = 0;
        if (sscanf(line, "NEXT %255s", b) == 1) {
            snprintf(next_rid, sizeof next_rid, "%s", b);
        } else if (sscanf(line, "WAIT %d", &n) == 1) {
            /* The ABI has no readiness event: look every millisecond, for
             * at most TIMEOUT_MS (a failure bound, not a wait for time). */
            struct timespec ms = {0, 1000000};
            int waited = 0;
            while (zlink_mesh_ready_peers(host, mesh, NULL) < n) {
                if (++waited > TIMEOUT_MS)
                    fail("peers", ZLINK_FW_UNAVAILABLE);
                nanosleep(&ms, NULL);
            }
            printf("PEERS %d\n", n);
            fflush(stdout);
        } else if (sscanf(line, "START %d", &n) == 1) {
            char payload[64];
            int len = snprintf(payload, sizeof payload, "%d;%s", n, rid);
            zlink_call_t *call = NULL;
            check("start hop", forward(payload, (size_t)len, NULL, NULL, &call));
            zlink_outcome_t out = {.struct_size = sizeof out};
            check("wait", zlink_call_wait(call, &out));
            if (out.result != ZLINK_FW_OK)
                fail("ring", out.result);
            printf("RING %.*s\n", (int)out.payload_size, (const char *)out.payload);
            fflush(stdout);
            zlink_call_release(call);
        } else {
            say("ERROR unknown command: %s\n", line);
            return 1;
        }
    }
    bye();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "serve-cs") == 0)
        return serve_cs(argv[2]);
    if (argc == 5 && strcmp(argv[1], "call-cs") == 0)
        return call_cs(argv[2], argv[3], atoi(argv[4]));
    if (argc >= 4 && argc % 2 == 0 && strcmp(argv[1], "ring") == 0)
        return ring(argv[2], argv[3], argv + 4, argc - 4);
    fprintf(stderr, "usage: node serve-cs CHANNEL | call-cs CHANNEL ENDPOINT N | "
                    "ring MESH RID [ENDPOINT PEER_RID]...\n");
    return 2;
}
