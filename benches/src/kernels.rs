//! The `#[rawkernel]`s the benchmark launches through their generated, typed launch API.

use cuprum::prelude::*;

/// Does nothing: the host cost of a launch with the same arguments as the bare launch.
#[rawkernel]
pub fn empty4(_x: &[f32], _y: &[f32], _z: &mut [f32], _n: u32) {}

/// Grid-stride copy with four loads in flight per thread.
#[rawkernel]
pub fn copy_unrolled<T: Scalar>(x: &[T], y: &mut [T], n: u32) {
    let s = grid_size_1d();
    let mut i = grid_1d();
    let limit = if n > 3 * s { n - 3 * s } else { 0 };
    while i < limit {
        let a = x[i as usize];
        let b = x[(i + s) as usize];
        let c = x[(i + 2 * s) as usize];
        let d = x[(i + 3 * s) as usize];
        y[i as usize] = a;
        y[(i + s) as usize] = b;
        y[(i + 2 * s) as usize] = c;
        y[(i + 3 * s) as usize] = d;
        i += 4 * s;
    }
    while i < n {
        y[i as usize] = x[i as usize];
        i += s;
    }
}
