/*
 * registry.c — socket type -> pattern operations (protocols.h). A new
 * pattern is one file with its ops table and one row here.
 */
#include "protocols/protocols.h"

#include "proto_tables.h"

#include <stddef.h>

static const zl_proto_ops_t *const registry[] = {
    &zl_pair_ops, &zl_dealer_ops, &zl_router_ops, &zl_pub_ops, &zl_sub_ops, &zl_stream_ops,
};

const zl_proto_ops_t *zl_protocol_for(int type)
{
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++) {
        if (registry[i]->type == type)
            return registry[i];
    }
    return NULL;
}
