/*
 * fuzz_common.h — helpers shared by the fuzz targets (fuzz/README.md).
 *
 * FZ_CHECK is the targets' assertion: it prints the broken condition and
 * aborts, which libFuzzer reports as a crash and saves the input. It is
 * active in every build (no NDEBUG dependence).
 *
 * fz_reader_t takes the control bytes of an input (configuration, split
 * points, part lengths) from its front; what is left is the payload the
 * decoder sees.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FZ_CHECK(cond)                                                              \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                \
        }                                                                           \
    } while (0)

typedef struct fz_reader {
    const uint8_t *p;
    size_t n;
} fz_reader_t;

/* The next byte, or 0 when the input is used up. */
static inline uint8_t fz_u8(fz_reader_t *r)
{
    if (r->n == 0)
        return 0;
    uint8_t v = r->p[0];
    r->p++;
    r->n--;
    return v;
}

static inline uint16_t fz_u16(fz_reader_t *r)
{
    uint16_t hi = fz_u8(r);
    return (uint16_t)((hi << 8) | fz_u8(r));
}

/* Split points: a count (u8, modulo max + 1) and that many u16 BE values
 * taken from r. fz_cuts_fit then maps them onto a stream of len bytes
 * (modulo len + 1) and sorts them (duplicates kept: an empty read is a
 * legal read). Returns the number of cuts. */
static inline size_t fz_cuts(fz_reader_t *r, size_t *cuts, size_t max)
{
    size_t k = fz_u8(r) % (max + 1);
    for (size_t i = 0; i < k; i++)
        cuts[i] = fz_u16(r);
    return k;
}

static inline void fz_cuts_fit(size_t *cuts, size_t k, size_t len)
{
    for (size_t i = 0; i < k; i++)
        cuts[i] %= len + 1;
    for (size_t i = 1; i < k; i++) { /* insertion sort: k is small */
        size_t v = cuts[i], j = i;
        while (j > 0 && cuts[j - 1] > v) {
            cuts[j] = cuts[j - 1];
            j--;
        }
        cuts[j] = v;
    }
}

#endif
