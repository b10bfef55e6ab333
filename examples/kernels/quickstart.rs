//! The quickstart's kernels: an ordinary Rust module (callable on the host) that cuprum translates
//! to CUDA C.
#![allow(dead_code)]

use cuprum::prelude::*;

/// z = (x - y)^2, element by element.
#[device]
pub fn squared_diff<T: Float>(x: T, y: T) -> T {
    let d = x - y;
    d * d
}

/// A grid-stride loop applying `squared_diff` (cupyx.jit.rawkernel style).
#[rawkernel(instances = [f32, f64])]
pub fn squared_diff_kernel<T: Float>(x: &[T], y: &[T], z: &mut [T]) {
    let mut i = grid_1d() as usize;
    while i < z.len() {
        z[i] = squared_diff(x[i], y[i]);
        i += grid_size_1d() as usize;
    }
}

/// Sum of squares of each block's elements, combined with one atomic per block.
#[rawkernel]
pub fn sum_squares(x: &[f32], out: &mut [f32]) {
    let s = shared_array::<f32, 256>();
    let i = grid_1d() as usize;
    let t = thread_idx().x as usize;
    s[t] = if i < x.len() { x[i] * x[i] } else { 0.0 };
    sync_threads();
    let mut w = 128;
    while w > 0 {
        if t < w {
            s[t] += s[t + w];
        }
        sync_threads();
        w /= 2;
    }
    if t == 0 {
        atomic_add(out, 0usize, s[0]);
    }
}

/// z = (x - y)^2 with broadcasting (CuPy's ElementwiseKernel): the same function as above, as an
/// elementwise kernel.
#[elementwise]
pub fn squared_diff_ew<T: Float>(x: T, y: T) -> T {
    squared_diff(x, y)
}

/// The L2 norm along axes (CuPy's ReductionKernel), accumulated in f64.
#[reduction(identity = 0.0, reduce = |a, b| a + b, post = |a| a.sqrt(), acc = f64)]
pub fn l2norm(x: f32) -> f64 {
    (x as f64) * (x as f64)
}
