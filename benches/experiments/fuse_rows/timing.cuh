// The timing the fuse_rows experiments share: the median of 7 rounds of 10 calls of `f`, in ms,
// after one warm-up call (CUDA events around each round).
#pragma once
#include <algorithm>
#include <vector>

template <typename F>
float median_ms(F f) {
    static cudaEvent_t a = nullptr, b = nullptr;
    if (!a) {
        cudaEventCreate(&a);
        cudaEventCreate(&b);
    }
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
}
