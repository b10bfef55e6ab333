# Copy variants against the driver copy (CuPy on the GPU machine): `python3 copy_variants.py`.
import cupy as cp, numpy as np
from timing import compare
n = 1 << 28
x = cp.arange(n, dtype=cp.float32)
y = cp.empty_like(x)
n4 = n // 4
src = r'''
extern "C" __global__ void gs(const float4* __restrict__ x, float4* __restrict__ y, unsigned long long n4) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n4; i += (unsigned long long)gridDim.x * blockDim.x) y[i] = x[i];
}
extern "C" __global__ void one(const float4* __restrict__ x, float4* __restrict__ y, unsigned long long n4) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; if (i < n4) y[i] = x[i];
}
extern "C" __global__ void one_cs(const float4* __restrict__ x, float4* __restrict__ y, unsigned long long n4) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; if (i < n4) __stcs(&y[i], __ldcs(&x[i]));
}
template <int K> __device__ void chunk(const float4* __restrict__ x, float4* __restrict__ y, unsigned long long n4, bool cs) {
  unsigned long long base = blockIdx.x * (unsigned long long)blockDim.x * K + threadIdx.x;
  float4 v[K];
  #pragma unroll
  for (int k = 0; k < K; ++k) { unsigned long long i = base + k * blockDim.x; if (i < n4) v[k] = cs ? __ldcs(&x[i]) : x[i]; }
  #pragma unroll
  for (int k = 0; k < K; ++k) { unsigned long long i = base + k * blockDim.x; if (i < n4) { if (cs) __stcs(&y[i], v[k]); else y[i] = v[k]; } }
}
extern "C" __global__ void c2(const float4* x, float4* y, unsigned long long n4) { chunk<2>(x, y, n4, false); }
extern "C" __global__ void c4(const float4* x, float4* y, unsigned long long n4) { chunk<4>(x, y, n4, false); }
extern "C" __global__ void c4cs(const float4* x, float4* y, unsigned long long n4) { chunk<4>(x, y, n4, true); }
extern "C" __global__ void c8(const float4* x, float4* y, unsigned long long n4) { chunk<8>(x, y, n4, false); }
extern "C" __global__ void gs_cs(const float4* __restrict__ x, float4* __restrict__ y, unsigned long long n4) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n4; i += (unsigned long long)gridDim.x * blockDim.x) __stcs(&y[i], __ldcs(&x[i]));
}
extern "C" __global__ void gs4(const float4* __restrict__ x, float4* __restrict__ y, unsigned long long n4) {
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n4; i += 4 * stride) { float4 a = x[i], b = x[i + stride], c = x[i + 2 * stride], d = x[i + 3 * stride]; y[i] = a; y[i + stride] = b; y[i + 2 * stride] = c; y[i + 3 * stride] = d; }
  for (; i < n4; i += stride) y[i] = x[i];
}
'''
mod = cp.RawModule(code=src, options=('-std=c++17',))
sms = cp.cuda.Device().attributes['MultiProcessorCount']
variants = []
def add(name, kname, grid, block):
    k = mod.get_function(kname)
    variants.append((name, lambda: k((grid,), (block,), (x, y, cp.uint64(n4)))))
add('gs 2xSM x256', 'gs', sms*2, 256)
add('gs 4xSM x256', 'gs', sms*4, 256)
add('gs 8xSM x256', 'gs', sms*8, 256)
add('gs_cs 4xSM', 'gs_cs', sms*4, 256)
add('gs4 2xSM', 'gs4', sms*2, 256)
add('gs4 4xSM', 'gs4', sms*4, 256)
add('one x256', 'one', n4 // 256, 256)
add('one x512', 'one', n4 // 512, 512)
add('one x1024', 'one', n4 // 1024, 1024)
add('one_cs x256', 'one_cs', n4 // 256, 256)
add('c2 x256', 'c2', n4 // 512, 256)
add('c4 x256', 'c4', n4 // 1024, 256)
add('c4cs x256', 'c4cs', n4 // 1024, 256)
add('c8 x256', 'c8', n4 // 2048, 256)
add('c4 x128', 'c4', n4 // 512, 128)
add('c4 x512', 'c4', n4 // 2048, 512)
compare(variants, x, y, rounds=4)
assert bool((y == x).all())
