// Does a DRAM read depend on which guest frames a region got?
//
// Maps REGIONS (default 8) regions of 128 MiB on 4 KiB pages
// (MADV_NOHUGEPAGE), each first touched in a shuffled page order (so frame
// order is scattered alike in all), reads them in rotation for 9 rounds
// with AVX-512 loads (four accumulators), and prints each region's median
// rate with the share of its frames in each GiB of guest-physical memory
// (from /proc/self/pagemap: root, or every share reads 0). Two processes
// whose regions got the same frames print the same shares.
//
//   cc -O2 -mavx512f -o /tmp/frame-sets bench/frame-sets.c
//   taskset -c 0 /tmp/frame-sets [REGIONS]
#define _GNU_SOURCE
#include <fcntl.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define REGION (128UL << 20)
#define ROUNDS 9
#define MAX_REGIONS 64
#define GIBS 32

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// A region whose pages are first touched in a shuffled order.
static char *map_shuffled(void) {
  char *p = mmap(0, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) { perror("mmap"); exit(1); }
  madvise(p, REGION, MADV_NOHUGEPAGE);
  size_t pages = REGION / 4096, *order = malloc(pages * sizeof *order);
  for (size_t i = 0; i < pages; i++) order[i] = i;
  for (size_t i = pages - 1; i > 0; i--) {
    size_t j = ((size_t)rand() * RAND_MAX + rand()) % (i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (size_t i = 0; i < pages; i++) p[order[i] * 4096] = 1;
  free(order);
  memset(p, 1, REGION);
  return p;
}

// GB/s of two read passes.
static double read_rate(const char *p) {
  __m512d a = _mm512_setzero_pd(), b = a, c = a, d = a;
  double t0 = now();
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < REGION; i += 256) {
      a = _mm512_add_pd(a, _mm512_load_pd((const double *)(p + i)));
      b = _mm512_add_pd(b, _mm512_load_pd((const double *)(p + i + 64)));
      c = _mm512_add_pd(c, _mm512_load_pd((const double *)(p + i + 128)));
      d = _mm512_add_pd(d, _mm512_load_pd((const double *)(p + i + 192)));
    }
  double t = now() - t0;
  volatile double sink = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a, b), _mm512_add_pd(c, d)));
  (void)sink;
  return 2.0 * REGION / t / 1e9;
}

// Percent of the region's frames in each GiB of guest-physical memory.
static void gib_shares(const char *p) {
  size_t pages = REGION / 4096;
  uint64_t *e = malloc(pages * 8);
  int fd = open("/proc/self/pagemap", O_RDONLY);
  if (fd < 0 || pread(fd, e, pages * 8, (uintptr_t)p / 4096 * 8) != (ssize_t)(pages * 8)) memset(e, 0, pages * 8);
  if (fd >= 0) close(fd);
  size_t in[GIBS] = {0};
  for (size_t i = 0; i < pages; i++) {
    uint64_t gib = ((e[i] & ((1ULL << 55) - 1)) * 4096) >> 30;
    in[gib < GIBS ? gib : GIBS - 1]++;
  }
  for (int g = 0; g < GIBS; g++) printf("%3zu", in[g] * 100 / pages);
  printf("\n");
  free(e);
}

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 8;
  if (n < 1 || n > MAX_REGIONS) { fprintf(stderr, "REGIONS must be 1 to %d\n", MAX_REGIONS); return 2; }
  char *r[MAX_REGIONS];
  static double rate[MAX_REGIONS][ROUNDS];
  for (int k = 0; k < n; k++) r[k] = map_shuffled();
  for (int round = 0; round < ROUNDS; round++)
    for (int k = 0; k < n; k++) rate[k][round] = read_rate(r[k]);
  printf("region  GB/s (min..max)      %% of frames in GiB 0, 1, 2, ...\n");
  for (int k = 0; k < n; k++) {
    qsort(rate[k], ROUNDS, sizeof(double), by_value);
    printf("%6d %5.1f (%4.1f..%4.1f) ", k, rate[k][ROUNDS / 2], rate[k][0], rate[k][ROUNDS - 1]);
    gib_shares(r[k]);
  }
  return 0;
}
