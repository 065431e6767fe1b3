/* An independent check of `memperf curves` at its saturated all-reads
 * point: one thread chases a random cycle of lines while another streams
 * reads through an array at full speed, each pinned to its own CPU.
 *
 *   cc -O3 -march=native -pthread -o chase-stream bench/chase-stream.c
 *   ./chase-stream SIZE_KIB SECONDS SEED
 *
 * The chase (SIZE_KIB, THP via madvise, every 64-byte line in one random
 * cycle, Sattolo) runs on CPU 0; the reader (its own SIZE_KIB array of
 * doubles, THP off as memperf's traffic arrays are, summed 8 wide) on
 * CPU 1. The reader starts first; the chase walks its cycle once to warm
 * up, then for SECONDS. Prints the chase's ns per dependent load and the
 * reader's GB/s over the same span. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
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

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static atomic_int stop;
static atomic_ullong read_bytes;
static double *array;
static size_t elements;
static volatile double sink;

static void *reader(void *arg) {
    (void)arg;
    pin(1);
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        double s[8] = {0};
        for (size_t i = 0; i < elements; i += 8)
            for (int k = 0; k < 8; k++) s[k] += array[i + k];
        sink = s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
        atomic_fetch_add_explicit(&read_bytes, elements * sizeof(double), memory_order_relaxed);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s SIZE_KIB SECONDS SEED\n", argv[0]);
        return 2;
    }
    size_t bytes = (size_t)atol(argv[1]) << 10;
    double seconds = atof(argv[2]);
    state = strtoull(argv[3], NULL, 0);
    char *raw = mmap(NULL, bytes + (2 << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    array = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED || array == MAP_FAILED) { perror("mmap"); return 2; }
    char *mem = (char *)(((uintptr_t)raw + (2 << 20) - 1) & ~((uintptr_t)(2 << 20) - 1));
    madvise(mem, bytes, MADV_HUGEPAGE);
    madvise(array, bytes, MADV_NOHUGEPAGE);
    memset(mem, 1, bytes);
    elements = bytes / sizeof(double);
    for (size_t i = 0; i < elements; i++) array[i] = (double)(i % 1024 + 1);
    size_t n = bytes / 64;
    size_t *perm = malloc(n * sizeof *perm);
    for (size_t i = 0; i < n; i++) perm[i] = i;
    for (size_t i = n - 1; i > 0; i--) { /* Sattolo: one cycle */
        size_t j = next_random() % i;
        size_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    for (size_t i = 0; i < n; i++) *(char **)(mem + perm[i] * 64) = mem + perm[(i + 1) % n] * 64;
    free(perm);
    pin(0);
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
    char **p = (char **)mem;
    for (size_t i = 0; i < n; i++) p = (char **)*p; /* warm-up: one traversal */
    uint64_t loads = 0;
    unsigned long long b0 = atomic_load(&read_bytes);
    double t0 = now(), t1;
    do {
        for (int i = 0; i < (1 << 16); i++) p = (char **)*p;
        loads += 1 << 16;
        t1 = now();
    } while (t1 - t0 < seconds);
    unsigned long long b1 = atomic_load(&read_bytes);
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    printf("%.3f %.3f %p\n", (t1 - t0) * 1e9 / loads, (b1 - b0) / (t1 - t0) / 1e9, (void *)p);
    return 0;
}
