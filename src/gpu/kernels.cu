// memperf's device-memory kernels, compiled at run time by NVRTC (see
// src/gpu/nvrtc.rs) for the device's compute capability; the latency
// kernels (chain, chase, spread, loaded) follow the streaming ones, and
// the host link's (gate, SM copy) come last. BabelStream's
// five (copy, mul, add, triad, nstream) and its dot, with a read-only and
// a write-only kernel, each over n doubles in a grid-stride loop, so any
// grid and block size covers the arrays. The reductions (dot, read) leave
// one partial sum per block, which the host adds up.
//
// The argument lists are fixed: src/gpu/stream.rs's Arrays::args passes
// them, and src/gpu/fake.rs replays each kernel on the host in tests.

#define GRID_STRIDE(i, n) \
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (unsigned long long)gridDim.x * blockDim.x)

extern "C" __global__ void memperf_init(double *a, double *b, double *c, double va, double vb, double vc,
                                        unsigned long long n) {
    GRID_STRIDE(i, n) {
        a[i] = va;
        b[i] = vb;
        c[i] = vc;
    }
}

extern "C" __global__ void memperf_copy(const double *a, double *c, unsigned long long n) {
    GRID_STRIDE(i, n) c[i] = a[i];
}

extern "C" __global__ void memperf_mul(double *b, const double *c, double scalar, unsigned long long n) {
    GRID_STRIDE(i, n) b[i] = scalar * c[i];
}

extern "C" __global__ void memperf_add(const double *a, const double *b, double *c, unsigned long long n) {
    GRID_STRIDE(i, n) c[i] = a[i] + b[i];
}

extern "C" __global__ void memperf_triad(double *a, const double *b, const double *c, double scalar,
                                         unsigned long long n) {
    GRID_STRIDE(i, n) a[i] = b[i] + scalar * c[i];
}

extern "C" __global__ void memperf_nstream(double *a, const double *b, const double *c, double scalar,
                                           unsigned long long n) {
    GRID_STRIDE(i, n) a[i] += b[i] + scalar * c[i];
}

extern "C" __global__ void memperf_write(double *a, double v, unsigned long long n) {
    GRID_STRIDE(i, n) a[i] = v;
}

