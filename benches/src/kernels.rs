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

/// Grid-stride copy over chunks of `4 * block` elements: each thread loads four elements a
/// block-width apart (every load coalesced across the warp), then stores them; a full chunk takes
/// one bounds check, only the last one checks per element. With 4-byte elements one element per
/// thread moves too few bytes per instruction (0.64 of the driver's copy on an H200), four per
/// thread with a bounds check per load 0.91, this 1.00 (benches/experiments/copy_f32_rust.py).
#[rawkernel]
pub fn copy_grid_stride4<T: Scalar>(x: &[T], y: &mut [T], n: u32) {
    let b = block_dim().x;
    let chunk = 4 * b;
    let stride = grid_dim().x * chunk;
    let mut base = block_idx().x * chunk + thread_idx().x;
    while base < n {
        if base + 3 * b < n {
            let v0 = x[base as usize];
            let v1 = x[(base + b) as usize];
            let v2 = x[(base + 2 * b) as usize];
            let v3 = x[(base + 3 * b) as usize];
            y[base as usize] = v0;
            y[(base + b) as usize] = v1;
            y[(base + 2 * b) as usize] = v2;
            y[(base + 3 * b) as usize] = v3;
        } else {
            for k in 0..4u32 {
                let i = base + k * b;
                if i < n {
                    y[i as usize] = x[i as usize];
                }
            }
        }
        base += stride;
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
