/*
 * test_hmap.c — unit tests of core/src/hmap.h, the intrusive hash table of
 * 64-bit keys: insert, lookup, removal, several nodes under one key, keys
 * that share a bucket, growth of the bucket array, fini, and
 * zl_hash_bytes. The table is single-threaded; so are these cases.
 */
#include "util/hmap.h"
#include "zltest.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct item {
    zl_hnode_t node; /* first member: a node is its item */
    int id;
    bool removed;
} item_t;

static item_t *item_of(zl_hnode_t *n)
{
    return (item_t *)(void *)n;
}

/* How many nodes carry key (walking first/next), and whether every one of
 * them really has that key. */
static int count_key(const zl_hmap_t *m, uint64_t key)
{
    int n = 0;
    for (zl_hnode_t *x = zl_hmap_first(m, key); x != NULL; x = zl_hmap_next(x)) {
        ZT_EQ_U64(x->key, key);
        n++;
    }
    return n;
}

/* The nodes linked in the bucket array, counted by walking every chain. */
static size_t nodes_in_buckets(const zl_hmap_t *m)
{
    size_t n = 0;
    if (m->buckets == NULL)
        return 0;
    for (size_t i = 0; i <= m->mask; i++)
        for (zl_hnode_t *x = m->buckets[i]; x != NULL; x = x->next)
            n++;
    return n;
}

/* The length of the longest chain. */
static size_t longest_chain(const zl_hmap_t *m)
{
    size_t longest = 0;
    for (size_t i = 0; m->buckets != NULL && i <= m->mask; i++) {
        size_t len = 0;
        for (zl_hnode_t *x = m->buckets[i]; x != NULL; x = x->next)
            len++;
        if (len > longest)
            longest = len;
    }
    return longest;
}

