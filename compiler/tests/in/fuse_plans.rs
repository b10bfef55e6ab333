//! `#[fuse]` functions of each plan, as the build compiles them: an elementwise chain inlining an
//! `#[elementwise]` kernel (generic), a map ending in one reduction, and a row kernel with a
//! broadcast operand, a scalar and two row reductions (an RMS norm scaled per column).
#![allow(dead_code)]

use cuprum::prelude::*;
use cuprum::runtime::{Array, Result};

#[elementwise]
pub fn softplus<T: Float>(x: T) -> T {
    (T::one() + x.exp()).ln()
}

#[fuse(instances = [f32, f64])]
pub fn shifted_softplus<T: Float>(x: &Array<T>, shift: T) -> Result<Array<T>> {
    let y = softplus::call(x)?;
    &y - shift
}

#[fuse]
pub fn dot_rows(x: &Array<f32>, y: &Array<f32>) -> Result<Array<f32>> {
    (x * y)?.sum().axis(-1).keepdims(true).run()
}

#[fuse]
pub fn rms_norm(x: &Array<f32>, w: &Array<f32>, eps: f32) -> Result<Array<f32>> {
    let peak = x.abs()?.max().axis(-1).keepdims(true).run()?;
    let scaled = (x / &peak)?;
    let ms = (&scaled * &scaled)?.mean().axis(-1).keepdims(true).run()?;
    let inv = (1.0 / (&ms + eps)?.sqrt()?)?;
    ((&scaled * &inv)? * w)
}
