// `#[fuse]` reports every mistake of a function, each at its span.
use cuprum::prelude::*;
use cuprum::runtime::{Array, Result};

#[fuse]
pub fn bad(x: &Array<f32>, w: &[f32]) -> Result<Array<f32>> {
    let m = x.max().axis(0).run()?;
    let y = x.copy()?;
    let n = w.len();
    &y - &m
}

#[fuse(fast_math)]
pub fn wrong_argument(x: &Array<f32>) -> Result<Array<f32>> {
    x * 2.0
}

#[fuse]
pub fn not_kept(x: &Array<f32>) -> Result<Array<f32>> {
    let m = x.max().axis(0).run()?;
    let s = m.sum().axis(-1).keepdims(true).run()?;
    (x - &m)? / &s
}

fn main() {}
