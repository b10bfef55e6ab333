"""CuPy's Black-Scholes example (examples/finance/black_scholes.py, its ElementwiseKernel), timed
on the inputs that `examples/black_scholes.rs` writes (BLACK_SCHOLES_DUMP=path): the comparison in
that example's doc comment.

    BLACK_SCHOLES_DUMP=/tmp/bs.bin target/release/examples/black_scholes && python3 scripts/cupy_black_scholes.py /tmp/bs.bin
"""
import sys
import time

import cupy
import numpy as np

black_scholes_kernel = cupy.ElementwiseKernel(
    'T s, T x, T t, T r, T v',
    'T call, T put',
    '''
    const T sqrt_t = sqrt(t);
    const T d1 = (log(s / x) + (r + v * v / 2) * t) / (v * sqrt_t);
    const T d2 = d1 - v * sqrt_t;
    const T cnd_d1 = get_cumulative_normal_distribution(d1);
    const T cnd_d2 = get_cumulative_normal_distribution(d2);
    const T exp_rt = exp(- r * t);
    call = s * cnd_d1 - x * exp_rt * cnd_d2;
    put = x * exp_rt * (1 - cnd_d2) - s * (1 - cnd_d1);
    ''',
    'black_scholes_kernel',
    preamble='''
    __device__
    inline T get_cumulative_normal_distribution(T x) {
        const T A1 = 0.31938153;
        const T A2 = -0.356563782;
        const T A3 = 1.781477937;
        const T A4 = -1.821255978;
        const T A5 = 1.330274429;
        const T RSQRT2PI = 0.39894228040143267793994605993438;
        const T W = 0.2316419;
        const T k = 1 / (1 + W * abs(x));
        T cnd = RSQRT2PI * exp(- x * x / 2) *
            (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
        if (x > 0) {
            cnd = 1 - cnd;
        }
        return cnd;
    }
    ''',
)


def main():
    data = np.fromfile(sys.argv[1], dtype=np.float64).reshape(3, -1)
    s, x, t = (cupy.asarray(a) for a in data)
    r, v = 0.02, 0.3
    call, put = black_scholes_kernel(s, x, t, r, v)
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(10):
        t0 = time.perf_counter()
        black_scholes_kernel(s, x, t, r, v, call, put)
        cupy.cuda.Device().synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print(f"CuPy Black-Scholes on {s.size} options: call[0] = {float(call[0]):.6f}, put[0] = {float(put[0]):.6f}")
    print(f"CuPy kernel: {times[5]:.3f} ms (median of 10, with the synchronize)")


if __name__ == '__main__':
    main()
