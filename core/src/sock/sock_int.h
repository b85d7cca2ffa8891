/*
 * sock_int.h — what the files of sock/ share and no other layer sees:
 * the functions one file of the socket core calls in another.
 */
#ifndef ZL_SOCK_INT_H
#define ZL_SOCK_INT_H

#include "sock/sock_impl.h"

/* pipe.c: the engine's view of every socket (transport.h operations). */
extern const zl_tran_sock_ops_t zl_sock_tran_ops;
/* pipe.c, under s->lk: p will carry no more traffic (the pattern detaches
 * it, its requests and wait tokens end). Idempotent. */
void zl_pipe_end_locked(zl_socket_t *s, zl_pipe_t *p);
/* pipe.c: tells an inproc peer that p's side is gone (once). No locks
 * held (takes the peer socket's lock). */
void zl_pipe_break_link(zl_pipe_t *p);
/* socket.c, under s->lk: whether p's next record is a REQUEST that a ROUTER
 * with every reply token in use cannot take now (that source waits). */
bool zl_pipe_token_blocked(zl_socket_t *s, zl_pipe_t *p);
/* socket.c: sleeps until a wake-up newer than seq or the deadline
 * (monotonic ns, INT64_MAX: none). No locks held. The kernel compares
 * s->wseq with seq before sleeping, so no wake-up is lost. */
void zl_socket_sleep(zl_socket_t *s, uint32_t seq, int64_t deadline);

/* send.c: releases the messages of frames[0..n) (frames' memory stays the
 * caller's). Any lock state. */
void zl_frames_release(zl_frame_t *frames, size_t n);

/* recv.c, under s->lk: makes the receive scratch hold at least n frames.
 * 0 or ENOMEM (the scratch unchanged). */
int zl_socket_rx_reserve(zl_socket_t *s, size_t n);
/* recv.c, under s->lk: p leaves the ready ring (it was found empty, or is
 * being unlinked). Idempotent. */
void zl_pipe_rx_idle(zl_socket_t *s, zl_pipe_t *p);
/* recv.c: drops the inbox's pipes and their references (socket teardown,
 * when no writer can post any more). */
void zl_socket_rx_inbox_clear(zl_socket_t *s);

#endif /* ZL_SOCK_INT_H */
