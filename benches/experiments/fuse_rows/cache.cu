// The generated softmax row kernel of benches/src/fused.rs (generated.cu, `cuprum emit`) with its
// row cached in shared memory or not, for each block size (H200/H100: run by cache.sh).
#include "generated.cu"
#include <algorithm>
#include <cstdio>
#include <vector>

typedef void (*Kernel)(cuprum::RoSlice<f32>, i64, i64, cuprum::Slice<f32>, i64, i64);

int main() {
    const i64 R = 8192, C = 8192;
    const size_t n = (size_t)R * C;
    std::vector<float> h(n);
    for (size_t i = 0; i < n; ++i) h[i] = (float)((i * 2654435761ull) % 1009) / 97.0f - 5.0f;
    float *x, *y;
    cudaMalloc(&x, n * 4);
    cudaMalloc(&y, n * 4);
    cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    auto time = [&](auto f) {
        f();
        cudaDeviceSynchronize();
        std::vector<float> t;
        for (int r = 0; r < 7; ++r) {
            cudaEventRecord(a);
            for (int k = 0; k < 10; ++k) f();
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float ms;
            cudaEventElapsedTime(&ms, a, b);
            t.push_back(ms / 10);
        }
        std::sort(t.begin(), t.end());
        return t[3];
    };
    float copy = time([&] { cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice); });
    printf("copy D2D: %.3f ms\n", copy);
    Kernel k = cuprum_rawkernel_softmax;
    for (int cache : {0, 1}) {
        for (int threads : {128, 256, 512, 1024}) {
            size_t smem = cache ? C * 4 : 0;
            float t = time([&] { k<<<R, threads, smem>>>(cuprum::RoSlice<f32>{x, n}, C, 1, cuprum::Slice<f32>{y, n}, C, cache); });
            printf("generated cache %d block %4d: %.3f ms, %.3f of copy (%s)\n", cache, threads, t, copy / t, cudaGetErrorString(cudaGetLastError()));
        }
    }
    return 0;
}
