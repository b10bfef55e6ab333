use cuprum::prelude::*;

/// `&[T]` is read-only: writing needs `&mut [T]`.
#[rawkernel]
pub fn scale_in_place(x: &[f32], s: f32, n: u32) {
    let i = grid_1d();
    if i < n {
        x[i as usize] = x[i as usize] * s;
    }
}
