//! The example's kernels: an ordinary Rust module that cuprum translates to CUDA C, precompiled by
//! `build.rs` (cuprum-build) into fat binaries embedded in the program.
#![allow(dead_code)]

use cuprum::prelude::*;
use cuprum::runtime::{Array, Result};

/// z = (x - y)^2, element by element (any strides, broadcasting).
#[elementwise]
pub fn squared_diff(x: f32, y: f32) -> f32 {
    let d = x - y;
    d * d
}

/// Log-sum-exp over the last axis, one value per row (shape `(rows, 1)`): one row kernel, two
/// passes over each row (the row's maximum, then the sum of `exp(x - max)`).
#[fuse]
pub fn logsumexp(x: &Array<f32>) -> Result<Array<f32>> {
    let m = x.max().axis(-1).keepdims(true).run()?;
    let s = (x - &m)?.exp()?.sum().axis(-1).keepdims(true).run()?;
    &s.log()? + &m
}

/// Softmax from the log-sum-exp of the rows: `exp(x - lse)` (`lse` broadcast along the rows),
/// written into a given output (`call_into`), which is what lets the result be candle's memory.
#[elementwise]
pub fn exp_minus(x: f32, lse: f32) -> f32 {
    (x - lse).exp()
}
