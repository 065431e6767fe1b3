/*
 * The 2002 sample application (random regions of three large float
 * arrays), instrumented with memperf's region API the way libcpc's
 * cpc_take_sample was used around doit().
 *
 *     cc -O2 -Iinclude examples/region_sample.c -Ltarget/release -lmemperf -o region_sample
 *     MEMPERF_REGIONS=regions.json LD_LIBRARY_PATH=target/release ./region_sample [MiB per array] [rows]
 *     memperf report regions.json
 */
#include <memperf.h>
#include <stdio.h>
#include <stdlib.h>

#define ROW 512 /* floats per row: 2 KiB */

static float *f1, *f2, *f3;
static long *index_of;

/* The inner loop of the article: one row per index, a random row each time. */
static double doit(long rows, long nindex)
{
    double tmp = 0.0;
    for (long i = 0; i < nindex; i++) {
        const long base = index_of[i] * ROW;
        for (long j = base; j < base + ROW; j++)
            tmp -= f1[j] * f1[j] + f2[j] * f2[j] - f3[j] * f3[j];
    }
    (void)rows;
    return tmp;
}

int main(int argc, char **argv)
{
    const long mib = argc > 1 ? atol(argv[1]) : 32;
    const long nindex = argc > 2 ? atol(argv[2]) : 20000;
    const long n = mib * 1024 * 1024 / (long)sizeof(float);
    const long rows = n / ROW;
    if (mib <= 0 || nindex <= 0 || rows == 0) {
        fprintf(stderr, "usage: region_sample [MiB per array > 0] [rows > 0]\n");
        return 2;
    }
    mp_region_begin("run");
    mp_region_begin("init");
    f1 = malloc(n * sizeof(float));
    f2 = malloc(n * sizeof(float));
    f3 = malloc(n * sizeof(float));
    index_of = malloc(nindex * sizeof(long));
    if (!f1 || !f2 || !f3 || !index_of) {
        fprintf(stderr, "region_sample: out of memory\n");
        return 1;
    }
    for (long j = 0; j < n; j++) {
        f1[j] = (float)(j % 7) * 0.5f;
        f2[j] = (float)(j % 5) * 0.25f;
        f3[j] = (float)(j % 3) * 0.125f;
    }
    unsigned long seed = 12345;
    for (long i = 0; i < nindex; i++) {
        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
        index_of[i] = (long)((seed >> 33) % (unsigned long)rows);
    }
    mp_region_end("init");
    double tmp = 0.0;
    for (int pass = 0; pass < 3; pass++) {
        mp_region_begin("doit");
        tmp += doit(rows, nindex);
        mp_region_end("doit");
    }
    mp_region_end("run");
    printf("tmp = %.6e\n", tmp);
    return 0;
}
