/* Bit helpers for engines that keep board cells in 32-bit masks. */
#ifndef MEEPLE_BITS_H
#define MEEPLE_BITS_H
#include <stdint.h>

/* Population count: the POPCNT instruction where the build enables it (setup.py does on
 * x86-64), else a portable SWAR sum (a plain __builtin_popcount would be a library call). */
static inline int meeple_popcount32(uint32_t x) {
#if defined(__POPCNT__)
    return __builtin_popcount(x);
#else
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    x = (x + (x >> 4)) & 0x0F0F0F0Fu;
    return (int)((x * 0x01010101u) >> 24);
#endif
}
/* 64-bit masks (boards of up to 64 cells). */
static inline int meeple_popcount64(uint64_t x) {
#if defined(__POPCNT__)
    return __builtin_popcountll(x);
#else
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (int)((x * 0x0101010101010101ull) >> 56);
#endif
}

/* Index of the k-th (from 0) set bit of a mask, or -1 where it has k or fewer. */
static inline int meeple_nth_bit32(uint32_t x, int k) {
    while (k-- > 0)
        x &= x - 1;
    return x ? __builtin_ctz(x) : -1;
}

/* Index of the lowest set bit of a non-zero mask. */
static inline int meeple_lowest64(uint64_t x) {
    return __builtin_ctzll(x);
}

#endif
