//! The `#[fuse]` functions of the fusion rows (`fusion.rs`): chains of N cheap elementwise
//! operations, a row-wise softmax and a layer norm. Each is also called unfused (the function
//! itself: one kernel per operation) for comparison.
#![allow(dead_code)]

use cuprum::prelude::*;
use cuprum_runtime::{Array, Result};

#[fuse]
pub fn chain1(x: &Array<f32>) -> Result<Array<f32>> {
    x * 1.5
}

#[fuse]
pub fn chain2(x: &Array<f32>) -> Result<Array<f32>> {
    let a = (x * 1.5)?;
    &a + 0.25
}

#[fuse]
pub fn chain4(x: &Array<f32>) -> Result<Array<f32>> {
    let a = (x * 1.5)?;
    let b = (&a + 0.25)?;
    let c = (&b * 0.75)?;
    &c - 0.125
}

#[fuse]
pub fn chain8(x: &Array<f32>) -> Result<Array<f32>> {
    let a = (x * 1.5)?;
    let b = (&a + 0.25)?;
    let c = (&b * 0.75)?;
    let d = (&c - 0.125)?;
    let e = (&d * 1.25)?;
    let f = (&e + 0.5)?;
    let g = (&f * 0.5)?;
    &g - 0.0625
}

#[fuse]
pub fn softmax(x: &Array<f32>) -> Result<Array<f32>> {
    let m = x.max().axis(-1).keepdims(true).run()?;
    let e = (x - &m)?.exp()?;
    let s = e.sum().axis(-1).keepdims(true).run()?;
    &e / &s
}

#[fuse]
pub fn layer_norm(x: &Array<f32>, gamma: &Array<f32>, beta: &Array<f32>, eps: f32) -> Result<Array<f32>> {
    let mu = x.mean().axis(-1).keepdims(true).run()?;
    let d = (x - &mu)?;
    let var = (&d * &d)?.mean().axis(-1).keepdims(true).run()?;
    let inv = (1.0 / (&var + eps)?.sqrt()?)?;
    let y = ((&d * &inv)? * gamma)?;
    &y + beta
}
