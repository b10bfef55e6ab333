// Times the row-kernel shapes of variants.cu (emitted by gen.sh: `cuprum emit variants.rs`) on a softmax
// over (8192, 8192) f32, each block size, against cudaMemcpy D2D of the same bytes in the same run.
// The generated kernel (its cached and uncached forms) is timed by cache.cu.
#include "timing.cuh"
#include "variants.cu"
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#include <cmath>

typedef void (*Kernel)(cuprum::RoSlice<f32>, i64, i64, cuprum::Slice<f32>, i64);

int main() {
    const i64 R = 8192, C = 8192;
    const size_t n = (size_t)R * C;
    std::vector<float> h(n);
    for (size_t i = 0; i < n; ++i) h[i] = (float)((i * 2654435761ull) % 1009) / 97.0f - 5.0f;
    float *x, *y;
    cudaMalloc(&x, n * 4);
    cudaMalloc(&y, n * 4);
    cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice);
    auto time = [](auto f) { return median_ms(f); };
    float copy = time([&] { cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice); });
    printf("copy D2D: %.3f ms, %.0f GB/s\n", copy, 2.0 * n * 4 / (copy * 1e-3) / 1e9);
    struct { const char* name; Kernel k; } ks[] = {
        {"checked", cuprum_rawkernel_checked},
        {"unchecked", cuprum_rawkernel_unchecked},
        {"cached", cuprum_rawkernel_cached},
        {"unroll4", cuprum_rawkernel_unroll4},
        {"unroll8", cuprum_rawkernel_unroll8},
        {"smem8", cuprum_rawkernel_smem8},
        {"cached8", cuprum_rawkernel_cached8},
        {"cached16", cuprum_rawkernel_cached16},
    };
    std::vector<float> out(n);
    for (auto& k : ks) {
        for (int threads : {256, 512, 1024}) {
            std::string nm = k.name;
            if (nm == "smem8") cudaFuncSetAttribute(k.k, cudaFuncAttributeMaxDynamicSharedMemorySize, C * 4);
            if ((nm == "cached" || nm == "cached8") && threads * 8 < C) continue;
            if (nm == "cached16" && threads * 16 < C) continue;
            cudaMemset(y, 0xff, n * 4);
            float t = time([&] {
                k.k<<<R, threads, nm == "smem8" ? C * 4 : 0>>>(cuprum::RoSlice<f32>{x, n}, C, 1, cuprum::Slice<f32>{y, n}, C);
            });
            cudaError_t e = cudaDeviceSynchronize();
            cudaMemcpy(out.data(), y, n * 4, cudaMemcpyDeviceToHost);
            double worst = 0;
            for (i64 r = 0; r < R; r += 997) {
                double m = -INFINITY, s = 0;
                for (i64 c = 0; c < C; ++c) m = std::max(m, (double)h[r * C + c]);
                for (i64 c = 0; c < C; ++c) s += std::exp(h[r * C + c] - m);
                for (i64 c = 0; c < C; ++c) worst = std::max(worst, std::fabs(out[r * C + c] - std::exp(h[r * C + c] - m) / s) / (std::exp(h[r * C + c] - m) / s));
            }
            printf("%-10s block %4d: %.3f ms, %.3f of copy, worst rel err %.1e %s\n", k.name, threads, t, copy / t, worst, cudaGetErrorString(e));
        }
    }
    return 0;
}
