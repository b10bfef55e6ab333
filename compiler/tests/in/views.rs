use cuprum::prelude::*;

/// n-d `View` / `ViewMut` arguments of a raw kernel: `shape()`, `len()`, multi-index `v[[i, j]]`
/// and a flat index.
#[rawkernel]
pub fn transpose(a: View<f32, 2>, mut out: ViewMut<f32, 2>) {
    let (x, y) = grid_2d();
    let shape = out.shape();
    let (rows, cols) = (shape[0], shape[1]);
    if (y as usize) < rows && (x as usize) < cols {
        out[[y, x]] = a[[x, y]];
    }
    if x == 0 && y == 0 {
        out[0] = out[0] + (a.len() as f32) * 0.0;
    }
}

/// A 3-D view with `u32`, `i32` and `usize` indices mixed.
#[rawkernel]
pub fn sum_planes<T: Float>(v: View<T, 3>, out: &mut [T]) {
    let k = grid_1d();
    let s = v.shape();
    if (k as usize) >= s[0] {
        return;
    }
    let mut acc = T::zero();
    for i in 0..s[1] {
        for j in 0..s[2] as i32 {
            acc += v[[k as usize, i, j as usize]];
        }
    }
    out[k as usize] = acc;
}

/// `strides()` (in elements) of a view: a raw kernel that handles any layout by hand.
#[rawkernel]
pub fn axpy_strided(a: f32, x: View<f32, 1>, mut y: ViewMut<f32, 1>) {
    let i = grid_1d() as usize;
    let n = y.len();
    let sx = x.strides()[0];
    if i < n && sx != 0 {
        y[[i]] = a * x[[i]] + y[[i]];
    }
}
