use cuprum::prelude::*;

/// Local `[T; N]` arrays: list and repeat forms, indexing, mutation, `len()`, passing them to
/// device functions by value and as a `&[T]` / `&mut [T]` slice.
#[device]
fn dot4(a: [f32; 4], b: [f32; 4]) -> f32 {
    let mut s = 0.0;
    for k in 0..4 {
        s += a[k] * b[k];
    }
    s
}

#[device]
fn sum_slice(xs: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for k in 0..xs.len() {
        s += xs[k];
    }
    s
}

#[device]
fn fill(xs: &mut [f32], v: f32) {
    for k in 0..xs.len() {
        xs[k] = v;
    }
}

#[rawkernel]
pub fn stencil(x: &[f32], y: &mut [f32], n: u32) {
    let i = grid_1d();
    if i < 2 || i + 2 >= n {
        return;
    }
    let w = [0.1f32, 0.2, 0.4, 0.2];
    let mut window = [0.0f32; 4];
    for k in 0..4u32 {
        window[k as usize] = x[(i + k - 2) as usize];
    }
    let mut scratch = [1.5f32; 8];
    fill(&mut scratch, 0.25);
    let counts: [i32; 3] = [1, 2, 3];
    let total = counts[0] + counts[1] + counts[2] + window.len() as i32;
    y[i as usize] = dot4(w, window) + sum_slice(&scratch) + sum_slice(&w) + total as f32;
}

/// A generic local array and nested arrays.
#[elementwise]
pub fn poly<T: Float>(x: T) -> T {
    let c = [T::one(), T::from_f64(-0.5), T::from_f64(0.125)];
    let mut acc = T::zero();
    for k in (0..3).rev() {
        acc = acc * x + c[k];
    }
    let grid = [[1u8, 2], [3, 4]];
    acc + T::from_f64(grid[1][0] as f64)
}

/// Fixed-size array references: `&mut [T; N]` / `&[T; N]` parameters take a local array (`&mut l`)
/// or a shared array.
#[device]
fn bump4(a: &mut [f32; 4], v: f32) {
    for k in 0..a.len() {
        a[k] += v;
    }
}

#[device]
fn sum4(a: &[f32; 4]) -> f32 {
    a[0] + a[1] + a[2] + a[3]
}

#[rawkernel]
pub fn array_refs(out: &mut [f32]) {
    let s = shared_array::<f32, 4>();
    let mut l = [0.0f32; 4];
    if thread_idx().x < 4 {
        s[thread_idx().x as usize] = 0.0;
    }
    sync_threads();
    bump4(&mut l, 1.0);
    if thread_idx().x == 0 {
        bump4(s, 2.0);
    }
    sync_threads();
    out[grid_1d() as usize] = sum4(&l) + sum4(s);
}
