# f32 copies on the GPU machine (CuPy): one element per thread vs K per thread, block-strided.
import cupy as cp, numpy as np
from timing import compare
n = 1 << 28
x = cp.arange(n, dtype=cp.float32); y = cp.empty_like(x)
src = r'''
template <int K> __device__ void chunk(const float* __restrict__ x, float* __restrict__ y, unsigned int n) {
  unsigned int base = blockIdx.x * blockDim.x * K + threadIdx.x;
  float v[K];
  #pragma unroll
  for (int k = 0; k < K; ++k) { unsigned int i = base + k * blockDim.x; if (i < n) v[k] = x[i]; }
  #pragma unroll
  for (int k = 0; k < K; ++k) { unsigned int i = base + k * blockDim.x; if (i < n) y[i] = v[k]; }
}
extern "C" __global__ void c1(const float* x, float* y, unsigned int n) { chunk<1>(x, y, n); }
extern "C" __global__ void c2(const float* x, float* y, unsigned int n) { chunk<2>(x, y, n); }
extern "C" __global__ void c4(const float* x, float* y, unsigned int n) { chunk<4>(x, y, n); }
extern "C" __global__ void c8(const float* x, float* y, unsigned int n) { chunk<8>(x, y, n); }
extern "C" __global__ void gs(const float* __restrict__ x, float* __restrict__ y, unsigned int n) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = x[i];
}
'''
mod = cp.RawModule(code=src)
sms = cp.cuda.Device().attributes['MultiProcessorCount']
V = []
def add(name, k, grid, block): f = mod.get_function(k); V.append((name, lambda: f((grid,), (block,), (x, y, cp.uint32(n)))))
for b in (128, 256, 512, 1024): add(f'c1 x{b}', 'c1', n // b, b)
for K in (2, 4, 8):
    for b in (128, 256): add(f'c{K} x{b}', f'c{K}', n // (b * K), b)
for m in (4, 8, 16, 32): add(f'gs {m}xSM x256', 'gs', sms * m, 256)
compare(V, x, y)
