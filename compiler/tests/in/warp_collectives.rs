use cuprum::prelude::*;

/// Each warp's sum, minimum and maximum, and every lane's prefix sums, over the warp and over
/// tiles of 8 lanes.
#[rawkernel]
pub fn warp_stats<T: Real>(x: &[T], sums: &mut [T], mins: &mut [T], maxs: &mut [T], scans: &mut [T], tiles: &mut [T]) {
    let i = grid_1d() as usize;
    let v = x[i];
    sums[i] = warp_reduce_sum(v);
    mins[i] = warp_reduce_min(v);
    maxs[i] = warp_reduce_max(v);
    scans[i] = warp_inclusive_sum(v);
    tiles[i] = warp_exclusive_sum_width(v, 8) + warp_reduce_sum_width(v, 8);
}

/// A block's sum: one warp reduction per warp, then one over the warps' sums.
#[rawkernel]
pub fn block_sum(x: &[f32], out: &mut [f32]) {
    let partial = shared_array::<f32, 32>();
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
