/*
 * stream.h — what the facade (api/socket_api.c) calls in the STREAM
 * pattern (protocols/stream.c) besides its zl_proto_ops_t.
 */
#ifndef ZL_PROTOCOLS_STREAM_H
#define ZL_PROTOCOLS_STREAM_H

#include "sock/socket.h"

/* The receive mode of STREAM socket s (ZLINK_STREAM_RECV_*). Any thread;
 * takes s->lk. */
int zl_stream_recv_mode(zl_socket_t *s);

/* Receives one whole packet of a STREAM socket in PACKET mode, waiting per
 * flags and RCVTIMEO like every receive: the packet whose completion came
 * first among the connections' oldest ones. Called by the facade inside
 * the close gate with no lock held; takes s->lk while it looks.
 * hdr and body are valid, distinct, empty messages (checked by the
 * caller). On 0 they hold the packet's header and body (the caller owns
 * them; their old empty contents were released, outside s->lk) and *rid
 * points at the socket's view of the packet's routing id. On any error
 * (EAGAIN, ETERM, ESHUTDOWN, ...) nothing was consumed and no output was
 * touched. */
int zl_stream_recv_packet(zl_socket_t *s, zlink_msg_t *hdr, zlink_msg_t *body, int flags,
                          const zlink_routing_id_t **rid);

#endif /* ZL_PROTOCOLS_STREAM_H */
