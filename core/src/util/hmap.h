/*
 * hmap.h — an intrusive hash table of 64-bit keys.
 *
 * The caller embeds a zl_hnode_t in its own object and owns the memory;
 * the table only links nodes. Several nodes may share a key (the caller
 * tells them apart), so lookups walk the bucket with zl_hmap_first /
 * zl_hmap_next. The bucket array doubles when the table holds more nodes
 * than buckets; a failed doubling leaves the table as it is (longer
 * chains, still correct). A table whose first bucket array could not be
 * allocated chains everything on one bucket inside zl_hmap_t (slow, still
 * correct) and tries again at the next insert. So inserting never fails
 * and never aborts. A zeroed zl_hmap_t is an empty table. Not thread-safe:
 * the owner's lock covers it.
 */
#ifndef ZL_HMAP_H
#define ZL_HMAP_H

#include <stddef.h>
#include <stdint.h>

/* Buckets of a table's first bucket array (it doubles from there). */
#define ZL_HMAP_INITIAL_BUCKETS 16

typedef struct zl_hnode {
    struct zl_hnode *next;
    uint64_t key;
} zl_hnode_t;

typedef struct zl_hmap {
    zl_hnode_t **buckets;
    size_t mask;  /* bucket count - 1 (a power of two), or 0 when none */
    size_t count;
    zl_hnode_t *one; /* the only chain while buckets is NULL (no memory) */
} zl_hmap_t;

/* Links n under key. */
void zl_hmap_insert(zl_hmap_t *m, zl_hnode_t *n, uint64_t key);
/* Unlinks n, which must be in m. */
void zl_hmap_remove(zl_hmap_t *m, zl_hnode_t *n);
/* The first node with key, or NULL; then the next one after n. */
zl_hnode_t *zl_hmap_first(const zl_hmap_t *m, uint64_t key);
zl_hnode_t *zl_hmap_next(const zl_hnode_t *n);
/* Walking every node: chains 0 .. zl_hmap_chains(m) - 1, each starting at
 * zl_hmap_chain(m, i) and linked by next (a node may be unlinked while the
 * walk holds its successor). */
size_t zl_hmap_chains(const zl_hmap_t *m);
zl_hnode_t *zl_hmap_chain(const zl_hmap_t *m, size_t i);
/* Frees the buckets (not the nodes); the table is empty again. */
void zl_hmap_fini(zl_hmap_t *m);

/* A 64-bit mix of a byte string, for composite keys. */
uint64_t zl_hash_bytes(const void *p, size_t n, uint64_t seed);

#endif
