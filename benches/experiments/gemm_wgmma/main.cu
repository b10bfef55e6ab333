// The wgmma + TMA bf16 GEMM in CUDA C over cuprum/hopper.h, written as the generated code of a
// #[rawkernel] would be: C (f32, row-major M x N) = A (bf16, M x K) * B (bf16, K x N), next to
// cuBLAS. On the GPU machine from the repository root: bash benches/experiments/gemm_wgmma/run.sh
#include <cuda.h>
#include <cublas_v2.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cmath>
#include <cuprum/types.h>
#include <cuprum/half.h>
#include <cuprum/bounds.h>
#include <cuprum/tensor.h>
#include <cuprum/hopper.h>
#include "../fuse_rows/timing.cuh"

// TMA stores, for the EPI_TMA epilogue (the kernel language has none: it measured no faster than
// 8-byte stores here).
namespace cuprum {
// Copies `src[si..]`, laid out as the map's box (in its swizzle), to the box of `map` at element
// coordinates (x inner, y outer); elements of the box outside the tensor are not written. The
// copy joins the thread's bulk group (`tma_store_commit`); `src` may be overwritten once
// `tma_store_wait` says the group has read it. Shared-memory writes that the copy reads must be
// made visible to it first (`fence_proxy_async`, then a barrier of the writing threads).
template <typename T, typename I>
__device__ __forceinline__ void tma_store_2d(const TensorMap<T>& map, i32 x, i32 y, const T* src, u64 src_len, I si, oob_later* later) {
    u64 s = (u64)si, n = (u64)map.box_inner * map.box_outer;
    u32 from = shared_address(src) + (u32)s * (u32)sizeof(T);
    u32 align = map.swizzle_bytes == 128u ? 1024u : 128u;
    bool ok = s < src_len && n <= src_len - s && from % align == 0;
    bool mis = from % align != 0 && s < src_len;
    later->note(ok, mis ? s : (s < src_len ? s + n - 1 : s), mis ? align / sizeof(T) : src_len, index_info<I>::signed_bit | (mis ? oob_misaligned : 0u));
#if CUPRUM_SM90
    if (ok) {
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"((u64)&map), "r"(x), "r"(y), "r"(from) : "memory");
    }
#else
    __trap();
#endif
}

template <typename T = void>
__device__ __forceinline__ void tma_store_commit() {
#if CUPRUM_SM90
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#else
    __trap();
#endif
}

// Waits until at most PENDING of the thread's committed bulk groups have still to read their
// shared memory.
template <int PENDING>
__device__ __forceinline__ void tma_store_wait() {
#if CUPRUM_SM90
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(PENDING) : "memory");
#else
    __trap();
#endif
}

// Makes this thread's shared-memory writes visible to the copy engine (the async proxy).
template <typename T = void>
__device__ __forceinline__ void fence_proxy_async() {
#if CUPRUM_SM90
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#else
    __trap();
#endif
}

// ---- clusters (the CLUSTER variant: two CTAs along M share B's tile through TMA multicast) ----
// Each CTA of a pair loads its own A and half of B's boxes into both CTAs' stages; a stage is
// free once the consumers of both CTAs released it (EMPTY counts 4 arrivals, two of them remote).
// It halves B's reads from L2 (48 -> 32 KB per k-step and CTA), to test whether L2 bandwidth
// (about 7.5 TB/s of tile loads at 651 TFLOP/s) holds the kernel back. Session 27 on an H200
// (same run, 8192^3, GROUP in tile rows or pair rows): CLUSTER=0 GROUP=8 523-535 TFLOP/s;
// CLUSTER=1 GROUP=4/8/16 450-478 (cuBLAS 677-769 in the same runs): slower, so L2 bandwidth is
// not the limit; the pair's lockstep (each stage waits for the slower CTA) costs more than the
// halved reads give. Correct (0 bad entries).
__device__ __forceinline__ u32 cluster_ctarank() {
    u32 r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
// Both CTAs of the cluster: every thread arrives (release), then waits (acquire).
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}
// Arrives on barrier `i` of `bars` in the cluster's CTA `cta` (the same offset in its shared memory).
__device__ __forceinline__ void mbarrier_arrive_cluster(u64* bars, u32 i, u32 cta) {
    u32 local = shared_address(bars) + i * 8u, remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(cta));
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}
// tma_load_2d into the same offset of every CTA in `mask`, each completing its own barrier `bi`.
template <typename T>
__device__ __forceinline__ void tma_load_2d_multicast(T* dst, u32 di, const TensorMap<T>& map, i32 x, i32 y, u64* bars, u32 bi, u16 mask) {
    u32 to = shared_address(dst) + di * (u32)sizeof(T), bar = shared_address(bars) + bi * 8u;
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
                 ::"r"(to), "l"((u64)&map), "r"(x), "r"(y), "r"(bar), "h"(mask) : "memory");
}

}  // namespace cuprum

