/* A program that reads 2 GiB at random (issue 25's huge-page A/B peer):
 * malloc the array (so glibc.malloc.hugetlb reaches it), write every
 * element once, then make independent random reads over the whole of it
 * and print their sum, so nothing is optimised away. Every read misses
 * the TLB's reach on 4 KiB pages; on 2 MiB pages the walks are short.
 *
 *   cc -O2 -o random-reader bench/random-reader.c
 *   ./random-reader [MiB] [reads in millions]     (default 2048, 64)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? strtoull(argv[1], 0, 10) : 2048;
    size_t reads = (argc > 2 ? strtoull(argv[2], 0, 10) : 64) * 1000000ull;
    size_t n = mib * (1ull << 20) / sizeof(uint64_t);
    uint64_t *a = malloc(n * sizeof(uint64_t));
    if (!a || n == 0) {
        fprintf(stderr, "random-reader: cannot allocate %zu MiB\n", mib);
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = i;
    uint64_t x = 0x9e3779b97f4a7c15ull, sum = 0;
    for (size_t i = 0; i < reads; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        sum += a[(x >> 11) % n];
    }
    printf("%llu\n", (unsigned long long)sum);
    free(a);
    return 0;
}
