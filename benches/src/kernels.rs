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

/// Grid-stride copy of four consecutive elements per thread and step: `load4`/`store4` move them
/// in one 16-byte access each for 4-byte elements (the array's start is 16-byte aligned), every
/// warp access 512 contiguous bytes; the last `n % 4` elements one by one. With 4-byte elements
/// one element per thread moves too few bytes per instruction (0.64 of the driver's copy on an
/// H200), four a block-width apart with a bounds check each 0.91-0.95, this 0.97.
#[rawkernel]
pub fn copy_grid_stride4<T: Scalar>(x: &[T], y: &mut [T], n: u32) {
    let stride = 4 * grid_size_1d();
    let mut i = 4 * grid_1d();
    while i < n && n - i >= 4 {
        let v = load4(x, i);
        store4(y, i, v);
        i += stride;
    }
    for k in i..n.min(i + 4) {
        y[k as usize] = x[k as usize];
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

/// `(x - y)^2`: the CPU section's elementwise row (and CuPy's ElementwiseKernel example).
#[elementwise]
pub fn squared_diff<T: Float>(x: T, y: T) -> T {
    let d = x - y;
    d * d
}

/// A 3-point average through shared memory: each block loads its 256 elements and one halo
/// element on each side, waits at the barrier, then each thread averages its neighbourhood
/// (the array's ends use their own value for the missing neighbour). Blocks of 256 threads.
#[rawkernel]
pub fn stencil3(x: &[f32], y: &mut [f32], n: u32) {
    let tile = shared_array::<f32, 258>();
    let t = thread_idx().x;
    let i = block_idx().x * block_dim().x + t;
    if i < n {
        tile[(t + 1) as usize] = x[i as usize];
        if t == 0 {
            tile[0] = if i > 0 { x[(i - 1) as usize] } else { x[i as usize] };
        }
        if t == block_dim().x - 1 || i == n - 1 {
            tile[(t + 2) as usize] = if i + 1 < n { x[(i + 1) as usize] } else { x[i as usize] };
        }
    }
    sync_threads();
    if i < n {
        let k = (t + 1) as usize;
        y[i as usize] = (tile[k - 1] + tile[k] + tile[k + 1]) * (1.0 / 3.0);
    }
}
