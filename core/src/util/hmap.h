/*
 * hmap.h — an intrusive hash table of 64-bit keys.
 *
 * The caller embeds a zl_hnode_t in its own object and owns the memory;
 * the table only links nodes. Several nodes may share a key (the caller
 * tells them apart), so lookups walk the bucket with zl_hmap_first /
 * zl_hmap_next. The bucket array doubles when the table holds more nodes
 * than buckets; a failed doubling leaves the table as it is (longer
 * chains, still correct), so inserting never fails. A zeroed zl_hmap_t is
 * an empty table. Not thread-safe: the owner's lock covers it.
 */
#ifndef ZL_HMAP_H
#define ZL_HMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct zl_hnode {
    struct zl_hnode *next;
    uint64_t key;
} zl_hnode_t;

typedef struct zl_hmap {
    zl_hnode_t **buckets;
    size_t mask;  /* bucket count - 1 (a power of two), or 0 when none */
    size_t count;
} zl_hmap_t;

/* Links n under key. */
void zl_hmap_insert(zl_hmap_t *m, zl_hnode_t *n, uint64_t key);
/* Unlinks n, which must be in m. */
void zl_hmap_remove(zl_hmap_t *m, zl_hnode_t *n);
/* The first node with key, or NULL; then the next one after n. */
zl_hnode_t *zl_hmap_first(const zl_hmap_t *m, uint64_t key);
zl_hnode_t *zl_hmap_next(const zl_hnode_t *n);
/* Frees the buckets (not the nodes); the table is empty again. */
void zl_hmap_fini(zl_hmap_t *m);

/* A 64-bit mix of a byte string, for composite keys. */
uint64_t zl_hash_bytes(const void *p, size_t n, uint64_t seed);

#endif
