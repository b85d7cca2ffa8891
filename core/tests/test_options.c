/*
 * test_options.c — socket options that reach the operating system or a
 * pattern, observed through the public API and the kernel: the test
 * process owns every descriptor the library opens, so it finds a
 * connection's fd in /proc/self/fd (by its tcp port) and reads the
 * kernel's view of it with getsockopt.
 *
 * Cases: the value rules of every option in the header (a table), reserved
 * numbers, TCP keepalive on connected, accepted and STREAM connections,
 * TOS and TCP_MAXRT, BINDTODEVICE (applied, and an unknown device refused
 * at bind and connect), IMMEDIATE, AFFINITY (which I/O thread's epoll
 * watches a listener), FD and EVENTS, INVERT_MATCHING.
 */
#include "zltest_zlink.h"

#include <dirent.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

/* ------------------------------------------------------ kernel helpers */

/* The tcp port of an endpoint "tcp://127.0.0.1:PORT". */
static int ep_port(const char *ep)
{
    const char *colon = strrchr(ep, ':');
    ZT_CHECK(colon != NULL);
    return atoi(colon + 1);
}

static int sock_port(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)ss)->sin_port);
    if (ss->ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
    return -1;
}

/* The three kinds of tcp fd this process may hold for a port. */
typedef enum { FD_LISTENER, FD_ACCEPTED, FD_CONNECTED } fd_role_t;

/* The first open tcp fd of this process with that role for port, or -1. */
static int find_tcp_fd(int port, fd_role_t role)
{
    DIR *d = opendir("/proc/self/fd");
    ZT_CHECK(d != NULL);
    int found = -1;
    struct dirent *e;
    while (found < 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        int fd = atoi(e->d_name);
        if (fd == dirfd(d))
            continue;
        struct stat st;
        int type = 0;
        socklen_t tl = sizeof type;
        if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode) ||
            getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_STREAM)
            continue;
        struct sockaddr_storage local, peer;
        socklen_t ll = sizeof local, pl = sizeof peer;
        if (getsockname(fd, (struct sockaddr *)&local, &ll) != 0 ||
            (local.ss_family != AF_INET && local.ss_family != AF_INET6))
            continue;
        bool connected = getpeername(fd, (struct sockaddr *)&peer, &pl) == 0;
        switch (role) {
        case FD_LISTENER:
            if (!connected && sock_port(&local) == port)
                found = fd;
            break;
        case FD_ACCEPTED:
            if (connected && sock_port(&local) == port)
                found = fd;
            break;
        case FD_CONNECTED:
            if (connected && sock_port(&peer) == port)
                found = fd;
            break;
        }
    }
    closedir(d);
    return found;
}

static int fd_int_opt(int fd, int level, int name)
{
    int v = -12345;
    socklen_t len = sizeof v;
    ZT_EQ_INT(getsockopt(fd, level, name, &v, &len), 0);
    return v;
}

/* What a fresh tcp socket of this kernel says for an option (the OS
 * defaults the library must leave alone). */
static int os_default(int level, int name)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ZT_CHECK(fd >= 0);
    int v = fd_int_opt(fd, level, name);
    close(fd);
    return v;
}

/* SO_BINDTODEVICE of fd as a string ("" when none). */
static void fd_device(int fd, char *buf, size_t cap)
{
    socklen_t len = (socklen_t)cap;
    memset(buf, 0, cap);
    ZT_EQ_INT(getsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, buf, &len), 0);
}

/* A DEALER pair over tcp with a record each way, so both connections
 * (connected and accepted) exist; *port is the bound port. */
