//! The fusion example's kernels: a normalisation + activation of each row, then a score per row.
//! Each `#[fuse]` function is ordinary Rust over arrays (it runs as written, one kernel per
//! operation) and also one kernel generated at build time (`NAME::call`).
#![allow(dead_code)]

use cuprum::prelude::*;
use cuprum::runtime::{Array, Result};

/// GELU (tanh approximation), element by element; inlined by the fused functions that call it.
#[elementwise]
pub fn gelu<T: Float>(x: T) -> T {
    let c = T::from_f64(0.797_884_560_802_865_4);
    T::from_f64(0.5) * x * (T::one() + (c * (x + T::from_f64(0.044_715) * x * x * x)).tanh())
}

/// Layer norm over the last axis, then GELU: one kernel with one block per row.
#[fuse]
pub fn norm_gelu(x: &Array<f32>, gamma: &Array<f32>, beta: &Array<f32>) -> Result<Array<f32>> {
    let mu = x.mean().axis(-1).keepdims(true).run()?;
    let d = (x - &mu)?;
    let var = (&d * &d)?.mean().axis(-1).keepdims(true).run()?;
    let inv = (1.0 / (&var + 1e-5)?.sqrt()?)?;
    let y = (((&d * &inv)? * gamma)? + beta)?;
    gelu::call(&y)
}

/// The score of each row: a weighted sum, one reduction kernel whose map is `y * w`.
#[fuse]
pub fn score(y: &Array<f32>, w: &Array<f32>) -> Result<Array<f32>> {
    (y * w)?.sum().axis(-1).run()
}
