/*
 * hmap.c — the intrusive hash table of hmap.h: separate chaining over a
 * power-of-two bucket array, keys scrambled by a 64-bit finalizer so that
 * sequential keys spread evenly.
 */
#include "util/hmap.h"

#include <stdlib.h>

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static size_t slot(const zl_hmap_t *m, uint64_t key)
{
    return (size_t)mix64(key) & m->mask;
}

/* The chain key belongs to: a bucket, or the one inline chain while there
 * is no bucket array. */
static zl_hnode_t **chain_of(zl_hmap_t *m, uint64_t key)
{
    return m->buckets != NULL ? &m->buckets[slot(m, key)] : &m->one;
}

/* Doubles the bucket array (or makes the first one, taking the nodes of the
 * inline chain). Without memory the table stays as it is. */
static void grow(zl_hmap_t *m)
{
    size_t n = m->buckets == NULL ? ZL_HMAP_INITIAL_BUCKETS : (m->mask + 1) * 2;
    zl_hnode_t **b = calloc(n, sizeof *b);
    if (b == NULL)
        return;
    zl_hmap_t bigger = {b, n - 1, m->count, NULL};
    size_t chains = zl_hmap_chains(m);
    for (size_t i = 0; i < chains; i++) {
        zl_hnode_t *x = zl_hmap_chain(m, i);
        while (x != NULL) {
            zl_hnode_t *next = x->next;
            size_t k = slot(&bigger, x->key);
            x->next = b[k];
            b[k] = x;
            x = next;
        }
    }
    free(m->buckets);
    *m = bigger;
}

void zl_hmap_insert(zl_hmap_t *m, zl_hnode_t *n, uint64_t key)
{
    if (m->buckets == NULL || m->count > m->mask)
        grow(m);
    n->key = key;
    zl_hnode_t **c = chain_of(m, key);
    n->next = *c;
    *c = n;
    m->count++;
}

void zl_hmap_remove(zl_hmap_t *m, zl_hnode_t *n)
{
    zl_hnode_t **pp = chain_of(m, n->key);
    while (*pp != n)
        pp = &(*pp)->next;
    *pp = n->next;
    n->next = NULL;
    m->count--;
}

zl_hnode_t *zl_hmap_first(const zl_hmap_t *m, uint64_t key)
{
    zl_hnode_t *x = m->buckets != NULL ? m->buckets[slot(m, key)] : m->one;
    while (x != NULL && x->key != key)
        x = x->next;
    return x;
}

size_t zl_hmap_chains(const zl_hmap_t *m)
{
    return m->buckets != NULL ? m->mask + 1 : 1;
}

zl_hnode_t *zl_hmap_chain(const zl_hmap_t *m, size_t i)
{
    return m->buckets != NULL ? m->buckets[i] : m->one;
}

zl_hnode_t *zl_hmap_next(const zl_hnode_t *n)
{
    zl_hnode_t *x = n->next;
    while (x != NULL && x->key != n->key)
        x = x->next;
    return x;
}

void zl_hmap_fini(zl_hmap_t *m)
{
    free(m->buckets);
    m->buckets = NULL;
    m->mask = 0;
    m->count = 0;
    m->one = NULL;
}

uint64_t zl_hash_bytes(const void *p, size_t n, uint64_t seed)
{
    /* FNV-1a over the bytes, then the finalizer. */
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return mix64(h);
}
