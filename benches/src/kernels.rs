//! The `#[rawkernel]`s the benchmark launches through their generated, typed launch API.

use cuprum::prelude::*;

/// Does nothing: the host cost of a launch with the same arguments as the bare launch.
#[rawkernel]
pub fn empty4(_x: &[f32], _y: &[f32], _z: &mut [f32], _n: u32) {}

/// The plain grid-stride copy (cupyx.jit's example): one element per iteration. Launched with a
/// grid that covers the array, each thread copies one element.
#[rawkernel]
pub fn copy_grid_stride<T: Scalar>(x: &[T], y: &mut [T], n: u32) {
    let s = grid_size_1d();
    let mut i = grid_1d();
    while i < n {
        y[i as usize] = x[i as usize];
        i += s;
    }
}

/// Grid-stride copy with eight loads in flight per thread (all loads, then all stores).
#[rawkernel]
pub fn copy_unrolled<T: Scalar>(x: &[T], y: &mut [T], n: u32) {
    let s = grid_size_1d();
    let mut i = grid_1d();
    let limit = if n > 7 * s { n - 7 * s } else { 0 };
    while i < limit {
        let mut v = [x[i as usize]; 8];
        for k in 1..8u32 {
            v[k as usize] = x[(i + k * s) as usize];
        }
        for k in 0..8u32 {
            y[(i + k * s) as usize] = v[k as usize];
        }
        i += 8 * s;
    }
    while i < n {
        y[i as usize] = x[i as usize];
        i += s;
    }
}
