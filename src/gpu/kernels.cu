// memperf's device-memory kernels, compiled at run time by NVRTC (see
// src/gpu/nvrtc.rs) for the device's compute capability. BabelStream's
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
