"""CuPy's Monte Carlo option pricing example (examples/finance/monte_carlo.py: its ElementwiseKernel
and `compute_option_prices`, the kernel then `mean(axis=1)`), timed on the options that
`examples/monte_carlo.rs` writes (MONTE_CARLO_DUMP=path, with its threads an option and paths a
thread): the comparison in that example's doc comment. CuPy's generator differs from the port's
(its own seeding; normal deviates by `erfcinv`), so the prices agree to within the Monte Carlo
error, not digit for digit.

    MONTE_CARLO_DUMP=/tmp/mc.bin target/release/examples/monte_carlo && python3 scripts/cupy_monte_carlo.py /tmp/mc.bin
"""
import sys
import time

import cupy
import numpy as np

from cupy_black_scholes import black_scholes_kernel

monte_carlo_kernel = cupy.ElementwiseKernel(
    'T s, T x, T t, T r, T v, int32 n_samples, int32 seed', 'T call',
    '''
    uint64_t rand_state[2];
    init_state(rand_state, i, seed);

    T call_sum = 0;
    const T v_by_sqrt_t = v * sqrt(t);
    const T mu_by_t = (r - v * v / 2) * t;

    for (int i = 0; i < n_samples; ++i) {
        const T p = sample_normal(rand_state);
        call_sum += get_call_value(s, x, p, mu_by_t, v_by_sqrt_t);
    }
    const T discount_factor = exp(- r * t);
    call = discount_factor * call_sum / n_samples;
    ''',
    'monte_carlo_kernel',
    preamble='''
    typedef unsigned long long uint64_t;

    __device__
    inline T get_call_value(T s, T x, T p, T mu_by_t, T v_by_sqrt_t) {
        const T call_value = s * exp(mu_by_t + v_by_sqrt_t * p) - x;
        return (call_value > 0) ? call_value : 0;
    }

    __device__ inline void init_state(uint64_t* a, int i, int seed) {
        a[0] = i + 1;
        a[1] = 0x5c721fd808f616b6 + seed;
    }

    __device__ inline uint64_t xorshift128plus(uint64_t* x) {
        uint64_t s1 = x[0];
        uint64_t s0 = x[1];
        x[0] = s0;
        s1 = s1 ^ (s1 << 23);
        s1 = s1 ^ (s1 >> 17);
        s1 = s1 ^ s0;
        s1 = s1 ^ (s0 >> 26);
        x[1] = s1;
        return s0 + s1;
    }

    __device__ inline T sample_uniform(uint64_t* state) {
        const uint64_t x = xorshift128plus(state);
        return T(x) / T(18446744073709551615);
    }

    __device__ inline T sample_normal(uint64_t* state) {
        T x = sample_uniform(state);
        T s = T(-1.4142135623730950488016887242097);
        if (x > 0.5) {
            x = 1 - x;
            s = -s;
        }
        T p = x + T(0.5);
        return s * erfcinv(2 * p);
    }
    ''',
)


def compute_option_prices(s, x, t, r, v, n_threads, n_samples, seed=0):
    call_prices = cupy.empty((s.size, n_threads), dtype=np.float64)
    monte_carlo_kernel(s[:, None], x[:, None], t[:, None], r, v, n_samples, seed, call_prices)
    return call_prices.mean(axis=1)


def main():
    n_threads, n_samples = (int(v) for v in np.fromfile(sys.argv[1], dtype=np.uint64, count=2))
    data = np.fromfile(sys.argv[1], dtype=np.float64, offset=16).reshape(3, -1)
    s, x, t = (cupy.asarray(a) for a in data)
    r, v = 0.02, 0.3
    call_mc = compute_option_prices(s, x, t, r, v, n_threads, n_samples)
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        compute_option_prices(s, x, t, r, v, n_threads, n_samples)
        cupy.cuda.Device().synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    call_bs, _ = black_scholes_kernel(s, x, t, r, v)
    error = float(cupy.std(call_mc - call_bs))
    print(f"CuPy Monte Carlo on {s.size} options, {n_threads * n_samples} paths each: "
          f"call[0] = {float(call_mc[0]):.6e} (Black-Scholes {float(call_bs[0]):.6e}); error against Black-Scholes (std) {error:.2e}")
    print(f"CuPy prices: {times[2]:.2f} ms (median of 5, with the synchronize)")


if __name__ == '__main__':
    main()
