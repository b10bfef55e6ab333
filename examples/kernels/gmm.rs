//! The kernels of the Gaussian mixture port (`examples/gmm.rs`): CuPy's `examples/gmm/gmm.py`
//! writes its EM steps with array functions (`dot`, `sum`, `log`, `exp`, broadcasting); here the
//! steps are `#[elementwise]` and `#[reduction]` kernels, Rust functions the example's host
//! reference calls too. The points are f32 and everything else f64, as in CuPy's example.
#![allow(dead_code)]

use cuprum::prelude::*;

/// One coordinate's term of the squared Mahalanobis distance of the point to a component (its
/// diagonal precision is `inv_cov^2`), summed over the coordinates (axis 2 of the points
/// `(N, 1, D)` against the means and `inv_cov` `(1, K, D)`). CuPy's `estimate_log_prob` expands
/// it as `sum(means^2 p) - 2 X (means p)^T + X^2 p^T` (two matrix products); this is the same sum
/// unexpanded.
#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn mahalanobis(x: f32, mean: f64, inv_cov: f64) -> f64 {
    let d = x as f64 - mean;
    inv_cov * inv_cov * (d * d)
}

/// The log of the weighted density of a point under a component: CuPy's
/// `-0.5 * (n_features * log(2 pi) + log_prob) + log_det` plus `log(weights)`.
#[elementwise]
pub fn weighted_log_prob(mahalanobis: f64, log_det: f64, weight: f64, dim: f64) -> f64 {
    -0.5 * (dim * (2.0 * std::f64::consts::PI).ln() + mahalanobis) + log_det + weight.ln()
}

/// `log(sum(exp(x)))` along the components: CuPy's `log_prob_norm` (without the usual shift by
/// the maximum, as CuPy's example).
#[reduction(identity = 0.0, reduce = |a, b| a + b, post = |a| a.ln())]
pub fn log_sum_exp(x: f64) -> f64 {
    x.exp()
}

/// The responsibility of a component for a point: CuPy's `exp(weighted_log_prob -
/// log_prob_norm[:, None])`.
#[elementwise]
pub fn responsibility(weighted_log_prob: f64, log_prob_norm: f64) -> f64 {
    (weighted_log_prob - log_prob_norm).exp()
}

/// The responsibility-weighted coordinates, summed over the points (axis 0 of the
/// responsibilities `(N, K, 1)` against the points `(N, 1, D)`): CuPy's `dot(resp.T, X)`.
#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn weighted_sum(resp: f64, x: f32) -> f64 {
    resp * x as f64
}

/// The same of the squared coordinates: CuPy's `dot(resp.T, X * X)` (the square in f32, as
/// CuPy's `X * X`).
#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn weighted_sum_sq(resp: f64, x: f32) -> f64 {
    resp * (x * x) as f64
}

/// A component's mean, variance and `1 / sqrt(variance)` from its sums and total responsibility
/// `nk`: CuPy's `m_step` (`means = sums / nk`, `covariances = X2 - means ** 2`) and
/// `inv_cov = 1 / sqrt(covariances)`.
#[elementwise]
pub fn m_step(sum: f64, sum_sq: f64, nk: f64) -> (f64, f64, f64) {
    let mean = sum / nk;
    let cov = sum_sq / nk - mean * mean;
    (mean, cov, 1.0 / cov.sqrt())
}
