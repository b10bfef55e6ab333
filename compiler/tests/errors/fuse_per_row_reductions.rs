// A row-wise `#[fuse]` function with a per-row result: the last reduction reduces the last axis,
// each earlier one keeps it.
use cuprum::prelude::*;
use cuprum::runtime::{Array, Result};

#[fuse]
pub fn over_everything(x: &Array<f32>) -> Result<Array<f32>> {
    let m = x.max().axis(-1).keepdims(true).run()?;
    (x - &m)?.exp()?.sum().run()
}

#[fuse]
pub fn first_not_kept(x: &Array<f32>) -> Result<Array<f32>> {
    let m = x.max().axis(-1).run()?;
    (x - &m)?.exp()?.sum().axis(-1).run()
}
