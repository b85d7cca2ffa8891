/*
 * weight.h — what DEALER and ROUTER share (dealer.c): the WEIGHT control
 * each peer receives, and their WEIGHT option.
 */
#ifndef ZL_PROTOCOLS_WEIGHT_H
#define ZL_PROTOCOLS_WEIGHT_H

#include "sock/sock_impl.h"

/* The ops control hook of DEALER and ROUTER (engine or inproc, under
 * s->lk): applies a FLOWSTATE (flow.c) or a WEIGHT ("WEIGHT" + u32 BE)
 * from p's peer; anything else is ignored. A weight 0 -> positive change
 * is a wake edge for wait tokens. */
void zl_weight_control(zl_socket_t *s, zl_pipe_t *p, const zl_frame_t *f);

/* The set hook of DEALER_WEIGHT / ROUTER_WEIGHT (sockopt.h; under s->lk,
 * value already in 0..ZLINK_WEIGHT_MAX): stores the socket's own weight and,
 * when it changed, queues a WEIGHT control to every attached peer, which
 * applies it from its next record. Returns 0. */
int zl_weight_set(zl_socket_t *s, int value);

#endif /* ZL_PROTOCOLS_WEIGHT_H */
