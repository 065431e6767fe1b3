// Does a DRAM read depend on which guest frames a region got?
//
// Maps REGIONS (default 8) regions of 128 MiB on 4 KiB pages
// (MADV_NOHUGEPAGE), each first touched in a shuffled page order (so frame
// order is scattered alike in all), reads them in rotation for 9 rounds
// with AVX-512 loads (four accumulators), and prints each region's median
// rate with how many of its pages share each 2 MiB block of guest-physical
// memory their frames lie in, and the share of its frames in each GiB
// (from /proc/self/pagemap: root, or it prints 0). Two processes whose
// regions got the same frames print the same shares.
//
// With FREED=MiB, a region of that size on transparent huge pages is
// touched and unmapped before each odd-numbered region is mapped, so that
// region may take its frames from the whole 2 MiB blocks just freed.
// With BLOCKS=1, regions 1 and 3 are instead built from whole 2 MiB
// blocks, touched on transparent huge pages: region 1 has each 4 KiB page
// then moved (mremap, which keeps its frame) to a place in a shuffled
// order, so it is on 4 KiB pages, its frames out of order like the
// others' but filling their blocks; region 3 has its huge pages split
// into 4 KiB pages where they lie (a page's protection changed and put
// back), so its frames fill their blocks in order. Only one region is
// moved page by page: each moved page is a mapping of its own, and a
// second would pass vm.max_map_count (65530).
//
//   cc -O2 -mavx512f -o /tmp/frame-sets bench/frame-sets.c
//   taskset -c 0 /tmp/frame-sets [REGIONS]
//   FREED=512 taskset -c 0 /tmp/frame-sets 4
//   BLOCKS=1 taskset -c 0 /tmp/frame-sets 6
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

// Maps, touches and unmaps `mib` MiB on transparent huge pages.
static void free_huge(size_t mib) {
  size_t len = mib << 20;
  char *p = mmap(0, len + (2UL << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) { perror("mmap"); exit(1); }
  char *a = (char *)(((uintptr_t)p + (2UL << 20) - 1) & ~((2UL << 20) - 1));
  madvise(a, len, MADV_HUGEPAGE);
  memset(a, 1, len);
  munmap(p, len + (2UL << 20));
}

// A region on 4 KiB pages whose frames fill whole 2 MiB blocks, in a
// shuffled page order.
static char *map_whole_blocks(void) {
  size_t huge = 2UL << 20, pages = REGION / 4096;
  char *p = mmap(0, REGION + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  char *dst = mmap(0, REGION, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED || dst == MAP_FAILED) { perror("mmap"); exit(1); }
  char *a = (char *)(((uintptr_t)p + huge - 1) & ~(huge - 1));
  madvise(a, REGION, MADV_HUGEPAGE);
  memset(a, 1, REGION);
  madvise(a, REGION, MADV_NOHUGEPAGE);
  size_t *order = malloc(pages * sizeof *order);
  for (size_t i = 0; i < pages; i++) order[i] = i;
  for (size_t i = pages - 1; i > 0; i--) {
    size_t j = ((size_t)rand() * RAND_MAX + rand()) % (i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  // The range is only reserved: holes left mapped would be VMAs of their
  // own between the moved pages, and 32768 pages make 65536 of them.
  // Nothing maps in between (the order is allocated already).
  munmap(dst, REGION);
  for (size_t i = 0; i < pages; i++)
    if (mremap(a + i * 4096, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, dst + order[i] * 4096) == MAP_FAILED) {
      perror("mremap");
      exit(1);
    }
  free(order);
  munmap(p, REGION + huge);
  return dst;
}

// A region on 4 KiB pages whose frames fill whole 2 MiB blocks in order:
// huge pages split where they lie.
static char *map_split(void) {
  size_t huge = 2UL << 20;
  char *p = mmap(0, REGION + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) { perror("mmap"); exit(1); }
  char *a = (char *)(((uintptr_t)p + huge - 1) & ~(huge - 1));
  madvise(a, REGION, MADV_HUGEPAGE);
  memset(a, 1, REGION);
  madvise(a, REGION, MADV_NOHUGEPAGE);
  for (size_t k = 0; k < REGION; k += huge) {
    mprotect(a + k, 4096, PROT_READ);
    mprotect(a + k, 4096, PROT_READ | PROT_WRITE);
  }
  return a;
}

static int by_frame(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return (a > b) - (a < b);
}

// Pages per distinct 2 MiB block of guest-physical memory, then the
// percent of the region's frames in each GiB.
static void gib_shares(const char *p) {
  size_t pages = REGION / 4096;
  uint64_t *e = malloc(pages * 8);
  int fd = open("/proc/self/pagemap", O_RDONLY);
  if (fd < 0 || pread(fd, e, pages * 8, (uintptr_t)p / 4096 * 8) != (ssize_t)(pages * 8)) memset(e, 0, pages * 8);
  if (fd >= 0) close(fd);
  size_t in[GIBS] = {0}, blocks = 0;
  for (size_t i = 0; i < pages; i++) {
    e[i] &= (1ULL << 55) - 1;
    uint64_t gib = (e[i] * 4096) >> 30;
    in[gib < GIBS ? gib : GIBS - 1]++;
  }
  qsort(e, pages, 8, by_frame);
  for (size_t i = 0; i < pages; i++) blocks += i == 0 || e[i] / 512 != e[i - 1] / 512;
  printf("%6.1f  ", (double)pages / blocks);
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
  size_t freed = getenv("FREED") ? strtoul(getenv("FREED"), 0, 10) : 0;
  int blocks = getenv("BLOCKS") && atoi(getenv("BLOCKS"));
  for (int k = 0; k < n; k++) {
    if (freed && k % 2) free_huge(freed);
    r[k] = blocks && k == 1 ? map_whole_blocks() : blocks && k == 3 ? map_split() : map_shuffled();
  }
  for (int round = 0; round < ROUNDS; round++)
    for (int k = 0; k < n; k++) rate[k][round] = read_rate(r[k]);
  printf("region  GB/s (min..max)   pages/2MiB  %% of frames in GiB 0, 1, 2, ...\n");
  for (int k = 0; k < n; k++) {
    qsort(rate[k], ROUNDS, sizeof(double), by_value);
    printf("%6d %5.1f (%4.1f..%4.1f) ", k, rate[k][ROUNDS / 2], rate[k][0], rate[k][ROUNDS - 1]);
    gib_shares(r[k]);
  }
  return 0;
}
