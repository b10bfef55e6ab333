//! The extension's kernels: ordinary Rust that cuprum translates to CUDA C at build time
//! (build.rs) and that runs on the host on the CPU device.
#![allow(dead_code)]

use cuprum::prelude::*;
use cuprum::runtime::{Array, Result};

/// z = (x - y)^2, element by element, with broadcasting.
#[elementwise(instances = [f16, f32, f64])]
pub fn squared_diff<T: Float>(x: T, y: T) -> T {
    let d = x - y;
    d * d
}

/// The L2 norm along axes (all of them by default), accumulated in f64.
#[reduction(identity = 0.0, reduce = |a, b| a + b, post = |a| a.sqrt(), acc = f64)]
pub fn l2norm(x: f32) -> f64 {
    (x as f64) * (x as f64)
}

/// The softmax of each row (over the last axis): one kernel, one block per row.
#[fuse(instances = [f32, f64])]
pub fn softmax<T: Float>(x: &Array<T>) -> Result<Array<T>> {
    let m = x.max().axis(-1).keepdims(true).run()?;
    let e = (x - &m)?.exp()?;
    let s = e.sum().axis(-1).keepdims(true).run()?;
    &e / &s
}

/// y = a * x + y in place (a grid-stride loop).
#[rawkernel]
pub fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    let mut i = grid_1d() as usize;
    while i < y.len() {
        y[i] += a * x[i];
        i += grid_size_1d() as usize;
    }
}
