// Times the generated CUDA C of examples/kernels/gemm_bf16.rs (`cuprum emit` into kernel.cu) on
// 8192^3 and 4096^3 without the Rust runtime, so that a change of the kernel or of
// cuprum/tensor.h is measured in seconds (run.sh). Checks 256 sampled entries against an f64
// host product. C = A * B, row-major, bf16 inputs, f32 output. The kernel, its block, tile and
// dynamic shared memory come from -D KERNEL, THREADS, TM, TN, SMEM (run.sh reads them from the
// kernel file's first line, `// harness: -D...`, which gen.sh writes).
#include "kernel.cu"
#ifndef KERNEL
#define KERNEL cuprum_rawkernel_gemm_bf16
#endif
#ifndef SMEM
#define SMEM 0
#endif
#define KERNEL_NAME2(k) #k
#define KERNEL_NAME(k) KERNEL_NAME2(k)
#ifndef THREADS
#define THREADS 128
#endif
#ifndef TM
#define TM 128
#endif
#ifndef TN
#define TN 128
#endif
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>

static float bf(u16 b) { u32 u = (u32)b << 16; float f; memcpy(&f, &u, 4); return f; }

int main(int argc, char** argv) {
    int sizes[2] = {8192, 4096};
    for (int n : sizes) {
        size_t e = (size_t)n * n;
        std::vector<u16> ha(e), hb(e);
        u64 s = 0x9e3779b97f4a7c15ull;
        auto rnd = [&]() { s = s * 6364136223846793005ull + 1442695040888963407ull; float f = (float)((s >> 40) & 0xffffff) / 16777216.0f * 2.0f - 1.0f; u32 u; memcpy(&u, &f, 4); return (u16)((u + 0x7fff + ((u >> 16) & 1)) >> 16); };
        for (auto& x : ha) x = rnd();
        for (auto& x : hb) x = rnd();
        bf16 *a, *b; float* c;
        cudaMalloc(&a, e * 2); cudaMalloc(&b, e * 2); cudaMalloc(&c, e * 4);
        cudaMemcpy(a, ha.data(), e * 2, cudaMemcpyHostToDevice);
        cudaMemcpy(b, hb.data(), e * 2, cudaMemcpyHostToDevice);
        cuprum::RoSlice<bf16> sa{a, e}, sb{b, e};
        cuprum::Slice<f32> sc{c, e};
        dim3 grid(n / TN, n / TM);
        if (SMEM > 48 * 1024) cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM);
        cudaEvent_t t0, t1; cudaEventCreate(&t0); cudaEventCreate(&t1);
        std::vector<float> ts;
        for (int i = 0; i < 13; ++i) {
            cudaEventRecord(t0);
            KERNEL<<<grid, THREADS, SMEM>>>((u32)n, (u32)n, (u32)n, sa, sb, sc);
            cudaEventRecord(t1); cudaEventSynchronize(t1);
            float ms; cudaEventElapsedTime(&ms, t0, t1);
            if (i >= 3) ts.push_back(ms);
        }
        cudaError_t err = cudaGetLastError();
        std::sort(ts.begin(), ts.end());
        std::vector<float> hc(e);
        cudaMemcpy(hc.data(), c, e * 4, cudaMemcpyDeviceToHost);
        double worst = 0;
        for (int q = 0; q < 256; ++q) {
            size_t i = (size_t)q * 7919 % n, j = (size_t)q * 104729 % n;
            double w = 0, sc2 = 1;
            for (int p = 0; p < n; ++p) { double t = (double)bf(ha[i * n + p]) * bf(hb[(size_t)p * n + j]); w += t; sc2 += fabs(t); }
            worst = std::max(worst, fabs(hc[i * n + j] - w) / sc2);
        }
        double ms = ts[ts.size() / 2];
        printf("%s %d^3: %.3f ms, %.1f TFLOP/s, worst rel error %.1e %s\n", KERNEL_NAME(KERNEL), n, ms, 2.0 * n * (double)n * n / (ms * 1e-3) / 1e12, worst, cudaGetErrorString(err));
        cudaFree(a); cudaFree(b); cudaFree(c);
    }
}
