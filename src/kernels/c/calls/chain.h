/*
 * The call chain of `memperf calls`: two mutually recursive functions that
 * count down and return 1 + the other's result, as in the 2009 article on
 * SPARC register-window traps. `first(n)` makes exactly n calls (the outer
 * call included) and returns n: every call returns its depth.
 *
 * Each variant is compiled from this one body with a different PREFIX,
 * a different translation unit layout and different flags (see build.rs):
 *
 *   direct   first and second in two objects linked into memperf: real
 *            call/ret, no inlining across objects.
 *   plt      first and second in two shared libraries, each call resolved
 *            through the other library's PLT at run time.
 *   got      the same two libraries built with -fno-plt: each call goes
 *            through the GOT directly (what -fno-plt buys).
 *   saves    as direct, but every function keeps all callee-saved
 *            registers live, so every call spills and fills them (the
 *            nearest analogue of a register-window spill/fill).
 *   inlined  both in one object, inlining allowed: the cure.
 */
#ifndef MEMPERF_CHAIN_H
#define MEMPERF_CHAIN_H

/* Forces the compiler to save and restore every callee-saved register in
 * the function that contains it: they are all declared clobbered. */
#if defined(CHAIN_SAVES) && defined(__x86_64__)
#define CLOBBER_CALLEE_SAVED() __asm__ volatile("" ::: "rbx", "r12", "r13", "r14", "r15", "memory")
#elif defined(CHAIN_SAVES) && defined(__aarch64__)
#define CLOBBER_CALLEE_SAVED()                                                                     \
    __asm__ volatile("" ::: "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", \
                     "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory")
#else
#define CLOBBER_CALLEE_SAVED() ((void)0)
#endif

/* Each function of a chain starts a 64-byte line. Otherwise where its code
 * falls within a line follows whatever else the linker placed before it,
 * and so every change to memperf: on a Zen 4 guest the `direct` chain read
 * 1.10 ns a call in one build (its functions at 32 and 16 bytes into
 * their lines) and 1.24 in the next (48 and 32), the same source in both,
 * and `compare` called the next build's run a 12% regression. */
#define CHAIN_ALIGNED __attribute__((aligned(64)))

#define CHAIN_CAT2(a, b) a##b
#define CHAIN_CAT(a, b) CHAIN_CAT2(a, b)
#define CHAIN_FIRST CHAIN_CAT(PREFIX, _first)
#define CHAIN_SECOND CHAIN_CAT(PREFIX, _second)

#endif
