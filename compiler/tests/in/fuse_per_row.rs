//! `#[fuse]` row kernels whose result is one value per row: log-sum-exp (arithmetic on two kept
//! reductions, generic) and a sum of `exp(x - max)` ending in a reduction without `keepdims`
//! (one fewer axis), as the build compiles them.
#![allow(dead_code)]

use cuprum::prelude::*;
use cuprum::runtime::{Array, Result};

#[fuse(instances = [f32, f64])]
pub fn logsumexp<T: Float>(x: &Array<T>) -> Result<Array<T>> {
    let m = x.max().axis(-1).keepdims(true).run()?;
    let s = (x - &m)?.exp()?.sum().axis(-1).keepdims(true).run()?;
    &s.log()? + &m
}

#[fuse]
pub fn sum_exp_shifted(x: &Array<f32>) -> Result<Array<f32>> {
    let m = x.max().axis(-1).keepdims(true).run()?;
    (x - &m)?.exp()?.sum().axis(-1).run()
}
