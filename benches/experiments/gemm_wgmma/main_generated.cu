// The generated CUDA C of examples/kernels_sm90a/gemm_wgmma.rs (`cuprum emit --lines`, copied to
// generated.cu by run_variants.sh) in the harness of main.cu: C (f32, row-major M x N) = A (bf16,
// M x K) * B (bf16, K x N), next to cuBLAS. Run by run_variants.sh.
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

#ifndef BN
#define BN 256
#endif
#ifndef STAGES
#define STAGES 4
#endif
constexpr u32 BM = 128, BK = 64;
constexpr u32 A_STAGE = BM * BK, B_STAGE = BK * BN;   // elements
constexpr u32 SMEM_ELEMS = STAGES * (A_STAGE + B_STAGE);


#include "generated.cu"

// A naive reference on the GPU, in f32 from the bf16 inputs.
__global__ void reference(int m, int n, int k, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c) {
    int i = blockIdx.y * 16 + threadIdx.y, j = blockIdx.x * 16 + threadIdx.x;
    if (i >= m || j >= n) return;
    float s = 0;
    for (int p = 0; p < k; ++p) s += __bfloat162float(a[(size_t)i * k + p]) * __bfloat162float(b[(size_t)p * n + j]);
    c[(size_t)i * n + j] = s;
}

static cuprum::TensorMap<bf16> make_map(const void* ptr, u64 inner, u64 outer, u32 box_inner, u32 box_outer) {
    cuprum::TensorMap<bf16> t{};
    cuuint64_t dims[2] = {inner, outer}, strides[1] = {inner * 2};
    cuuint32_t box[2] = {box_inner, box_outer}, es[2] = {1, 1};
    CUresult r = cuTensorMapEncodeTiled(reinterpret_cast<CUtensorMap*>(t.map), CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(ptr), dims, strides, box, es,
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
    u32 smem = 196672;
    cudaFuncSetAttribute(cuprum_rawkernel_gemm_wgmma, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    int total = (N / BN) * (M / BM);
    dim3 grid(total < sms ? total : sms);
    cuprum::Slice<f32> cs{dc, nc};
    cuprum_rawkernel_gemm_wgmma<<<grid, 384, smem>>>(M, N, K, ma, mb, cs);
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
        float ms = median_ms([&] { cuprum_rawkernel_gemm_wgmma<<<grid, 384, smem>>>(M, N, K, ma, mb, cs); });
        float mbl = median_ms([&] { cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, db, CUDA_R_16BF, N, da, CUDA_R_16BF, K, &beta, dr, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT); });
        printf("generated %dx%dx%d: ours %.1f TFLOP/s, cuBLAS %.1f TFLOP/s, ratio %.3f\n", M, N, K, flop / ms / 1e9, flop / mbl / 1e9, mbl / ms);
    }
    return 0;
}
