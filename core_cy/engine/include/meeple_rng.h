/* Counter-based random streams for meeplelab.
 *
 * A stream is a 64-bit key plus a counter; output n is a SplitMix64 finaliser of
 * key + n * golden-ratio.  Keys are derived from (seed, a, b, c) only, so game i of an
 * experiment gets the same stream however the games are split into shards or workers.
 * Header-only and static inline so that every engine inlines it into its hot loop.
 */
#ifndef MEEPLE_RNG_H
#define MEEPLE_RNG_H
#include <stddef.h>
#include <stdint.h>
#include "meeple_bits.h"

typedef struct {
    uint64_t key;
    uint64_t ctr;
} Rng;

static inline uint64_t meeple_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline void rng_seed(Rng *r, uint64_t seed, uint64_t a, uint64_t b, uint64_t c) {
    uint64_t k = meeple_mix64(seed + 0x9e3779b97f4a7c15ULL);
    k = meeple_mix64(k ^ (a + 0x632be59bd9b4e019ULL));
    k = meeple_mix64(k ^ (b + 0x85157af5ULL));
    k = meeple_mix64(k ^ (c + 0xd6e8feb86659fd93ULL));
    r->key = k;
    r->ctr = 0;
}

static inline uint64_t rng_next(Rng *r) {
    r->ctr += 1;
    return meeple_mix64(r->key + r->ctr * 0x9e3779b97f4a7c15ULL);
}

/* A tie-break key: equal values are ordered by this hash of the item salted by one draw per
 * decision, which is a random order without a draw per tie. */
static inline uint64_t rng_tie_key(uint64_t salt, uint64_t item) {
    return item * 0x9E3779B97F4A7C15ULL ^ salt;
}

/* Uniform integer in [0, n) by Lemire's multiply-shift (bias below 2^-32 for n < 2^32). */
static inline uint32_t rng_below(Rng *r, uint32_t n) {
    uint64_t x = rng_next(r) >> 32;
    return (uint32_t)((x * (uint64_t)n) >> 32);
}

/* A uniformly drawn set bit of a 32-bit mask (-1 for an empty mask; one draw either way). */
static inline int rng_bit(Rng *r, uint32_t mask) {
    return meeple_nth_bit32(mask, (int)rng_below(r, (uint32_t)meeple_popcount32(mask)));
}

/* Uniform double in [0, 1). */
static inline double rng_uniform(Rng *r) {
    return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Fisher-Yates shuffle of n items of `size` bytes each (any element type: pass
 * sizeof(a[0])), drawing j = rng_below(i + 1) for i = n-1 down to 1.  Every engine shuffles
 * with this one function, so equal streams give equal orders in every game.  `size` is a
 * constant at each call, so the inlined byte swap compiles to one load and store. */
static inline void rng_shuffle(Rng *r, void *items, int n, size_t size) {
    unsigned char *a = (unsigned char *)items;
    for (int i = n - 1; i > 0; i--) {
        unsigned char *x = a + (size_t)i * size;
        unsigned char *y = a + (size_t)rng_below(r, (uint32_t)(i + 1)) * size;
        for (size_t k = 0; k < size; k++) {
            unsigned char t = x[k];
            x[k] = y[k];
            y[k] = t;
        }
    }
}

#endif
