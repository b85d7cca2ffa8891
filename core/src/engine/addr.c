/*
 * addr.c — endpoint parsing and formatting (addr.h). No state, any thread.
 */
#include "addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

/* Parses "0".."65535" (digits only) or "*" (when allowed, as 0). */
static int parse_port(const char *s, bool star_ok, uint16_t *out)
{
    if (strcmp(s, "*") == 0) {
        if (!star_ok)
            return EINVAL;
        *out = 0;
        return 0;
    }
    if (*s == '\0' || strlen(s) > 5)
        return EINVAL;
    unsigned long v = 0;
    for (const char *p = s; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return EINVAL;
        v = v * 10 + (unsigned long)(*p - '0');
    }
    if (v > 65535)
        return EINVAL;
    *out = (uint16_t)v;
    return 0;
}

static void set_v4(zl_addr_t *a, const struct in_addr *ip)
{
    struct sockaddr_in *sin = (struct sockaddr_in *)&a->sa;
    memset(&a->sa, 0, sizeof a->sa);
    sin->sin_family = AF_INET;
    sin->sin_addr = *ip;
    sin->sin_port = htons(a->port);
    a->numeric = true;
}

static void set_v6(zl_addr_t *a, const struct in6_addr *ip)
{
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&a->sa;
    memset(&a->sa, 0, sizeof a->sa);
    sin6->sin6_family = AF_INET6;
    sin6->sin6_addr = *ip;
    sin6->sin6_port = htons(a->port);
    a->numeric = true;
}

static int parse_tcp(const char *rest, bool bind, bool ipv6, zl_addr_t *a)
{
    char host[256];
    const char *colon;
    if (rest[0] == '[') {
        const char *close = strchr(rest, ']');
        if (close == NULL || close[1] != ':')
            return EINVAL;
        size_t hl = (size_t)(close - rest - 1);
        if (hl == 0 || hl >= sizeof host)
            return EINVAL;
        memcpy(host, rest + 1, hl);
        host[hl] = '\0';
        colon = close + 1;
        struct in6_addr ip6;
        if (inet_pton(AF_INET6, host, &ip6) != 1)
            return EINVAL;
    } else {
        colon = strrchr(rest, ':');
        if (colon == NULL)
            return EINVAL;
        size_t hl = (size_t)(colon - rest);
        if (hl == 0 || hl >= sizeof host)
            return EINVAL;
        memcpy(host, rest, hl);
        host[hl] = '\0';
        if (strchr(host, ':') != NULL) /* an IPv6 literal needs brackets */
            return EINVAL;
    }
    int rc = parse_port(colon + 1, bind, &a->port);
    if (rc != 0)
        return rc;
    if (!bind && a->port == 0)
        return EINVAL;
    memcpy(a->host, host, strlen(host) + 1);

    struct in_addr ip4;
    struct in6_addr ip6;
    if (strcmp(host, "*") == 0) {
        if (!bind)
            return EINVAL;
        a->any_host = true;
        if (ipv6) {
            set_v6(a, &in6addr_any);
        } else {
            ip4.s_addr = htonl(INADDR_ANY);
            set_v4(a, &ip4);
        }
    } else if (strcmp(host, "localhost") == 0) {
        ip4.s_addr = htonl(INADDR_LOOPBACK);
        set_v4(a, &ip4);
    } else if (inet_pton(AF_INET, host, &ip4) == 1) {
        set_v4(a, &ip4);
    } else if (inet_pton(AF_INET6, host, &ip6) == 1) {
        set_v6(a, &ip6);
    } else {
        /* A name: letters, digits, '-', '.', '_' only. */
        for (const char *p = host; *p != '\0'; p++) {
            char ch = *p;
            bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_';
            if (!ok)
                return EINVAL;
        }
        a->numeric = false;
    }
    return 0;
}

int zl_addr_parse(const char *endpoint, bool bind, bool ipv6, zl_addr_t *out)
{
    memset(out, 0, sizeof *out);
    if (endpoint == NULL)
        return EINVAL;
    const char *sep = strstr(endpoint, "://");
    if (sep == NULL || sep == endpoint)
        return EINVAL;
    size_t tl = (size_t)(sep - endpoint);
    const char *rest = sep + 3;
    if (tl == 3 && memcmp(endpoint, "tcp", 3) == 0) {
        out->transport = ZL_TR_TCP;
        return parse_tcp(rest, bind, ipv6, out);
    }
    if (tl == 3 && memcmp(endpoint, "ipc", 3) == 0) {
        size_t pl = strlen(rest);
        if (pl == 0 || pl > ZL_IPC_PATH_MAX)
            return EINVAL;
        out->transport = ZL_TR_IPC;
        memcpy(out->path, rest, pl + 1);
        return 0;
    }
    return EPROTONOSUPPORT;
}

int zl_addr_resolve(zl_addr_t *a, bool bind, bool ipv6)
{
    if (a->transport != ZL_TR_TCP || a->numeric)
        return 0;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = ipv6 ? AF_UNSPEC : AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = bind ? AI_PASSIVE : 0;
    if (getaddrinfo(a->host, NULL, &hints, &res) != 0 || res == NULL)
        return ENODEV;
    for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
        if (ai->ai_family == AF_INET) {
            set_v4(a, &((struct sockaddr_in *)ai->ai_addr)->sin_addr);
            break;
        }
        if (ai->ai_family == AF_INET6) {
            set_v6(a, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr);
            break;
        }
    }
    freeaddrinfo(res);
    return a->numeric ? 0 : ENODEV;
}

void zl_addr_format_tcp(const struct sockaddr *sa, char *buf, size_t cap)
{
    char ip[INET6_ADDRSTRLEN];
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof ip);
        snprintf(buf, cap, "tcp://[%s]:%u", ip, (unsigned)ntohs(s6->sin6_port));
    } else {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof ip);
        snprintf(buf, cap, "tcp://%s:%u", ip, (unsigned)ntohs(s4->sin_port));
    }
}
