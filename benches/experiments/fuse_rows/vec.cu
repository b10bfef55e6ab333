// Hand-written softmax / layer norm row kernels over (8192, 8192) f32, to find the shape that
// reaches 0.85 of the copy ceiling before the generator writes it: the row held in registers
// (16-byte or 4-byte loads, all issued before use), in shared memory, streaming cache hints,
// and bounds-checked (any cols) forms. Run by vec.sh on the GPU machine.
#include "timing.cuh"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

__device__ __forceinline__ float warp_max(float v) {
    for (int m = 16; m > 0; m /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, m));
    return v;
}
__device__ __forceinline__ float warp_sum(float v) {
    for (int m = 16; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
    return v;
}
// As the generator does: lane 0 of each warp writes a slot, a barrier, every thread folds them.
template <bool MAX>
__device__ __forceinline__ float block_fold(float v, float* red) {
    v = MAX ? warp_max(v) : warp_sum(v);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = v;
    __syncthreads();
    float r = MAX ? -INFINITY : 0.0f;
    for (int w = 0; w < (blockDim.x + 31) / 32; ++w) r = MAX ? fmaxf(r, red[w]) : r + red[w];
    return r;
}

enum Hint { PLAIN, STREAM };
__device__ __forceinline__ float4 ld4(const float4* p, Hint h) { return h == STREAM ? __ldcs(p) : *p; }
__device__ __forceinline__ void st4(float4* p, float4 v, Hint h) {
    if (h == STREAM) __stcs(p, v); else *p = v;
}

// Row in registers, V float4 per thread; CHECK: predicated for any cols (multiple of 4).
template <int T, int V, bool CHECK, Hint H>
__global__ void __launch_bounds__(T) softmax_regs4(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float r0[32], r1[32];
    const float4* xr = (const float4*)(x + (size_t)blockIdx.x * cols);
    float4* yr = (float4*)(y + (size_t)blockIdx.x * cols);
    int n4 = cols / 4;
    float4 v[V];
#pragma unroll
    for (int k = 0; k < V; ++k) {
        int j = threadIdx.x + k * T;
        if (!CHECK || j < n4) v[k] = ld4(xr + j, H);
        else v[k] = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
    }
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < V; ++k) m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
    m = block_fold<true>(m, r0);
    float s = 0;
#pragma unroll
    for (int k = 0; k < V; ++k) {
        int j = threadIdx.x + k * T;
        if (!CHECK || j < n4) s += expf(v[k].x - m) + expf(v[k].y - m) + expf(v[k].z - m) + expf(v[k].w - m);
    }
    s = block_fold<false>(s, r1);
#pragma unroll
    for (int k = 0; k < V; ++k) {
        int j = threadIdx.x + k * T;
        if (!CHECK || j < n4)
            st4(yr + j, make_float4(expf(v[k].x - m) / s, expf(v[k].y - m) / s, expf(v[k].z - m) / s, expf(v[k].w - m) / s), H);
    }
}

// Row in registers, K scalars per thread (x[tid + k*T]), loads first.
template <int T, int K>
__global__ void __launch_bounds__(T) softmax_regs1(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float r0[32], r1[32];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int j = threadIdx.x + k * T;
        v[k] = j < cols ? xr[j] : -INFINITY;
    }
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < K; ++k) m = fmaxf(m, v[k]);
    m = block_fold<true>(m, r0);
    float s = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) if (threadIdx.x + k * T < cols) s += expf(v[k] - m);
    s = block_fold<false>(s, r1);
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int j = threadIdx.x + k * T;
        if (j < cols) yr[j] = expf(v[k] - m) / s;
    }
}

// Row cached in dynamic shared memory, 16-byte loads U float4 per step, loads first.
template <int U>
__global__ void softmax_smem4(const float* __restrict__ x, float* __restrict__ y, int cols) {
    extern __shared__ float4 c[];
    __shared__ float r0[32], r1[32];
    const float4* xr = (const float4*)(x + (size_t)blockIdx.x * cols);
    float4* yr = (float4*)(y + (size_t)blockIdx.x * cols);
    int n4 = cols / 4, T = blockDim.x;
    float m = -INFINITY;
    for (int j0 = threadIdx.x; j0 < n4; j0 += U * T) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) if (j0 + u * T < n4) v[u] = xr[j0 + u * T];
