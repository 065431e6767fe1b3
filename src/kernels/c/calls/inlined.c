/* The `inlined` variant: the same chain with inlining allowed, the cure.
 * `second` is inlined into `first`, which leaves one function calling
 * itself with an accumulator; the compiler turns that into a loop (GCC's
 * tail recursion with accumulator, clang likewise). No call remains; the
 * disassembly test checks it. The work per level (a compare, an add) is
 * the work of the other variants without the call and return. */
#include "chain.h"

static inline __attribute__((always_inline)) long chain_second(long n);

CHAIN_ALIGNED static long chain_first(long n) {
    if (n <= 1) return 1;
    return 1 + chain_second(n - 1);
}

static inline __attribute__((always_inline)) long chain_second(long n) {
    if (n <= 1) return 1;
    return 1 + chain_first(n - 1);
}

/* Aligned as the other chains (chain.h): its loop then sits at the same
 * place within its lines in every build (unaligned, one build ran it at
 * 0.275 ns a level and the others at 0.138 on the Zen 4 guest). */
CHAIN_ALIGNED long memperf_chain_inlined_first(long n) { return chain_first(n); }
