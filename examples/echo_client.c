/*
 * echo_client — the DEALER half of the ZLink demo.
 *
 * Connects to the service, shows two exchanges in full, then sends
 * --count ECHO records with a window of --window records in flight,
 * checks every reply (content and order), says BYE and prints its rate.
 *
 * Usage: echo_client --endpoint tcp://127.0.0.1:PORT --name NAME
 *                    [--count N] [--window W]
 */
#include <zlink.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *name = "client";

static void die(const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", name, what, zlink_strerror(zlink_errno()));
    exit(1);
}

static void send2(void *s, const char *cmd, const void *payload, size_t plen)
{
    zlink_msg_t parts[2];
    size_t clen = strlen(cmd);
    if (zlink_msg_init_size(&parts[0], clen) != ZLINK_CONFIG_OK ||
        zlink_msg_init_size(&parts[1], plen) != ZLINK_CONFIG_OK)
        die("zlink_msg_init_size");
    memcpy(zlink_msg_data(&parts[0]), cmd, clen);
    if (plen > 0)
        memcpy(zlink_msg_data(&parts[1]), payload, plen);
    if (zlink_send(s, parts, 2, ZLINK_SEND_FLAGS_NONE, NULL, NULL) != ZLINK_SUBMIT_OK)
        die("zlink_send");
}

/* Receives one [cmd, payload] reply into buf; returns the payload size. */
static size_t recv2(void *s, char *cmd, size_t ccap, char *buf, size_t cap)
{
    zlink_msg_t parts[2];
    size_t n = 0;
    if (zlink_recv(s, NULL, parts, 2, &n, ZLINK_RECV_FLAGS_NONE) != ZLINK_RECV_OK)
        die("zlink_recv");
    if (n != 2) {
        fprintf(stderr, "%s: reply with %zu parts\n", name, n);
        exit(1);
    }
    size_t cl = zlink_msg_size(&parts[0]) < ccap - 1 ? zlink_msg_size(&parts[0]) : ccap - 1;
    memcpy(cmd, zlink_msg_data(&parts[0]), cl);
    cmd[cl] = '\0';
    size_t pl = zlink_msg_size(&parts[1]) < cap ? zlink_msg_size(&parts[1]) : cap;
    memcpy(buf, zlink_msg_data(&parts[1]), pl);
    zlink_multipart_close(parts, n);
    return pl;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *endpoint = NULL;
    long count = 100000, window = 1000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--endpoint") == 0)
            endpoint = argv[i + 1];
        else if (strcmp(argv[i], "--name") == 0)
            name = argv[i + 1];
        else if (strcmp(argv[i], "--count") == 0)
            count = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--window") == 0)
            window = atol(argv[i + 1]);
    }
    if (endpoint == NULL || count < 0 || window < 1) {
        fprintf(stderr, "usage: echo_client --endpoint EP --name NAME [--count N] [--window W]\n");
        return 2;
    }

    void *ctx = zlink_ctx_new();
    void *dealer = ctx ? zlink_socket(ctx, ZLINK_DEALER) : NULL;
    if (dealer == NULL)
        die("zlink_socket");
    int timeo = 10000;
    zlink_setsockopt(dealer, ZLINK_RCVTIMEO, &timeo, sizeof timeo);
    zlink_setsockopt(dealer, ZLINK_SNDTIMEO, &timeo, sizeof timeo);
    if (zlink_set_routing_id(dealer, name, strlen(name)) != ZLINK_CONFIG_OK)
        die("zlink_set_routing_id");
    if (zlink_connect(dealer, endpoint) != ZLINK_CONNECT_OK)
        die("zlink_connect");

    char cmd[16], buf[256];
    const char *hello = "hello from zlink";
    send2(dealer, "UPPER", hello, strlen(hello));
    size_t n = recv2(dealer, cmd, sizeof cmd, buf, sizeof buf);
    printf("%s: sent UPPER \"%s\" -> got %s \"%.*s\"\n", name, hello, cmd, (int)n, buf);

    long sent = 0, received = 0;
    double t0 = now_s();
    while (received < count) {
        while (sent < count && sent - received < window) {
            send2(dealer, "ECHO", &sent, sizeof sent);
            sent++;
        }
        long seq;
        n = recv2(dealer, cmd, sizeof cmd, (char *)&seq, sizeof seq);
        if (n != sizeof seq || seq != received || strcmp(cmd, "ECHO") != 0) {
            fprintf(stderr, "%s: reply %ld out of order or damaged\n", name, received);
            return 1;
        }
        received++;
    }
    double secs = now_s() - t0;
    printf("%s: %ld ECHO records sent and verified in %.3f s (%.0f round trips/s, window %ld)\n",
           name, count, secs, secs > 0 ? (double)count / secs : 0.0, window);

    send2(dealer, "BYE", "", 0);
    n = recv2(dealer, cmd, sizeof cmd, buf, sizeof buf);
    printf("%s: sent BYE -> got %s \"%.*s\"\n", name, cmd, (int)n, buf);
    zlink_close(dealer);
    zlink_ctx_term(ctx);
    return 0;
}
