/*
 * scale_libs.h — the two library halves of //bench:scale (bench/scale.c):
 * what a role of the scale benchmark needs of ZLink (scale_zlink.c) and of
 * libzmq (scale_zmq.c). Two files because zlink.h and zmq.h both define
 * the libzmq-compatible errno names.
 */
#ifndef BENCH_SCALE_LIBS_H
#define BENCH_SCALE_LIBS_H

#include <stddef.h>

/* A client context takes up to this many sockets (both libraries' default
 * limits are lower: ZLink 4,095, libzmq 1,023). */
#define SC_MAX_PER_PROC 8000
/* The ROUTER's listen backlog, both libraries (their default is 100): a
 * burst of 5,000 connects overflowed a backlog of 100 some 19,000 times per
 * run, and each dropped SYN waits the kernel's retry (1, 3, 7, 15 s), long
 * enough for a DEALER's hello to miss its 20 s. */
#define SC_BACKLOG 4096
/* Routing ids "d<index>" fit in this many bytes with their NUL. */
#define SC_RID_CAP 16

/* What a role needs of a library. Every function is for one thread. */
typedef struct sc_lib {
    const char *name;
    void (*version)(char *buf, size_t cap);
    void *(*ctx_new)(void);
    void (*ctx_term)(void *ctx);
    /* A bound ROUTER; *port gets its port. NULL after an ERROR line.
     * qrecs > 0: both HWMs hold qrecs records of size bytes (ZLink: bytes
     * qrecs * (size + 64), its charge per frame; libzmq: qrecs messages);
     * 0: the library's defaults. */
    void *(*router)(void *ctx, int *port, long qrecs, long size);
    /* A DEALER named rid, connecting to port, HWMs as for router. NULL
     * after an ERROR line. */
    void *(*dealer)(void *ctx, const char *rid, int port, long qrecs, long size);
    /* One record of n bytes: 0 sent, 1 no room (dontwait), -1 error. */
    int (*send)(void *dealer, const void *buf, size_t n, int dontwait);
    /* One record into buf (up to cap bytes; *n its size) and its sender's
     * id into rid (NUL-terminated, cut to SC_RID_CAP - 1): 1, 0 when none
     * came within RCVTIMEO, -1 error. */
    int (*router_recv)(void *router, char *rid, void *buf, size_t cap, size_t *n);
    /* One record to the peer named rid, DONTWAIT: 0, 1 no room, -1 error. */
    int (*router_send)(void *router, const char *rid, const void *buf, size_t n);
    void (*close)(void *socket);
} sc_lib_t;

extern const sc_lib_t sc_lib_zlink;
extern const sc_lib_t sc_lib_zmq;

#endif /* BENCH_SCALE_LIBS_H */
