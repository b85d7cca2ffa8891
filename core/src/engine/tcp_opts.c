/*
 * tcp_opts.c — the socket options that tune a tcp file descriptor:
 * keepalive (TCP_KEEPALIVE and its CNT / IDLE / INTVL), TOS, TCP_MAXRT and
 * BINDTODEVICE. (TCP_NODELAY, SNDBUF and RCVBUF are applied through libuv
 * in zl_conn_start.)
 *
 * Design notes
 *  - Values come from an option snapshot (zl_tran_opts_t: c->opts for a
 *    connection, ep->opts for a listener), already range-checked by
 *    sockopt.c, so the kernel is not expected to refuse them; when it does,
 *    the caller fails that bind or that connection with the errno.
 *  - When each applies: BINDTODEVICE and TOS before bind (listener) and
 *    before connect (connecter: the fd is created early, only when one of
 *    them is set), so the SYN already carries them; keepalive, TCP_MAXRT and
 *    TOS again on every established connection, accepted or connected.
 *  - -1 (0 for TOS and TCP_MAXRT) leaves the OS default untouched. The
 *    keepalive parameters are applied whenever set, whatever TCP_KEEPALIVE
 *    says: they take effect whenever keepalive is on (the OS default or 1).
 *  - Threads: the I/O thread of the handle, except zl_tcp_device_check
 *    (application thread). No locks, no allocation.
 */
#include "engine_int.h"

#include <errno.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <string.h>
#include <unistd.h>

static int set_int(int fd, int level, int name, int value)
{
    return setsockopt(fd, level, name, &value, sizeof value) == 0 ? 0 : errno;
}

static int set_tos(int fd, int family, int tos)
{
    if (tos <= 0)
        return 0;
    if (family == AF_INET6)
        return set_int(fd, IPPROTO_IPV6, IPV6_TCLASS, tos);
    return set_int(fd, IPPROTO_IP, IP_TOS, tos);
}

static int set_device(int fd, const char *dev)
{
    if (dev[0] == '\0')
        return 0;
    return setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, (socklen_t)strlen(dev)) == 0 ? 0
                                                                                          : errno;
}

/* The family of a bound or connected fd (AF_INET when unknown). */
static int fd_family(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return AF_INET;
    return ss.ss_family;
}

int zl_tcp_tune_early(int fd, int family, const zl_tran_opts_t *o)
{
    int rc = set_device(fd, o->bind_device);
    if (rc == 0)
        rc = set_tos(fd, family, o->tos);
    return rc;
}

int zl_tcp_tune_conn(uv_tcp_t *h, const zl_tran_opts_t *o)
{
    uv_os_fd_t fd;
    if (uv_fileno((const uv_handle_t *)h, &fd) != 0)
        return EBADF;
    int rc = 0;
    if (o->tcp_keepalive >= 0)
        rc = set_int(fd, SOL_SOCKET, SO_KEEPALIVE, o->tcp_keepalive);
    if (rc == 0 && o->tcp_keepalive_cnt > 0)
        rc = set_int(fd, IPPROTO_TCP, TCP_KEEPCNT, o->tcp_keepalive_cnt);
    if (rc == 0 && o->tcp_keepalive_idle > 0)
        rc = set_int(fd, IPPROTO_TCP, TCP_KEEPIDLE, o->tcp_keepalive_idle);
    if (rc == 0 && o->tcp_keepalive_intvl > 0)
        rc = set_int(fd, IPPROTO_TCP, TCP_KEEPINTVL, o->tcp_keepalive_intvl);
    if (rc == 0 && o->tcp_maxrt > 0)
        rc = set_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, o->tcp_maxrt);
    if (rc == 0)
        rc = set_tos(fd, fd_family(fd), o->tos);
    return rc;
}

int zl_tcp_open_early(uv_tcp_t *h, int family, const zl_tran_opts_t *o)
{
    if (o->bind_device[0] == '\0' && o->tos <= 0)
        return 0;
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    int rc = zl_tcp_tune_early(fd, family, o);
    if (rc == 0) {
        rc = -uv_tcp_open(h, fd);
        if (rc == 0)
            return 0; /* the handle owns fd now */
    }
    close(fd);
    return rc;
}

int zl_tcp_device_check(const char *dev)
{
    if (dev[0] == '\0')
        return 0;
    if (if_nametoindex(dev) == 0)
        return ENODEV;
    /* Whether this process may bind to it (older kernels want
     * CAP_NET_RAW): try on a socket of our own. */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    int rc = set_device(fd, dev);
    close(fd);
    return rc;
}