static void tcp_dealers(void *ctx, void **binder, void **connecter, int *port,
                        void (*tune_binder)(void *), void (*tune_connecter)(void *))
{
    char ep[256];
    *binder = zlt_sock(ctx, ZLINK_DEALER);
    *connecter = zlt_sock(ctx, ZLINK_DEALER);
    if (tune_binder != NULL)
        tune_binder(*binder);
    if (tune_connecter != NULL)
        tune_connecter(*connecter);
    zlt_bind(*binder, "tcp", ep, sizeof ep);
    zlt_connect(*connecter, ep);
    *port = ep_port(ep);
    ZT_EQ_INT(zlt_send_str(*connecter, "ping", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(*binder, "ping");
    ZT_EQ_INT(zlt_send_str(*binder, "pong", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(*connecter, "pong");
}

/* ------------------------------------------------ value rules, a table */

/* One int option: its default on a PAIR (or on the type given), values it
 * takes, values it refuses with EINVAL, and a value it refuses with
 * NOT_SUPPORTED (0 = none). */
typedef struct {
    int opt;
    int type;
    int dflt;
    int good[3];
    int ngood;
    int bad[4];
    int nbad;
    int unsupported;
    bool has_unsupported;
} int_rule_t;

static const int_rule_t int_rules[] = {
    {ZLINK_SNDTIMEO, ZLINK_PAIR, ZLINK_TIMEO_DFLT, {-1, 0, 5}, 3, {-2, INT_MIN}, 2, 0, false},
    {ZLINK_RCVTIMEO, ZLINK_PAIR, ZLINK_TIMEO_DFLT, {-1, 0, 5}, 3, {-2, INT_MIN}, 2, 0, false},
    {ZLINK_RECONNECT_IVL, ZLINK_PAIR, 100, {-1, 0, 250}, 3, {-2}, 1, 0, false},
    {ZLINK_RECONNECT_IVL_MAX, ZLINK_PAIR, 0, {0, 1000}, 2, {-1}, 1, 0, false},
    {ZLINK_BACKLOG, ZLINK_PAIR, 100, {0, 7}, 2, {-1}, 1, 0, false},
    {ZLINK_SNDBUF, ZLINK_PAIR, -1, {-1, 65536}, 2, {-2, 0}, 2, 0, false},
    {ZLINK_RCVBUF, ZLINK_PAIR, -1, {-1, 65536}, 2, {-2, 0}, 2, 0, false},
    {ZLINK_HANDSHAKE_IVL, ZLINK_PAIR, 30000, {0, 10}, 2, {-1}, 1, 0, false},
    {ZLINK_CONNECT_TIMEOUT, ZLINK_PAIR, 0, {0, 10}, 2, {-1}, 1, 0, false},
    {ZLINK_TCP_NODELAY, ZLINK_PAIR, 1, {0, 1}, 2, {-1, 2}, 2, 0, false},
    {ZLINK_IPV6, ZLINK_PAIR, 0, {1, 0}, 2, {-1, 2}, 2, 0, false},
    {ZLINK_ZMP_METADATA, ZLINK_PAIR, 0, {1, 0}, 2, {-1, 2}, 2, 0, false},
    {ZLINK_OPT_RID_DUPLICATE_POLICY, ZLINK_ROUTER, ZLINK_RID_DUPLICATE_REJECT,
     {ZLINK_RID_DUPLICATE_HANDOVER, ZLINK_RID_DUPLICATE_REJECT}, 2, {-1, 2}, 2, 0, false},
    {ZLINK_TCP_KEEPALIVE, ZLINK_PAIR, -1, {0, 1, -1}, 3, {-2, 2}, 2, 0, false},
    {ZLINK_TCP_KEEPALIVE_CNT, ZLINK_PAIR, -1, {1, 127, -1}, 3, {0, -2, 128}, 3, 0, false},
    {ZLINK_TCP_KEEPALIVE_IDLE, ZLINK_PAIR, -1, {1, 32767, -1}, 3, {0, -2, 32768}, 3, 0, false},
    {ZLINK_TCP_KEEPALIVE_INTVL, ZLINK_PAIR, -1, {1, 32767, -1}, 3, {0, -2, 32768}, 3, 0, false},
    {ZLINK_TOS, ZLINK_PAIR, 0, {0x28, 255, 0}, 3, {-1, 256}, 2, 0, false},
    {ZLINK_TCP_MAXRT, ZLINK_PAIR, 0, {1, 30000, 0}, 3, {-1}, 1, 0, false},
    {ZLINK_IMMEDIATE, ZLINK_PAIR, 1, {1}, 1, {-1, 2}, 2, 0, true},
    {ZLINK_CONFLATE, ZLINK_PAIR, 0, {0}, 1, {-1, 2}, 2, 1, true},
    {ZLINK_CONFLATE, ZLINK_SUB, 0, {0}, 1, {-1, 2}, 2, 1, true},
    {ZLINK_INVERT_MATCHING, ZLINK_DEALER, 0, {0}, 1, {-1, 2}, 2, 1, true},
    {ZLINK_INVERT_MATCHING, ZLINK_PUB, 0, {1, 0}, 2, {-1, 2}, 2, 0, false},
    {ZLINK_INVERT_MATCHING, ZLINK_SUB, 0, {1, 0}, 2, {-1, 2}, 2, 0, false},
    {ZLINK_PUB_NODROP, ZLINK_PUB, 0, {1, 0}, 2, {-1, 2}, 2, 0, false},
    {ZLINK_ROUTER_MANDATORY, ZLINK_ROUTER, 1, {0, 1}, 2, {-1, 2}, 2, 0, false},
    {ZLINK_ROUTER_PROBE, ZLINK_ROUTER, 0, {1, 0}, 2, {-1, 2}, 2, 0, false},
    {ZLINK_ROUTER_PROBE, ZLINK_DEALER, 0, {1, 0}, 2, {-1, 2}, 2, 0, false},
    {ZLINK_DEALER_PROBE, ZLINK_DEALER, 0, {1, 0}, 2, {-1, 2}, 2, 0, false},
    {ZLINK_ROUTER_OPT_REQUEST_TIMEOUT_MS, ZLINK_ROUTER, ZLINK_REQUEST_TIMEOUT_DFLT, {1, 80}, 2,
     {0, -1}, 2, 0, false},
    {ZLINK_DEALER_OPT_REQUEST_TIMEOUT_MS, ZLINK_DEALER, ZLINK_REQUEST_TIMEOUT_DFLT, {1, 80}, 2,
     {0, -1}, 2, 0, false},
    {ZLINK_DEALER_WEIGHT, ZLINK_DEALER, ZLINK_WEIGHT_DFLT, {0, ZLINK_WEIGHT_MAX}, 2,
     {-1, ZLINK_WEIGHT_MAX + 1}, 2, 0, false},
    {ZLINK_ROUTER_WEIGHT, ZLINK_ROUTER, ZLINK_WEIGHT_DFLT, {0, ZLINK_WEIGHT_MAX}, 2,
     {-1, ZLINK_WEIGHT_MAX + 1}, 2, 0, false},
    {ZLINK_STREAM_NOTIFY, ZLINK_STREAM, 0, {1, 0}, 2, {-1, 2}, 2, 0, false},
};

/* Every int option: default (exactly an int written), accepted values
 * read back, refused values leave the value as it was, a wrong size is
 * EINVAL. */
static void int_options_follow_their_rows(void)
{
    void *ctx = zlt_ctx_new();
    for (size_t i = 0; i < sizeof int_rules / sizeof int_rules[0]; i++) {
        const int_rule_t *r = &int_rules[i];
        printf("# option %#x on type %#x\n", r->opt, r->type);
        void *s = zlt_socket(ctx, r->type);
        zlt_check_get_int_exact(s, r->opt, r->dflt);
        for (int k = 0; k < r->ngood; k++)
            zlt_set_int_check(s, r->opt, r->good[k]);
        for (int k = 0; k < r->nbad; k++)
            zlt_set_int_fails(s, r->opt, r->bad[k], ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        if (r->has_unsupported)
            zlt_set_int_fails(s, r->opt, r->unsupported, ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
        int64_t wide = r->good[0];
        ZT_EQ_INT(zlink_setsockopt(s, r->opt, &wide, sizeof wide), ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        zlt_close(s);
    }
    zlt_ctx_term(ctx);
}

/* Numbers the header reserves (no option behind them) are refused like
 * unknown ones on every type, set and get. */
static void reserved_numbers_are_einval(void)
{
    const int reserved[] = {0x3003, 0x3004, 0x3011, 0x3026, 0x3301, 0x3302,
                            0x3303, 0x3304, 0x3306, 0x3308, 0x3309};
    const int types[] = {ZLINK_PAIR, ZLINK_PUB, ZLINK_SUB, ZLINK_DEALER, ZLINK_ROUTER,
                         ZLINK_STREAM};
    void *ctx = zlt_ctx_new();
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        void *s = zlt_socket(ctx, types[t]);
        for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++) {
            zlt_set_int_fails(s, reserved[i], 1, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
            zlt_get_fails(s, reserved[i], ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        }
        zlt_close(s);
    }
    zlt_ctx_term(ctx);
}

/* ------------------------------------------------------------ keepalive */

static void keepalive_on_binder(void *s)
{
    zlt_set_int(s, ZLINK_TCP_KEEPALIVE, 1);
    zlt_set_int(s, ZLINK_TCP_KEEPALIVE_CNT, 5);
    zlt_set_int(s, ZLINK_TCP_KEEPALIVE_IDLE, 77);
    zlt_set_int(s, ZLINK_TCP_KEEPALIVE_INTVL, 13);
}

static void keepalive_on_connecter(void *s)
{
    zlt_set_int(s, ZLINK_TCP_KEEPALIVE, 1);
    zlt_set_int(s, ZLINK_TCP_KEEPALIVE_CNT, 4);
    zlt_set_int(s, ZLINK_TCP_KEEPALIVE_IDLE, 99);
    zlt_set_int(s, ZLINK_TCP_KEEPALIVE_INTVL, 11);
}

static void expect_keepalive(int fd, int on, int cnt, int idle, int intvl)
{
    ZT_CHECK(fd >= 0);
    ZT_EQ_INT(fd_int_opt(fd, SOL_SOCKET, SO_KEEPALIVE) != 0, on);
    ZT_EQ_INT(fd_int_opt(fd, IPPROTO_TCP, TCP_KEEPCNT), cnt);
    ZT_EQ_INT(fd_int_opt(fd, IPPROTO_TCP, TCP_KEEPIDLE), idle);
    ZT_EQ_INT(fd_int_opt(fd, IPPROTO_TCP, TCP_KEEPINTVL), intvl);
}

/* KEEPALIVE 1 with CNT / IDLE / INTVL reaches the accepted fd (the
 * binder's values) and the connected fd (the connecter's). */
static void keepalive_reaches_accepted_and_connected(void)
{
    void *ctx = zlt_ctx_new();
    void *b, *c;
    int port;
    tcp_dealers(ctx, &b, &c, &port, keepalive_on_binder, keepalive_on_connecter);
    expect_keepalive(find_tcp_fd(port, FD_ACCEPTED), 1, 5, 77, 13);
    expect_keepalive(find_tcp_fd(port, FD_CONNECTED), 1, 4, 99, 11);
    zlt_finish(ctx, c, b);
}

static void keepalive_off(void *s)
{
    zlt_set_int(s, ZLINK_TCP_KEEPALIVE, 0);
}

static void keepalive_idle_only(void *s)
{
    zlt_set_int(s, ZLINK_TCP_KEEPALIVE_IDLE, 600);
}

/* Defaults leave the OS's values; KEEPALIVE 0 turns it off; a parameter
 * set with KEEPALIVE -1 is applied and SO_KEEPALIVE stays the OS's. */
static void keepalive_defaults_off_and_parameters_alone(void)
{
    int os_on = os_default(SOL_SOCKET, SO_KEEPALIVE) != 0;
    int os_cnt = os_default(IPPROTO_TCP, TCP_KEEPCNT);
    int os_idle = os_default(IPPROTO_TCP, TCP_KEEPIDLE);
    int os_intvl = os_default(IPPROTO_TCP, TCP_KEEPINTVL);
    /* One context per link: its term joins the I/O threads, so no library
     * fd is still being closed while the next scan of /proc/self/fd opens
     * and closes its own. */
    void *ctx = zlt_ctx_new();
    void *b, *c;
    int port;
    tcp_dealers(ctx, &b, &c, &port, NULL, NULL);
    expect_keepalive(find_tcp_fd(port, FD_ACCEPTED), os_on, os_cnt, os_idle, os_intvl);
    expect_keepalive(find_tcp_fd(port, FD_CONNECTED), os_on, os_cnt, os_idle, os_intvl);
    zlt_finish(ctx, c, b);

    /* 0 on the connecter, 1 on the binder. */
    ctx = zlt_ctx_new();
    tcp_dealers(ctx, &b, &c, &port, keepalive_on_binder, keepalive_off);
    expect_keepalive(find_tcp_fd(port, FD_CONNECTED), 0, os_cnt, os_idle, os_intvl);
    expect_keepalive(find_tcp_fd(port, FD_ACCEPTED), 1, 5, 77, 13);
    zlt_finish(ctx, c, b);

    ctx = zlt_ctx_new();
    tcp_dealers(ctx, &b, &c, &port, keepalive_idle_only, NULL);
    expect_keepalive(find_tcp_fd(port, FD_ACCEPTED), os_on, os_cnt, 600, os_intvl);
    zlt_finish(ctx, c, b);
}

/* A STREAM socket's raw tcp connections get the options too. */
static void keepalive_on_stream_connections(void)
{
    void *ctx = zlt_ctx_new();
    void *st = zlt_sock(ctx, ZLINK_STREAM);
    zlt_set_int(st, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_RAW);
    keepalive_on_binder(st);
    char ep[256];
    zlt_bind(st, "tcp", ep, sizeof ep);
    int port = ep_port(ep);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ZT_EQ_INT(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    ZT_EQ_INT(write(fd, "raw", 3), 3);
    const zlink_routing_id_t *rid = NULL;
    zlink_msg_t part;
    size_t count = 0;
    ZT_EQ_INT(zlink_recv(st, &rid, &part, 1, &count, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_CHECK(rid != NULL);
    ZT_EQ_INT(count, 1);
    ZT_EQ_MEM(zlink_msg_data(&part), "raw", 3);
    zlink_multipart_close(&part, count);
    expect_keepalive(find_tcp_fd(port, FD_ACCEPTED), 1, 5, 77, 13);
    close(fd);
    zlt_finish(ctx, st);
}

/* ------------------------------------------------------ TOS and MAXRT */

static void tos_maxrt_binder(void *s)
{
    zlt_set_int(s, ZLINK_TOS, 0x28);
    zlt_set_int(s, ZLINK_TCP_MAXRT, 4321);
}

static void tos_maxrt_connecter(void *s)
{
    zlt_set_int(s, ZLINK_TOS, 0x48);
    zlt_set_int(s, ZLINK_TCP_MAXRT, 1234);
}

/* TOS reaches the listener, the accepted and the connected fd (IP_TOS);
 * TCP_MAXRT is TCP_USER_TIMEOUT on both connections. Defaults leave 0. */
static void tos_and_maxrt_reach_the_fds(void)
{
    void *ctx = zlt_ctx_new();
    void *b, *c;
    int port;
    tcp_dealers(ctx, &b, &c, &port, tos_maxrt_binder, tos_maxrt_connecter);
    ZT_EQ_INT(fd_int_opt(find_tcp_fd(port, FD_LISTENER), IPPROTO_IP, IP_TOS), 0x28);
    int acc = find_tcp_fd(port, FD_ACCEPTED), con = find_tcp_fd(port, FD_CONNECTED);
    ZT_CHECK(acc >= 0 && con >= 0);
    ZT_EQ_INT(fd_int_opt(acc, IPPROTO_IP, IP_TOS), 0x28);
    ZT_EQ_INT(fd_int_opt(con, IPPROTO_IP, IP_TOS), 0x48);
    ZT_EQ_INT(fd_int_opt(acc, IPPROTO_TCP, TCP_USER_TIMEOUT), 4321);
    ZT_EQ_INT(fd_int_opt(con, IPPROTO_TCP, TCP_USER_TIMEOUT), 1234);
    zlt_finish(ctx, c, b); /* a fresh context: see keepalive_defaults_... */

    ctx = zlt_ctx_new();
    tcp_dealers(ctx, &b, &c, &port, NULL, NULL);
    acc = find_tcp_fd(port, FD_ACCEPTED);
    con = find_tcp_fd(port, FD_CONNECTED);
    ZT_EQ_INT(fd_int_opt(acc, IPPROTO_IP, IP_TOS), os_default(IPPROTO_IP, IP_TOS));
    ZT_EQ_INT(fd_int_opt(con, IPPROTO_TCP, TCP_USER_TIMEOUT),
              os_default(IPPROTO_TCP, TCP_USER_TIMEOUT));
    zlt_finish(ctx, c, b);
}

/* --------------------------------------------------------- BINDTODEVICE */

static void device_lo(void *s)
{
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_BINDTODEVICE, "lo", 2), ZLINK_CONFIG_OK);
}

static void get_device(void *s, char *buf, size_t cap, size_t *size)
{
    *size = cap;
    ZT_EQ_INT(zlink_getsockopt(s, ZLINK_BINDTODEVICE, buf, size), ZLINK_CONFIG_OK);
}

/* The value: "" by default, a name read back NUL-terminated (a trailing
 * NUL in the value is allowed), "" clears it; too long, an inner NUL or a
 * NULL value is EINVAL; a short read buffer is EINVAL. */
static void bindtodevice_value_rules(void)
{
    void *ctx = zlt_ctx_new();
    void *s = zlt_socket(ctx, ZLINK_DEALER);
    char buf[32];
    size_t size;
    get_device(s, buf, sizeof buf, &size);
    ZT_EQ_INT(size, 1);
    ZT_EQ_STR(buf, "");
    device_lo(s);
    get_device(s, buf, sizeof buf, &size);
    ZT_EQ_INT(size, 3);
    ZT_EQ_STR(buf, "lo");
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_BINDTODEVICE, "eth9", 5), ZLINK_CONFIG_OK);
    get_device(s, buf, sizeof buf, &size);
    ZT_EQ_STR(buf, "eth9");
    const char *longest = "abcdefghijklmno"; /* 15 bytes */
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_BINDTODEVICE, longest, 15), ZLINK_CONFIG_OK);
    get_device(s, buf, sizeof buf, &size);
    ZT_EQ_STR(buf, longest);
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_BINDTODEVICE, "abcdefghijklmnop", 16),
              ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_BINDTODEVICE, "l\0o", 3), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_BINDTODEVICE, NULL, 2), ZLINK_CONFIG_INVALID_ARGUMENT);
    get_device(s, buf, sizeof buf, &size);
    ZT_EQ_STR(buf, longest); /* unchanged by the refusals */
    size = 15;
    ZT_EQ_INT(zlink_getsockopt(s, ZLINK_BINDTODEVICE, buf, &size), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_BINDTODEVICE, "", 0), ZLINK_CONFIG_OK);
    get_device(s, buf, sizeof buf, &size);
    ZT_EQ_STR(buf, "");
    zlt_finish(ctx, s);
}