// The block's threads' sums added in shared memory; thread 0 writes the
// block's. blockDim.x is a power of two of at most 1024.
__device__ void block_sum(double sum, double *partial) {
    __shared__ double s[1024];
    s[threadIdx.x] = sum;
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
        __syncthreads();
        if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

extern "C" __global__ void memperf_dot(const double *a, const double *b, double *partial, unsigned long long n) {
    double sum = 0.0;
    GRID_STRIDE(i, n) sum += a[i] * b[i];
    block_sum(sum, partial);
}

extern "C" __global__ void memperf_read(const double *a, double *partial, unsigned long long n) {
    double sum = 0.0;
    GRID_STRIDE(i, n) sum += a[i];
    block_sum(sum, partial);
}

// The latency kernels (src/gpu/ladder.rs): a chain of `slots` loads,
// `stride` eight-byte words apart, in a random cyclic order the host
// replays (ladder.rs's `slot`): slot(p) is a bijection of [0, slots),
// built by cycle-walking a bijection of the next power of two (an odd
// multiply, a key and a xor-shift, three rounds, all modulo 2^bits). Each
// slot holds the word index of the next.
__device__ unsigned long long memperf_mix(unsigned long long x, unsigned int bits, unsigned long long key) {
    unsigned long long mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    unsigned int shift = (bits + 1) / 2;
    for (int r = 0; r < 3; r++) {
        x = (x * 0x9E3779B97F4A7C15ull + key) & mask;
        if (shift > 0) x ^= x >> shift;
    }
    return x;
}

__device__ unsigned long long memperf_slot(unsigned long long p, unsigned long long slots, unsigned long long key) {
    unsigned int bits = 0;
    while ((1ull << bits) < slots) bits++;
    unsigned long long x = memperf_mix(p, bits, key);
    while (x >= slots) x = memperf_mix(x, bits, key);
    return x;
}

extern "C" __global__ void memperf_chain(unsigned long long *a, unsigned long long slots, unsigned long long stride,
                                         unsigned long long key) {
    GRID_STRIDE(p, slots) {
        unsigned long long next = p + 1 == slots ? 0 : p + 1;
        a[memperf_slot(p, slots, key) * stride] = memperf_slot(next, slots, key) * stride;
    }
}

// Where a chase is: the loaded index stored before the clock is read, so
// the clock cannot be read before the load has returned.
__shared__ volatile unsigned long long memperf_sink;

// The SM's clock, read where the code reads it: the memory clobber keeps
// the compiler from moving it across the sink's store.
__device__ long long memperf_clock(void) {
    long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
    return t;
}

// `n` dependent loads from word j: through the L1, or the L2 only
// (ld.global.cg); the word reached.
__device__ unsigned long long memperf_walk(const unsigned long long *a, unsigned long long j, unsigned long long n,
                                           unsigned long long l2_only) {
    if (l2_only) {
        for (unsigned long long s = 0; s < n; s++) j = __ldcg(a + j);
    } else {
        for (unsigned long long s = 0; s < n; s++) j = a[j];
    }
    return j;
}

// One thread's dependent chase from word `start`: `warm` loads, then
// `steps` timed by the SM's clock, through the L1 or the L2 only.
// out[0]: the index reached; out[1]: the timed loads' cycles.
extern "C" __global__ void memperf_chase(const unsigned long long *a, unsigned long long start,
                                         unsigned long long warm, unsigned long long steps,
                                         unsigned long long cached_l2_only, unsigned long long *out) {
    unsigned long long j = memperf_walk(a, start, warm, cached_l2_only);
    memperf_sink = j;
    long long t0 = memperf_clock();
    j = memperf_walk(a, j, steps, cached_l2_only);
    memperf_sink = j;
    long long t1 = memperf_clock();
    out[0] = j;
    out[1] = (unsigned long long)(t1 - t0);
}

// The L2's latency from every SM at once: thread 0 of each block chases
// the chain (`slots` slots `stride` words apart, in `key`'s order; block b
// from position b * spacing, so no two SMs load the same line together)
// through the L2 only, `steps` loads to warm, then the first `each` of
// `steps` loads timed one by one and all of them together. Block b
// writes, at out + b * (3 + each): its SM, the index reached, the timed
// loads' cycles, then each single load's cycles.
extern "C" __global__ void memperf_spread(const unsigned long long *a, unsigned long long slots,
                                          unsigned long long stride, unsigned long long key,
                                          unsigned long long spacing, unsigned long long steps,
                                          unsigned long long each, unsigned long long *out) {
    if (threadIdx.x != 0) return;
    unsigned long long *mine = out + (unsigned long long)blockIdx.x * (3 + each);
    unsigned int sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    unsigned long long j = memperf_walk(a, memperf_slot(blockIdx.x * spacing % slots, slots, key) * stride, steps, 1);
    for (unsigned long long s = 0; s < each && s < steps; s++) {
        memperf_sink = j;
        long long t = memperf_clock();
        j = __ldcg(a + j);
        memperf_sink = j;
        mine[3 + s] = (unsigned long long)(memperf_clock() - t);
    }
    memperf_sink = j;
    long long t0 = memperf_clock();
    j = memperf_walk(a, j, steps, 1);
    memperf_sink = j;
    long long t1 = memperf_clock();
    mine[0] = sm;
    mine[1] = j;
    mine[2] = (unsigned long long)(t1 - t0);
}

// Latency under load (src/gpu/loaded.rs): block 0's first thread chases
// the chain from word `start`, `steps` loads timed by the SM's clock and
// the GPU's nanosecond timer, then raises out[0]; every other block's
// threads read b (n doubles, n at least their number) in a grid-stride
// loop, each read followed by `delay` cycles of spinning, until the flag
// rises or `limit_ns` pass (both looked at every 32 reads). out[1]: the
// chase's end; out[2]: its cycles; out[3]: bytes the readers read;
// out[4]: its nanoseconds; out[5]: set only if a sum came out negative
// (never: it keeps the reads).
extern "C" __global__ void memperf_loaded(const unsigned long long *a, unsigned long long start,
                                          unsigned long long steps, const double *b, unsigned long long n,
                                          unsigned long long delay, unsigned long long limit_ns,
                                          unsigned long long *out) {
    volatile unsigned long long *flag = out;
    unsigned long long ns0, ns1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns0));
    if (blockIdx.x == 0) {
        if (threadIdx.x != 0) return;
        long long t0 = memperf_clock();
        unsigned long long j = memperf_walk(a, start, steps, 0);
        memperf_sink = j;
        long long t1 = memperf_clock();
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns1));
        out[1] = j;
        out[2] = (unsigned long long)(t1 - t0);
        out[4] = ns1 - ns0;
        __threadfence();
        *flag = 1;
        return;
    }
    unsigned long long i = (unsigned long long)(blockIdx.x - 1) * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)(gridDim.x - 1) * blockDim.x;
    unsigned long long reads = 0;
    double sum = 0.0;
    for (;;) {
        sum += b[i];
        i += stride;
        if (i >= n) i -= n;
        reads++;
        if (delay > 0) {
            long long t = memperf_clock();
            while ((unsigned long long)(memperf_clock() - t) < delay) {
            }
        }
        if ((reads & 31) == 0) {
            if (*flag) break;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns1));
            if (ns1 - ns0 > limit_ns) break;
        }
    }
    atomicAdd(out + 3, reads * 8);
    if (sum < 0.0) out[5] = 1;
}

// The host link (src/gpu/copies.rs). The gate: one thread spins until the
// host raises flag[0] (pinned host memory the device maps) or `limit_ns`
// pass, then writes flag[1]: 0 where the host raised the flag, 1 where the
// limit ended the spin. What is queued behind it starts once the host has
// queued all of it, so no gap of the host's between copies is timed
// (nvbandwidth's way).
extern "C" __global__ void memperf_gate(volatile unsigned long long *flag, unsigned long long limit_ns) {
    unsigned long long ns0, ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns0));
    for (;;) {
        if (flag[0] != 0) {
            flag[1] = 0;
            return;
        }
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
        if (ns - ns0 > limit_ns) {
            flag[1] = 1;
            return;
        }
    }
}

// A copy by the SMs: n 16-byte words from src to dst, either of them
// pinned host memory the device maps, in a grid-stride loop.
extern "C" __global__ void memperf_sm_copy(const ulonglong2 *src, ulonglong2 *dst, unsigned long long n) {
    GRID_STRIDE(i, n) dst[i] = src[i];
}