#ifndef CLUSTER
#define CLUSTER 0
#endif
#ifndef BN
#define BN 256
#endif
#ifndef STAGES
#define STAGES 4
#endif
constexpr u32 BM = 128, BK = 64;
constexpr u32 A_STAGE = BM * BK, B_STAGE = BK * BN;   // elements
constexpr u32 SMEM_ELEMS = STAGES * (A_STAGE + B_STAGE);

extern __shared__ __align__(1024) unsigned char dyn_smem[];

#ifndef GROUP
#define GROUP 16
#endif
#ifndef EPI_TMA
#define EPI_TMA 0
#endif
#ifndef STCS
#define STCS 0
#endif
#ifndef STCS_SCALAR
#define STCS_SCALAR 0
#endif
// Tile t of the grid: groups of GROUP rows of tiles, down the rows first within a group, so the
// tiles running at once share their A and B panels in L2.
__device__ __forceinline__ void tile_of(u32 t, u32 tiles_n, u32 tiles_m, u32& tm, u32& tn) {
    u32 per = GROUP * tiles_n, g = t / per, r = t % per;
    u32 rows = min(GROUP, tiles_m - g * GROUP);
    tm = g * GROUP + r % rows;
    tn = r / rows;
}

#if CLUSTER
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1) gemm(
#else
extern "C" __global__ void __launch_bounds__(384, 1) gemm(
#endif
u32 m, u32 n, u32 k, const __grid_constant__ cuprum::TensorMap<bf16> ma, const __grid_constant__ cuprum::TensorMap<bf16> mb, cuprum::Slice<f32> c, const __grid_constant__ cuprum::TensorMap<f32> mc) {
    cuprum::oob_later LATER("gemm");
    bf16* s = reinterpret_cast<bf16*>(dyn_smem);
    u64 slen = SMEM_ELEMS + 64;
    u64* bars = reinterpret_cast<u64*>(dyn_smem);
    u64 blen = slen / 4;
    const u32 FULL = SMEM_ELEMS / 4, EMPTY = FULL + STAGES;  // barrier indices after the tiles
    u32 tid = threadIdx.x, wg = tid / 128;
    u32 ktiles = k / BK, tiles_m = m / BM, tiles_n = n / BN, total = tiles_m * tiles_n;
    if (tid == 0) {
        for (u32 i = 0; i < STAGES; ++i) {
            cuprum::mbarrier_init(bars, blen, FULL + i, 1u, &LATER);
            cuprum::mbarrier_init(bars, blen, EMPTY + i, CLUSTER ? 4u : 2u, &LATER);
        }
    }
    __syncthreads();
#if CLUSTER
    // The peer's barriers are initialised before any multicast or remote arrive reaches them.
    cuprum::cluster_sync();
    // CTA `rank` of the pair takes row 2 pm + rank of pair tile (pm, tn), and loads half of B's
    // boxes for both.
    const u32 rank = cuprum::cluster_ctarank(), peer = rank ^ 1u;
    const u32 first = blockIdx.x / 2, stride = gridDim.x / 2, count = (m / BM / 2) * (n / BN);
#else
    const u32 first = blockIdx.x, stride = gridDim.x, count = m / BM * (n / BN);
#endif
    if (wg == 0) {
        cuprum::warpgroup_reg_dealloc<40>();
        if (tid == 0) {
            u32 it = 0;
            for (u32 t = first; t < count; t += stride) {
                u32 tm, tn;
#if CLUSTER
                tile_of(t, tiles_n, tiles_m / 2, tm, tn);
                tm = 2 * tm + rank;
#else
                tile_of(t, tiles_n, tiles_m, tm, tn);
#endif
                for (u32 kt = 0; kt < ktiles; ++kt, ++it) {
                    u32 st = it % STAGES;
                    if (it >= STAGES) cuprum::mbarrier_wait(bars, blen, EMPTY + st, ((it / STAGES) - 1) & 1, &LATER);
                    cuprum::mbarrier_arrive_expect_tx(bars, blen, FULL + st, (A_STAGE + B_STAGE) * 2, &LATER);
                    u32 ab = st * A_STAGE, bb = STAGES * A_STAGE + st * B_STAGE;
                    cuprum::tma_load_2d(s, slen, ab, ma, (i32)(kt * BK), (i32)(tm * BM), bars, blen, FULL + st, &LATER);
#if CLUSTER
                    for (u32 j = rank * (BN / 128); j < (rank + 1) * (BN / 128); ++j)
                        cuprum::tma_load_2d_multicast(s, bb + j * 4096, mb, (i32)(tn * BN + j * 64), (i32)(kt * BK), bars, FULL + st, (u16)3);
#else
                    for (u32 j = 0; j < BN / 64; ++j)
                        cuprum::tma_load_2d(s, slen, bb + j * 4096, mb, (i32)(tn * BN + j * 64), (i32)(kt * BK), bars, blen, FULL + st, &LATER);
#endif
                }
            }
        }
    } else {
        cuprum::warpgroup_reg_alloc<232>();
        u32 w = wg - 1, it = 0;
        u32 l = tid % 32, q = (tid % 128) / 32;
        for (u32 t = first; t < count; t += stride) {
            u32 tm, tn;
#if CLUSTER
            tile_of(t, tiles_n, tiles_m / 2, tm, tn);
            tm = 2 * tm + rank;
#else
            tile_of(t, tiles_n, tiles_m, tm, tn);
#endif
            cuprum::Array<float, BN / 2> acc = cuprum::Array<float, BN / 2>::splat(0.0f);
            for (u32 kt = 0; kt < ktiles; ++kt, ++it) {
                u32 st = it % STAGES;
                cuprum::mbarrier_wait(bars, blen, FULL + st, (it / STAGES) & 1, &LATER);
                u32 ab = st * A_STAGE + w * 4096, bb = STAGES * A_STAGE + st * B_STAGE;
                cuprum::wgmma_fence();
#pragma unroll
                for (u32 kk = 0; kk < 4; ++kk) cuprum::wgmma<BN, true>(acc, s, slen, ab + kk * 16, s, slen, bb + kk * 1024, &LATER);
                cuprum::wgmma_commit();
                cuprum::wgmma_wait<1>(acc);
                if (kt > 0 && tid % 128 == 0) {
                    cuprum::mbarrier_arrive(bars, blen, EMPTY + (it - 1) % STAGES, &LATER);
#if CLUSTER
                    cuprum::mbarrier_arrive_cluster(bars, EMPTY + (it - 1) % STAGES, peer);
#endif
                }
            }
            cuprum::wgmma_wait<0>(acc);
            if (tid % 128 == 0) {
                cuprum::mbarrier_arrive(bars, blen, EMPTY + (it - 1) % STAGES, &LATER);
#if CLUSTER
                cuprum::mbarrier_arrive_cluster(bars, EMPTY + (it - 1) % STAGES, peer);
#endif
            }
#if EPI_TMA
            // Through shared memory: 8 chunks of 64 x 32 per warpgroup, two buffers, each stored
            // by TMA while the next is written.
            float* sc = reinterpret_cast<float*>(dyn_smem + SMEM_ELEMS * 2 + 1024);
            for (u32 ch = 0; ch < BN / 32; ++ch) {
                float* dst = sc + (w * 2 + ch % 2) * 2048;
                if (tid % 128 == 0) cuprum::tma_store_wait<1>();
                asm volatile("bar.sync %0, 128;" ::"r"(1 + w) : "memory");
#pragma unroll
                for (u32 jj = 0; jj < 4; ++jj) {
                    u32 j = ch * 4 + jj;
#pragma unroll
                    for (u32 h = 0; h < 2; ++h) {
                        u32 r = q * 16 + l / 4 + 8 * h, col = 8 * jj + 2 * (l % 4);
                        u32 o = r * 128 + col * 4;
                        o ^= ((o >> 7) & 7) << 4;
                        *reinterpret_cast<float2*>(reinterpret_cast<char*>(dst) + o) = make_float2(acc.v[4 * j + 2 * h], acc.v[4 * j + 2 * h + 1]);
                    }
                }
                cuprum::fence_proxy_async();
                asm volatile("bar.sync %0, 128;" ::"r"(1 + w) : "memory");
                if (tid % 128 == 0) {
                    cuprum::tma_store_2d(mc, (i32)(tn * BN + ch * 32), (i32)(tm * BM + w * 64), dst, 2048, 0u, &LATER);
                    cuprum::tma_store_commit();
                }
            }
#else
            // Lane l of warp q of the warpgroup: rows 16q + l/4 and +8, columns 8j + 2(l%4), +1.
            u32 row = tm * BM + w * 64 + q * 16 + l / 4;
            for (u32 j = 0; j < BN / 8; ++j) {
                u32 col = tn * BN + j * 8 + 2 * (l % 4);
                u64 i0 = (u64)row * n + col, i1 = (u64)(row + 8) * n + col;
                if (i1 + 1 < c.len) {
#if STCS
                    // Streaming (evict-first) stores: C does not push A's and B's panels out of L2.
                    __stcs(reinterpret_cast<float2*>(c.ptr + i0), make_float2(acc.v[4 * j], acc.v[4 * j + 1]));
                    __stcs(reinterpret_cast<float2*>(c.ptr + i1), make_float2(acc.v[4 * j + 2], acc.v[4 * j + 3]));
#elif STCS_SCALAR
                    __stcs(c.ptr + i0, acc.v[4 * j]);
                    __stcs(c.ptr + i0 + 1, acc.v[4 * j + 1]);
                    __stcs(c.ptr + i1, acc.v[4 * j + 2]);
                    __stcs(c.ptr + i1 + 1, acc.v[4 * j + 3]);
#else
                    *reinterpret_cast<float2*>(c.ptr + i0) = make_float2(acc.v[4 * j], acc.v[4 * j + 1]);
                    *reinterpret_cast<float2*>(c.ptr + i1) = make_float2(acc.v[4 * j + 2], acc.v[4 * j + 3]);
#endif
                }
            }
#endif
        }
#if EPI_TMA
        if (tid % 128 == 0) cuprum::tma_store_wait<0>();
#endif
    }
#if CLUSTER
    // No CTA leaves while its peer may still arrive on its barriers.
    cuprum::cluster_sync();
#endif
}

// A naive reference on the GPU, in f32 from the bf16 inputs.
__global__ void reference(int m, int n, int k, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c) {
    int i = blockIdx.y * 16 + threadIdx.y, j = blockIdx.x * 16 + threadIdx.x;
    if (i >= m || j >= n) return;
    float s = 0;
    for (int p = 0; p < k; ++p) s += __bfloat162float(a[(size_t)i * k + p]) * __bfloat162float(b[(size_t)p * n + j]);
    c[(size_t)i * n + j] = s;
}

template <typename T = bf16>
static cuprum::TensorMap<T> make_map(const void* ptr, u64 inner, u64 outer, u32 box_inner, u32 box_outer, CUtensorMapDataType dt = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, u32 es = 2) {
    cuprum::TensorMap<T> t{};
    cuuint64_t dims[2] = {inner, outer}, strides[1] = {inner * es};
    cuuint32_t box[2] = {box_inner, box_outer}, ess[2] = {1, 1};
    CUresult r = cuTensorMapEncodeTiled(reinterpret_cast<CUtensorMap*>(t.map), dt, 2, const_cast<void*>(ptr), dims, strides, box, ess,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) { printf("encode failed %d\n", (int)r); exit(1); }
    t.box_inner = box_inner; t.box_outer = box_outer; t.swizzle_bytes = 128;
    return t;
}

int main(int argc, char** argv) {
    int M = 8192, N = 8192, K = 8192;
    if (argc == 4) { M = atoi(argv[1]); N = atoi(argv[2]); K = atoi(argv[3]); }
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    std::vector<__nv_bfloat16> ha(na), hb(nb);
    unsigned long long st = 0x9e3779b97f4a7c15ull;
    auto rnd = [&]() { st = st * 6364136223846793005ull + 1442695040888963407ull; return (float)((st >> 40)) / (float)(1u << 23) - 1.0f; };
    for (auto& x : ha) x = __float2bfloat16(rnd());
    for (auto& x : hb) x = __float2bfloat16(rnd());
    __nv_bfloat16 *da, *db; float *dc, *dr;
    cudaMalloc(&da, na * 2); cudaMalloc(&db, nb * 2); cudaMalloc(&dc, nc * 4); cudaMalloc(&dr, nc * 4);
    cudaMemcpy(da, ha.data(), na * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb.data(), nb * 2, cudaMemcpyHostToDevice);
    cudaMemset(dc, 0xff, nc * 4);
    cuprum::TensorMap<bf16> ma = make_map(da, K, M, 64, 128), mb = make_map(db, N, K, 64, 64);
    cuprum::TensorMap<f32> mcm = make_map<f32>(dc, N, M, 32, 64, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4);
    u32 smem = SMEM_ELEMS * 2 + 1024 + 32768;
    cudaFuncSetAttribute(gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    int total = (N / BN) * (M / BM);
    dim3 grid(total < sms ? total : sms);
#if CLUSTER
    grid.x = (total / 2 < sms / 2 ? total / 2 : sms / 2) * 2;
#endif
    cuprum::Slice<f32> cs{dc, nc};
    gemm<<<grid, 384, smem>>>(M, N, K, ma, mb, cs, mcm);
    cudaError_t e = cudaDeviceSynchronize();
    printf("launch: %s\n", cudaGetErrorString(e));
    reference<<<dim3(N / 16, M / 16), dim3(16, 16)>>>(M, N, K, da, db, dr);
    cudaDeviceSynchronize();
    std::vector<float> hc(nc), hr(nc);
    cudaMemcpy(hc.data(), dc, nc * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(hr.data(), dr, nc * 4, cudaMemcpyDeviceToHost);
    double worst = 0; size_t bad = 0, first = (size_t)-1;
    for (size_t i = 0; i < nc; ++i) {
        double d = fabs((double)hc[i] - hr[i]);
        if (!(d <= 1e-2 * sqrt((double)K))) { if (first == (size_t)-1) first = i; ++bad; }
        if (d > worst || d != d) worst = d;
    }
    printf("check: %zu bad of %zu, worst %.3g", bad, nc, worst);
    if (bad) printf(" first at (%zu, %zu): %g vs %g", first / N, first % N, hc[first], hr[first]);
    printf("\n");
    double flop = 2.0 * M * N * K;
    cublasHandle_t h; cublasCreate(&h);
    float alpha = 1, beta = 0;
    for (int round = 0; round < 3; ++round) {
        float ms = median_ms([&] { gemm<<<grid, 384, smem>>>(M, N, K, ma, mb, cs, mcm); });
        float mbl = median_ms([&] { cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, db, CUDA_R_16BF, N, da, CUDA_R_16BF, K, &beta, dr, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT); });
        printf("CLUSTER=%d EPI_TMA=%d GROUP=%d BN=%d STAGES=%d %dx%dx%d: ours %.1f TFLOP/s, cuBLAS %.1f TFLOP/s, ratio %.3f\n", CLUSTER, EPI_TMA, GROUP, BN, STAGES, M, N, K, flop / ms / 1e9, flop / mbl / 1e9, mbl / ms);
    }
    return 0;
}
