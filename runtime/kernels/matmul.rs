//! The built-in kernel of integer matrix products on a GPU (issue 36), where cuBLAS has no GEMM:
//! one thread per output element sums its `k` products in the element type, wrapping as the
//! kernel language's integers do (docs/semantics.md), in order of the summed index. A module of
//! the runtime (`linalg::integer` includes it). A plain loop, not a tiled GEMM: integer products
//! are rare in NumPy programs and the float types go to cuBLAS.
//!
//! Precompiled instances: none; each integer type is compiled by NVRTC at first use.

use crate::lang::prelude::*;
use cuprum_macros::elementwise;

/// Element `[q, r, c]` of the product of `a` (`[batch, m, k]`) and `b` (`[batch, k, n]`), for the
/// output element `index()` of `[batch, m, n]` (C order).
#[elementwise(crate = crate, instances = [])]
pub fn matmul_int<T: Int>(a: &Raw<T>, b: &Raw<T>, m: i64, k: i64, n: i64) -> T {
    let i = index() as i64;
    let q = i / (m * n);
    let r = (i / n) % m;
    let c = i % n;
    let mut acc = T::zero();
    let mut p = 0i64;
    while p < k {
        acc += a[(q * m + r) * k + p] * b[(q * k + p) * n + c];
        p += 1;
    }
    acc
}
