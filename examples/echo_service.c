/*
 * echo_service — the ROUTER half of the ZLink demo.
 *
 * Binds a tcp endpoint (port 0 by default, so the OS picks a free one),
 * prints "LISTENING <endpoint>" on stdout, then answers every record of
 * the form [command, payload]:
 *   "ECHO"  -> [ "ECHO", payload ] back to the same client
 *   "UPPER" -> [ "UPPER", PAYLOAD ] (ASCII upper-cased)
 *   "BYE"   -> [ "BYE", "<n> records" ] and counts the client as finished
 * It exits once --clients clients said BYE, printing what it served.
 *
 * Usage: echo_service [--endpoint tcp://127.0.0.1:0] [--clients N]
 */
#include <zlink.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void die(const char *what)
{
    fprintf(stderr, "echo_service: %s: %s\n", what, zlink_strerror(zlink_errno()));
    exit(1);
}

static void msg_from(zlink_msg_t *m, const void *data, size_t len)
{
    if (zlink_msg_init_size(m, len) != ZLINK_CONFIG_OK)
        die("zlink_msg_init_size");
    if (len > 0)
        memcpy(zlink_msg_data(m), data, len);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *endpoint = "tcp://127.0.0.1:0";
    int clients = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--endpoint") == 0)
            endpoint = argv[i + 1];
        else if (strcmp(argv[i], "--clients") == 0)
            clients = atoi(argv[i + 1]);
    }

    void *ctx = zlink_ctx_new();
    if (ctx == NULL)
        die("zlink_ctx_new");
    void *router = zlink_socket(ctx, ZLINK_ROUTER);
    if (router == NULL)
        die("zlink_socket");
    int forever = -1;
    zlink_setsockopt(router, ZLINK_RCVTIMEO, &forever, sizeof forever);
    zlink_setsockopt(router, ZLINK_SNDTIMEO, &forever, sizeof forever);
    if (zlink_bind(router, endpoint) != ZLINK_BIND_OK)
        die("zlink_bind");
    char bound[256];
    size_t len = sizeof bound;
    zlink_getsockopt(router, ZLINK_LAST_ENDPOINT, bound, &len);
    printf("LISTENING %s\n", bound);
    fflush(stdout);

    long served = 0;
    int finished = 0;
    double start = 0;
    zlink_msg_t parts[2];
    while (finished < clients) {
        const zlink_routing_id_t *rid;
        zlink_reply_token_t token;
        size_t n = 0;
        if (zlink_router_recv(router, &rid, &token, parts, 2, &n, ZLINK_RECV_FLAGS_NONE) !=
            ZLINK_RECV_OK)
            die("zlink_router_recv");
        if (served == 0)
            start = now_s();
        zlink_routing_id_t from = *rid; /* the view is valid until the next receive */
        if (n != 2) {
            zlink_multipart_close(parts, n);
            continue;
        }
        const char *cmd = zlink_msg_data(&parts[0]);
        size_t cmd_len = zlink_msg_size(&parts[0]);
        zlink_msg_t reply[2];
        if (cmd_len == 5 && memcmp(cmd, "UPPER", 5) == 0) {
            size_t plen = zlink_msg_size(&parts[1]);
            msg_from(&reply[1], zlink_msg_data(&parts[1]), plen);
            char *p = zlink_msg_data(&reply[1]);
            for (size_t i = 0; i < plen; i++)
                p[i] = (char)toupper((unsigned char)p[i]);
        } else if (cmd_len == 3 && memcmp(cmd, "BYE", 3) == 0) {
            char note[64];
            int k = snprintf(note, sizeof note, "%ld records served so far", served);
            msg_from(&reply[1], note, (size_t)k);
            finished++;
            printf("service: client %.*s finished (%d/%d)\n", (int)from.size, from.data,
                   finished, clients);
        } else {
            zlink_msg_init(&reply[1]);
            if (zlink_msg_move(&reply[1], &parts[1]) != ZLINK_CONFIG_OK)
                die("zlink_msg_move");
        }
        msg_from(&reply[0], cmd, cmd_len);
        zlink_multipart_close(parts, n);
        if (zlink_send_rid(router, &from, reply, 2, ZLINK_SEND_FLAGS_NONE, NULL, NULL) !=
            ZLINK_SUBMIT_OK)
            die("zlink_send_rid");
        served++;
    }
    double secs = now_s() - start;
    printf("service: served %ld records from %d clients in %.3f s (%.0f records/s)\n", served,
           clients, secs, secs > 0 ? (double)served / secs : 0.0);
    zlink_close(router);
    zlink_ctx_term(ctx);
    return 0;
}
