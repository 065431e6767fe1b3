/* A program with a known working set, for `memperf wss`: map TOTAL MiB
 * and touch every page, then read one word per 4 KiB page of the first
 * HOT1 MiB for SECONDS1 s, then of a different HOT2 MiB (starting right
 * after the first) for SECONDS2 s. Defaults: 2048 256 1.5 512 1.5. It
 * says on stderr when the second phase began, counted from its start.
 * With STRIDE (in 4 KiB pages, default 1), only every STRIDE-th page is
 * touched and read: STRIDE 512 puts each hot page in a 2 MiB span of its
 * own.
 *
 * The pages are touched at most TOUCH_RATE bytes a second: a host that
 * faults 4 KiB pages at several GB/s would otherwise make the touching a
 * phase hotter than either loop, on one CPU and not on another.
 *
 *   cc -O2 -o wss_phases tests/data/wss_phases.c
 *   ./wss_phases [TOTAL HOT1 SECONDS1 HOT2 SECONDS2 [STRIDE]]
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define TOUCH_RATE (512.0 * 1048576)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static size_t stride = 1;

static void sleep_for(double seconds) {
    struct timespec t = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&t, 0);
}

/* One word in every STRIDE-th page of the first TOTAL bytes, no faster
 * than TOUCH_RATE. */
static void touch(uint64_t *a, size_t total) {
    double start = now();
    size_t touched = 0;
    for (size_t i = 0; i < total / 8; i += 512 * stride) {
        a[i] = i;
        touched += 4096;
        if (touched % (16 << 20) == 0) {
            double ahead = touched / TOUCH_RATE - (now() - start);
            if (ahead > 0)
                sleep_for(ahead);
        }
    }
}

static uint64_t loop_over(volatile uint64_t *a, size_t from_page, size_t pages, double seconds) {
    uint64_t sum = 0;
    double end = now() + seconds;
    while (now() < end)
        for (size_t p = from_page; p < from_page + pages; p += stride)
            sum += a[p * 512];
    return sum;
}

int main(int argc, char **argv) {
    double start = now();
    size_t total = (argc > 1 ? strtoull(argv[1], 0, 10) : 2048) << 20;
    size_t hot1 = (argc > 2 ? strtoull(argv[2], 0, 10) : 256) << 20;
    double s1 = argc > 3 ? atof(argv[3]) : 1.5;
    size_t hot2 = (argc > 4 ? strtoull(argv[4], 0, 10) : 512) << 20;
    double s2 = argc > 5 ? atof(argv[5]) : 1.5;
    stride = argc > 6 ? strtoull(argv[6], 0, 10) : 1;
    if (stride < 1)
        stride = 1;
    if (hot1 + hot2 > total) {
        fprintf(stderr, "wss_phases: the two hot sets must fit in the total\n");
        return 2;
    }
    /* Its own mapping, on 4 KiB pages, so the hot sets are exact. */
    /* Only the touched pages are ever resident: no reservation for the
     * rest (a sparse 16 GiB mapping on a smaller machine). */
    uint64_t *a = mmap(0, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (a == MAP_FAILED) {
        perror("wss_phases: mmap");
        return 1;
    }
    madvise(a, total, MADV_NOHUGEPAGE);
    touch(a, total);
    uint64_t sum = loop_over(a, 0, hot1 >> 12, s1);
    fprintf(stderr, "wss_phases: second phase from %.3f s after the start\n", now() - start);
    sum += loop_over(a, hot1 >> 12, hot2 >> 12, s2);
    printf("%llu\n", (unsigned long long)sum);
    return 0;
}
