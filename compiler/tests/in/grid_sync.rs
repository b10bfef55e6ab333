//! Snapshot: `grid_sync()` in a raw kernel, in a loop, and inside a `#[device]` function; also the
//! kernels of testsuite/tests/gpu_grid.rs (built by its build.rs), cooperative (`KernelInfo`).
#![allow(dead_code)]

use cuprum::prelude::*;

/// Threads per block of every kernel here (the length of their shared arrays).
pub const BLOCK: u32 = 256;

/// `out[0] = sum(x)` in one launch: each block sums its grid-stride share of `x` into
/// `partials[block]`, the grid synchronises, then block 0 sums the partials (in f64; each sum
/// a tree over the block's shared array).
#[rawkernel]
pub fn sum_two_phase(x: &[f32], partials: &mut [f64], out: &mut [f64]) {
    let s = shared_array::<f64, 256>();
    let t = thread_idx().x as usize;
    let b = block_idx().x as usize;
    let stride = grid_size_1d() as usize;
    let mut acc = 0.0f64;
    let mut i = grid_1d() as usize;
    while i < x.len() {
        acc += x[i] as f64;
        i += stride;
    }
    s[t] = acc;
    sync_threads();
    let mut half = BLOCK as usize / 2;
    while half > 0 {
        if t < half {
            s[t] += s[t + half];
        }
        sync_threads();
        half /= 2;
    }
    if t == 0 {
        partials[b] = s[0];
    }
    grid_sync();
    if b == 0 {
        let mut acc = 0.0f64;
        let mut k = t;
        while k < grid_dim().x as usize {
            acc += partials[k];
            k += BLOCK as usize;
        }
        s[t] = acc;
        sync_threads();
        let mut half = BLOCK as usize / 2;
        while half > 0 {
            if t < half {
                s[t] += s[t + half];
            }
            sync_threads();
            half /= 2;
        }
        if t == 0 {
            out[0] = s[0];
        }
    }
}

/// One Jacobi step of the 1-D Laplace equation with fixed ends: `dst[i] = (src[i - 1] +
/// src[i + 1]) / 2` inside, `dst[i] = src[i]` at both ends, over a grid-stride loop.
#[device]
fn relax<T: Float>(src: &mut [T], dst: &mut [T]) {
    let n = src.len();
    let stride = grid_size_1d() as usize;
    let mut i = grid_1d() as usize;
    while i < n {
        dst[i] = if i == 0 || i == n - 1 { src[i] } else { T::from_f64(0.5) * (src[i - 1] + src[i + 1]) };
        i += stride;
    }
}

/// `steps` Jacobi steps in one launch, from `a` (even steps write `b`, odd ones `a`: the result
/// is in `a` when `steps` is even), the grid synchronised after each. Generic, so that
/// `max_cooperative_blocks` names its instance.
#[rawkernel(instances = [f32, f64])]
pub fn jacobi<T: Float>(a: &mut [T], b: &mut [T], steps: u32) {
    for k in 0..steps {
        if k & 1 == 0 {
            relax(a, b);
        } else {
            relax(b, a);
        }
        grid_sync();
    }
}

/// A Jacobi step followed by the grid barrier: `grid_sync()` inside a device function.
#[device]
fn relax_then_sync(src: &mut [f32], dst: &mut [f32]) {
    relax(src, dst);
    grid_sync();
}

/// [`jacobi`] with the barrier inside the device function it calls (and `while`, not `for`).
#[rawkernel]
pub fn jacobi_device_sync(a: &mut [f32], b: &mut [f32], steps: u32) {
    let mut k = 0u32;
    while k < steps {
        if k & 1 == 0 {
            relax_then_sync(a, b);
        } else {
            relax_then_sync(b, a);
        }
        k += 1;
    }
}
