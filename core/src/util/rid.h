/*
 * rid.h — routing ids (zlink_routing_id_t): comparison and the default
 * 16-byte id a ROUTER gives a peer that announced none.
 */
#ifndef ZL_RID_H
#define ZL_RID_H

#include "zlink.h"

#include <stdbool.h>
#include <string.h>

/* Generates a default routing id: 16 random bytes in the UUIDv4 layout.
 * Any thread. */
void zl_routing_id_generate(zlink_routing_id_t *rid);

static inline bool zl_rid_equal(const zlink_routing_id_t *a, const zlink_routing_id_t *b)
{
    return a->size == b->size && memcmp(a->data, b->data, a->size) == 0;
}

#endif /* ZL_RID_H */
