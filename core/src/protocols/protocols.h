/*
 * protocols.h — the socket patterns, registered by socket type.
 *
 * Each pattern (pair.c, dealer.c, router.c, pubsub.c, stream.c) is one
 * zl_proto_ops_t table (sock/socket.h says what each operation may do and
 * under which lock). The socket core names no pattern: the facade looks the
 * table up here and hands it to zl_socket_new.
 */
#ifndef ZL_PROTOCOLS_H
#define ZL_PROTOCOLS_H

#include "sock/socket.h"

/* The pattern of socket type `type` (ZLINK_PAIR ...), or NULL when ZLink
 * has none. Any thread; no locks. */
const zl_proto_ops_t *zl_protocol_for(int type);

/* SUB (pubsub.c): adds or removes one subscription (zlink_subscribe), and
 * reads the one at index (zlink_subscription_at). Take s->lk; 0 or an
 * errno. */
int zl_sub_subscription(zl_socket_t *s, const char *topic, bool add);
int zl_sub_subscription_at(zl_socket_t *s, size_t index, char *buf, size_t *len);

#endif /* ZL_PROTOCOLS_H */
