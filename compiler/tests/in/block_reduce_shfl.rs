use cuprum::prelude::*;

/// A block-wide sum: warp shuffles reduce each warp, shared memory collects the warp sums, the
/// first warp reduces those, and one atomic per block adds to the result.
#[device]
fn warp_sum<T: Number>(mut v: T) -> T {
    let mut offset = 16u32;
    while offset > 0 {
        v += shfl_down_sync(0xffff_ffff, v, offset);
        offset /= 2;
    }
    v
}

#[rawkernel(instances = [f32, f64, i32])]
pub fn block_reduce_sum<T: Number>(x: &[T], out: &mut [T], n: u32) {
    let partial = shared_array::<T, 32>();
    let tid = thread_idx().x;
    let lane = tid % warp_size();
    let warp = tid / warp_size();
    let mut v = T::zero();
    let mut i = grid_1d();
    while i < n {
        v += x[i as usize];
        i += grid_size_1d();
    }
    v = warp_sum(v);
    if lane == 0 {
        partial[warp as usize] = v;
    }
    sync_threads();
    if warp == 0 {
        let nwarps = (block_dim().x + warp_size() - 1) / warp_size();
        v = if lane < nwarps { partial[lane as usize] } else { T::zero() };
        v = warp_sum(v);
        if lane == 0 {
            atomic_add(out, 0u32, v);
        }
    }
}