#pragma unroll
        for (int u = 0; u < U; ++u) if (j0 + u * T < n4) {
            c[j0 + u * T] = v[u];
            m = fmaxf(m, fmaxf(fmaxf(v[u].x, v[u].y), fmaxf(v[u].z, v[u].w)));
        }
    }
    m = block_fold<true>(m, r0);
    float s = 0;
    for (int j = threadIdx.x; j < n4; j += T) {
        float4 v = c[j];
        s += expf(v.x - m) + expf(v.y - m) + expf(v.z - m) + expf(v.w - m);
    }
    s = block_fold<false>(s, r1);
    for (int j = threadIdx.x; j < n4; j += T) {
        float4 v = c[j];
        yr[j] = make_float4(expf(v.x - m) / s, expf(v.y - m) / s, expf(v.z - m) / s, expf(v.w - m) / s);
    }
}

// Layer norm (two-pass mean and variance, then scale and shift), row in registers.
template <int T, int V>
__global__ void __launch_bounds__(T) layer_norm_regs4(const float* __restrict__ x, const float* __restrict__ g,
                                                      const float* __restrict__ b, float* __restrict__ y, int cols, float eps) {
    __shared__ float r0[32], r1[32];
    const float4* xr = (const float4*)(x + (size_t)blockIdx.x * cols);
    float4* yr = (float4*)(y + (size_t)blockIdx.x * cols);
    const float4* g4 = (const float4*)g;
    const float4* b4 = (const float4*)b;
    int n4 = cols / 4;
    float4 v[V];
#pragma unroll
    for (int k = 0; k < V; ++k) {
        int j = threadIdx.x + k * T;
        v[k] = j < n4 ? xr[j] : make_float4(0, 0, 0, 0);
    }
    float s = 0;
#pragma unroll
    for (int k = 0; k < V; ++k) s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    float mu = block_fold<false>(s, r0) / cols;
    float q = 0;
#pragma unroll
    for (int k = 0; k < V; ++k) if (threadIdx.x + k * T < n4) {
        float a = v[k].x - mu, bb = v[k].y - mu, cc = v[k].z - mu, d = v[k].w - mu;
        q += a * a + bb * bb + cc * cc + d * d;
    }
    float inv = 1.0f / sqrtf(block_fold<false>(q, r1) / cols + eps);
#pragma unroll
    for (int k = 0; k < V; ++k) {
        int j = threadIdx.x + k * T;
        if (j < n4) {
            float4 gg = g4[j], bv = b4[j];
            yr[j] = make_float4((v[k].x - mu) * inv * gg.x + bv.x, (v[k].y - mu) * inv * gg.y + bv.y,
                                (v[k].z - mu) * inv * gg.z + bv.z, (v[k].w - mu) * inv * gg.w + bv.w);
        }
    }
}

// As softmax_regs1, indexed as the generator writes it: i64 row and column strides, every load
// unconditional at a column clamped to the row.
template <int T, int K>
__global__ void __launch_bounds__(T) softmax_regs1_strided(const float* __restrict__ x, long long rs, long long cs, float* __restrict__ y, long long cols) {
    __shared__ float r0[32], r1[32];
    long long row = blockIdx.x;
    float v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        long long j = threadIdx.x + (long long)k * blockDim.x;
        v[k] = x[row * rs + min(j, cols - 1) * cs];
    }
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < K; ++k) if (threadIdx.x + (long long)k * blockDim.x < cols) m = fmaxf(m, v[k]);
    m = block_fold<true>(m, r0);
    float s = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) if (threadIdx.x + (long long)k * blockDim.x < cols) s += expf(v[k] - m);
    s = block_fold<false>(s, r1);
