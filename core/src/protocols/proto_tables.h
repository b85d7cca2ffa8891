/*
 * proto_tables.h — private to protocols/: the ops table each pattern file
 * defines, for registry.c.
 */
#ifndef ZL_PROTO_TABLES_H
#define ZL_PROTO_TABLES_H

#include "sock/sock_impl.h"

extern const zl_proto_ops_t zl_pair_ops;   /* pair.c */
extern const zl_proto_ops_t zl_dealer_ops; /* dealer.c */
extern const zl_proto_ops_t zl_router_ops; /* router.c */
extern const zl_proto_ops_t zl_pub_ops;    /* pubsub.c */
extern const zl_proto_ops_t zl_sub_ops;    /* pubsub.c */
extern const zl_proto_ops_t zl_stream_ops; /* stream.c */

#endif /* ZL_PROTO_TABLES_H */