static bool power_of_two(size_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

/* A zeroed table is empty: lookups find nothing, fini is harmless. */
static void zeroed_table_is_empty(void)
{
    zl_hmap_t m;
    memset(&m, 0, sizeof m);
    ZT_CHECK(zl_hmap_first(&m, 0) == NULL);
    ZT_CHECK(zl_hmap_first(&m, 12345) == NULL);
    ZT_EQ_INT(m.count, 0);
    zl_hmap_fini(&m);
    ZT_CHECK(m.buckets == NULL);
    ZT_EQ_INT(m.count, 0);
}

/* Every inserted key is found, with its own node; absent keys are not;
 * the count follows; the bucket array starts at 16 and doubles, staying a
 * power of two with at least as many buckets as nodes, and no node is lost
 * across a doubling. */
static void insert_find_and_growth(void)
{
    enum { N = 5000 };
    zl_hmap_t m = {0};
    item_t *items = calloc(N, sizeof *items);
    ZT_CHECK(items != NULL);
    size_t grows = 0, last_buckets = 0;
    for (int i = 0; i < N; i++) {
        items[i].id = i;
        zl_hmap_insert(&m, &items[i].node, (uint64_t)i * 3);
        ZT_EQ_INT(m.count, i + 1);
        size_t buckets = m.mask + 1;
        ZT_CHECK(power_of_two(buckets));
        ZT_CHECK(m.count <= buckets);
        if (i == 0)
            ZT_EQ_INT(buckets, 16);
        if (buckets != last_buckets) {
            if (last_buckets != 0)
                ZT_EQ_INT(buckets, 2 * last_buckets);
            grows++;
            last_buckets = buckets;
            /* right after a doubling, every node so far is still there */
            ZT_EQ_INT(nodes_in_buckets(&m), m.count);
            for (int j = 0; j <= i; j++) {
                zl_hnode_t *x = zl_hmap_first(&m, (uint64_t)j * 3);
                ZT_CHECK(x != NULL);
                ZT_EQ_INT(item_of(x)->id, j);
            }
        }
    }
    ZT_EQ_INT(m.mask + 1, 8192);
    ZT_EQ_INT(grows, 10); /* 16, 32, ... 8192 */
    for (int i = 0; i < N; i++) {
        zl_hnode_t *x = zl_hmap_first(&m, (uint64_t)i * 3);
        ZT_CHECK(x != NULL);
        ZT_EQ_INT(item_of(x)->id, i);
        ZT_CHECK(zl_hmap_next(x) == NULL);
        ZT_CHECK(zl_hmap_first(&m, (uint64_t)i * 3 + 1) == NULL);
    }
    ZT_CHECK(zl_hmap_first(&m, UINT64_MAX) == NULL);
    zl_hmap_fini(&m);
    ZT_CHECK(m.buckets == NULL);
    ZT_EQ_INT(m.count, 0);
    ZT_EQ_INT(m.mask, 0);
    free(items);
}

/* Keys that share a bucket: the chains of a full table hold different
 * keys side by side, and a lookup walks past the others to exactly the
 * nodes of its key. Removing a node anywhere in such a chain (head,
 * middle, tail) leaves the others found. */
static void shared_buckets_and_removal_in_chains(void)
{
    enum { N = 4096 };
    zl_hmap_t m = {0};
    item_t *items = calloc(N, sizeof *items);
    ZT_CHECK(items != NULL);
    for (int i = 0; i < N; i++) {
        items[i].id = i;
        zl_hmap_insert(&m, &items[i].node, 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1));
    }
    /* find a bucket with at least three different keys */
    size_t longest = 0, at = 0;
    for (size_t b = 0; b <= m.mask; b++) {
        size_t len = 0;
        for (zl_hnode_t *x = m.buckets[b]; x != NULL; x = x->next)
            len++;
        if (len > longest) {
            longest = len;
            at = b;
        }
    }
    ZT_CHECK(longest >= 3); /* 4096 keys in 4096 buckets: chains exist */
    zl_hnode_t *chain[64];
    size_t len = 0;
    for (zl_hnode_t *x = m.buckets[at]; x != NULL && len < 64; x = x->next)
        chain[len++] = x;
    for (size_t k = 0; k < len; k++) {
        ZT_EQ_INT(count_key(&m, chain[k]->key), 1);
        ZT_CHECK(zl_hmap_first(&m, chain[k]->key) == chain[k]);
    }
    /* remove the middle, then the head, then the tail of that chain */
    size_t order[3] = {len / 2, 0, len - 1};
    for (int r = 0; r < 3; r++) {
        zl_hnode_t *gone = chain[order[r]];
        uint64_t key = gone->key;
        zl_hmap_remove(&m, gone);
        ZT_CHECK(zl_hmap_first(&m, key) == NULL);
        ZT_EQ_INT(m.count, N - 1 - r);
        chain[order[r]] = NULL;
        for (size_t k = 0; k < len; k++)
            if (chain[k] != NULL)
                ZT_CHECK(zl_hmap_first(&m, chain[k]->key) == chain[k]);
    }
    ZT_EQ_INT(nodes_in_buckets(&m), N - 3);
    zl_hmap_fini(&m);
    free(items);
}

/* Several nodes under one key are all found, each once, by first/next;
 * removing one leaves exactly the others; other keys stay apart. */
static void several_nodes_per_key(void)
{
    zl_hmap_t m = {0};
    item_t items[40];
    memset(items, 0, sizeof items);
    for (int i = 0; i < 40; i++) {
        items[i].id = i;
        zl_hmap_insert(&m, &items[i].node, (uint64_t)(i % 4)); /* 10 per key */
    }
    for (uint64_t k = 0; k < 4; k++)
        ZT_EQ_INT(count_key(&m, k), 10);
    bool seen[40] = {false};
    for (zl_hnode_t *x = zl_hmap_first(&m, 2); x != NULL; x = zl_hmap_next(x)) {
        int id = item_of(x)->id;
        ZT_EQ_INT(id % 4, 2);
        ZT_CHECK(!seen[id]);
        seen[id] = true;
    }
    zl_hmap_remove(&m, &items[6].node); /* key 2 */
    zl_hmap_remove(&m, &items[2].node); /* key 2 */
    ZT_EQ_INT(count_key(&m, 2), 8);
    for (zl_hnode_t *x = zl_hmap_first(&m, 2); x != NULL; x = zl_hmap_next(x))
        ZT_CHECK(item_of(x)->id != 6 && item_of(x)->id != 2);
    ZT_EQ_INT(count_key(&m, 1), 10);
    ZT_EQ_INT(m.count, 38);
    zl_hmap_fini(&m);
}

