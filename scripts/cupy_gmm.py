"""CuPy's Gaussian mixture example (examples/gmm/gmm.py: `train_gmm` and its E and M steps, as
written), timed on the points and initial parameters that `examples/gmm.rs` writes
(GMM_DUMP=path), with CuPy's defaults (at most 30 iterations, tol 1e-3): the comparison in that
example's doc comment. The accuracies are `calc_acc`'s (not timed).

    GMM_DUMP=/tmp/gmm.bin target/release/examples/gmm && python3 scripts/cupy_gmm.py /tmp/gmm.bin
"""
import sys
import time

import cupy
import numpy as np


def estimate_log_prob(X, inv_cov, means):
    xp = cupy.get_array_module(X)
    n_features = X.shape[1]
    log_det = xp.sum(xp.log(inv_cov), axis=1)
    precisions = inv_cov ** 2
    log_prob = xp.sum((means ** 2 * precisions), 1) - \
        2 * xp.dot(X, (means * precisions).T) + xp.dot(X ** 2, precisions.T)
    return -0.5 * (n_features * xp.log(2 * np.pi) + log_prob) + log_det


def m_step(X, resp):
    xp = cupy.get_array_module(X)
    nk = xp.sum(resp, axis=0)
    means = xp.dot(resp.T, X) / nk[:, None]
    X2 = xp.dot(resp.T, X * X) / nk[:, None]
    covariances = X2 - means ** 2
    return nk / len(X), means, covariances


def e_step(X, inv_cov, means, weights):
    xp = cupy.get_array_module(X)
    weighted_log_prob = estimate_log_prob(X, inv_cov, means) + \
        xp.log(weights)
    log_prob_norm = xp.log(xp.sum(xp.exp(weighted_log_prob), axis=1))
    log_resp = weighted_log_prob - log_prob_norm[:, None]
    return xp.mean(log_prob_norm), log_resp


def train_gmm(X, max_iter, tol, means, covariances):
    xp = cupy.get_array_module(X)
    lower_bound = -np.inf
    converged = False
    weights = xp.array([0.5, 0.5], dtype=np.float32)
    inv_cov = 1 / xp.sqrt(covariances)

    for n_iter in range(max_iter):
        prev_lower_bound = lower_bound
        log_prob_norm, log_resp = e_step(X, inv_cov, means, weights)
        weights, means, covariances = m_step(X, xp.exp(log_resp))
        inv_cov = 1 / xp.sqrt(covariances)
        lower_bound = log_prob_norm
        change = lower_bound - prev_lower_bound
        if abs(change) < tol:
            converged = True
            break

    if not converged:
        print('Failed to converge. Increase max-iter or tol.')

    return inv_cov, means, weights, covariances


def predict(X, inv_cov, means, weights):
    xp = cupy.get_array_module(X)
    log_prob = estimate_log_prob(X, inv_cov, means)
    return (log_prob + xp.log(weights)).argmax(axis=1)


def main():
    num, dim = (int(v) for v in np.fromfile(sys.argv[1], dtype=np.uint64, count=2))
    params = np.fromfile(sys.argv[1], dtype=np.float64, count=4 * dim, offset=16).reshape(2, 2, dim)
    points = np.fromfile(sys.argv[1], dtype=np.float32, offset=16 + 32 * dim).reshape(-1, dim)
    X_train = cupy.asarray(points[:2 * num])
    X_test = cupy.asarray(points[2 * num:])
    y_train = cupy.asarray(np.r_[np.zeros(num), np.ones(num)].astype(np.int32))
    y_test = cupy.asarray(np.r_[np.zeros(100), np.ones(100)].astype(np.int32))
    means0, cov0 = cupy.asarray(params[0]), cupy.asarray(params[1])
    inv_cov, means, weights, cov = train_gmm(X_train, 30, 1e-3, means0, cov0)
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(5):
        t = time.perf_counter()
        train_gmm(X_train, 30, 1e-3, means0, cov0)
        cupy.cuda.Device().synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    train_accuracy = float(cupy.mean(predict(X_train, inv_cov, means, weights) == y_train)) * 100
    test_accuracy = float(cupy.mean(predict(X_test, inv_cov, means, weights) == y_test)) * 100
    print(f"CuPy GMM on {X_train.shape[0]} points in {dim}-D: means {cupy.asnumpy(means).ravel()}, "
          f"variances {cupy.asnumpy(cov).ravel()}, weights {cupy.asnumpy(weights)}")
    print(f"CuPy train accuracy {train_accuracy:.2f}%, test accuracy {test_accuracy:.2f}%")
    print(f"CuPy fit: {times[2]:.2f} ms (median of 5)")


if __name__ == '__main__':
    main()
