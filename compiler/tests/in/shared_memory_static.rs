use cuprum::prelude::*;

/// Static shared memory (`shared_array::<T, N>()`) with `sync_threads()`: a tiled 1-D copy that
/// reverses each block's tile.
#[rawkernel]
pub fn reverse_tiles(x: &[f32], y: &mut [f32], n: u32) {
    let tile = shared_array::<f32, 256>();
    let t = thread_idx().x;
    let i = block_idx().x * 256 + t;
    tile[t as usize] = if i < n { x[i as usize] } else { 0.0 };
    sync_threads();
    let j = block_idx().x * 256 + (255 - t);
    if j < n {
        y[j as usize] = tile[t as usize];
    }
}

/// Two shared arrays of different types, and a generic one; `len()` of a shared array.
#[rawkernel]
pub fn shared_pairs<T: Number>(x: &[T], out: &mut [T]) {
    let vals = shared_array::<T, 128>();
    let flags = shared_array::<bool, 128>();
    let t = thread_idx().x as usize;
    if t < vals.len() {
        vals[t] = if t < x.len() { x[t] } else { T::zero() };
        flags[t] = t % 2 == 0;
    }
    sync_threads();
    if t < vals.len() && flags[t] && t + 1 < out.len() {
        out[t] = vals[t] + vals[t + 1];
    }
}
