/* An independent pointer chase, to cross-check `memperf latency`.
 *
 *   cc -O2 -o chase bench/chase.c && ./chase SIZE_KIB thp|4k|2m SECONDS SEED
 *
 * Allocates SIZE_KIB of memory on a 2 MiB boundary (THP via madvise, 4 KiB
 * pages with MADV_NOHUGEPAGE, or hugetlb 2 MiB pages), links every 64-byte
 * line into one random cycle (Sattolo's algorithm), walks it once to warm
 * up, then walks on in blocks of 2^20 loads until SECONDS have passed, and
 * prints the nanoseconds per dependent load. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static uint64_t state;
static uint64_t next_random(void) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s SIZE_KIB thp|4k|2m SECONDS SEED\n", argv[0]);
        return 2;
    }
    size_t bytes = (size_t)atol(argv[1]) << 10;
    const char *policy = argv[2];
    double seconds = atof(argv[3]);
    state = strtoull(argv[4], NULL, 0);
    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
    if (!strcmp(policy, "2m")) flags |= MAP_HUGETLB;
    char *raw = mmap(NULL, bytes + (2 << 20), PROT_READ | PROT_WRITE, flags, -1, 0);
    if (raw == MAP_FAILED) { perror("mmap"); return 2; }
    char *mem = (char *)(((uintptr_t)raw + (2 << 20) - 1) & ~((uintptr_t)(2 << 20) - 1));
    if (!strcmp(policy, "2m")) mem = raw;
    if (!strcmp(policy, "thp")) madvise(mem, bytes, MADV_HUGEPAGE);
    if (!strcmp(policy, "4k")) madvise(mem, bytes, MADV_NOHUGEPAGE);
    memset(mem, 1, bytes);
    size_t n = bytes / 64;
    size_t *perm = malloc(n * sizeof *perm);
    for (size_t i = 0; i < n; i++) perm[i] = i;
    for (size_t i = n - 1; i > 0; i--) { /* Sattolo: one cycle */
        size_t j = next_random() % i;
        size_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    for (size_t i = 0; i < n; i++) *(char **)(mem + i * 64) = mem + perm[i] * 64;
    free(perm);
    char **p = (char **)mem;
    for (size_t i = 0; i < n; i++) p = (char **)*p; /* warm-up: one traversal */
    struct timespec t0, t1;
    long steps = 0;
    double ns = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (long i = 0; i < (1L << 20); i++) p = (char **)*p;
        steps += 1L << 20;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
    } while (ns < seconds * 1e9);
    printf("%.3f\n", ns / steps);
    return p == NULL; /* keep the chase alive */
}
