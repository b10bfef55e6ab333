//! The grid-synchronisation row's kernels (`grid_sync.rs`): Jacobi steps of the 1-D Laplace
//! equation, one step per launch or every step in one cooperative launch.

use cuprum::prelude::*;

/// One Jacobi step over a grid-stride loop: `dst[i] = (src[i - 1] + src[i + 1]) / 2` inside,
/// `dst[i] = src[i]` at both ends.
#[rawkernel]
pub fn jacobi_step(src: &[f32], dst: &mut [f32]) {
    let n = src.len();
    let stride = grid_size_1d() as usize;
    let mut i = grid_1d() as usize;
    while i < n {
        dst[i] = if i == 0 || i == n - 1 { src[i] } else { 0.5 * (src[i - 1] + src[i + 1]) };
        i += stride;
    }
}

/// The same step between two writable arrays, for the persistent kernel.
#[device]
fn relax(src: &mut [f32], dst: &mut [f32]) {
    let n = src.len();
    let stride = grid_size_1d() as usize;
    let mut i = grid_1d() as usize;
    while i < n {
        dst[i] = if i == 0 || i == n - 1 { src[i] } else { 0.5 * (src[i - 1] + src[i + 1]) };
        i += stride;
    }
}

/// `steps` Jacobi steps in one cooperative launch, `a` to `b` on even steps and back on odd ones,
/// the whole grid synchronised after each.
#[rawkernel]
pub fn jacobi_persistent(a: &mut [f32], b: &mut [f32], steps: u32) {
    for k in 0..steps {
        if k & 1 == 0 {
            relax(a, b);
        } else {
            relax(b, a);
        }
        grid_sync();
    }
}
