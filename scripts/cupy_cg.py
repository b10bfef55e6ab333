"""CuPy's conjugate gradient example (examples/cg/cg.py, `fit`), timed on the matrix and right-hand
side that `examples/cg.rs` writes (CG_DUMP=path), with CuPy's defaults (tol 0.1, at most 5000
iterations): the comparison in that example's doc comment. `fit` is CuPy's as written (it
computes `dot(A, p)` and `inner(r0, r0)` twice an iteration), but returns its iteration count
too; `fit_once` computes each once, as the port does, for the comparison of the same work.

    CG_DUMP=/tmp/cg.bin target/release/examples/cg && python3 scripts/cupy_cg.py /tmp/cg.bin
"""
import sys
import time

import cupy
import numpy as np


def fit(A, b, tol, max_iter):
    xp = cupy.get_array_module(A)
    x = xp.zeros_like(b, dtype=np.float64)
    r0 = b - xp.dot(A, x)
    p = r0
    for i in range(max_iter):
        a = xp.inner(r0, r0) / xp.inner(p, xp.dot(A, p))
        x += a * p
        r1 = r0 - a * xp.dot(A, p)
        if xp.linalg.norm(r1) < tol:
            return x, i + 1
        b = xp.inner(r1, r1) / xp.inner(r0, r0)
        p = r1 + b * p
        r0 = r1
    print('Failed to converge. Increase max-iter or tol.')
    return x, max_iter


def fit_once(A, b, tol, max_iter):
    xp = cupy.get_array_module(A)
    x = xp.zeros_like(b, dtype=np.float64)
    r0 = b - xp.dot(A, x)
    p = r0
    rr0 = xp.inner(r0, r0)
    for i in range(max_iter):
        ap = xp.dot(A, p)
        a = rr0 / xp.inner(p, ap)
        x += a * p
        r1 = r0 - a * ap
        rr1 = xp.inner(r1, r1)
        if xp.sqrt(rr1) < tol:
            return x, i + 1
        p = r1 + rr1 / rr0 * p
        r0, rr0 = r1, rr1
    print('Failed to converge. Increase max-iter or tol.')
    return x, max_iter


def timed(f, A, b, x_ans):
    x, iters = f(A, b, 0.1, 5000)
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(5):
        t = time.perf_counter()
        f(A, b, 0.1, 5000)
        cupy.cuda.Device().synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    err = float(cupy.linalg.norm(x - x_ans))
    return times[2], iters, err


def main():
    n = int(np.fromfile(sys.argv[1], dtype=np.uint64, count=1)[0])
    data = np.fromfile(sys.argv[1], dtype=np.float64, offset=8)
    A = cupy.asarray(data[:n * n].reshape(n, n))
    b = cupy.asarray(data[n * n:n * n + n])
    x_ans = cupy.asarray(data[n * n + n:])
    ms, iters, err = timed(fit, A, b, x_ans)
    print(f"CuPy CG on a {n} x {n} SPD matrix: {iters} iterations, |x - x_ans| = {err:.3e}")
    print(f"CuPy fit: {ms:.2f} ms (median of 5)")
    ms, iters, err = timed(fit_once, A, b, x_ans)
    print(f"CuPy fit_once (each product once): {ms:.2f} ms (median of 5; {iters} iterations, |x - x_ans| = {err:.3e})")


if __name__ == '__main__':
    main()
