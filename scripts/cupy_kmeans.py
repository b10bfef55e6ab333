"""CuPy's k-means example (examples/kmeans/kmeans.py, fit_custom), timed on the points that
`examples/kmeans.rs` writes (KMEANS_DUMP=path), from the same initial centers (the first and the
last point): the comparison in that example's doc comment.

    KMEANS_DUMP=/tmp/x.bin target/release/examples/kmeans && python3 scripts/cupy_kmeans.py /tmp/x.bin
"""
import sys
import time

import cupy as cp
import numpy as np

var_kernel = cp.ElementwiseKernel(
    'T x0, T x1, T c0, T c1', 'T out',
    'out = (x0 - c0) * (x0 - c0) + (x1 - c1) * (x1 - c1)', 'var_kernel')
sum_kernel = cp.ReductionKernel(
    'T x, S mask', 'T out', 'mask ? x : 0', 'a + b', 'out = a', '0', 'sum_kernel')
count_kernel = cp.ReductionKernel(
    'T mask', 'float64 out', 'mask ? 1.0 : 0.0', 'a + b', 'out = a', '0.0', 'count_kernel')


def fit_custom(X, n_clusters, max_iter, centers):
    pred = None
    iters = 0
    for _ in range(max_iter):
        distances = var_kernel(X[:, None, 0], X[:, None, 1], centers[None, :, 0], centers[None, :, 1])
        new_pred = cp.argmin(distances, axis=1)
        if pred is not None and cp.all(new_pred == pred):
            break
        iters += 1
        pred = new_pred
        i = cp.arange(n_clusters)
        mask = pred == i[:, None]
        sums = sum_kernel(X, mask[:, :, None], axis=1)
        counts = count_kernel(mask, axis=1).reshape((n_clusters, 1))
        centers = sums / counts
    return centers, pred, iters


def main():
    x = cp.asarray(np.fromfile(sys.argv[1], dtype=np.float64).reshape(-1, 2))
    c0 = x[cp.asarray([0, x.shape[0] - 1])]
    centers, _, iters = fit_custom(x, 2, 10, c0)
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(5):
        t = time.perf_counter()
        fit_custom(x, 2, 10, c0)
        cp.cuda.Device().synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    print(f"CuPy k-means on {x.shape[0]} points: {iters} iterations, centers {cp.asnumpy(centers).ravel()}")
    print(f"CuPy fit: {times[2]:.2f} ms (median of 5)")


if __name__ == '__main__':
    main()