/* "lo" reaches the listener, the accepted and the connected fd, and the
 * link works (all of it is on lo). */
static void bindtodevice_reaches_the_fds(void)
{
    void *ctx = zlt_ctx_new();
    void *b, *c;
    int port;
    tcp_dealers(ctx, &b, &c, &port, device_lo, device_lo);
    char dev[IFNAMSIZ];
    fd_device(find_tcp_fd(port, FD_LISTENER), dev, sizeof dev);
    ZT_EQ_STR(dev, "lo");
    fd_device(find_tcp_fd(port, FD_CONNECTED), dev, sizeof dev);
    ZT_EQ_STR(dev, "lo");
    fd_device(find_tcp_fd(port, FD_ACCEPTED), dev, sizeof dev);
    ZT_EQ_STR(dev, "lo");
    zlt_finish(ctx, c, b);
    /* Without the option, nothing is bound to a device. */
    ctx = zlt_ctx_new();
    tcp_dealers(ctx, &b, &c, &port, NULL, NULL);
    fd_device(find_tcp_fd(port, FD_CONNECTED), dev, sizeof dev);
    ZT_EQ_STR(dev, "");
    zlt_finish(ctx, c, b);
}

/* An interface that does not exist: bind and connect fail at once with
 * INVALID_ARGUMENT/ENODEV, leaving no endpoint; once cleared, the socket
 * binds and works. */
