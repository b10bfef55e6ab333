//! `#[fuse]` functions for `gpu_fuse.rs`: one of each plan (elementwise, one reduction, rows of
//! elements or one value per row), generic and concrete, with scalars, broadcasting and an inlined `#[elementwise]` kernel.
#![allow(dead_code)]

use cuprum::prelude::*;
use cuprum::runtime::{Array, Result};

/// An elementwise kernel the fused functions inline.
#[elementwise(instances = [f32, f64])]
pub fn gelu<T: Float>(x: T) -> T {
    let c = T::from_f64(0.797_884_560_802_865_4);
    T::from_f64(0.5) * x * (T::one() + (c * (x + T::from_f64(0.044_715) * x * x * x)).tanh())
}

/// Four elementwise operations, a scalar and a broadcast row: one elementwise kernel.
#[fuse]
pub fn chain(x: &Array<f32>, bias: &Array<f32>, a: f32) -> Result<Array<f32>> {
    let y = ((x * a)? + bias)?;
    let z = (&y * &y)?.sqrt()?;
    (&z - 0.5)?.exp()
}

/// An inlined `#[elementwise]` kernel, generic.
#[fuse(instances = [f32, f64])]
pub fn scaled_gelu<T: Float>(x: &Array<T>, s: T) -> Result<Array<T>> {
    let g = gelu::call(x)?;
    &g * s
}

/// Ends in one reduction: a reduction kernel whose map is `(x - y)^2`.
#[fuse]
pub fn squared_distance(x: &Array<f32>, y: &Array<f32>) -> Result<Array<f32>> {
    let d = (x - y)?;
    (&d * &d)?.sum().axis(-1).run()
}

/// Ends in a reduction, with a scalar parameter (given by value at the call).
#[fuse]
pub fn scaled_squared_distance(x: &Array<f32>, y: &Array<f32>, s: f32) -> Result<Array<f32>> {
    let d = ((x - y)? * s)?;
    (&d * &d)?.sum().axis(-1).run()
}

/// Ends in a reduction over everything.
#[fuse]
pub fn max_abs(x: &Array<f64>) -> Result<Array<f64>> {
    x.abs()?.max().run()
}

/// Softmax over the last axis: two row reductions feeding elementwise work.
#[fuse(instances = [f32, f64])]
pub fn softmax<T: Float>(x: &Array<T>) -> Result<Array<T>> {
    let m = x.max().axis(-1).keepdims(true).run()?;
    let e = (x - &m)?.exp()?;
    let s = e.sum().axis(-1).keepdims(true).run()?;
    &e / &s
}

/// Log-sum-exp over the last axis: two row reductions, one value per row (the axis kept).
#[fuse(instances = [f32, f64])]
pub fn logsumexp<T: Float>(x: &Array<T>) -> Result<Array<T>> {
    let m = x.max().axis(-1).keepdims(true).run()?;
    let s = (x - &m)?.exp()?.sum().axis(-1).keepdims(true).run()?;
    &s.log()? + &m
}

/// The sum of `exp(x - max)` over the last axis, ending in a reduction without `keepdims`: one
/// value per row, the axis dropped.
#[fuse]
pub fn sum_exp_shifted(x: &Array<f32>) -> Result<Array<f32>> {
    let m = x.max().axis(-1).keepdims(true).run()?;
    (x - &m)?.exp()?.sum().axis(-1).run()
}

/// Layer norm over the last axis, with per-column scale and shift (broadcast) and a scalar.
#[fuse]
pub fn layer_norm(x: &Array<f32>, gamma: &Array<f32>, beta: &Array<f32>, eps: f32) -> Result<Array<f32>> {
    let mu = x.mean().axis(-1).keepdims(true).run()?;
    let d = (x - &mu)?;
    let var = (&d * &d)?.mean().axis(-1).keepdims(true).run()?;
    let inv = (1.0 / (&var + eps)?.sqrt()?)?;
    let y = ((&d * &inv)? * gamma)?;
    &y + beta
}

/// A row reduction over axis 0: the last axis only for one-dimensional arrays.
#[fuse]
pub fn center_first_axis(x: &Array<f32>) -> Result<Array<f32>> {
    let m = x.mean().axis(0).keepdims(true).run()?;
    x - &m
}

/// NumPy's `maximum`/`minimum` (a NaN operand gives NaN) on two broadcast operands, with an
/// integer instance (the plain comparison).
#[fuse(instances = [f32, i64])]
pub fn nan_clamp<T: Real>(x: &Array<T>, lo: &Array<T>, hi: &Array<T>) -> Result<Array<T>> {
    x.maximum(lo)?.minimum(hi)
}
