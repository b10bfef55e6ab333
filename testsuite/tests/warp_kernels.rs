//! Warp collectives (`warp_reduce_*`, `warp_*_sum`) for `gpu_warp.rs`, precompiled by this crate's
//! build script.

use cuprum::prelude::*;

/// Every collective over the whole warp: `out` holds the sums, minima, maxima, inclusive and
/// exclusive sums, `x.len()` each.
#[rawkernel(instances = [i32, u8, f32, f64])]
pub fn warp_all<T: Real>(x: &[T], out: &mut [T]) {
    let n = x.len();
    let i = grid_1d() as usize;
    let v = x[i];
    let (s, lo, hi) = (warp_reduce_sum(v), warp_reduce_min(v), warp_reduce_max(v));
    let (inc, exc) = (warp_inclusive_sum(v), warp_exclusive_sum(v));
    out[i] = s;
    out[n + i] = lo;
    out[2 * n + i] = hi;
    out[3 * n + i] = inc;
    out[4 * n + i] = exc;
}

/// The same within tiles of `width` lanes.
#[rawkernel(instances = [i32, u8, f32, f64])]
pub fn tile_all<T: Real>(x: &[T], out: &mut [T], width: u32) {
    let n = x.len();
    let i = grid_1d() as usize;
    let v = x[i];
    let (s, lo, hi) = (warp_reduce_sum_width(v, width), warp_reduce_min_width(v, width), warp_reduce_max_width(v, width));
    let (inc, exc) = (warp_inclusive_sum_width(v, width), warp_exclusive_sum_width(v, width));
    out[i] = s;
    out[n + i] = lo;
    out[2 * n + i] = hi;
    out[3 * n + i] = inc;
    out[4 * n + i] = exc;
}

/// A block's sum: a warp reduction per warp, then one over the warps' sums in warp 0.
#[rawkernel]
pub fn block_sum(x: &[f64], out: &mut [f64]) {
    let partial = shared_array::<f64, 32>();
    let t = thread_idx().x;
    let v = warp_reduce_sum(x[grid_1d() as usize]);
    if lane_id() == 0 {
        partial[(t / 32) as usize] = v;
    }
    sync_threads();
    if t < 32 {
        let w = if t < block_dim().x / 32 { partial[t as usize] } else { 0.0 };
        let total = warp_reduce_sum(w);
        if t == 0 {
            out[block_idx().x as usize] = total;
        }
    }
}
