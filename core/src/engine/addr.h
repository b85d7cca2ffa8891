/*
 * addr.h — endpoint strings for the engine's transports:
 *   tcp://HOST:PORT   HOST: '*' (bind: any address), an IPv4 literal, an
 *                     IPv6 literal in brackets, "localhost", or a name
 *                     (resolved: bind at parse time, connect on each
 *                     attempt). PORT: 0..65535, or '*' / 0 on bind for an
 *                     ephemeral port.
 *   ipc://PATH        a unix-domain socket path of 1..107 bytes.
 * Pure functions except zl_addr_resolve (getaddrinfo, may block).
 */
#ifndef ZL_ENGINE_ADDR_H
#define ZL_ENGINE_ADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define ZL_TR_TCP 1
#define ZL_TR_IPC 2

#define ZL_IPC_PATH_MAX 107   /* sun_path holds 108 bytes with the NUL */
#define ZL_ADDR_NAME_MAX 300  /* "tcp://" + host + ":" + port, or "ipc://" + path */

typedef struct zl_addr {
    int transport;                /* ZL_TR_TCP or ZL_TR_IPC */
    /* tcp */
    char host[256];               /* as written, without brackets */
    uint16_t port;
    bool any_host;                /* '*' */
    bool numeric;                 /* sa holds the address */
    struct sockaddr_storage sa;   /* with the port set */
    /* ipc */
    char path[ZL_IPC_PATH_MAX + 1];
} zl_addr_t;

/* Parses endpoint for a bind (bind = true) or a connect. ipv6 != 0 lets
 * '*' mean the IPv6 any-address (dual stack) and lets names resolve to IPv6.
 * Returns 0, EINVAL (malformed, or '*' / port 0 on connect, or a path too
 * long) or EPROTONOSUPPORT (a transport other than tcp and ipc). A host name
 * is left unresolved (numeric = false). Any thread; no blocking. */
int zl_addr_parse(const char *endpoint, bool bind, bool ipv6, zl_addr_t *out);

/* Resolves a tcp name (numeric = false) into sa with getaddrinfo. Blocks;
 * call on an application thread only. Returns 0 or ENODEV (no such name). */
int zl_addr_resolve(zl_addr_t *a, bool bind, bool ipv6);

/* Formats sa as "tcp://1.2.3.4:5" or "tcp://[::1]:5" into buf. */
void zl_addr_format_tcp(const struct sockaddr *sa, char *buf, size_t cap);

#endif /* ZL_ENGINE_ADDR_H */
