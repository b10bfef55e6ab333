//! The built-in counting kernels behind `bincount` and `histogram` (runtime/src/counting.rs),
//! written with cuprum's own macros (`crate = crate`) and precompiled by the runtime's build.rs.
//!
//! Each block counts into a histogram in shared memory (for bytes, a counter per bin and lane, so
//! that the lanes of a warp never add to the same bank), then adds its non-zero bins to the
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

/// The `words[4 * j..4 * j + 4]` for `j` = `q`, `q + stride`, `q + 2 * stride`, `q + 3 * stride`
/// (zeros past the last whole group of four), as four 16-byte loads, all issued before any is
/// used. Unchecked: `words` must be 16-byte aligned for the wide loads (otherwise they are
/// correct, one load per word).
#[device(crate = crate, unchecked)]
unsafe fn load_quads(words: &[u32], q: usize, stride: usize) -> [u32; 16] {
    let mut w = [0u32; 16];
    let quads = words.len() / 4;
    for u in (0..4usize).unroll() {
        let j = q + u * stride;
        if j < quads {
            let a = load4(words, j * 4);
            for e in (0..4usize).unroll() {
                w[u * 4 + e] = a[e];
            }
        }
    }
    w
}

/// Counts the bytes of a `u8` array into `counts[0..256]`: `words` is its 16-byte-aligned middle
/// (4 bytes per word, a multiple of 4 words), `bytes` the whole array, of which the first `head`
/// and those from `tail_start` on lie outside `words`. Blocks of at most 256 threads.
///
/// The block's histogram has a counter per bin and lane (`bin * 32 + lane`, shared by the
/// block's warps): the 32 lanes of a warp always add to 32 different banks of shared memory, so
/// each warp's atomic add takes one pass whatever the bytes are (with a histogram per warp,
/// `bin` alone chose the bank, and random bytes made each add wait for about 3.5 passes).
#[rawkernel(crate = crate, unchecked)]
pub fn count_bytes(words: &[u32], bytes: &[u8], head: u64, tail_start: u64, counts: &mut [i64]) {
    let hist = shared_array::<u32, 8192>();
    let tid = thread_idx().x as usize;
    let nt = block_dim().x as usize;
    let lane = tid % 32;
    let mut k = tid;
    while k < 8192 {
        hist[k] = 0;
        k += nt;
    }
    sync_threads();
    let quads = words.len() / 4;
    let mut q = grid_1d() as usize;
    let stride = grid_size_1d() as usize;
    // Four 16-byte loads per thread in flight (each waits for nothing), then their counts.
    while q < quads {
        // SAFETY: `load_quads` reads whole groups of four below `words.len()`.
        let w = unsafe { load_quads(words, q, stride) };
        for u in (0..4usize).unroll() {
            if q + u * stride < quads {
                for e in (0..4usize).unroll() {
                    let x = w[u * 4 + e];
                    atomic_add(hist, (x & 0xff) as usize * 32 + lane, 1u32);
                    atomic_add(hist, ((x >> 8) & 0xff) as usize * 32 + lane, 1u32);
                    atomic_add(hist, ((x >> 16) & 0xff) as usize * 32 + lane, 1u32);
                    atomic_add(hist, (x >> 24) as usize * 32 + lane, 1u32);
                }
            }
        }
        q += 4 * stride;
    }
    if grid_1d() == 0 {
        let mut j = 0usize;
        while j < head as usize {
            atomic_add(hist, bytes[j] as usize * 32 + lane, 1u32);
            j += 1;
        }
        j = tail_start as usize;
        while j < bytes.len() {
            atomic_add(hist, bytes[j] as usize * 32 + lane, 1u32);
            j += 1;
        }
    }
    sync_threads();
    // Bin `b`'s 32 counters, each thread of a warp starting at another lane's (another bank).
    let mut b = tid;
    while b < 256 {
        let mut s = 0i64;
        let mut l = 0usize;
        while l < 32 {
            s += hist[b * 32 + (l + b) % 32] as i64;
            l += 1;
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