/* Keys whose low bits are all zero still spread over the buckets (the
 * table mixes keys before masking): no chain is long. Removing every node,
 * in an order unrelated to insertion, empties the table (the bucket array
 * stays); the table takes new nodes after that, and after fini. */
static void remove_all_then_reuse(void)
{
    enum { N = 1000 };
    zl_hmap_t m = {0};
    static item_t items[N];
    memset(items, 0, sizeof items);
    for (int i = 0; i < N; i++)
        zl_hmap_insert(&m, &items[i].node, (uint64_t)i << 20); /* low bits all zero */
    for (int i = 0; i < N; i++)
        ZT_EQ_INT(count_key(&m, (uint64_t)i << 20), 1);
    size_t buckets = m.mask + 1;
    ZT_EQ_INT(buckets, 1024);
    ZT_CHECK(longest_chain(&m) <= 12); /* about 6 expected; unmixed: 1000 */
    for (int step = 0; step < N; step++) {
        int i = (step * 7919) % N; /* 7919 is prime: visits each once */
        ZT_CHECK(!items[i].removed);
        items[i].removed = true;
        zl_hmap_remove(&m, &items[i].node);
        ZT_CHECK(zl_hmap_first(&m, (uint64_t)i << 20) == NULL);
    }
    ZT_EQ_INT(m.count, 0);
    ZT_EQ_INT(nodes_in_buckets(&m), 0);
    ZT_EQ_INT(m.mask + 1, buckets);
    zl_hmap_insert(&m, &items[0].node, 42);
    ZT_CHECK(zl_hmap_first(&m, 42) == &items[0].node);
    zl_hmap_fini(&m);
    zl_hmap_insert(&m, &items[1].node, 43);
    ZT_CHECK(zl_hmap_first(&m, 43) == &items[1].node);
    ZT_CHECK(zl_hmap_first(&m, 42) == NULL);
    ZT_EQ_INT(m.count, 1);
    zl_hmap_fini(&m);
}

/* zl_hash_bytes is a function of the bytes, their length and the seed. */
static void hash_bytes(void)
{
    const char a[] = "routing-id-0001";
    const char b[] = "routing-id-0002";
    uint64_t h = zl_hash_bytes(a, 15, 0);
    ZT_EQ_U64(zl_hash_bytes(a, 15, 0), h);
    ZT_CHECK(zl_hash_bytes(b, 15, 0) != h);
    ZT_CHECK(zl_hash_bytes(a, 14, 0) != h);
    ZT_CHECK(zl_hash_bytes(a, 15, 1) != h);
    ZT_EQ_U64(zl_hash_bytes(NULL, 0, 7), zl_hash_bytes(a, 0, 7));
    ZT_CHECK(zl_hash_bytes(NULL, 0, 7) != zl_hash_bytes(NULL, 0, 8));
    /* one flipped bit anywhere changes the hash */
    unsigned char buf[32];
    memset(buf, 0x5a, sizeof buf);
    uint64_t base = zl_hash_bytes(buf, sizeof buf, 0);
    for (size_t i = 0; i < sizeof buf * 8; i++) {
        buf[i / 8] ^= (unsigned char)(1u << (i % 8));
        ZT_CHECK(zl_hash_bytes(buf, sizeof buf, 0) != base);
        buf[i / 8] ^= (unsigned char)(1u << (i % 8));
    }
}

static const zt_case_t cases[] = {
    ZT_CASE(zeroed_table_is_empty),
    ZT_CASE(insert_find_and_growth),
    ZT_CASE(shared_buckets_and_removal_in_chains),
    ZT_CASE(several_nodes_per_key),
    ZT_CASE(remove_all_then_reuse),
    ZT_CASE(hash_bytes),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
