//! The built-in counting kernels behind `bincount` and `histogram` (runtime/src/counting.rs),
//! written with cuprum's own macros (`crate = crate`) and precompiled by the runtime's build.rs.
//!
//! Each block counts into histograms in shared memory (one per warp for bytes, so that the
//! warps of a block do not contend for a popular value's bin), then adds its non-zero bins to the
//! global counts with one atomic add each. Bins beyond what shared memory holds are counted with
//! global atomics. The caller checks every value against the bins before the launch.

use crate::lang::prelude::*;
use cuprum_macros::{device, rawkernel};

/// The bins a block keeps in shared memory (`count_values`, `histogram_uniform`).
const SHARED_BINS: usize = 4096;

/// Loads in flight per thread in the counting loops: a grid of four blocks of 256 threads per
/// multiprocessor with one 4-byte load each would keep 4 KiB in flight per multiprocessor, far
/// below the ~32 KiB that hide the memory's latency at full bandwidth.
const LOADS: usize = 8;

/// The `LOADS` elements of `x` at `i`, `i + stride`, ... (`fill` past the end), all loaded before
/// any is used.
#[device(crate = crate)]
fn load_group<T: Scalar>(x: &[T], i: usize, stride: usize, fill: T) -> [T; LOADS] {
    let mut v = [fill; LOADS];
    for u in (0..LOADS).unroll() {
        let j = i + u * stride;
        if j < x.len() {
            v[u] = x[j];
        }
    }
    v
}

/// Counts the bytes of a `u8` array into `counts[0..256]`: `words` is its 4-byte-aligned middle
/// (4 bytes per word), `bytes` the whole array, of which the first `head` and those from
/// `tail_start` on lie outside `words`. Up to 8 warps per block.
#[rawkernel(crate = crate, unchecked)]
pub fn count_bytes(words: &[u32], bytes: &[u8], head: u64, tail_start: u64, counts: &mut [i64]) {
    let hist = shared_array::<u32, 2048>();
    let tid = thread_idx().x as usize;
    let nt = block_dim().x as usize;
    let mut k = tid;
    while k < 2048 {
        hist[k] = 0;
        k += nt;
    }
    sync_threads();
    let base = (tid / 32 % 8) * 256;
    let mut i = grid_1d() as usize;
    let stride = grid_size_1d() as usize;
    // `LOADS` words per thread in flight (each load waits for nothing), then their counts.
    while i < words.len() {
        let w = load_group(words, i, stride, 0u32);
        for u in (0..LOADS).unroll() {
            if i + u * stride < words.len() {
                atomic_add(hist, base + (w[u] & 0xff) as usize, 1u32);
                atomic_add(hist, base + ((w[u] >> 8) & 0xff) as usize, 1u32);
                atomic_add(hist, base + ((w[u] >> 16) & 0xff) as usize, 1u32);
                atomic_add(hist, base + (w[u] >> 24) as usize, 1u32);
            }
        }
        i += LOADS * stride;
    }
    if grid_1d() == 0 {
        let mut j = 0usize;
        while j < head as usize {
            atomic_add(hist, base + bytes[j] as usize, 1u32);
            j += 1;
        }
        j = tail_start as usize;
        while j < bytes.len() {
            atomic_add(hist, base + bytes[j] as usize, 1u32);
            j += 1;
        }
    }
    sync_threads();
    let mut b = tid;
    while b < 256 {
        let mut s = 0i64;
        let mut w = 0usize;
        while w < 8 {
            s += hist[w * 256 + b] as i64;
            w += 1;
        }
        if s > 0 {
            atomic_add(counts, b, s);
        }
        b += nt;
    }
}

/// Counts the values of `x` (each in `0..counts.len()`, checked by the caller) into `counts`.
#[rawkernel(crate = crate, unchecked)]
pub fn count_values(x: &[i64], counts: &mut [i64]) {
    let hist = shared_array::<u32, SHARED_BINS>();
    let tid = thread_idx().x as usize;
    let nt = block_dim().x as usize;
    let nbins = counts.len();
    let private = nbins <= SHARED_BINS;
    if private {
        let mut k = tid;
        while k < nbins {
            hist[k] = 0;
            k += nt;
        }
    }
    sync_threads();
    let mut i = grid_1d() as usize;
    let stride = grid_size_1d() as usize;
    while i < x.len() {
        let vs = load_group(x, i, stride, 0i64);
        for u in (0..LOADS).unroll() {
            if i + u * stride < x.len() {
                if private {
                    atomic_add(hist, vs[u] as usize, 1u32);
                } else {
                    atomic_add(counts, vs[u] as usize, 1i64);
                }
            }
        }
        i += LOADS * stride;
    }
    sync_threads();
    if private {
        let mut b = tid;
        while b < nbins {
            let s = hist[b];
            if s > 0 {
                atomic_add(counts, b, s as i64);
            }
            b += nt;
        }
    }
}

/// Adds `w[i]` to `sums[x[i]]` for every `i` (each `x[i]` in `0..sums.len()`, checked by the
/// caller): `bincount` with weights.
#[rawkernel(crate = crate)]
pub fn sum_weights(x: &[i64], w: &[f64], sums: &mut [f64]) {
    let mut i = grid_1d() as usize;
    let stride = grid_size_1d() as usize;
    while i < x.len() {
        atomic_add(sums, x[i] as usize, w[i]);
        i += stride;
    }
}

/// NumPy's `histogram` with `counts.len()` equal bins over `[lo, hi]`: the bin of `v` is
/// `((v - lo) * norm)` truncated, moved down or up by one where rounding put `v` outside the
/// edges `edges[b]..edges[b + 1]` (the last bin includes `hi`); values outside `[lo, hi]` and
/// NaN are not counted. Computed in `T`, as NumPy does for a `T` array.
#[rawkernel(crate = crate, unchecked, instances = [f32, f64])]
pub fn histogram_uniform<T: Float>(x: &[T], edges: &[T], lo: T, hi: T, norm: T, counts: &mut [i64]) {
    let hist = shared_array::<u32, SHARED_BINS>();
    let tid = thread_idx().x as usize;
    let nt = block_dim().x as usize;
    let nbins = counts.len();
    let private = nbins <= SHARED_BINS;
    if private {
        let mut k = tid;
        while k < nbins {
            hist[k] = 0;
            k += nt;
        }
    }
    sync_threads();
    let mut i = grid_1d() as usize;
    let stride = grid_size_1d() as usize;
    while i < x.len() {
        let vs = load_group(x, i, stride, lo);
        for u in (0..LOADS).unroll() {
            let v = vs[u];
            if i + u * stride < x.len() && v >= lo && v <= hi {
                let f = ((v - lo) * norm).to_f64();
                let mut b = if f >= nbins as f64 { nbins - 1 } else { f as usize };
                if v < edges[b] && b > 0 {
                    b -= 1;
                } else if b + 1 < nbins && v >= edges[b + 1] {
                    b += 1;
                }
                if private {
                    atomic_add(hist, b, 1u32);
                } else {
                    atomic_add(counts, b, 1i64);
                }
            }
        }
        i += LOADS * stride;
    }
    sync_threads();
    if private {
        let mut b = tid;
        while b < nbins {
            let s = hist[b];
            if s > 0 {
                atomic_add(counts, b, s as i64);
            }
            b += nt;
        }
    }
}
