use cuprum::prelude::*;

/// Slices index with `usize` as in Rust; `Raw` and `View` arguments also take `u32`.
#[rawkernel]
pub fn copy32(x: &[f32], y: &mut [f32], n: u32) {
    let i = grid_1d();
    if i < n {
        y[i] = x[i];
    }
}
