/* An independent check of `memperf context`'s lesson: the cost of saving
 * the signal mask on every protected call, as Ruby's EXEC_TAG did.
 *
 *   cc -O2 -o setjmp bench/setjmp.c && ./setjmp _setjmp|sigsetjmp1 CALLS
 *
 * Runs CALLS protected calls, each saving a context with `_setjmp(env)`
 * (no signal mask) or `sigsetjmp(env, 1)` (the mask, through a system
 * call), doing a little work and returning without a longjmp, and prints
 * the nanoseconds per call (median of five timed passes after one warm
 * pass). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile long sink;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

__attribute__((noinline)) static void work(long i) { sink += i * 3 + 1; }

__attribute__((noinline)) static void protected_underscore(long i) {
    jmp_buf env;
    if (_setjmp(env) == 0) work(i);
}

__attribute__((noinline)) static void protected_sigmask(long i) {
    sigjmp_buf env;
    if (sigsetjmp(env, 1) == 0) work(i);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "_setjmp") && strcmp(argv[1], "sigsetjmp1"))) {
        fprintf(stderr, "usage: %s _setjmp|sigsetjmp1 CALLS\n", argv[0]);
        return 2;
    }
    void (*call)(long) = strcmp(argv[1], "_setjmp") == 0 ? protected_underscore : protected_sigmask;
    long n = atol(argv[2]);
    double passes[6];
    for (int p = 0; p < 6; p++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++) call(i);
        passes[p] = (now_ns() - t0) / n;
    }
    qsort(passes + 1, 5, sizeof passes[0], cmp);
    printf("%.3f\n", passes[3]);
    return 0;
}
