# An earlier look at the #[rawkernel] f32 copy (CUDA C imitations). copy_f32_rust.py runs the generated code itself and finds the cause: the per-load bounds checks.
import cupy as cp, numpy as np
from timing import compare
n = 1 << 28
x = cp.arange(n, dtype=cp.float32); y = cp.empty_like(x)
src = r'''
typedef unsigned int u32; typedef unsigned long long u64;
template <typename T> struct Slice { T* ptr; u64 len; __device__ T& operator[](u64 i) const { return ptr[i]; } };
template <typename T, int N> struct Arr { T v[N]; __device__ T& operator[](u64 i) { return v[i]; }
  static __device__ Arr splat(T x) { Arr a; for (int k = 0; k < N; ++k) a.v[k] = x; return a; } };
// As generated: Slice params (no restrict), while loop, splat.
__device__ void gen_body(Slice<const float> x, Slice<float> y, u32 n) {
  u32 b = blockDim.x, chunk = 4u * b, stride = gridDim.x * chunk, base = blockIdx.x * chunk + threadIdx.x;
  while (base < n) {
    Arr<float, 4> v = Arr<float, 4>::splat(x[(u64)base]);
    for (u32 k = 1u; k < 4u; ++k) { u32 i = base + k * b; if (i < n) v[(u64)k] = x[(u64)i]; }
    for (u32 k = 0u; k < 4u; ++k) { u32 i = base + k * b; if (i < n) y[(u64)i] = v[(u64)k]; }
    base += stride;
  }
}
extern "C" __global__ void gen(const float* x, float* y, u32 n) { gen_body(Slice<const float>{x, n}, Slice<float>{y, n}, n); }
// The same with __restrict__ pointers.
extern "C" __global__ void gen_restrict(const float* __restrict__ xp, float* __restrict__ yp, u32 n) {
  u32 b = blockDim.x, chunk = 4u * b, stride = gridDim.x * chunk, base = blockIdx.x * chunk + threadIdx.x;
  while (base < n) {
    float v[4]; v[0] = xp[base];
    for (u32 k = 1u; k < 4u; ++k) { u32 i = base + k * b; if (i < n) v[k] = xp[i]; }
    for (u32 k = 0u; k < 4u; ++k) { u32 i = base + k * b; if (i < n) yp[i] = v[k]; }
    base += stride;
  }
}
// Generated shape, loads through __ldg.
__device__ void ldg_body(Slice<const float> x, Slice<float> y, u32 n) {
  u32 b = blockDim.x, chunk = 4u * b, stride = gridDim.x * chunk, base = blockIdx.x * chunk + threadIdx.x;
  while (base < n) {
    float v[4]; v[0] = __ldg(&x.ptr[base]);
    for (u32 k = 1u; k < 4u; ++k) { u32 i = base + k * b; if (i < n) v[k] = __ldg(&x.ptr[i]); }
    for (u32 k = 0u; k < 4u; ++k) { u32 i = base + k * b; if (i < n) y[(u64)i] = v[k]; }
    base += stride;
  }
}
extern "C" __global__ void gen_ldg(const float* x, float* y, u32 n) { ldg_body(Slice<const float>{x, n}, Slice<float>{y, n}, n); }
// No loop (one chunk per block), no restrict.
extern "C" __global__ void once(const float* x, float* y, u32 n) {
  u32 b = blockDim.x, base = blockIdx.x * 4u * b + threadIdx.x; float v[4];
  for (u32 k = 0u; k < 4u; ++k) { u32 i = base + k * b; if (i < n) v[k] = x[i]; }
  for (u32 k = 0u; k < 4u; ++k) { u32 i = base + k * b; if (i < n) y[i] = v[k]; }
}
'''
mod = cp.RawModule(code=src, options=('-fmad=false',))
V = []
def add(name, k, grid, block): f = mod.get_function(k); V.append((name, lambda: f((grid,), (block,), (x, y, cp.uint32(n)))))
for k in ('gen', 'gen_restrict', 'gen_ldg', 'once'):
    for b in (128, 256):
        add(f'{k} x{b}', k, n // (4 * b), b)
compare(V, x, y)
assert bool((y == x).all())
