//! The kernels of the k-means port (`examples/kmeans.rs`): CuPy's `examples/kmeans/kmeans.py`
//! (`fit_custom`) writes them as an `ElementwiseKernel` and two `ReductionKernel`s; here they are
//! Rust functions (callable on the host, which the example's reference does).
#![allow(dead_code)]

use cuprum::prelude::*;

/// The squared distance between the point `(x0, x1)` and the center `(c0, c1)`: CuPy's
/// `var_kernel`.
#[elementwise]
pub fn sq_dist(x0: f64, x1: f64, c0: f64, c1: f64) -> f64 {
    let (d0, d1) = (x0 - c0, x1 - c1);
    d0 * d0 + d1 * d1
}

/// The sum of the coordinates of the points a cluster's mask selects: CuPy's `sum_kernel`.
#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn masked_sum(x: f64, mask: bool) -> f64 {
    if mask { x } else { 0.0 }
}

/// The number of points a cluster's mask selects: CuPy's `count_kernel`.
#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn count(mask: bool) -> f64 {
    if mask { 1.0 } else { 0.0 }
}
