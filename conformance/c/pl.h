/*
 * pl.h — what the PL case files of the C runner share (seed 004 "Polling",
 * §9): the test helpers of core/tests (public API only) and the completion
 * helpers of pl_completion.c.
 */
#ifndef CONF_PL_H
#define CONF_PL_H

#include "conf.h"
#include "zlink.h"
#include "zltest.h"
#include "zltest_poll.h"
#include "zltest_zlink.h"

/* Transports a case runs on, from its "transports" parameter. */
#define PL_MAX_TRANSPORTS 3

/* d (a DEALER connected to the ROUTER r) sends the REQUEST text with
 * user_context uctx; r receives it and replies with the same text. Returns
 * the request's completion id. On inproc the reply is in d's pipe when
 * this returns. */
zlink_completion_id_t pl_request_answered(void *d, void *r, const char *text, void *uctx);

/* A PAIR a linked to b on inproc whose pipe is full (SNDHWM of 100 bytes,
 * one record "fills the queue" in it), and a DONTWAIT send on a refused
 * with BACKPRESSURED: returns its wait token (nonzero). b receiving the
 * record returns the credit, the token's edge. */
zlink_completion_id_t pl_full_pair_refused(void *ctx, void **a, void **b, void *uctx);

/* One DONTWAIT send of text on a PAIR or DEALER; the result, and the wait
 * token in *token. */
zlink_submit_result_t pl_send_dontwait(void *s, const char *text, void *uctx,
                                       zlink_completion_id_t *token);

/* A DONTWAIT zlink_completion_recv on s gives the record of id, of kind
 * (REQUEST: result OK, reply == the reply's one part; WRITABLE: ADMITTED,
 * user_context uctx). */
#define pl_expect_record(s, kind, id, uctx, reply)                                                 \
    pl__expect_record(__FILE__, __LINE__, (s), (kind), (id), (uctx), (reply))
void pl__expect_record(const char *file, int line, void *s, zlink_completion_kind_t kind,
                       zlink_completion_id_t id, void *uctx, const char *reply);

/* A DONTWAIT zlink_completion_recv on s gives NO_DATA/EAGAIN. */
#define pl_expect_no_record(s) pl__expect_no_record(__FILE__, __LINE__, (s))
void pl__expect_no_record(const char *file, int line, void *s);

/* One wait of p (timeout ms) returns exactly one event, for socket s, with
 * exactly the bits want. */
#define pl_expect_event(p, s, ms, want) pl__expect_event(__FILE__, __LINE__, (p), (s), (ms), (want))
void pl__expect_event(const char *file, int line, void *p, void *s, long ms, short want);

#endif /* CONF_PL_H */
