/* The hugepages test's program: mallocs MiB (argv[1]) and walks it at
 * random, one load per 4 KiB page and more, so translation matters. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    const size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 256;
    const size_t n = mib << 20;
    unsigned char *a = malloc(n);
    if (!a)
        return 1;
    for (size_t i = 0; i < n; i += 4096)
        a[i] = (unsigned char)i;
    unsigned long x = 88172645463325252UL, sum = 0;
    for (long k = 0; k < 20000000; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        sum += a[x % n];
    }
    printf("%lu\n", sum);
    return 0;
}
