/* A neighbour that streams memory on one CPU, switched on and off: what a
 * busy co-tenant does to a shared host's memory.
 *
 *   cc -O2 -o streamer bench/streamer.c && ./streamer CPU MIB PERIOD_S SECONDS
 *
 * Pins itself to CPU, then for SECONDS reads an array of MIB MiB (4 KiB
 * pages, written once) over and over for PERIOD_S seconds, sleeps
 * PERIOD_S seconds, and so on; PERIOD_S 0 streams all the time. Prints
 * the GB/s it read while on. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s CPU MIB PERIOD_S SECONDS\n", argv[0]);
        return 2;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(atoi(argv[1]), &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) perror("sched_setaffinity");
    size_t n = (size_t)atol(argv[2]) * 1024 * 1024 / sizeof(uint64_t);
    double period = atof(argv[3]), total = atof(argv[4]);
    uint64_t *a = malloc(n * sizeof *a);
    if (!a) return 1;
    for (size_t i = 0; i < n; i++) a[i] = i;
    double start = now_s(), on_s = 0, bytes = 0;
    volatile uint64_t sink = 0;
    while (now_s() - start < total) {
        double t0 = now_s();
        while (now_s() - t0 < (period > 0 ? period : total) && now_s() - start < total) {
            uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (size_t i = 0; i + 3 < n; i += 4) {
                s0 += a[i];
                s1 += a[i + 1];
                s2 += a[i + 2];
                s3 += a[i + 3];
            }
            sink += s0 + s1 + s2 + s3;
            bytes += n * sizeof *a;
        }
        on_s += now_s() - t0;
        if (period > 0 && now_s() - start < total) usleep((useconds_t)(period * 1e6));
    }
    printf("%.2f\n", bytes / on_s / 1e9);
    return 0;
}