static void bindtodevice_unknown_device_refused(void)
{
    const char *nodev = "zlnodev0";
    ZT_EQ_INT(if_nametoindex(nodev), 0);
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_DEALER);
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_BINDTODEVICE, nodev, strlen(nodev)), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_bind(s, "tcp://127.0.0.1:0"), ZLINK_BIND_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), ENODEV);
    ZT_EQ_INT(zlink_connect(s, "tcp://127.0.0.1:9"), ZLINK_CONNECT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), ENODEV);
    char last[64];
    zlt_last_endpoint(s, last, sizeof last);
    ZT_EQ_STR(last, "");
    ZT_EQ_INT(zlink_disconnect(s, "tcp://127.0.0.1:9"), ZLINK_CONNECT_NOT_FOUND);
    /* Clearing the device makes the same socket usable. */
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_BINDTODEVICE, "", 0), ZLINK_CONFIG_OK);
    void *peer = zlt_sock(ctx, ZLINK_DEALER);
    zlt_link(peer, s, "tcp");
    ZT_EQ_INT(zlt_send_str(peer, "after", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(s, "after");
    zlt_finish(ctx, peer, s);
}

/* ------------------------------------------------------------ IMMEDIATE */

/* IMMEDIATE is 1 and stays 1: a DEALER whose only connection has not
 * finished its handshake (the peer is a listener that never accepts) has
 * no queue to put a record in, so a DONTWAIT send is BACKPRESSURED. */
static void immediate_queues_only_to_finished_connections(void)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ZT_EQ_INT(bind(lfd, (struct sockaddr *)&sin, sizeof sin), 0);
    ZT_EQ_INT(listen(lfd, 8), 0);
    socklen_t sl = sizeof sin;
    ZT_EQ_INT(getsockname(lfd, (struct sockaddr *)&sin, &sl), 0);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", ntohs(sin.sin_port));

    void *ctx = zlt_ctx_new();
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    ZT_EQ_INT(zlt_get_int(d, ZLINK_IMMEDIATE), 1);
    zlt_set_int_fails(d, ZLINK_IMMEDIATE, 0, ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    zlt_connect(d, ep);
    /* The kernel completes the tcp connect (backlog); ZMP never does. */
    ZT_EVENTUALLY(find_tcp_fd(ntohs(sin.sin_port), FD_CONNECTED) >= 0, 2000);
    ZT_EQ_INT(zlt_send_str(d, "x", ZLINK_SEND_FLAGS_DONTWAIT), ZLINK_SUBMIT_BACKPRESSURED);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    zlt_finish(ctx, d);
    close(lfd);
}

/* ------------------------------------------------------------- AFFINITY */

/* The epoll fd (one per I/O thread's loop) that watches fd, or -1. */
static int epoll_of(int fd)
{
    DIR *d = opendir("/proc/self/fd");
    ZT_CHECK(d != NULL);
    int found = -1;
    struct dirent *e;
    while (found < 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], link[64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n <= 0)
            continue;
        link[n] = '\0';
        if (strcmp(link, "anon_inode:[eventpoll]") != 0)
            continue;
        snprintf(path, sizeof path, "/proc/self/fdinfo/%s", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        char line[256];
        while (fgets(line, sizeof line, f) != NULL) {
            int tfd;
            if (sscanf(line, "tfd: %d", &tfd) == 1 && tfd == fd)
                found = atoi(e->d_name);
        }
        fclose(f);
    }
    closedir(d);
    return found;
}

/* Binds s on tcp and returns the epoll that watches its listener. */
static int listener_epoll(void *s)
{
    char ep[256];
    zlt_bind(s, "tcp", ep, sizeof ep);
    int lfd = find_tcp_fd(ep_port(ep), FD_LISTENER);
    ZT_CHECK(lfd >= 0);
    int epfd = -1;
    ZT_EVENTUALLY((epfd = epoll_of(lfd)) >= 0, 2000);
    return epfd;
}

/* With three I/O threads, endpoints of sockets with the same one-thread
 * mask share that thread (one epoll), another mask gets another one; round
 * robin alone would spread the first two. A mask naming no thread of the
 * context is INVALID_ARGUMENT/EINVAL at bind and connect. 8 bytes only. */
static void affinity_chooses_the_io_thread(void)
{
    void *ctx = zlt_ctx_new();
    ZT_EQ_INT(zlink_ctx_set(ctx, ZLINK_IO_THREADS, 3), ZLINK_CONFIG_OK);
    void *a = zlt_sock(ctx, ZLINK_DEALER), *b = zlt_sock(ctx, ZLINK_DEALER);
    void *c = zlt_sock(ctx, ZLINK_DEALER), *n = zlt_sock(ctx, ZLINK_DEALER);
    ZT_EQ_U64(zlt_get_u64(a, ZLINK_AFFINITY), 0);
    zlt_set_u64(a, ZLINK_AFFINITY, 1u << 1);
    zlt_set_u64(b, ZLINK_AFFINITY, 1u << 1);
    zlt_set_u64(c, ZLINK_AFFINITY, 1u << 2);
    ZT_EQ_U64(zlt_get_u64(a, ZLINK_AFFINITY), 2);
    int ea = listener_epoll(a), eb = listener_epoll(b), ec = listener_epoll(c);
    ZT_EQ_INT(ea, eb);
    ZT_CHECK(ea != ec);
    /* Thread 3 does not exist. */
    zlt_set_u64(n, ZLINK_AFFINITY, 1u << 3);
    ZT_EQ_INT(zlink_bind(n, "tcp://127.0.0.1:0"), ZLINK_BIND_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_connect(n, "tcp://127.0.0.1:9"), ZLINK_CONNECT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    /* Any thread of several: allowed. */
    zlt_set_u64(n, ZLINK_AFFINITY, (1u << 3) | (1u << 2));
    ZT_EQ_INT(listener_epoll(n), ec);
    int iv = 1;
    ZT_EQ_INT(zlink_setsockopt(n, ZLINK_AFFINITY, &iv, sizeof iv), ZLINK_CONFIG_INVALID_ARGUMENT);
    zlt_finish(ctx, a, b, c, n);
}

/* ------------------------------------------------------- FD and EVENTS */

static bool fd_readable(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int rc = poll(&p, 1, timeout_ms);
    ZT_CHECK(rc >= 0);
    return rc == 1 && (p.revents & POLLIN);
}

/* Reads EVENTS whenever fd is readable until it stays quiet for a moment
 * (a wake-up that was already under way when EVENTS cleared the signal may
 * still arrive: readable means "may have changed", never a promise).
 * Returns the last EVENTS read. */
static int events_settle(void *s, int fd)
{
    int ev = zlt_get_int(s, ZLINK_EVENTS);
    int64_t end = zt_now_ms() + ZT_MS(2000);
    while (fd_readable(fd, 20)) {
        if (zt_now_ms() > end)
            ZT_FAIL("ZLINK_FD stays readable although nothing changes");
        ev = zlt_get_int(s, ZLINK_EVENTS);
    }
    return ev;
}

/* FD is one descriptor per socket, signalled when it is made; reading
 * EVENTS clears it. Once quiet, a record arriving signals it again and
 * EVENTS then shows POLLIN; receiving the record clears POLLIN. Both are
 * read-only. */
static void fd_signals_changes_events_reads_them(void)
{
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *a = zlt_sock(ctx, ZLINK_PAIR), *b = zlt_sock(ctx, ZLINK_PAIR);
        zlt_link(a, b, tr);
        ZT_EQ_INT(zlt_send_str(a, "hello", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(b, "hello");
        int fd = zlt_get_int(b, ZLINK_FD);
        ZT_CHECK(fd >= 0);
        ZT_EQ_INT(zlt_get_int(b, ZLINK_FD), fd);
        ZT_CHECK(fd_readable(fd, 0)); /* signalled at creation */
        zlt_set_int_fails(b, ZLINK_FD, fd, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        zlt_set_int_fails(b, ZLINK_EVENTS, 1, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        for (int round = 0; round < 3; round++) {
            ZT_EQ_INT(events_settle(b, fd), ZLINK_POLLOUT);
            ZT_EQ_INT(zlt_send_str(a, "again", 0), ZLINK_SUBMIT_OK);
            ZT_CHECK(fd_readable(fd, ZT_MS(2000)));
            int ev = 0;
            ZT_EVENTUALLY((ev = zlt_get_int(b, ZLINK_EVENTS)) == (ZLINK_POLLIN | ZLINK_POLLOUT),
                          2000);
            zlt_expect_str(b, "again");
            ZT_EQ_INT(zlt_get_int(b, ZLINK_EVENTS), ZLINK_POLLOUT);
        }
        /* A SUB without publishers has nothing to report. */
        void *sub = zlt_sock(ctx, ZLINK_SUB);
        ZT_EQ_INT(zlt_get_int(sub, ZLINK_EVENTS), 0);
        zlt_close(sub);
    }
}

/* --------------------------------------------------------- INVERT_MATCHING */

static void publish(void *pub, const char *topic, const char *text)
{
    zlink_msg_t m;
    zlt_msg_set(&m, text, strlen(text));
    ZT_EQ_INT(zlink_publish(pub, topic, &m, 1, ZLINK_SEND_FLAGS_DONTWAIT), ZLINK_SUBMIT_OK);
    zlink_msg_close(&m);
}

/* One record's topic and first part; false on NO_DATA. */
static bool receive(void *sub, char *topic, char *text, size_t cap)
{
    zlink_msg_t parts[2];
    size_t count = 0, tlen = 0;
    zlink_recv_result_t rc =
        zlink_subscribe(sub, NULL, topic, cap - 1, &tlen, parts, 2, &count, ZLINK_RECV_FLAGS_NONE);
    if (rc == ZLINK_RECV_NO_DATA)
        return false;
    ZT_EQ_INT(rc, ZLINK_RECV_OK);
    topic[tlen] = '\0';
    ZT_EQ_INT(count, 1);
    size_t n = zlink_msg_size(&parts[0]);
    ZT_CHECK(n < cap);
    memcpy(text, zlink_msg_data(&parts[0]), n);
    text[n] = '\0';
    zlink_multipart_close(parts, count);
    return true;
}

/* Both ends inverted, the SUB subscribed to "a": records on "a..." go
 * nowhere, every other topic arrives. */
static void invert_matching_delivers_the_non_matching(void)
{
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *pub = zlt_sock(ctx, ZLINK_PUB), *sub = zlt_sock(ctx, ZLINK_SUB);
        zlt_set_int(pub, ZLINK_INVERT_MATCHING, 1);
        zlt_set_int(sub, ZLINK_INVERT_MATCHING, 1);
        ZT_EQ_INT(zlink_set_subscription(sub, "a"), ZLINK_CONFIG_OK);
        zlt_link(sub, pub, tr);
        /* Until the link is up, publish a "b" probe. */
        zlt_set_int(sub, ZLINK_RCVTIMEO, 20);
        char topic[32], text[32];
        int64_t end = zt_now_ms() + ZT_MS(3000);
        bool up = false;
        while (!up) {
            if (zt_now_ms() > end)
                ZT_FAIL("no record on a non-matching topic arrived");
            publish(pub, "bsync", "sync");
            up = receive(sub, topic, text, sizeof topic);
        }
        ZT_EQ_STR(topic, "bsync");
        publish(pub, "a1", "matching");
        publish(pub, "abc", "matching");
        publish(pub, "b1", "other");
        publish(pub, "end", "last");
        zlt_set_int(sub, ZLINK_RCVTIMEO, ZT_MS(2000));
        const char *want[] = {"b1", "end"};
        size_t next = 0;
        while (next < 2) {
            ZT_CHECK(receive(sub, topic, text, sizeof topic));
            if (strcmp(topic, "bsync") == 0)
                continue; /* probes still in flight */
            ZT_EQ_STR(topic, want[next]);
            next++;
        }
        zlt_set_int(sub, ZLINK_RCVTIMEO, 50);
        ZT_CHECK(!receive(sub, topic, text, sizeof topic));
    }
}

static const zt_case_t cases[] = {
    ZT_CASE(int_options_follow_their_rows),
    ZT_CASE(reserved_numbers_are_einval),
    ZT_CASE(keepalive_reaches_accepted_and_connected),
    ZT_CASE(keepalive_defaults_off_and_parameters_alone),
    ZT_CASE(keepalive_on_stream_connections),
    ZT_CASE(tos_and_maxrt_reach_the_fds),
    ZT_CASE(bindtodevice_value_rules),
    ZT_CASE(bindtodevice_reaches_the_fds),
    ZT_CASE(bindtodevice_unknown_device_refused),
    ZT_CASE(immediate_queues_only_to_finished_connections),
    ZT_CASE(affinity_chooses_the_io_thread),
    ZT_CASE(fd_signals_changes_events_reads_them),
    ZT_CASE(invert_matching_delivers_the_non_matching),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