#pragma unroll
    for (int k = 0; k < K; ++k) {
        long long j = threadIdx.x + (long long)k * blockDim.x;
        if (j < cols) y[row * cols + j] = expf(v[k] - m) / s;
    }
}

// Layer norm with the row in registers, K scalars per thread.
template <int T, int K>
__global__ void __launch_bounds__(T) layer_norm_regs1(const float* __restrict__ x, const float* __restrict__ g,
                                                      const float* __restrict__ b, float* __restrict__ y, int cols, float eps) {
    __shared__ float r0[32], r1[32];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int j = threadIdx.x + k * T;
        v[k] = j < cols ? xr[j] : 0.0f;
    }
    float s = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) s += v[k];
    float mu = block_fold<false>(s, r0) / cols;
    float q = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) if (threadIdx.x + k * T < cols) q += (v[k] - mu) * (v[k] - mu);
    float inv = 1.0f / sqrtf(block_fold<false>(q, r1) / cols + eps);
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int j = threadIdx.x + k * T;
        if (j < cols) yr[j] = (v[k] - mu) * inv * g[j] + b[j];
    }
}

// As softmax_regs1 with the block size known only at run time (RT) and, with WIDE, indexed as
// the generator writes it (u32 columns, a u64 row start plus the column).
template <int K, bool WIDE>
__global__ void softmax_regs1_rt(const float* __restrict__ x, float* __restrict__ y, unsigned cols) {
    __shared__ float r0[32], r1[32];
    unsigned T = blockDim.x, tid = threadIdx.x;
    unsigned long long base = (unsigned long long)blockIdx.x * cols;
    const float* xr = x + (size_t)blockIdx.x * cols;
    float v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        unsigned j = tid + k * T;
        if (WIDE) v[k] = j < cols ? x[base + (unsigned long long)j] : 0.0f;
        else v[k] = (int)j < (int)cols ? xr[(int)j] : 0.0f;
    }
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < K; ++k) if (tid + k * T < cols) m = fmaxf(m, v[k]);
    m = block_fold<true>(m, r0);
    float s = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) if (tid + k * T < cols) s += expf(v[k] - m);
    s = block_fold<false>(s, r1);
#pragma unroll
    for (int k = 0; k < K; ++k) {
        unsigned j = tid + k * T;
        if (j < cols) {
            if (WIDE) y[base + (unsigned long long)j] = expf(v[k] - m) / s;
            else y[(size_t)blockIdx.x * cols + (int)j] = expf(v[k] - m) / s;
        }
    }
}

int main() {
    const int R = 8192, C = 8192;
    const size_t n = (size_t)R * C;
    std::vector<float> h(n), hg(C), hb(C);
    for (size_t i = 0; i < n; ++i) h[i] = (float)((i * 2654435761ull) % 1009) / 97.0f - 5.0f;
    for (int i = 0; i < C; ++i) { hg[i] = 1.0f + (i % 7) * 0.1f; hb[i] = (i % 5) * 0.2f - 0.4f; }
    float *x, *y, *g, *b;
    cudaMalloc(&x, n * 4);
    cudaMalloc(&y, n * 4);
    cudaMalloc(&g, C * 4);
    cudaMalloc(&b, C * 4);
    cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(g, hg.data(), C * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb.data(), C * 4, cudaMemcpyHostToDevice);
    auto time = [](auto f) { return median_ms(f); };
    float copy = time([&] { cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice); });
    printf("copy D2D: %.3f ms, %.0f GB/s\n", copy, 2.0 * n * 4 / (copy * 1e-3) / 1e9);
    std::vector<float> out(n);
    auto check = [&](const char* name, int threads, float t, bool ln) {
        cudaError_t err = cudaDeviceSynchronize();
        cudaMemcpy(out.data(), y, n * 4, cudaMemcpyDeviceToHost);
        double worst = 0;
        for (int r = 0; r < R; r += 997) {
            const float* row = &h[(size_t)r * C];
            if (ln) {
                double mu = 0, var = 0;
                for (int c = 0; c < C; ++c) mu += row[c];
                mu /= C;
                for (int c = 0; c < C; ++c) var += (row[c] - mu) * (row[c] - mu);
                double inv = 1 / std::sqrt(var / C + 1e-5);
                for (int c = 0; c < C; ++c)
                    worst = std::max(worst, std::fabs(out[(size_t)r * C + c] - ((row[c] - mu) * inv * hg[c] + hb[c])));
            } else {
                double m = -INFINITY, s = 0;
                for (int c = 0; c < C; ++c) m = std::max(m, (double)row[c]);
                for (int c = 0; c < C; ++c) s += std::exp(row[c] - m);
                for (int c = 0; c < C; ++c) {
                    double want = std::exp(row[c] - m) / s;
                    worst = std::max(worst, std::fabs(out[(size_t)r * C + c] - want) / want);
                }
            }
        }
        printf("%-24s block %4d: %.3f ms, %.3f of copy, worst err %.1e %s\n", name, threads, t, copy / t, worst,
               cudaGetErrorString(err));
    };
