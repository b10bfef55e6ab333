"""Black-Scholes in plain CUDA C through CuPy, in the loop shapes an elementwise kernel may take
(one element per thread; cuprum's contiguous loop: 4 items of 2 elements per thread, loaded
first; 1 item of 2) and with the normal distribution not inlined: the measurements behind the
gap noted in examples/black_scholes.rs. Needs a GPU and CuPy: `python3 scripts/black_scholes_shapes.py`.
"""
import sys, time
import cupy, numpy as np
PRE = r'''
__device__ inline double cnd(double x) {
    const double A1 = 0.31938153, A2 = -0.356563782, A3 = 1.781477937, A4 = -1.821255978, A5 = 1.330274429;
    const double RSQRT2PI = 0.39894228040143267793994605993438, W = 0.2316419;
    double k = 1 / (1 + W * fabs(x));
    double c = RSQRT2PI * exp(- x * x / 2) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
    return x > 0 ? 1 - c : c;
}
__device__ inline void bs(double s, double x, double t, double r, double v, double& call, double& put) {
    double sqrt_t = sqrt(t);
    double d1 = (log(s / x) + (r + v * v / 2) * t) / (v * sqrt_t);
    double d2 = d1 - v * sqrt_t;
    double c1 = cnd(d1), c2 = cnd(d2);
    double e = exp(- r * t);
    call = s * c1 - x * e * c2;
    put = x * e * (1 - c2) - s * (1 - c1);
}
extern "C" __global__ void one(const double* s, const double* x, const double* t, double r, double v, double* call, double* put, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        bs(s[i], x[i], t[i], r, v, call[i], put[i]);
}
template <int U>
__device__ void many(const double* s, const double* x, const double* t, double r, double v, double* call, double* put, long long n) {
    // U items of 2 elements per thread per step, all loaded first (cuprum's contig loop shape)
    long long chunks = n / 2, tile = (long long)blockDim.x * U;
    for (long long base = blockIdx.x * tile; base < chunks; base += (long long)gridDim.x * tile) {
        double2 S[U], X[U], T[U]; double2 C[U], P[U];
        #pragma unroll
        for (int u = 0; u < U; ++u) { long long c = base + threadIdx.x + (long long)u * blockDim.x; if (c < chunks) { S[u] = ((const double2*)s)[c]; X[u] = ((const double2*)x)[c]; T[u] = ((const double2*)t)[c]; } }
        #pragma unroll
        for (int u = 0; u < U; ++u) { bs(S[u].x, X[u].x, T[u].x, r, v, C[u].x, P[u].x); bs(S[u].y, X[u].y, T[u].y, r, v, C[u].y, P[u].y); }
        #pragma unroll
        for (int u = 0; u < U; ++u) { long long c = base + threadIdx.x + (long long)u * blockDim.x; if (c < chunks) { ((double2*)call)[c] = C[u]; ((double2*)put)[c] = P[u]; } }
    }
}
extern "C" __global__ void u4(const double* s, const double* x, const double* t, double r, double v, double* call, double* put, long long n) { many<4>(s, x, t, r, v, call, put, n); }
extern "C" __global__ void u1(const double* s, const double* x, const double* t, double r, double v, double* call, double* put, long long n) { many<1>(s, x, t, r, v, call, put, n); }
'''
m = cupy.RawModule(code=PRE, options=('-fmad=false',))
m2 = cupy.RawModule(code=PRE.replace('__device__ inline double cnd', '__device__ __noinline__ double cnd'), options=('-fmad=false',))
m3 = cupy.RawModule(code=PRE.replace('__device__ inline double cnd', '__device__ double cnd'), options=('-fmad=false',))
n = 10_000_000
rng = np.random.default_rng(1)
s = cupy.asarray(rng.uniform(5, 30, n)); x = cupy.asarray(rng.uniform(1, 100, n)); t = cupy.asarray(rng.uniform(0.25, 10, n))
call = cupy.empty(n); put = cupy.empty(n)
def timeit(name, f, grid):
    args = (s, x, t, np.float64(0.02), np.float64(0.3), call, put, np.int64(n))
    f((grid,), (256,), args); cupy.cuda.Device().synchronize()
    ts = []
    for _ in range(10):
        t0 = time.perf_counter(); f((grid,), (256,), args); cupy.cuda.Device().synchronize(); ts.append((time.perf_counter() - t0) * 1e3)
    ts.sort(); print(f"{name}: {ts[5]:.3f} ms (regs {f.num_regs})")
timeit("one element per thread (CuPy's shape)", m.get_function("one"), (n + 255) // 256)
timeit("4 items x 2 elements per thread (cuprum's contig shape)", m.get_function("u4"), (n // 2 // 4 + 255) // 256)
timeit("1 item x 2 elements per thread", m.get_function("u1"), (n // 2 + 255) // 256)
timeit("4x2, cnd __noinline__", m2.get_function("u4"), (n // 2 // 4 + 255) // 256)
timeit("4x2, cnd plain __device__ (as cuprum emits it)", m3.get_function("u4"), (n // 2 // 4 + 255) // 256)
