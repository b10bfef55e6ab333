//! The built-in gather kernel behind `Array::take` (runtime/src/take.rs): NumPy's `take` along an
//! axis, written with cuprum's own macros (`crate = crate`) and precompiled by the runtime's
//! build.rs. The caller checks every index against the axis before the launch (so the raw read
//! stays inside `a`) and views `a` as `[pre, n, post]` (the axes before the taken one, the taken
//! one, the axes after it) and the output as `[pre, m, post]` with the `m` indices broadcast to it.
//!
//! Precompiled instances: f32, f64 and i64 (NumPy's defaults); every other dtype is compiled by
//! NVRTC at first use (docs/building.md, "What the built-ins precompile").

use crate::lang::prelude::*;
use cuprum_macros::elementwise;

/// Element `[p, j, q]` of `a` (`[pre, n, post]`) for the output element `[p, k, q]` (`[pre, m,
/// post]`) whose index is `j` (negative counts from the end of the axis).
#[elementwise(crate = crate, instances = [f32, f64, i64])]
pub fn take<T: Scalar>(j: i64, a: &Raw<T>, n: i64, m: i64, post: i64) -> T {
    let i = index() as i64;
    let q = i % post;
    let p = i / (m * post);
    let jj = if j < 0 { j + n } else { j };
    a[(p * n + jj) * post + q]
}