#define SM(NAME, T, KERNEL, SMEM)                                                               \
    do {                                                                                        \
        cudaMemset(y, 0xff, n * 4);                                                             \
        if (SMEM) cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM); \
        float t = time([&] { KERNEL<<<R, T, SMEM>>>(x, y, C); });                               \
        check(NAME, T, t, false);                                                               \
    } while (0)
    SM("regs4", 128, (softmax_regs4<128, 16, false, PLAIN>), 0);
    SM("regs4", 256, (softmax_regs4<256, 8, false, PLAIN>), 0);
    SM("regs4", 512, (softmax_regs4<512, 4, false, PLAIN>), 0);
    SM("regs4", 1024, (softmax_regs4<1024, 2, false, PLAIN>), 0);
    SM("regs4 checked", 256, (softmax_regs4<256, 8, true, PLAIN>), 0);
    SM("regs4 checked", 512, (softmax_regs4<512, 4, true, PLAIN>), 0);
    SM("regs4 stream", 256, (softmax_regs4<256, 8, false, STREAM>), 0);
    SM("regs4 stream", 512, (softmax_regs4<512, 4, false, STREAM>), 0);
    SM("regs1", 256, (softmax_regs1<256, 32>), 0);
    SM("regs1", 512, (softmax_regs1<512, 16>), 0);
    SM("regs1", 1024, (softmax_regs1<1024, 8>), 0);
    {
        cudaMemset(y, 0xff, n * 4);
        float t = time([&] { softmax_regs1_strided<256, 32><<<R, 256>>>(x, C, 1, y, C); });
        check("regs1 strided clamped", 256, t, false);
    }
    SM("regs1 runtime block", 256, (softmax_regs1_rt<32, false>), 0);
    SM("regs1 runtime block", 512, (softmax_regs1_rt<32, false>), 0);
    SM("regs1 rt, u64 index", 256, (softmax_regs1_rt<32, true>), 0);
    SM("regs1 rt, u64 index", 512, (softmax_regs1_rt<32, true>), 0);
    SM("smem4 u1", 256, softmax_smem4<1>, C * 4);
    SM("smem4 u2", 256, softmax_smem4<2>, C * 4);
    SM("smem4 u2", 512, softmax_smem4<2>, C * 4);
    SM("smem4 u4", 256, softmax_smem4<4>, C * 4);
    SM("smem4 u8", 256, softmax_smem4<8>, C * 4);
#define LN(T, V)                                                                     \
    do {                                                                             \
        cudaMemset(y, 0xff, n * 4);                                                  \
        float t = time([&] { layer_norm_regs4<T, V><<<R, T>>>(x, g, b, y, C, 1e-5f); }); \
        check("layer norm regs4", T, t, true);                                       \
    } while (0)
    {
        cudaMemset(y, 0xff, n * 4);
        float t = time([&] { layer_norm_regs1<256, 32><<<R, 256>>>(x, g, b, y, C, 1e-5f); });
        check("layer norm regs1", 256, t, true);
    }
    LN(256, 8);
    LN(512, 4);
    LN(1024, 2);
    return 0;
}
