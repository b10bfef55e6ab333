use cuprum::prelude::*;

/// A 256-bin byte histogram: per-block bins in shared memory updated with atomics, then merged
/// into the global histogram.
#[rawkernel]
pub fn histogram256(data: &[u8], hist: &mut [u32], n: u32) {
    let bins = shared_array::<u32, 256>();
    let t = thread_idx().x;
    let mut b = t;
    while b < 256 {
        bins[b as usize] = 0;
        b += block_dim().x;
    }
    sync_threads();
    let mut i = grid_1d();
    let stride = grid_size_1d();
    while i < n {
        atomic_add(bins, data[i as usize] as u32, 1);
        i += stride;
    }
    sync_threads();
    let mut b = t;
    while b < 256 {
        let count = bins[b as usize];
        if count > 0 {
            atomic_add(hist, b, count);
        }
        b += block_dim().x;
    }
}

/// A float histogram over [lo, hi) with a clamped bin index (the cast saturates).
#[rawkernel]
pub fn histogram_f32(x: &[f32], hist: &mut [u32], lo: f32, hi: f32, nbins: u32) {
    let i = grid_1d() as usize;
    if i >= x.len() {
        return;
    }
    let v = x[i];
    if v.is_nan() {
        return;
    }
    let pos = (v - lo) / (hi - lo) * nbins as f32;
    let bin = (pos as u32).min(nbins - 1);
    atomic_inc(hist, bin, u32::MAX);
}
