//! The kernels of the conjugate gradient port (`examples/cg.rs`): CuPy's `examples/cg/cg.py`
//! writes its solver with array functions (`dot`, `inner`, `linalg.norm`, `+`, `*`); here they are
//! one `#[reduction]` (the matrix-vector product and the dot products) and two `#[elementwise]`
//! kernels (the vector updates), Rust functions the example's host reference calls too.
#![allow(dead_code)]

use cuprum::prelude::*;

/// The sum of the products: along axis 1 of `(A, p[None, :])` it is `A @ p` (a row's product
/// with `p` for each output), over all axes of `(r, r)` the dot product `r . r`.
#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn inner(x: f64, y: f64) -> f64 {
    x * y
}

/// `x += a p` and `r -= a A p` with `a = (r . r) / (p . A p)`: CuPy's `x += a * p` and
/// `r1 = r0 - a * dot(A, p)`, with the two dot products as 0-d arrays (broadcast to every element).
#[elementwise]
pub fn step(x: &mut f64, r: &mut f64, p: f64, ap: f64, rr: f64, pap: f64) {
    let a = rr / pap;
    *x += a * p;
    *r -= a * ap;
}

/// `p = r + b p` with `b = (r1 . r1) / (r0 . r0)`: CuPy's `p = r1 + b * p`.
#[elementwise]
pub fn direction(p: &mut f64, r: f64, rr_new: f64, rr_old: f64) {
    *p = r + rr_new / rr_old * *p;
}
