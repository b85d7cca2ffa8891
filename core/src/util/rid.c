/*
 * rid.c — default routing ids (rid.h).
 */
#include "util/rid.h"

#include "util/platform.h"

void zl_routing_id_generate(zlink_routing_id_t *rid)
{
    memset(rid, 0, sizeof *rid);
    rid->size = 16;
    zl_plat_random(rid->data, 16);
    rid->data[6] = (uint8_t)((rid->data[6] & 0x0F) | 0x40); /* version 4 */
    rid->data[8] = (uint8_t)((rid->data[8] & 0x3F) | 0x80); /* RFC 4122 variant */
}
