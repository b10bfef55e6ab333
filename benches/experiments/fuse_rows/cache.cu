// The generated softmax and layer norm row kernels of benches/src/fused.rs (generated.cu,
// emitted by gen.sh: `cuprum emit benches/src/fused.rs`), with the row in registers (fused_cache = 1, as
// RowPlan::config launches rows of 256 to 256 x 32 columns, blocks of 256) or read from memory in every pass (0),
// for a few block sizes, against cudaMemcpy D2D of the same bytes in the same run, outputs checked
// on a few rows against a host reference in f64 (H200/H100: run by cache.sh).
#ifndef GENERATED
#define GENERATED "generated.cu"
#endif
#include "timing.cuh"
#include GENERATED
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
    // Columns from the command line (8192 by default), rows so that the array is 2^26 elements.
    const i64 C = argc > 1 ? atoll(argv[1]) : 8192, R = (8192 * 8192) / C;
    const size_t n = (size_t)R * C;
    std::vector<float> h(n), hg(C), hb(C);
    for (size_t i = 0; i < n; ++i) h[i] = (float)((i * 2654435761ull) % 1009) / 97.0f - 5.0f;
    for (i64 i = 0; i < C; ++i) { hg[i] = 1.0f + (i % 7) * 0.1f; hb[i] = (i % 5) * 0.2f - 0.4f; }
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
    printf("(%lld, %lld) f32; copy D2D: %.3f ms\n", (long long)R, (long long)C, copy);
    std::vector<float> out(n);
    auto check = [&](bool ln) {
        cudaMemcpy(out.data(), y, n * 4, cudaMemcpyDeviceToHost);
        double worst = 0;
        for (i64 r = 0; r < R; r += 997) {
            const float* row = &h[r * C];
            if (ln) {
                double mu = 0, var = 0;
                for (i64 c = 0; c < C; ++c) mu += row[c];
                mu /= C;
                for (i64 c = 0; c < C; ++c) var += (row[c] - mu) * (row[c] - mu);
                double inv = 1 / std::sqrt(var / C + 1e-5);
                for (i64 c = 0; c < C; ++c) worst = std::max(worst, std::fabs(out[r * C + c] - ((row[c] - mu) * inv * hg[c] + hb[c])));
            } else {
                double m = -INFINITY, s = 0;
                for (i64 c = 0; c < C; ++c) m = std::max(m, (double)row[c]);
                for (i64 c = 0; c < C; ++c) s += std::exp(row[c] - m);
                for (i64 c = 0; c < C; ++c) worst = std::max(worst, std::fabs(out[r * C + c] - std::exp(row[c] - m) / s) / (std::exp(row[c] - m) / s));
            }
        }
        return worst;
    };
    for (int cache : {0, 1}) {
        for (int threads : {128, 256, 512, 1024}) {
            if (cache == 0 ? threads == 1024 : threads != 256) continue;  // cache 1: blocks of ROW_BLOCK
            cudaMemset(y, 0xff, n * 4);
            float t = time([&] { cuprum_rawkernel_softmax<<<R, threads>>>(cuprum::RoSlice<f32>{x, n}, C, 1, cuprum::Slice<f32>{y, n}, C, cache); });
            cudaError_t err = cudaDeviceSynchronize();
            printf("generated softmax    cache %d block %4d: %.3f ms, %.3f of copy, worst err %.1e (%s)\n", cache, threads, t, copy / t, check(false), cudaGetErrorString(err));
            cudaMemset(y, 0xff, n * 4);
            t = time([&] {
                cuprum_rawkernel_layer_norm<<<R, threads>>>(cuprum::RoSlice<f32>{x, n}, C, 1, cuprum::RoSlice<f32>{g, (u64)C}, 0, 1, cuprum::RoSlice<f32>{b, (u64)C}, 0, 1, 1e-5f, cuprum::Slice<f32>{y, n}, C, cache);
            });
            err = cudaDeviceSynchronize();
            printf("generated layer norm cache %d block %4d: %.3f ms, %.3f of copy, worst err %.1e (%s)\n", cache, threads, t, copy / t, check(true), cudaGetErrorString(err));
        }
    }
    return 0;
}
